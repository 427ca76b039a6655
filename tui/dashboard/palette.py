"""The command palette's dashboard commands: every view and every form, by name."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

VIEW_COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("Tonight", "tonight", "Every lane, its plan in words, and tonight's timeline"),
    ("Occurrences", "occurrences", "Open and recent occurrences, details, status of any ID"),
    ("Ledger", "ledger", "Weeks with ceiling, debited and remaining"),
    ("Accounts", "accounts", "claude and chatgpt: records and stops"),
    ("History", "history", "The journal's events, newest first"),
    ("Health", "health", "Stale runners, missed lanes, stops, the ceiling"),
)
FORM_COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("Record a sign-in record", "record_account", "The owner's next account record (after a 401)"),
    ("Confirm an interrupted runner", "reconcile", "Reconcile a running occurrence whose runner is gone"),
    ("Record a commission revision", "record_commission", "From a JSON file or the proposed commission"),
)


def key_of(app: Any, action: str) -> str | None:
    """The key the app binds to `action` (as the footer shows it), so the palette can teach it."""
    for binding in app.BINDINGS:
        if binding.action == action:
            return binding.key_display or binding.key
    return None


def with_key(app: Any, action: str, help: str) -> str:
    key = key_of(app, action)
    return help if key is None else f"key {key} · {help}"


class DashboardCommands(Provider):
    def _commands(self) -> list[tuple[str, Callable[[], Any], str]]:
        app: Any = self.app
        commands: list[tuple[str, Callable[[], Any], str]] = [
            (f"Show {name}", partial(app.action_show_view, view), with_key(app, f"show_view('{view}')", help))
            for name, view, help in VIEW_COMMANDS
        ]
        commands += [
            (name, getattr(app, f"action_{action}"), with_key(app, action, help))
            for name, action, help in FORM_COMMANDS
        ]
        return commands

    async def discover(self) -> Hits:
        for name, callback, help in self._commands():
            yield DiscoveryHit(name, callback, help=help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, callback, help in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help)
