"""The documentation lives in the repository and points only into it: no file refers to
documents outside the checkout, every relative Markdown link (and its #anchor) resolves,
and the repository paths the README, CONTRIBUTING.md and docs/ name exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

SKIP_DIRS = {"__pycache__", "build", "dist", "node_modules"}
# Documents a developer machine may have beside the checkout, which a clone does not.
OUTSIDE = re.compile(r"\.\./shared|\bshared/(SPEC|ARCHITECTURE)|\bSPEC(\.md|\s+section)|"
                     r"\bARCHITECTURE(\.md)?\b")
_FENCED = re.compile(r"^\s*```.*?^\s*```", re.MULTILINE | re.DOTALL)
_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*(\S+)", re.MULTILINE)
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.MULTILINE)
_REPO_PATH = re.compile(r"`((?:compiler|backends|dialects|tests|scripts|examples|benchmarks|"
                        r"docs)/[\w./-]*)`")


def _files(suffix: str) -> list[Path]:
    """The repository's files ending in ``suffix``, outside hidden and build directories."""
    return sorted(p for p in ROOT.rglob(f"*{suffix}")
                  if not any(part.startswith(".") or part in SKIP_DIRS or
                             part.endswith(".egg-info")
                             for part in p.relative_to(ROOT).parts[:-1]))


MARKDOWN = _files(".md")
DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]


def _prose(text: str) -> str:
    """Markdown without its code blocks and code spans (links there are not links)."""
    return _CODE.sub("", _FENCED.sub("", text))


def links(doc: Path) -> list[str]:
    text = _prose(doc.read_text())
    return _LINK.findall(text) + _REFERENCE.findall(text)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as '-'."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(doc: Path) -> set[str]:
    return {slug(h) for h in _HEADING.findall(_FENCED.sub("", doc.read_text()))}


def broken_links(doc: Path) -> list[str]:
    """The relative links of ``doc`` whose file (inside the repository) or anchor is
    missing."""
    bad = []
    for target in links(doc):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        where = (doc.parent / path).resolve() if path else doc
        if path and not (where.is_relative_to(ROOT) and where.exists()):
            bad.append(f"{target}: no such file in the repository")
        elif anchor and where.suffix == ".md" and anchor not in anchors(where):
            bad.append(f"{target}: no heading #{anchor} in {where.name}")
    return bad


@pytest.mark.parametrize("path", MARKDOWN + _files(".py"), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_reference_outside_the_repository(path: Path):
    if path == Path(__file__):
        return
    hits = [f"{i}: {line.strip()}" for i, line in enumerate(path.read_text().splitlines(), 1)
            if OUTSIDE.search(line)]
    assert not hits, f"{path.relative_to(ROOT)} refers to documents a clone does not have: {hits}"


@pytest.mark.parametrize("doc", MARKDOWN, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(doc: Path):
    assert not broken_links(doc)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_named_repository_paths_exist(doc: Path):
    """A path like `compiler/passes/layouts.py` in the prose names a file that exists."""
    missing = sorted({p for p in _REPO_PATH.findall(_FENCED.sub("", doc.read_text()))
                      if not (ROOT / p.rstrip("/")).exists()})
    assert not missing, f"{doc.relative_to(ROOT)} names paths that do not exist: {missing}"


def test_the_readme_links_the_docs():
    targets = set(links(ROOT / "README.md"))
    assert {"docs/language.md", "docs/design.md"} <= targets


def test_the_checks_catch_what_they_look_for(tmp_path: Path):
    doc = ROOT / "docs" / "language.md"
    assert slug("The `tilec` command") == "the-tilec-command"
    assert slug("Array tiles, cuTile style") in anchors(doc)
    fake = doc.with_name("a-missing-page.md")
    assert not fake.exists()
    page = tmp_path / "page.md"
    page.write_text(f"[a]({fake}) [b](#nowhere) [c](https://xdsl.dev) `[d](nowhere.md)`\n"
                    "# Here\n[e](#here)\n```\n[f](nowhere.md)\n```\n")
    assert links(page) == [str(fake), "#nowhere", "https://xdsl.dev", "#here"]
    assert len(broken_links(page)) == 2
    assert OUTSIDE.search("the design is in `" + "../shared/ARCHITECTURE.md`")
    assert OUTSIDE.search("see SPEC section 3")
    assert not OUTSIDE.search("shared/ memory, the specification of PTX")
