"""Leases: create-new acquisition, owner-checked heartbeat and release, staleness only after 2 x TTL."""

from __future__ import annotations

import traceback
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from factory_schedule.store import leases, open_journal
from tests.processes import PROCESSES
from tests.store.support import held_lease

T0 = datetime(2026, 12, 7, 2, 0, tzinfo=UTC)


def test_a_scope_is_taken_create_new_and_a_second_taker_learns_the_holder_and_age(journal_url: str) -> None:
    journal = open_journal(journal_url)
    lease = leases.acquire(journal, "worker", "tick-a", 30, T0, {"pid": 1})
    assert (lease.scope, lease.owner, lease.ttl_seconds, lease.info) == ("worker", "tick-a", 30, {"pid": 1})

    with pytest.raises(leases.LeaseHeldError) as held:
        leases.acquire(journal, "worker", "tick-b", 30, T0 + timedelta(seconds=12), {})
    assert held.value.holder.owner == "tick-a"
    assert held.value.age_seconds == 12
    assert "tick-a" in str(held.value) and "12.0s" in str(held.value)


def test_the_owner_itself_cannot_take_a_held_scope_twice(journal_url: str) -> None:
    journal = open_journal(journal_url)
    leases.acquire(journal, "worker", "tick-a", 30, T0, {})
    with pytest.raises(leases.LeaseHeldError):
        leases.acquire(journal, "worker", "tick-a", 30, T0, {})


def test_a_stale_holder_is_still_a_holder_until_removed(journal_url: str) -> None:
    journal = open_journal(journal_url)
    leases.acquire(journal, "worker", "tick-a", 1, T0, {})
    with pytest.raises(leases.LeaseHeldError) as held:
        leases.acquire(journal, "worker", "tick-b", 1, T0 + timedelta(hours=1), {})
    assert "stale" in str(held.value)


def test_a_heartbeat_extends_only_its_owners_lease(journal_url: str) -> None:
    journal = open_journal(journal_url)
    leases.acquire(journal, "segment/discovery/alpha/basic/2026-12-07/1", "r-1", 10, T0, {"pid": 7})
    scope = "segment/discovery/alpha/basic/2026-12-07/1"

    with pytest.raises(leases.LeaseOwnerError) as refused:
        leases.heartbeat(journal, scope, "r-intruder", T0 + timedelta(seconds=5))
    assert refused.value.holder is not None and refused.value.holder.owner == "r-1"
    assert held_lease(journal, scope).heartbeat_at == T0

    renewed = leases.heartbeat(journal, scope, "r-1", T0 + timedelta(seconds=5), {"pid": 8})
    assert renewed.heartbeat_at == T0 + timedelta(seconds=5)
    assert renewed.acquired_at == T0
    assert renewed.info == {"pid": 8}


def test_a_heartbeat_for_a_lease_that_is_gone_is_refused(journal_url: str) -> None:
    journal = open_journal(journal_url)
    with pytest.raises(leases.LeaseOwnerError) as refused:
        leases.heartbeat(journal, "worker", "tick-a", T0)
    assert refused.value.holder is None


def test_release_is_owner_checked_and_fails_loudly(journal_url: str) -> None:
    journal = open_journal(journal_url)
    leases.acquire(journal, "worker", "tick-a", 30, T0, {})

    with pytest.raises(leases.LeaseOwnerError):
        leases.release(journal, "worker", "tick-b")
    assert held_lease(journal, "worker").owner == "tick-a"

    leases.release(journal, "worker", "tick-a")
    assert leases.get_lease(journal, "worker") is None
    with pytest.raises(leases.LeaseOwnerError):
        leases.release(journal, "worker", "tick-a")

    again = leases.acquire(journal, "worker", "tick-b", 30, T0, {})
    assert again.owner == "tick-b"


def test_a_lease_is_stale_only_after_twice_its_ttl_without_a_heartbeat(journal_url: str) -> None:
    journal = open_journal(journal_url)
    lease = leases.acquire(journal, "worker", "tick-a", 10, T0, {})
    assert not leases.stale(lease, T0 + timedelta(seconds=19))
    assert not leases.stale(lease, T0 + timedelta(seconds=20))
    assert leases.stale(lease, T0 + timedelta(seconds=20, milliseconds=1))

    renewed = leases.heartbeat(journal, "worker", "tick-a", T0 + timedelta(seconds=15))
    assert not leases.stale(renewed, T0 + timedelta(seconds=30))
    assert leases.stale(renewed, T0 + timedelta(seconds=36))


