"""The links of README.md and docs/ reach a file and a heading: the reference moves between pages,
and a link left pointing at a section that moved is a dead end for the reader."""

from __future__ import annotations

import re

from tests.conftest import REPO

README = REPO / "README.md"


FENCED = re.compile(r"^```.*?^```", re.M | re.S)


def anchors(path) -> set[str]:
    """The anchors GitHub gives a Markdown file's headings: lower case, punctuation dropped,
    spaces as hyphens."""
    text = FENCED.sub("", path.read_text(encoding="utf-8"))
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in re.findall(r"^#{1,6} (.+)$", text, re.M)}


def test_every_link_of_the_readme_and_the_docs_reaches_a_file_and_a_heading():
    """The reference moved from README.md into docs/: a link to a README section that is gone,
    or to a page renamed, is caught here."""
    pages = [README, *sorted((REPO / "docs").rglob("*.md"))]
    broken, seen = [], 0
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", FENCED.sub("", page.read_text(encoding="utf-8"))):
            if re.match(r"[a-z]+:", target):
                continue
            seen += 1
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                broken.append(f"{page.relative_to(REPO)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                broken.append(f"{page.relative_to(REPO)}: {target} (no such heading)")
    assert seen > 50 and not broken, "\n".join(broken)
