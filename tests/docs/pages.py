"""The pages a reader reads (README.md and the site under docs/) and their runnable code blocks.

A block is runnable when the line before its opening fence is the marker `<!-- runnable: NAME -->`; the
tests find it by that name, never by the heading above it, so a page's headings can change freely.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
INCOMING = DOCS / "incoming"  # notes others leave for the documentation, not part of the site
# Words that belong to the project's history, not to a reader's documentation: how a figure was re-measured,
# which round or stop changed what, what a review found, and pointers to documents a reader does not have.
LAB_NOTEBOOK = re.compile(
    r"\bused to\b|\bthis round\b|\bthe round's\b|\bthis stop\b|\bstop \d+\b|\bthe review found\b|\bre-measured\b"
    r"|\bthe seed\b|\bthe specification\b|\bspec §|\bissue #\d+|\bas before\b",
    re.I,
)
MARKED_BLOCK = re.compile(r"^<!-- runnable: ([a-z0-9-]+) -->\n```([a-z]*)\n(.*?)^```$", re.M | re.S)


@dataclass(frozen=True)
class Block:
    name: str
    language: str
    code: str
    page: Path


def pages() -> list[Path]:
    """README.md and every page of the site."""
    return [REPO / "README.md", *sorted(path for path in DOCS.rglob("*.md") if INCOMING not in path.parents)]


def runnable_blocks() -> list[Block]:
    return [Block(match[1], match[2], match[3], page)
            for page in pages() for match in MARKED_BLOCK.finditer(page.read_text())]


def blocks_named(name: str) -> list[Block]:
    """Every block marked `name` (the README may repeat a guide's); at least one must exist."""
    found = [block for block in runnable_blocks() if block.name == name]
    assert found, f"no code block is marked <!-- runnable: {name} -->"
    return found
