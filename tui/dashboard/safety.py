"""Journal text as the owner's terminal may show it: visible characters, never instructions.

Whatever the dashboard shows from a journal (runner tokens, work keys, sign-ins,
recorded-by and confirmed-by names, evidence, reasons, error messages that quote
them) may hold control characters, if an older engine recorded them, or square
brackets that Rich and Textual would read as markup. `printable` (the shell's one
rule, `tui/terminal_text.py`) turns every control character, lone surrogate and
bidirectional override into a visible escape such as `\\x1b`; `plain` wraps the
result in a `Text`, which is never parsed as markup. Every view builds what it
shows from these two.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from factory_schedule.tui.terminal_text import printable

__all__ = ["plain", "printable", "safe_text"]


def plain(value: Any, style: str = "") -> Text:
    """`printable(value)` as a Text: shown as it is, never read as markup."""
    return Text(printable(value), style=style)


def safe_text(text: Text) -> Text:
    """A Text whose characters are all printable; one that is not loses its inner styles (it came from a journal)."""
    shown = printable(text.plain)
    if shown == text.plain:
        return text
    return Text(shown, style=text.style, justify=text.justify)
