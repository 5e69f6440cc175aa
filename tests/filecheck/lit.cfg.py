"""lit configuration for tilec's IR tests: `// RUN: %opt %s -p ... | filecheck %s`."""
# ruff: noqa: F821  (lit injects `config`)

import os
import sys

import lit.formats

config.name = "tilec"
# lit 23 refuses ShTest(True); the internal shell is also portable.
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)

_root = os.path.dirname(os.path.dirname(config.test_source_root))
# `%opt` runs with the Python running lit, so the caller's venv is the one tested.
config.substitutions.append(("%opt", f'"{sys.executable}" -m compiler.opt'))
config.environment["PYTHONPATH"] = _root
# The pure-Python `filecheck` lives next to that Python (the venv's bin directory).
config.environment["PATH"] = os.pathsep.join(
    [os.path.dirname(sys.executable), os.environ.get("PATH", "")])
