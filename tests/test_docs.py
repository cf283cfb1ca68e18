"""The documentation holds together: README.md and the pages of docs/ are listed in reading
order, and every relative Markdown link and #anchor in them (and in the subpackage READMEs)
leads to a file or a heading that exists."""

import re

import pytest

from common.paths import ROOT

# README.md and every page of docs/, in reading order: tests/test_documented_commands.py runs their
# ```bash blocks in this order, in one sandbox, so a page's commands may use what an earlier one built
DOCUMENTS = (
    "README.md",
    "docs/worldsense.md",
    "docs/blocks.md",
    "docs/canvas.md",
    "docs/already_said_that.md",
    "docs/models.md",
    "docs/database.md",
    "docs/benchmarks.md",
    "docs/suites.md",
)
LINKING = (*DOCUMENTS, *sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob("common/*/README.md")))
FENCE = re.compile(r"^```.*?^```[^\n]*$", re.M | re.S)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def read(document: str) -> str:
    """Return the text of a document named relative to the project root."""
    return (ROOT / document).read_text(encoding="utf-8")


def slug(heading: str) -> str:
    """Return GitHub's anchor of a heading's text: lower case, every character but letters,
    digits, spaces, `-` and `_` dropped, spaces turned into hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Return the anchors of a Markdown text's headings (outside code blocks); a repeated
    heading gets -1, -2, ... as on GitHub."""
    found: set[str] = set()
    for heading in re.findall(r"^#{1,6} (.+)$", FENCE.sub("", text), re.M):
        base = anchor = slug(heading)
        count = 0
        while anchor in found:
            count += 1
            anchor = f"{base}-{count}"
        found.add(anchor)
    return found


def relative_links(text: str) -> list[str]:
    """Return the targets of a Markdown text's links and images that are not URLs (outside code
    blocks and code spans), in order."""
    prose = re.sub(r"`[^`\n]*`", "", FENCE.sub("", text))
    return [target for target in LINK.findall(prose) if not re.match(r"[a-z]+:", target)]


def broken_links(document: str) -> list[str]:
    """Return the links of ``document`` whose file does not exist, or whose #anchor is not a
    heading of the Markdown file it names, each with the reason."""
    broken = []
    for target in relative_links(read(document)):
        path, _, anchor = target.partition("#")
        file = (ROOT / document).parent / path if path else ROOT / document
        if not file.exists():
            broken.append(f"{target}: no file {file.relative_to(ROOT)}")
        elif anchor and (file.suffix != ".md" or anchor not in anchors(file.read_text(encoding="utf-8"))):
            broken.append(f"{target}: no heading #{anchor} in {file.relative_to(ROOT)}")
    return broken


def test_documents_are_the_readme_and_every_page_of_docs():
    pages = {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")}
    assert set(DOCUMENTS) == {"README.md", *pages}
    assert len(DOCUMENTS) == len(set(DOCUMENTS))


@pytest.mark.parametrize("document", LINKING)
def test_every_relative_link_and_anchor_resolves(document):
    assert not broken_links(document)
    if document == "README.md":
        assert len(relative_links(read(document))) >= 10  # the parser sees the links


def test_the_link_checker_sees_what_is_broken(tmp_path, monkeypatch):
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(
        "# A page\n\n## Scaling out: raise `concurrency`\n\n```\n# not a heading\n```\n"
    )
    (tmp_path / "README.md").write_text(
        "[ok](docs/a.md#scaling-out-raise-concurrency) [top](#the-readme) [web](https://x.org/#y)\n"
        "`[code](nowhere.md)` [gone](docs/b.md) [bad](docs/a.md#not-a-heading)\n"
        "[no](#nothing)\n\n# The README\n"
    )
    assert broken_links("README.md") == [
        "docs/b.md: no file docs/b.md",
        "docs/a.md#not-a-heading: no heading #not-a-heading in docs/a.md",
        "#nothing: no heading #nothing in README.md",
    ]


def test_anchors_follow_github():
    assert slug("Scaling out: serve the model elsewhere, raise `concurrency`") == (
        "scaling-out-serve-the-model-elsewhere-raise-concurrency"
    )
    assert slug("Asking a model: `scripts/ask_model.py`") == "asking-a-model-scriptsask_modelpy"
    assert anchors("# Speed\n\n## Speed\n") == {"speed", "speed-1"}


def test_readme_stays_short():
    assert len(read("README.md").splitlines()) <= 300  # the details live in docs/
