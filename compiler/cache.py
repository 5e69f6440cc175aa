"""On-disk cache of compiled kernels. No xDSL import: a hit must not load the compiler.

An entry is one JSON file written to a temporary name and renamed into place, so
processes sharing the directory never see a torn entry.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
from pathlib import Path

VERSION = "0.1.0"


def cache_dir() -> Path | None:
    if os.environ.get("TILEC_CACHE", "1") == "0":
        return None
    root = os.environ.get("TILEC_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "tilec")
    return Path(root)


_compiler_hash: str | None = None


def compiler_hash() -> str:
    """A hash of tilec's own sources: a changed compiler never reuses old entries."""
    global _compiler_hash
    if _compiler_hash is None:
        root = Path(__file__).resolve().parent.parent
        h = hashlib.sha256()
        for pkg in ("compiler", "dialects", "backends"):
            for f in sorted((root / pkg).rglob("*.py")):
                h.update(f.read_bytes())
        _compiler_hash = h.hexdigest()
    return _compiler_hash


def make_key(*parts: object) -> str:
    h = hashlib.sha256(VERSION.encode() + compiler_hash().encode())
    for p in parts:
        h.update(b"\0" + repr(p).encode())
    return h.hexdigest()


def _path(key: str) -> Path | None:
    root = cache_dir()
    return None if root is None else root / key[:2] / f"{key}.json"


def load(key: str) -> dict | None:
    path = _path(key)
    if path is None:
        return None
    try:
        entry = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return _decode(entry)


def store(key: str, entry: dict) -> None:
    path = _path(key)
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(_encode(entry), f)
        os.replace(tmp, path)
    except OSError:
        pass  # a cache that cannot be written is only slower


def _encode(v):
    if isinstance(v, bytes):
        return {"__b64__": base64.b64encode(v).decode()}
    if isinstance(v, dict):
        return {k: _encode(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_encode(x) for x in v]
    return v


def _decode(v):
    if isinstance(v, dict):
        if set(v) == {"__b64__"}:
            return base64.b64decode(v["__b64__"])
        return {k: _decode(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_decode(x) for x in v]
    return v
