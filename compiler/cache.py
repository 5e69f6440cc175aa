"""On-disk cache of compiled kernels. No xDSL import: a hit must not load the compiler.

An entry is one JSON object in ``<root>/<key[:2]>/<key>.json``::

    {"schema": 2, "key": "<the key>", "info": "<KernelInfo JSON>",
     "artifact": BLOB, "asm": {"<name>": BLOB, ...}, "stages": [["<name>", "<text>"], ...],
     "sha256": "<hex>"}

where a BLOB is ``{"text": str}`` or ``{"base64": str}`` (bytes: a cubin) and ``sha256`` is
the digest of the canonical JSON (sorted keys, no spaces) of every other field. An entry
that cannot be read or parsed, has the wrong shape or schema, fails its checksum, names
another key or holds an unloadable ``KernelInfo`` is a miss: it is deleted with a warning
on the ``tilec.cache`` logger and the kernel is compiled again.

An entry is written to a temporary file in its own directory and renamed into place, so
processes sharing the directory never see a torn entry.

Small JSON records that are not kernels (``tc.autotune``'s choices) live beside them in
``<root>/<kind>/<key[:2]>/<key>.json`` as ``{"schema", "key", "record", "sha256"}``, written
and checked the same way (``load_record``/``store_record``).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from compiler.kinfo import KernelInfo

VERSION = "0.1.0"
SCHEMA = 2  # 1: the unversioned, unchecked entries before it
log = logging.getLogger("tilec.cache")


@dataclass
class Entry:
    """What the cache holds for one compiled kernel."""

    info: KernelInfo
    artifact: str | bytes
    asm: dict[str, str | bytes]
    stages: list[tuple[str, str]]


class InvalidEntry(ValueError):
    """A cache file that is not an entry this version wrote."""


def cache_dir() -> Path | None:
    """The cache root, or None when ``TILEC_CACHE=0`` turns the disk cache off."""
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
    """The cache key of a compilation described by ``parts``."""
    h = hashlib.sha256(VERSION.encode() + compiler_hash().encode())
    for p in parts:
        h.update(b"\0" + repr(p).encode())
    return h.hexdigest()


def entry_path(key: str) -> Path | None:
    """Where the entry of ``key`` lives (None: the disk cache is off)."""
    root = cache_dir()
    return None if root is None else root / key[:2] / f"{key}.json"


# ---------------------------------------------------------------- load

def load(key: str) -> Entry | None:
    """The entry of ``key``, or None on a miss; a bad entry is deleted, never raised."""
    path = entry_path(key)
    if path is None:
        return None
    try:
        return decode(key, path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, InvalidEntry) as e:
        log.warning("discarding cache entry %s (%s); recompiling", path, e)
        with contextlib.suppress(OSError):  # another process may have removed it first
            path.unlink()
        return None


def decode(key: str, text: str) -> Entry:
    """Parse and check the entry text stored for ``key``; raises ``InvalidEntry``."""
    try:
        raw = json.loads(text)
    except ValueError as e:
        raise InvalidEntry(f"not JSON: {e}") from None
    _check_header(key, raw)
    _require(isinstance(raw.get("info"), str), "'info' is not a string")
    _require(isinstance(raw.get("asm"), dict), "'asm' is not an object")
    stages = raw.get("stages")
    _require(isinstance(stages, list) and all(_is_stage(s) for s in stages),
             "'stages' is not a list of [name, text] pairs")
    try:
        info = KernelInfo.from_json(raw["info"])
    except (TypeError, ValueError, KeyError) as e:
        raise InvalidEntry(f"bad kernel info: {type(e).__name__}: {e}") from None
    return Entry(info, _unblob(raw.get("artifact")),
                 {name: _unblob(b) for name, b in raw["asm"].items()},
                 [tuple(s) for s in stages])


def _check_header(key: str, raw: object) -> None:
    """Shape, schema, checksum, key: what is checked before any field is trusted."""
    _require(isinstance(raw, dict), "not a JSON object")
    _require(raw.get("schema") == SCHEMA,
             f"schema version {raw.get('schema')!r}, expected {SCHEMA}")
    body = {k: v for k, v in raw.items() if k != "sha256"}
    _require(raw.get("sha256") == _digest(body), "checksum mismatch")
    _require(raw.get("key") == key, "written for another key")


def _require(ok: bool, why: str) -> None:
    if not ok:
        raise InvalidEntry(why)


def _is_stage(s: object) -> bool:
    return isinstance(s, list) and len(s) == 2 and all(isinstance(x, str) for x in s)


def _unblob(b: object) -> str | bytes:
    if isinstance(b, dict) and len(b) == 1:
        if isinstance(b.get("text"), str):
            return b["text"]
        if isinstance(b.get("base64"), str):
            try:
                return base64.b64decode(b["base64"], validate=True)
            except ValueError:
                pass
    raise InvalidEntry(f"not a text or base64 blob: {str(b)[:40]}")


# ---------------------------------------------------------------- store

def store(key: str, entry: Entry) -> None:
    """Write the entry of ``key`` atomically; a cache that cannot be written is only slower."""
    path = entry_path(key)
    if path is None:
        return
    try:
        _write_atomic(path, encode(key, entry))
    except OSError as e:
        log.warning("cannot write cache entry %s: %s", path, e)


def encode(key: str, entry: Entry) -> str:
    """The JSON text of ``entry`` stored under ``key``, checksum included."""
    body = {"schema": SCHEMA, "key": key, "info": entry.info.to_json(),
            "artifact": _blob(entry.artifact),
            "asm": {name: _blob(v) for name, v in entry.asm.items()},
            "stages": [list(s) for s in entry.stages]}
    return json.dumps({**body, "sha256": _digest(body)})


def _write_atomic(path: Path, text: str) -> None:
    """Temp file in the target's directory, then rename: readers see all or nothing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())  # a crash after the rename must not leave a short entry
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _blob(v: str | bytes) -> dict[str, str]:
    if isinstance(v, bytes):
        return {"base64": base64.b64encode(v).decode()}
    return {"text": v}


def _digest(body: dict) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


# ---------------------------------------------------------------- records

def record_path(kind: str, key: str) -> Path | None:
    root = cache_dir()
    return None if root is None else root / kind / key[:2] / f"{key}.json"


def load_record(kind: str, key: str) -> dict | None:
    """The record of ``kind`` stored under ``key``, or None; a bad one is deleted."""
    path = record_path(kind, key)
    if path is None:
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        _check_header(key, raw)
        _require(isinstance(raw.get("record"), dict), "'record' is not an object")
        return raw["record"]
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:  # InvalidEntry and JSON errors are ValueErrors
        log.warning("discarding cache record %s (%s)", path, e)
        with contextlib.suppress(OSError):
            path.unlink()
        return None


def store_record(kind: str, key: str, record: dict) -> None:
    """Write a JSON-serializable ``record`` atomically (a failure only costs a redo)."""
    path = record_path(kind, key)
    if path is None:
        return
    body = {"schema": SCHEMA, "key": key, "record": record}
    try:
        _write_atomic(path, json.dumps({**body, "sha256": _digest(body)}))
    except OSError as e:
        log.warning("cannot write cache record %s: %s", path, e)
