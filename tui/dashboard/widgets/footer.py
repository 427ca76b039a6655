"""The footer of keys: Textual's Footer, rebuilt only when the keys it shows change.

Textual's Footer remounts every key on each bindings signal (a focus move, a screen resumed, a view's
keys refreshed), and the dashboard's start alone sends several with the same keys: each remount
styles and lays out a dozen widgets again before the first reading can be painted.

A compact footer's keys are composed with their compact class already set: Textual's key sets it from its
`compact` watcher once mounted, which styles each key (and its two parts) a second time before the first
paint, for the same look.

When the footer is narrower than its keys in a row, it hides its spare keys (the dashboard's: the views',
which the tab row names and the keys panel lists), so the keys after them stay on screen. Only their
display changes, by a class on the footer: a resize shows or hides keys already composed and never
rebuilds them, and their bindings stay, so a hidden key still works.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.cells import cell_len
from textual import events
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
    DEFAULT_CSS = """
    KeysFooter.-narrow FooterKey.-spare {
        display: none;
    }
    """

    def __init__(self, spare_keys: Iterable[str] = (), **kwargs: Any) -> None:
        """`spare_keys`: the keys (as bound) it hides while it is too narrow for every key it shows."""
        super().__init__(**kwargs)
        self.spare_keys = frozenset(spare_keys)
        # The keys are composed with the footer (Textual's waits for the first signal, then composes again).
        self.set_reactive(Footer._bindings_ready, True)
        self._composed: Keys | None = None  # the keys of the last compose
        self._rebuilding = False  # a rebuild is queued: it reads the bindings as they are when it runs

    def _palette_key(self) -> str | None:
        return self.app.COMMAND_PALETTE_BINDING if self.show_command_palette else None

    def keys_width(self) -> int:
        """The cells the composed keys take in a row, as Textual's Footer lays them out: compact, a key is its
        key, a space and its description, then a one-cell margin; otherwise the key is padded a cell each
        side and the description a cell after, with no margin. A binding without a description is never shown;
        the palette's key, which Textual docks at the right end behind a border, is counted as any other."""
        gutter = 2 if self.compact else 3
        return sum(cell_len(self.app.get_key_display(binding)) + gutter + cell_len(binding.description)
                   for binding, _enabled, _tooltip in self._composed or ())

    def _fit(self, width: int) -> None:
        """Hide the spare keys while every key does not fit in `width` cells; show them once it does."""
        self.set_class(self.keys_width() > width, "-narrow")

    def compose(self) -> ComposeResult:
        if self._bindings_ready:
            self._composed = shown_keys(self.screen, self._palette_key())
            # Before its first layout the footer has no size: it is docked across the screen, the app's width.
            self._fit(self.size.width or self.app.size.width)
        for widget in super().compose():
            if isinstance(widget, FooterKey):
                widget.set_class(self.compact, "-compact", update=False)  # as its watcher will: styled once
                widget.set_class(widget.key in self.spare_keys, "-spare", update=False)
            yield widget

    def on_resize(self, event: events.Resize) -> None:
        self._fit(event.size.width)

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
