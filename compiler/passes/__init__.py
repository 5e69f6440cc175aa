"""tilec's target-independent passes (``registry`` names them all, with the targets')."""

from xdsl.utils.exceptions import PassFailedException

from compiler.errors import CompileError


class PassInputError(CompileError, PassFailedException):
    """IR a pass cannot take, such as tile IR without layouts given to tile-to-simt: a
    ``CompileError`` to tilec, and to ``xdsl-opt`` a pass failure, which it reports as a
    diagnostic (``--verify-diagnostics`` prints it) rather than as a crash of the pass."""
