"""The disk cache: bad entries are discarded and recompiled, writes are atomic, and
processes sharing one cache directory agree."""

import contextlib
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import compiler as tc
from compiler import cache
from compiler.jit import availability
from compiler.kinfo import KernelInfo, Param
from examples.vector_add import add
from tests.conftest import repo_pythonpath

ROOT = Path(__file__).resolve().parent.parent
SIG = {"x": "*f32", "y": "*f32", "out": "*f32", "n": "i32"}


@pytest.fixture
def cache_root(tmp_path, monkeypatch) -> Path:
    """A fresh, enabled cache directory for this test alone."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TILEC_CACHE", raising=False)
    return tmp_path


def compile_and_check(block: int = 128, n: int = 300) -> None:
    """Compile ``add`` through the disk cache and check that it adds (a grid of
    ``n / block`` programs: a kernel of another BLOCK leaves elements out or overruns)."""
    ck = tc.compile(add, signature=SIG, constants={"BLOCK": block}, backend="numpy")
    x, y = np.arange(n, dtype=np.float32), np.full(n, 2, dtype=np.float32)
    out = np.zeros(n, dtype=np.float32)
    ck[(tc.cdiv(n, block),)](x, y, out, n)
    np.testing.assert_array_equal(out, x + y)


def entries(root: Path) -> list[Path]:
    return sorted(root.rglob("*.json"))


def assert_valid(path: Path) -> None:
    cache.decode(path.stem, path.read_text())  # raises InvalidEntry


def checksum(raw: dict) -> str:
    """The documented ``sha256``: canonical JSON of every field but it and the seal."""
    body = {k: v for k, v in raw.items() if k not in ("sha256", "seal")}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def reseal(raw: dict, seal: bool = True) -> str:
    """``raw`` with its checksum recomputed the way the format says, and (``seal``) its
    seal too where it has one: what our own encoder would write for that content."""
    raw = {**raw, "sha256": checksum(raw)}
    if seal and "seal" in raw:
        raw["seal"] = hashlib.sha256(f"{raw['key']}:{raw['sha256']}".encode()).hexdigest()
    return json.dumps(raw)


def edited(**changes):
    """A corruption: the entry with fields changed (None: removed), checksum resealed."""
    def corrupt(text: str) -> str:
        raw = json.loads(text)
        raw.update(changes)
        return reseal({k: v for k, v in raw.items() if v is not None})
    return corrupt


DEEP = "[" * 100_000 + "]" * 100_000  # past any recursion limit of the JSON decoder


def tampered(text: str) -> str:
    """The artifact changed behind the checksum's back (an add that subtracts)."""
    raw = json.loads(text)
    raw["artifact"]["text"] = raw["artifact"]["text"].replace("arith.addf", "arith.subf")
    return json.dumps(raw)


CORRUPTIONS = {
    "truncated": lambda text: text[: len(text) // 2],
    "garbage": lambda text: "\x00\x13 not json }{",
    "binary garbage": lambda text: b"\xff\xfe\x00\x9f",
    "json list": lambda text: "[1, 2, 3]",
    "no info": edited(info=None),  # the KeyError: 'info' of the old loader
    "info not KernelInfo": edited(info='{"name": "add"}'),
    "info not a string": edited(info={"name": "add"}),
    "bad stages": edited(stages=[["frontend"]]),
    "bad blob": edited(artifact={"base64": "%%%"}),
    "old schema": edited(schema=1),
    "no schema": edited(schema=None),
    "other key": edited(key="0" * 64),
    "tampered": tampered,
    "checksum removed": lambda text: json.dumps({**json.loads(text), "sha256": None}),
    "deeply nested": lambda text: DEEP,
    "number too long to convert": lambda text: "1" * 5000,
    "deeply nested info": edited(info=DEEP),
}


@pytest.mark.parametrize("corruption", CORRUPTIONS)
def test_bad_entry_warns_recompiles_and_rewrites(cache_root, caplog, corruption):
    compile_and_check()
    [path] = entries(cache_root)
    good = path.read_text()
    assert "arith.addf" in json.loads(good)["artifact"]["text"]
    bad = CORRUPTIONS[corruption](good)
    path.write_bytes(bad if isinstance(bad, bytes) else bad.encode())
    with caplog.at_level(logging.WARNING, logger="tilec.cache"):
        compile_and_check()
    warnings = [r for r in caplog.records if r.name == "tilec.cache"]
    assert len(warnings) == 1 and "discarding cache entry" in warnings[0].getMessage()
    assert entries(cache_root) == [path]
    assert_valid(path)
    caplog.clear()
    compile_and_check()  # a plain hit now
    assert not [r for r in caplog.records if r.name == "tilec.cache"]


def not_a_file(kind: str, path: Path) -> None:
    """Put a FIFO or a non-empty directory where the file ``path`` is."""
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
        (path / "stray").write_text("x")


def finishes(work, seconds: float, fifo: Path) -> None:
    """``work()`` returns within ``seconds``. A call stuck opening ``fifo`` (waiting for a
    writer) is freed by opening it for writing once: the test fails instead of hanging."""
    errors: list = []

    def run() -> None:
        try:
            work()
        except Exception as e:  # noqa: BLE001 - raised below, in the test's thread
            errors.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    stuck = thread.is_alive()
    if stuck:
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(seconds)
    assert not stuck, f"still waiting after {seconds} s"
    if errors:
        raise errors[0]


def cache_warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "tilec.cache"]


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_fifo_or_directory_in_place_of_an_entry_is_replaced(cache_root, caplog, kind):
    compile_and_check()
    [path] = entries(cache_root)
    not_a_file(kind, path)
    with caplog.at_level(logging.WARNING, logger="tilec.cache"):
        finishes(compile_and_check, 20, path)
    [message] = cache_warnings(caplog)
    assert "discarding cache entry" in message and "not a regular file" in message
    assert_valid(path)
    caplog.clear()
    compile_and_check()  # a plain hit now
    assert not cache_warnings(caplog)


