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
