"""The wheel: built from a copy of the source tree the way a user builds it (``pip wheel
--no-deps --no-build-isolation``, no network), it holds every module of ``compiler``,
``dialects`` and ``backends`` and nothing else, its metadata matches pyproject.toml, and
installed into a fresh virtual environment it imports and runs a kernel outside the
repository. The dependencies are not installed again (that needs the network): the fresh
environment sees the running one's site-packages through a ``.pth`` file, whose own
``.pth`` files (the editable install of the repository) are therefore not run."""

import email.parser
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

tomllib = pytest.importorskip("tomllib")

PACKAGES = ("compiler", "dialects", "backends")
# copied beside the packages so that leaving them out of the wheel is checked, not assumed
NOT_SHIPPED = ("tests", "benchmarks", "examples")
SKIP_IN_COPY = shutil.ignore_patterns("__pycache__", "*.pyc", "Output")

needs_bdist_wheel = pytest.mark.skipif(
    importlib.util.find_spec("setuptools.command.bdist_wheel") is None,
    reason="building a wheel offline needs setuptools>=70.1 (in the dev extra)")


def source_files() -> set[str]:
    """Every file of the shipped packages in the repository, as wheel paths."""
    return {f.relative_to(ROOT).as_posix() for pkg in PACKAGES for f in (ROOT / pkg).rglob("*")
            if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built from a clean copy of the tree (no stale ``build/`` to leak files)."""
    src = tmp_path_factory.mktemp("src")
    for name in (*PACKAGES, *NOT_SHIPPED):
        shutil.copytree(ROOT / name, src / name, ignore=SKIP_IN_COPY)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-index",
                    "--no-build-isolation", "-w", str(dist), str(src)], check=True)
    (built,) = dist.glob("tilec-*.whl")
    return built


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


@needs_bdist_wheel
def test_wheel_holds_every_module_and_nothing_else(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    shipped = {n for n in names if ".dist-info/" not in n}
    assert shipped == source_files()
    assert "compiler/py.typed" in shipped
    dist_info = f"tilec-{pyproject()['version']}.dist-info"
    assert {n.split("/")[0] for n in names} == {*PACKAGES, dist_info}


@needs_bdist_wheel
def test_wheel_metadata_matches_pyproject(wheel):
    project = pyproject()
    with zipfile.ZipFile(wheel) as z:
        info = f"tilec-{project['version']}.dist-info"
        meta = email.parser.Parser().parsestr(z.read(f"{info}/METADATA").decode())
        entry_points = z.read(f"{info}/entry_points.txt").decode()
    assert (meta["Name"], meta["Version"]) == (project["name"], project["version"])
    assert meta["Requires-Python"] == project["requires-python"]
    extras = project["optional-dependencies"]
    assert set(meta.get_all("Provides-Extra")) == set(extras)
    requires = {r.replace(" ", "") for r in meta.get_all("Requires-Dist")}
    assert {d.replace(" ", "") for d in project["dependencies"]} <= requires
    for extra, deps in extras.items():
        for dep in deps:
            assert f'{dep};extra=="{extra}"'.replace(" ", "") in requires
    assert "tilec = compiler.cli:main" in entry_points
    assert "tilec = compiler.universe:TILEC_UNIVERSE" in entry_points


KERNEL = textwrap.dedent("""\
    import numpy as np
    import compiler as tc
    import compiler.language as tl

    @tc.kernel
    def add(x, y, out, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out + offs, tl.load(x + offs, mask=mask) * 2.0 + tl.load(y + offs, mask=mask),
                 mask=mask)

    if __name__ == "__main__":
        x, y = np.arange(100, dtype=np.float32), np.linspace(0, 1, 100, dtype=np.float32)
        out = np.zeros(100, np.float32)
        add[(4,)](x, y, out, 100, BLOCK=32, backend="numpy")
        np.testing.assert_allclose(out, x * 2 + y)
        print(tc.__file__)
""")


@needs_bdist_wheel
def test_installed_wheel_runs_outside_the_repository(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                    "--no-deps", "--no-index", str(wheel)], check=True)
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = subprocess.run([python, "-c", purelib], capture_output=True, text=True, check=True)
    (Path(site.stdout.strip()) / "deps.pth").write_text(sysconfig.get_paths()["purelib"])
    (tmp_path / "kern.py").write_text(KERNEL)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"TILEC_CACHE": "0"}

    def run(*cmd):
        return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True,
                              check=True).stdout

    assert Path(run(python, "kern.py").strip()).is_relative_to(venv)
    tile_ir = run(venv / "bin" / "tilec", "compile", "kern.py:add", "-s", "*f32,*f32,*f32,i32",
                  "-c", "BLOCK=32", "--backend", "numpy", "--emit", "tile")
    assert "tile.load" in tile_ir and "tile.store" in tile_ir
