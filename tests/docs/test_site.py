"""What a reader meets first: a short README with the sections it promises, no lab notebook, one set of pictures."""

from __future__ import annotations

import re

from .pages import DOCS, LAB_NOTEBOOK, REPO, pages

README = REPO / "README.md"
SCREENSHOTS = REPO / "screenshots"

IMAGE = re.compile(r"!\[[^\]]*\]\(([^)]+)\)")


def test_the_readme_is_at_most_200_lines_with_the_sections_it_promises() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 200
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert "Your own factory in five commands" in headings
    assert {"Two commands", "Where to read on", "Performance"} <= set(headings)
    assert len(IMAGE.findall(text)) == 1, "one screenshot"
    assert "docs/development/performance.md" in text


def test_no_page_a_reader_reads_keeps_a_lab_notebook() -> None:
    found = [f"{page.relative_to(REPO)}:{number}: {line.strip()}"
             for page in pages() for number, line in enumerate(page.read_text().splitlines(), start=1)
             if LAB_NOTEBOOK.search(line)]
    assert found == []


def test_the_lab_notebook_check_catches_history_words() -> None:
    for line in ("Re-measured at the end of this stop", "figures of stop 12's build", "as the seed says",
                 "the timeline used to draw one span per cell", "see issue #20"):
        assert LAB_NOTEBOOK.search(line), line
    assert not LAB_NOTEBOOK.search("a refusal that used tokens has unknown effect")


def test_the_readme_and_the_site_show_the_same_screenshot_files() -> None:
    link = DOCS / "screenshots"
    assert link.is_symlink() and link.resolve() == SCREENSHOTS.resolve()
    shown = {(page, target) for page in pages() for target in IMAGE.findall(page.read_text())}
    assert shown
    for page, target in shown:
        image = (page.parent / target).resolve()
        assert image.parent == SCREENSHOTS.resolve() and image.is_file(), (page, target)
