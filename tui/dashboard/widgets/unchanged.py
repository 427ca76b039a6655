"""A line the screen already shows is not drawn again.

A reading arrives every minute and after every command, and most of what it says is what the screen shows
already. `Static.update` turns its content into a visual, marks the widget for a repaint and asks the screen
for a layout pass whatever the content, so each view hands a line to `update` only when it draws differently
from the content the widget holds (`Static.content`: the widget itself, no copy of it, is what is compared).
"""

from __future__ import annotations

from rich.text import Text
from textual.visual import VisualType
from textual.widgets import Static


def same(left: object, right: object) -> bool:
    """Do the two draw alike: equal strings, or Texts with the same characters, spans, style and settings.

    Anything else (a Rich group, a table) counts as changed: it is drawn again."""
    if isinstance(left, Text) and isinstance(right, Text):
        return (left.plain == right.plain and left.spans == right.spans and left.style == right.style
                and left.justify == right.justify and left.overflow == right.overflow
                and left.no_wrap == right.no_wrap and left.end == right.end and left.tab_size == right.tab_size)
    return type(left) is str and type(right) is str and left == right


def update(widget: Static, content: VisualType) -> None:
    """`widget.update(content)`, unless the widget holds content that draws alike."""
    if not same(widget.content, content):
        widget.update(content)