def test_remove_stale_removes_only_what_is_stale_when_it_deletes(journal_url: str) -> None:
    journal = open_journal(journal_url)
    leases.acquire(journal, "worker", "tick-a", 10, T0, {})

    assert leases.remove_stale(journal, "worker", T0 + timedelta(seconds=20)) is None
    assert leases.get_lease(journal, "worker") is not None

    # A heartbeat that lands before the delete keeps the lease, whatever the caller saw earlier.
    seen = held_lease(journal, "worker")
    assert leases.stale(seen, T0 + timedelta(seconds=25))
    leases.heartbeat(journal, "worker", "tick-a", T0 + timedelta(seconds=24))
    assert leases.remove_stale(journal, "worker", T0 + timedelta(seconds=25)) is None
    assert held_lease(journal, "worker").owner == "tick-a"

    removed = leases.remove_stale(journal, "worker", T0 + timedelta(seconds=45))
    assert removed is not None and removed.owner == "tick-a"
    assert leases.get_lease(journal, "worker") is None
    assert leases.remove_stale(journal, "worker", T0 + timedelta(seconds=45)) is None


def test_leases_are_listed_by_scope_and_never_touch_the_event_chain(journal_url: str) -> None:
    journal = open_journal(journal_url)
    leases.acquire(journal, "worker", "tick-a", 30, T0, {})
    leases.acquire(journal, "segment/discovery/alpha/basic/2026-12-07/1", "r-1", 30, T0, {"segment": 1})
    assert [lease.scope for lease in leases.list_leases(journal)] == [
        "segment/discovery/alpha/basic/2026-12-07/1",
        "worker",
    ]
    assert journal.head("discovery/schedule") == 0
    journal.verify("discovery/schedule")


def test_a_lease_instant_must_carry_a_zone(journal_url: str) -> None:
    journal = open_journal(journal_url)
    with pytest.raises(ValueError):
        leases.acquire(journal, "worker", "tick-a", 30, datetime(2026, 12, 7, 2, 0), {})
    assert leases.list_leases(journal) == []


def _race_for_worker(url: str, owner: str, barrier: Any, queue: Any) -> None:
    try:
        journal = open_journal(url)
        barrier.wait(timeout=60)
        try:
            leases.acquire(journal, "worker", owner, 30, datetime.now(UTC), {"owner": owner})
            queue.put({"owner": owner, "won": True})
        except leases.LeaseHeldError as held:
            queue.put({"owner": owner, "won": False, "holder": held.holder.owner})
    except BaseException:
        queue.put({"owner": owner, "error": traceback.format_exc()})


def test_processes_racing_for_one_scope_leave_exactly_one_holder(journal_url: str) -> None:
    open_journal(journal_url)  # create the schema before the race
    context = PROCESSES
    racers = 6
    barrier = context.Barrier(racers)
    queue = context.Queue()
    processes = [
        context.Process(target=_race_for_worker, args=(journal_url, f"tick-{n}", barrier, queue))
        for n in range(racers)
    ]
    for process in processes:
        process.start()
    results = [queue.get(timeout=120) for _ in processes]
    for process in processes:
        process.join(timeout=60)
    assert not [r for r in results if "error" in r], results
    winners = [r["owner"] for r in results if r["won"]]
    assert len(winners) == 1
    assert {r["holder"] for r in results if not r["won"]} == set(winners)
    assert held_lease(open_journal(journal_url), "worker").owner == winners[0]


def test_a_lease_whose_ttl_rounds_to_zero_milliseconds_is_refused(journal_url: str) -> None:
    """A TTL stored as 0 ms would be stale at once: every holder would look dead the moment it took its scope."""
    journal = open_journal(journal_url)
    now = datetime(2026, 12, 1, tzinfo=UTC)
    with pytest.raises(ValueError, match="TTL"):
        leases.acquire(journal, "worker", "tick-1", 0.0004, now)
    assert leases.list_leases(journal) == []
