"""The footer of keys: Textual's Footer, rebuilt only when the keys it shows change.

Textual's Footer remounts every key on each bindings signal (a focus move, a screen resumed, a view's
keys refreshed), and the dashboard's start alone sends several with the same keys: each remount
styles and lays out a dozen widgets again before the first reading can be painted.

A compact footer's keys are composed with their compact class already set: Textual's key sets it from its
`compact` watcher once mounted, which styles each key (and its two parts) a second time before the first
paint, for the same look.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey  # not exported by textual.widgets; the footer's one key

Keys = tuple[tuple[Any, ...], ...]


def shown_keys(screen: Screen[Any], palette_key: str | None) -> Keys:
    """What the footer draws from the screen's bindings: each shown binding, whether it is enabled, its tooltip."""
    return tuple(
        (binding, enabled, tooltip)
        for key, (_node, binding, enabled, tooltip) in screen.active_bindings.items()
        if binding.show or key == palette_key
    )


class KeysFooter(Footer):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # The keys are composed with the footer (Textual's waits for the first signal, then composes again).
        self.set_reactive(Footer._bindings_ready, True)
        self._composed: Keys | None = None  # the keys of the last compose
        self._rebuilding = False  # a rebuild is queued: it reads the bindings as they are when it runs

    def _palette_key(self) -> str | None:
        return self.app.COMMAND_PALETTE_BINDING if self.show_command_palette else None

    def compose(self) -> ComposeResult:
        if self._bindings_ready:
            self._composed = shown_keys(self.screen, self._palette_key())
        for widget in super().compose():
            if isinstance(widget, FooterKey):
                widget.set_class(self.compact, "-compact", update=False)  # as its watcher will: styled once
            yield widget

    def bindings_changed(self, screen: Screen[Any]) -> None:
        """As Textual's Footer does, but one rebuild at a time, and none while the keys are the ones shown."""
        self._bindings_ready = True
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen:
            return
        if self._rebuilding or shown_keys(screen, self._palette_key()) == self._composed:
            return
        self._rebuilding = True
        self.call_after_refresh(self._rebuild)

    async def _rebuild(self) -> None:
        self._rebuilding = False
        await self.recompose()
