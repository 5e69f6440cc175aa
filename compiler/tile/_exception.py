"""cuTile's exception names, as tilec's errors: ``except ct.TileTypeError`` in ported code
catches what tilec raises for the same mistake. tilec has fewer kinds, so several names
are one class (a ``CompileError`` for any bad kernel source)."""

from compiler.errors import (
    CompileError,
    InternalCompilerError,
    TilecError,
    UnsupportedError,
)

TileError = TilecError
TileSyntaxError = CompileError
TileTypeError = CompileError
TileValueError = CompileError
TileStaticAssertionError = CompileError
TileStaticEvalError = CompileError
TileRecursionError = CompileError
TileCompilerTimeoutError = CompileError  # never raised: tilec does not time compilations
TileUnsupportedFeatureError = UnsupportedError
TileInternalError = InternalCompilerError
TileCompilerExecutionError = InternalCompilerError

__all__ = ["TileCompilerExecutionError", "TileCompilerTimeoutError", "TileError", "TileInternalError", "TileRecursionError", "TileStaticAssertionError", "TileStaticEvalError", "TileSyntaxError", "TileTypeError", "TileUnsupportedFeatureError", "TileValueError"]
