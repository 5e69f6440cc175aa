"""On-disk cache of compiled kernels. No xDSL import: a hit must not load the compiler.

The root is ``$TILEC_CACHE_DIR``, else ``$XDG_CACHE_HOME/tilec`` (an absolute path: the XDG
spec ignores a relative one), else ``~/.cache/tilec``; ``TILEC_CACHE=0`` turns it off. An
entry is one JSON object in ``<root>/<key[:2]>/<key>.json``::

    {"schema": 3, "key": "<the key>", "info": "<KernelInfo JSON>",
     "artifact": BLOB, "asm": {"<name>": BLOB, ...}, "stages": [["<name>", "<text>"], ...],
     "sha256": "<hex>", "seal": "<hex>"}

where a BLOB is ``{"text": str}`` or ``{"base64": str}`` (bytes: a cubin), ``sha256`` is
the digest of the canonical JSON (sorted keys, no spaces) of every field but itself and
``seal``, and ``seal`` is the SHA-256 of ``"<key>:<sha256>"``: the key the entry was
written for, bound to all of its content.

A load checks, in this order, and each check is there for a damage that was seen or is
easy to make:

- what is at the path is a regular file, found by ``fstat`` after opening it with
  ``O_NONBLOCK``: a FIFO there is never waited on, a device or a directory never read;
- it is UTF-8 JSON, an object, nested no deeper than the decoder and the encoder go
  (``[[[[...]]]]`` raises ``RecursionError`` there, which is a bad entry, not a crash);
- ``schema``: an entry of another layout of this format;
- ``sha256``: accidental damage to any field (a torn copy, a flipped bit, an edit);
- ``key``: a file copied or renamed to another entry's name;
- ``seal``: content moved between entries with the documented checksum recomputed, by a
  tool that rewrites or merges cache directories or by a bug of ours that writes one
  entry's fields under another key. Kernels that differ only in a constexpr (BLOCK=256
  and BLOCK=1024) have the same name and parameters: their artifacts are told apart by
  the key alone, and the ``key`` field moves with the content it sits beside;
- the fields' shapes, and that ``info`` loads as a ``KernelInfo``.

A failure is a miss: the file (or the directory in its place) is deleted with a warning
on the ``tilec.cache`` logger and the kernel is compiled and written again. A hit costs
one open, one read, one parse and the checksum's hash, as before the seal (which hashes
the checksum, not the content). Not caught: an entry written under a key that misses an
input of its compilation (``make_key``'s parts must cover everything the artifact depends
on), and a deliberate forgery, which anyone able to write the directory can make.

An entry is written to a temporary file in its own directory and renamed into place, so
processes sharing the directory never see a torn entry.

Small JSON records that are not kernels (``tc.autotune``'s choices) live beside them in
``<root>/<kind>/<key[:2]>/<key>.json`` as ``{"schema", "key", "record", "sha256", "seal"}``,
written and checked the same way (``load_record``/``store_record``).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import logging
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from compiler.kinfo import KernelInfo

VERSION = "0.1.0"
SCHEMA = 3  # 2: without the seal; 1: unversioned, unchecked
# settings read when tilec is imported that change what a compilation produces
SETTINGS = os.environ.get("TILEC_EXPAND_MATH", "")
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
    if root := os.environ.get("TILEC_CACHE_DIR"):
        return Path(root)
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = xdg if os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base, "tilec")


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
    h = hashlib.sha256(VERSION.encode() + compiler_hash().encode() + SETTINGS.encode())
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
        return decode(key, _read(path))
    except FileNotFoundError:
        return None
    except (OSError, InvalidEntry) as e:
        _discard(path, "entry", e)
        return None


def decode(key: str, text: str) -> Entry:
    """Parse and check the entry text stored for ``key``; raises ``InvalidEntry``."""
    raw = _parse(key, text)
    _require(isinstance(raw.get("info"), str), "'info' is not a string")
    _require(isinstance(raw.get("asm"), dict), "'asm' is not an object")
    stages = raw.get("stages")
    _require(isinstance(stages, list) and all(_is_stage(s) for s in stages),
             "'stages' is not a list of [name, text] pairs")
    try:
        info = KernelInfo.from_json(raw["info"])
    except (TypeError, ValueError, KeyError, AttributeError, RecursionError) as e:
        raise InvalidEntry(f"bad kernel info: {type(e).__name__}: {e}") from None
    return Entry(info, _unblob(raw.get("artifact")),
                 {name: _unblob(b) for name, b in raw["asm"].items()},
                 [tuple(s) for s in stages])


_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # absent on Windows, which has no FIFOs to open


def _read(path: Path) -> str:
    """The text of the regular file at ``path``; anything else there (a FIFO, a device, a
    directory) raises ``InvalidEntry`` unread. O_NONBLOCK: opening a FIFO never waits."""
    fd = os.open(path, os.O_RDONLY | _NONBLOCK)
    try:
        st = os.fstat(fd)
        _require(stat.S_ISREG(st.st_mode), f"not a regular file: {stat.filemode(st.st_mode)}")
        chunks = []
        while chunk := os.read(fd, st.st_size + 1):  # one read, and one that sees the end
            chunks.append(chunk)
    finally:
        os.close(fd)
    try:
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError as e:
        raise InvalidEntry(f"not UTF-8: {e}") from None


def _discard(path: Path, what: str, why: Exception) -> None:
    """Warn about the bad ``what`` at ``path`` and remove it, or the directory in its place
    (left there, it would fail every later load and the rename that replaces it)."""
    log.warning("discarding cache %s %s (%s)%s", what, path, why,
                "; recompiling" if what == "entry" else "")
    try:
        path.unlink()
    except FileNotFoundError:  # another process removed it first
        pass
    except OSError:
        shutil.rmtree(path, ignore_errors=True)


def _parse(key: str, text: str) -> dict:
    """The JSON object in ``text``, its header checked (``_check_header``)."""
    try:
        raw = json.loads(text)
        _check_header(key, raw)  # its checksum re-encodes it, a few frames deeper
    except InvalidEntry:
        raise
    except (ValueError, RecursionError) as e:  # RecursionError: [[[[...]]]]
        raise InvalidEntry(f"not JSON: {type(e).__name__}: {e}") from None
    return raw


def _check_header(key: str, raw: object) -> None:
    """Shape, schema, checksum, key, seal: what is checked before any field is trusted."""
    _require(isinstance(raw, dict), "not a JSON object")
    _require(raw.get("schema") == SCHEMA,
             f"schema version {raw.get('schema')!r}, expected {SCHEMA}")
    digest = _digest(raw)
    _require(raw.get("sha256") == digest, "checksum mismatch")
    _require(raw.get("key") == key, "written for another key")
    _require(raw.get("seal") == _seal(key, digest),
             "seal mismatch: content moved from another entry")


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
    raise InvalidEntry(f"not a text or base64 blob: a {type(b).__name__}")


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
    return _sealed({"schema": SCHEMA, "key": key, "info": entry.info.to_json(),
                    "artifact": _blob(entry.artifact),
                    "asm": {name: _blob(v) for name, v in entry.asm.items()},
                    "stages": [list(s) for s in entry.stages]})


def _sealed(body: dict) -> str:
    """The JSON text of ``body`` with its checksum and seal."""
    digest = _digest(body)
    return json.dumps({**body, "sha256": digest, "seal": _seal(body["key"], digest)})


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


def _digest(raw: dict) -> str:
    """The checksum: SHA-256 of the canonical JSON of every field but it and the seal."""
    body = {k: v for k, v in raw.items() if k not in ("sha256", "seal")}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _seal(key: str, digest: str) -> str:
    """The checksum bound to the key: content moved to another key no longer matches."""
    return hashlib.sha256(f"{key}:{digest}".encode()).hexdigest()


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
        raw = _parse(key, _read(path))
        _require(isinstance(raw.get("record"), dict), "'record' is not an object")
        return raw["record"]
    except FileNotFoundError:
        return None
    except (OSError, InvalidEntry) as e:
        _discard(path, "record", e)
        return None


def store_record(kind: str, key: str, record: dict) -> None:
    """Write a JSON-serializable ``record`` atomically (a failure only costs a redo)."""
    path = record_path(kind, key)
    if path is None:
        return
    try:
        _write_atomic(path, _sealed({"schema": SCHEMA, "key": key, "record": record}))
    except OSError as e:
        log.warning("cannot write cache record %s: %s", path, e)