def swap_fields(a: dict, b: dict, fields: set[str]) -> None:
    for f in fields:
        a[f], b[f] = b[f], a[f]


# What a tool that rewrites or merges cache directories, or a bug of ours, could do to two
# entries, recomputing the documented checksum afterwards.
SWAPS = {
    "artifacts swapped": lambda a, b: swap_fields(a, b, {"artifact"}),
    "contents swapped, keys kept": lambda a, b: swap_fields(a, b, set(a) - {"key"}),
    "files swapped": lambda a, b: swap_fields(a, b, set(a)),  # the key check alone
}


@pytest.mark.parametrize("swap", SWAPS)
def test_artifact_moved_to_another_entry_is_a_miss(cache_root, caplog, swap):
    """BLOCK=256 and BLOCK=1024 compile ``add`` to the same name and parameters: only the
    key tells their artifacts apart, so one moved under the other's key must not load."""
    for block in (256, 1024):
        compile_and_check(block, 3000)
    paths = entries(cache_root)
    a, b = (json.loads(p.read_text()) for p in paths)
    assert a["artifact"] != b["artifact"]
    SWAPS[swap](a, b)
    for path, raw in zip(paths, (a, b), strict=True):
        path.write_text(reseal(raw, seal=False))
    with caplog.at_level(logging.WARNING, logger="tilec.cache"):
        for block in (256, 1024):
            compile_and_check(block, 3000)
    messages = cache_warnings(caplog)
    assert len(messages) == 2 and all("discarding cache entry" in m for m in messages)
    for path in paths:
        assert_valid(path)


def record_swapped(path: Path, other: Path) -> None:
    raw = json.loads(path.read_text())
    path.write_text(reseal({**raw, "record": json.loads(other.read_text())["record"]},
                           seal=False))


def record_moved(path: Path, other: Path) -> None:
    key = json.loads(path.read_text())["key"]
    path.write_text(reseal({**json.loads(other.read_text()), "key": key}, seal=False))


RECORD_DAMAGE = {
    "deeply nested": lambda path, other: path.write_text(DEEP),
    "fifo": lambda path, other: not_a_file("fifo", path),
    "directory": lambda path, other: not_a_file("directory", path),
    "record swapped": record_swapped,
    "moved, key rewritten": record_moved,
    "copied": lambda path, other: shutil.copyfile(other, path),  # the key check alone
}


@pytest.mark.parametrize("damage", RECORD_DAMAGE)
def test_bad_record_is_discarded_and_rewritten(cache_root, caplog, damage):
    keys = [cache.make_key("a test record", i) for i in range(2)]
    for i, key in enumerate(keys):
        cache.store_record("autotune", key, {"index": i})
    path, other = (cache.record_path("autotune", k) for k in keys)
    RECORD_DAMAGE[damage](path, other)
    loaded: list = []
    with caplog.at_level(logging.WARNING, logger="tilec.cache"):
        finishes(lambda: loaded.append(cache.load_record("autotune", keys[0])), 20, path)
    assert loaded == [None]
    [message] = cache_warnings(caplog)
    assert "discarding cache record" in message
    assert not os.path.lexists(path)
    cache.store_record("autotune", keys[0], {"index": 0})
    caplog.clear()
    assert [cache.load_record("autotune", k) for k in keys] == [{"index": 0}, {"index": 1}]
    assert not cache_warnings(caplog)


