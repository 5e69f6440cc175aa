"""The command lines' argument parsing: usage errors on one line, exit status 2
(``USAGE``) for a bad command line and 1 (``FAILURE``) when the work fails. Shared by
``tilec`` (``compiler.cli``) and ``tilec opt`` (``compiler.opt``)."""

from __future__ import annotations

import argparse
import sys

USAGE, FAILURE = 2, 1


class ArgParser(argparse.ArgumentParser):
    """argparse with a usage error on one line, and help text kept as written."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        usage_error(self.prog, message)


def usage_error(prog: str, message: str):
    """Exit with status 2 and ``message`` on one line, pointing to ``prog``'s help."""
    sys.stderr.write(f"{prog}: error: {message} (see {prog} --help)\n")
    sys.exit(USAGE)
