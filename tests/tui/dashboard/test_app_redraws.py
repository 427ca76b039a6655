"""The footer's keys come composed in their compact style."""

from __future__ import annotations

import pytest
from textual.widgets._footer import FooterKey  # not exported by textual.widgets; the footer's one key

from factory_schedule.tui.dashboard.widgets.footer import KeysFooter

from .test_app_journeys import SIZE, make_app, synchronously


@synchronously
async def test_a_compact_footers_keys_are_composed_compact(demo_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Textual's key sets its compact class from its `compact` watcher once mounted, which styles it a second
    time before the first paint: the footer's keys have the class when the watcher first runs."""
    had_it: list[bool] = []
    watch = FooterKey._watch_compact

    def watched(key: FooterKey, compact: bool) -> None:
        had_it.append(key.has_class("-compact"))
        watch(key, compact)

    monkeypatch.setattr(FooterKey, "_watch_compact", watched)
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.query_one(KeysFooter).compact
        keys = app.query(FooterKey)
        assert len(keys) > 5 and all(key.has_class("-compact") for key in keys)
        assert len(had_it) >= len(keys) and all(had_it)