def test_nesting_near_the_recursion_limit_is_a_hit_or_a_miss(cache_root):
    """Some depths pass the JSON decoder but not the encoder that recomputes the checksum
    (a few frames deeper): at every depth, a load returns or discards, never raises."""
    key = cache.make_key("deep record")
    path = cache.record_path("autotune", key)
    path.parent.mkdir(parents=True)
    limit = sys.getrecursionlimit()
    for depth in range(limit - 200, limit + 1):
        nested: list = []
        for _ in range(depth):
            nested = [nested]
        sys.setrecursionlimit(limit + 1000)  # this test's own encoder must get through
        try:
            text = reseal({"schema": cache.SCHEMA, "key": key, "record": {"x": nested},
                           "seal": ""})
        finally:
            sys.setrecursionlimit(limit)
        with pytest.raises(cache.InvalidEntry):
            cache.decode(key, text)  # no kernel info: never an entry
        path.write_text(text)
        assert cache.load_record("autotune", key) in (None, {"x": nested})


def test_cache_dir_follows_xdg_cache_home(tmp_path, monkeypatch):
    monkeypatch.delenv("TILEC_CACHE", raising=False)
    monkeypatch.delenv("TILEC_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "tilec"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")  # the XDG spec: ignore a relative path
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "tilec"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == tmp_path / "xdg" / "tilec"
    compile_and_check()
    assert len(entries(tmp_path / "xdg" / "tilec")) == 1
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / "own"))
    assert cache.cache_dir() == tmp_path / "own"


def test_binary_blobs_round_trip():
    info = KernelInfo("k", [Param("x", "f32", True, True)], "ptx", "sm_90", extra={"a": [1]})
    entry = cache.Entry(info, b"\x7fELF\x00\xff", {"ptx": ".entry k", "cubin": b"\x7fELF"},
                        [("frontend", "func.func @k")])
    assert cache.decode("k" * 64, cache.encode("k" * 64, entry)) == entry


def test_failed_write_leaves_no_temporary(cache_root, caplog, monkeypatch):
    def fail(src, dst):
        raise OSError("disk full")
    monkeypatch.setattr(cache.os, "replace", fail)
    with caplog.at_level(logging.WARNING, logger="tilec.cache"):
        compile_and_check()
    assert any("cannot write" in r.getMessage() for r in caplog.records)
    assert [p for p in cache_root.rglob("*") if p.is_file()] == []


def test_cache_module_imports_no_xdsl():
    code = "import sys, compiler.cache; print(any(m.startswith('xdsl') for m in sys.modules))"
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": repo_pythonpath()}, check=False)
    assert r.stdout.strip() == "False", r.stdout + r.stderr


# Each worker: `add` (BLOCK=128, the same entry in every worker) and `cast` (BLOCK=16 << i,
# an entry of its own), on every backend given; it starts once the go file exists.
WORKER = """
import pathlib, sys, time
import numpy as np
import compiler as tc
from examples.vector_add import add
from tests.conftest import repo_pythonpath
from tests.kernels import cast

i, go, backends = int(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3].split(",")
print("ready", flush=True)
while not go.exists():
    time.sleep(0.005)
n = 1000
x, y = np.arange(n, dtype=np.float32) * 0.75, np.full(n, 2, dtype=np.float32)
for backend in backends:
    out = np.zeros(n, dtype=np.float32)
    ck = tc.compile(add, signature="*f32, *f32, *f32, i32", constants={"BLOCK": 128},
                    backend=backend)
    ck[(tc.cdiv(n, 128),)](x, y, out, n)
    np.testing.assert_array_equal(out, x + y)
block = 16 << i
ints = np.zeros(n, dtype=np.int32)
ck = tc.compile(cast, signature="*f32, *i32, i32", constants={"BLOCK": block}, backend="numpy")
ck[(tc.cdiv(n, block),)](x, ints, n)
np.testing.assert_array_equal(ints, x.astype(np.int32))
print("ok", flush=True)
"""


def test_concurrent_processes_share_one_cache(tmp_path):
    root, go = tmp_path / "cache", tmp_path / "go"
    backends = ["numpy"] + (["wgsl"] if availability("wgsl")[0] else [])
    env = {**os.environ, "PYTHONPATH": repo_pythonpath(), "TILEC_CACHE_DIR": str(root)}
    env.pop("TILEC_CACHE", None)
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(i), str(go), ",".join(backends)],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for i in range(8)]
    try:
        for p in procs:  # every worker has imported tilec: now they compile at once
            assert p.stdout.readline().strip() == "ready"
        go.touch()
        results = [p.communicate(timeout=300) for p in procs]
    finally:
        for p in procs:
            p.kill()
    for p, (out, err) in zip(procs, results, strict=True):
        assert p.returncode == 0 and out.strip() == "ok", err
    files = [p for p in root.rglob("*") if p.is_file()]
    assert sorted(files) == entries(root)  # no temporaries left behind
    assert len(files) == len(backends) + 8
    for path in files:
        assert_valid(path)
