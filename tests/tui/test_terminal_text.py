"""One rule for journal text shown to a person: plain output, the dashboard and notifications escape alike."""

from __future__ import annotations

import pytest

from factory_schedule.tui.cli import output
from factory_schedule.tui.dashboard import safety
from factory_schedule.tui.host import notify
from factory_schedule.tui.terminal_text import printable


@pytest.mark.parametrize(("raw", "shown"), [
    ("\x1b[2J", "\\x1b[2J"),             # C0: ESC
    ("a\x00b", "a\\x00b"),               # NUL
    ("\x7f", "\\x7f"),                   # DEL
    ("\x9b31m", "\\x9b31m"),             # C1: CSI
    ("\u202egnp.exe", "\\u202egnp.exe"),  # a bidirectional override
    ("\ud800", "\\ud800"),               # a lone surrogate
    ("line\u2028break", "line\\u2028break"),
    ("\ue000", "\\ue000"),               # private use
])  # fmt: skip
def test_every_character_a_terminal_would_act_on_is_shown_as_an_escape(raw: str, shown: str) -> None:
    assert printable(raw) == shown


@pytest.mark.parametrize("text", ["owner@factory.example", "[bold]r-43[/bold]", "Zoë · 02:40", "a\u00a0b", ""])
def test_ordinary_text_is_shown_as_it_is(text: str) -> None:
    assert printable(text) == text


def test_plain_output_the_dashboard_and_notifications_share_the_one_rule() -> None:
    assert output.printable is printable
    assert safety.printable is printable
    assert notify.safe_text("r\x1b[8m-43") == printable("r\x1b[8m-43")
