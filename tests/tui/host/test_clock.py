"""The host's zone: what `TZ` or /etc/localtime names, taken only when the zone database knows it."""

from __future__ import annotations

import pytest

from factory_schedule.core import DEFAULT_ZONE
from factory_schedule.tui.host.clock import host_zone, owner_zone


def test_the_host_zone_is_the_zone_tz_names_with_its_leading_colon_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", ":America/Chicago")
    assert host_zone() == owner_zone() == "America/Chicago"


@pytest.mark.parametrize("rule", ["CET-1CEST", "Not/AZone", "../../etc/passwd"])
def test_a_tz_that_names_no_known_zone_is_no_host_zone_and_the_proposal_takes_its_default(
        monkeypatch: pytest.MonkeyPatch, rule: str) -> None:
    """A POSIX rule is a valid TZ for the C library, but nothing here can show or compare it as a zone (the
    dashboard's header would fail on it)."""
    monkeypatch.setenv("TZ", rule)
    assert host_zone() is None
    assert owner_zone() == DEFAULT_ZONE
