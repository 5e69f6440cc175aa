"""lit configuration for tilec's IR tests: `// RUN: %opt %s -p ... | filecheck %s`."""
# ruff: noqa: F821  (lit injects `config`)

import importlib.util
import os
import sys

config.name = "tilec"
config.test_source_root = os.path.dirname(__file__)
_root = os.path.dirname(os.path.dirname(config.test_source_root))
# RUN lines of `%opt` and `filecheck` pipelines run inside lit's workers (in_process.py):
# xDSL is imported once per worker, here before they fork, not once per command.
sys.path[:0] = [config.test_source_root, _root]
from in_process import InProcessShTest

import compiler.opt  # noqa: F401

config.test_format = InProcessShTest()
config.suffixes = [".mlir"]
# `%opt` runs with the Python running lit, so the caller's venv is the one tested.
config.substitutions.append(("%opt", f'"{sys.executable}" -m compiler.opt'))
config.environment["PYTHONPATH"] = os.pathsep.join(
    p for p in (_root, os.environ.get("PYTHONPATH")) if p)
# The pure-Python `filecheck` script lives next to that Python (a venv's bin directory),
# or in the bin directory beside its package (`pip install --target DIR` puts it in DIR/bin).
_filecheck_pkg = importlib.util.find_spec("filecheck")
_bins = [os.path.dirname(sys.executable)]
if _filecheck_pkg is not None and _filecheck_pkg.origin:
    _bins.append(os.path.join(os.path.dirname(os.path.dirname(_filecheck_pkg.origin)), "bin"))
config.environment["PATH"] = os.pathsep.join(_bins + [os.environ.get("PATH", "")])
