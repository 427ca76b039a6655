"""Text from a journal as a person's terminal may show it: visible characters, never instructions.

The journal may hold text written before the engine refused control characters, and whatever the shell
shows from it (plain-text output, the dashboard, a desktop notification) passes through `printable`, the
one rule for all three: every control (C0, DEL, C1), format (bidirectional overrides included), surrogate,
private-use, unassigned or line/paragraph separator character becomes a visible escape such as `\\x1b`.
"""

from __future__ import annotations

import unicodedata

_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def _escaped(ch: str) -> str:
    if unicodedata.category(ch) not in _UNSAFE_CATEGORIES:
        return ch
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(value: object) -> str:
    """`value` as text with nothing a terminal would act on."""
    text = value if isinstance(value, str) else str(value)
    if text.isprintable():  # the common case, at C speed: no character of those categories (nor others)
        return text
    return "".join(_escaped(ch) for ch in text)
