"""The disk cache: bad entries are discarded and recompiled, writes are atomic, and
processes sharing one cache directory agree."""

import hashlib
import json
import logging
import os
import subprocess
import sys
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


def compile_and_check() -> None:
    """Compile ``add`` through the disk cache and check that it adds."""
    ck = tc.compile(add, signature=SIG, constants={"BLOCK": 128}, backend="numpy")
    x, y = np.arange(300, dtype=np.float32), np.full(300, 2, dtype=np.float32)
    out = np.zeros(300, dtype=np.float32)
    ck[(3,)](x, y, out, 300)
    np.testing.assert_array_equal(out, x + y)


def entries(root: Path) -> list[Path]:
    return sorted(root.rglob("*.json"))


def assert_valid(path: Path) -> None:
    cache.decode(path.stem, path.read_text())  # raises InvalidEntry


def reseal(raw: dict) -> str:
    """``raw`` with a checksum that matches it, computed the way the format says."""
    body = {k: v for k, v in raw.items() if k != "sha256"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return json.dumps({**body, "sha256": hashlib.sha256(canonical.encode()).hexdigest()})


def edited(**changes):
    """A corruption: the entry with fields changed (None: removed), checksum resealed."""
    def corrupt(text: str) -> str:
        raw = json.loads(text)
        raw.update(changes)
        return reseal({k: v for k, v in raw.items() if v is not None})
    return corrupt


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
