"""Occurrence identity: Product and lane IDs, the three occurrence ID forms and their parser."""

from __future__ import annotations

import datetime as dt

import pendulum
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factory_schedule.core.errors import ScheduleError
from factory_schedule.core.identity import (
    PIPELINE_RHYTHMS,
    PORTFOLIO,
    PORTFOLIO_RHYTHMS,
    RHYTHMS,
    WEEKLY_RHYTHMS,
    OccurrenceRef,
    is_valid_product_id,
    lane_id,
    occurrence_id,
    parse_lane_id,
    parse_occurrence_id,
)
from factory_schedule.core.zones import iso_week_of, monday_of_week


def test_rhythm_constants_are_the_seeds() -> None:
    assert ("basic", "full", "audit", "synthesis", "bundle", *PIPELINE_RHYTHMS) == RHYTHMS
    assert PIPELINE_RHYTHMS == ("promotion", "promotion-reviewer", "maturation", "maturation-reviewer")
    assert PORTFOLIO == "portfolio"
    assert PORTFOLIO_RHYTHMS == ("audit", "synthesis", "bundle")
    assert WEEKLY_RHYTHMS == ("full", "audit", "synthesis", "bundle")


def test_a_staged_lanes_run_is_a_daily_portfolio_occurrence_named_after_the_run() -> None:
    for rhythm in PIPELINE_RHYTHMS:
        expected = f"discovery/portfolio/{rhythm}/2026-12-07"
        assert occurrence_id(PORTFOLIO, rhythm, "2026-12-07") == expected
        ref = parse_occurrence_id(expected)
        assert (ref.lane, ref.date, ref.week, ref.id) == (f"portfolio/{rhythm}", pendulum.Date(2026, 12, 7), None,
                                                          expected)
    for refused in ("discovery/portfolio/promotion/2026-W50", "discovery/alpha/promotion/2026-12-07"):
        with pytest.raises(ScheduleError):
            parse_occurrence_id(refused)


@pytest.mark.parametrize("product", ["a", "alpha", "alpha-2", "9lives", "a" * 32])
def test_product_ids_are_lowercase_letters_digits_and_hyphens(product: str) -> None:
    assert is_valid_product_id(product)


@pytest.mark.parametrize(
    "product", ["portfolio", "", "a" * 33, "Alpha", "-alpha", "alpha-", "al_pha", "al/pha", "alpha ", "ålpha", None, 7]
)
def test_portfolio_and_malformed_product_ids_are_refused(product: object) -> None:
    assert not is_valid_product_id(product)


def test_occurrence_identity_is_stable_for_a_basic_night() -> None:
    expected = "discovery/alpha/basic/2026-12-07"
    assert occurrence_id("alpha", "basic", "2026-12-07") == expected
    assert occurrence_id("alpha", "basic", pendulum.Date(2026, 12, 7)) == expected
    assert parse_occurrence_id(expected) == OccurrenceRef(
        "alpha", "basic", "2026-12-07", "alpha/basic", pendulum.Date(2026, 12, 7), None
    )
    assert parse_occurrence_id(expected).id == expected


def test_occurrence_identity_is_stable_across_an_iso_week_including_2026_w53() -> None:
    days = ["2026-12-28", "2026-12-31", "2027-01-01", "2027-01-03"]
    assert {occurrence_id("alpha", "full", pendulum.parse(day).date()) for day in days} == {  # type: ignore[union-attr]
        "discovery/alpha/full/2026-W53"
    }
    assert occurrence_id("alpha", "full", pendulum.Date(2027, 1, 4)) == "discovery/alpha/full/2027-W01"
    for rhythm in PORTFOLIO_RHYTHMS:
        ref = parse_occurrence_id(occurrence_id(PORTFOLIO, rhythm, "2026-W53"))
        assert (ref.product, ref.rhythm, ref.key, ref.lane, ref.week, ref.date) == (
            "portfolio",
            rhythm,
            "2026-W53",
            f"portfolio/{rhythm}",
            "2026-W53",
            None,
        )


@pytest.mark.parametrize(
    "value",
    [
        "discovery/portfolio/basic/2026-12-07",  # portfolio has no basic
        "discovery/portfolio/full/2026-W53",  # ... nor full
        "discovery/alpha/audit/2026-W53",  # a Product has no portfolio rhythm
        "discovery/Alpha/basic/2026-12-07",
        "discovery/alpha/daily/2026-12-07",
        "discovery/alpha/basic/2026-02-30",  # impossible date
        "discovery/alpha/basic/2026-W53",  # basic is keyed by date
        "discovery/alpha/full/2026-12-31",  # full is keyed by week
        "discovery/alpha/full/2026-W54",
        "discovery/alpha/full/2027-W53",  # 2027 has 52 weeks
        "discovery/alpha/full/2026-W00",
        "discovery/alpha/full/2026-w53",
        "discovery/alpha/basic/2026-12-07/extra",
        "discovery/alpha/basic",
        "other/alpha/basic/2026-12-07",
        "discovery//basic/2026-12-07",
        " discovery/alpha/basic/2026-12-07",
        "",
        None,
    ],
)
def test_parse_occurrence_id_refuses_anything_but_the_three_forms(value: object) -> None:
    with pytest.raises(ScheduleError) as refused:
        parse_occurrence_id(value)
    assert refused.value.code == "INVALID"


def test_lane_ids_pair_products_with_basic_and_full_and_portfolio_with_the_rest() -> None:
    assert lane_id("alpha", "basic") == "alpha/basic"
    assert lane_id("alpha", "full") == "alpha/full"
    assert lane_id("portfolio", "bundle") == "portfolio/bundle"
    assert parse_lane_id("portfolio/audit") == ("portfolio", "audit")
    for product, rhythm in [("portfolio", "basic"), ("alpha", "synthesis"), ("Alpha", "basic"), ("alpha", "x")]:
        with pytest.raises(ScheduleError):
            lane_id(product, rhythm)
    for bad in ["alpha", "alpha/basic/x", "portfolio/full", 3]:
        with pytest.raises(ScheduleError):
            parse_lane_id(bad)


def test_occurrence_id_refuses_a_key_of_the_wrong_kind() -> None:
    with pytest.raises(ScheduleError):
        occurrence_id("alpha", "basic", "2026-W53")
    with pytest.raises(ScheduleError):
        occurrence_id("alpha", "full", "2026-12-31")
    with pytest.raises(ScheduleError):
        occurrence_id("portfolio", "basic", "2026-12-31")


PRODUCT_IDS = st.text("abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=32).filter(
    lambda s: not s.startswith("-") and not s.endswith("-") and s != PORTFOLIO
)
DATES = st.dates(min_value=dt.date(1990, 1, 1), max_value=dt.date(2060, 12, 31))


@settings(max_examples=200, deadline=None)
@given(product=PRODUCT_IDS, day=DATES, weekly=st.booleans())
def test_occurrence_ids_round_trip_through_the_parser(product: str, day: dt.date, weekly: bool) -> None:
    assert is_valid_product_id(product)
    rhythm = "full" if weekly else "basic"
    text = occurrence_id(product, rhythm, day)
    ref = parse_occurrence_id(text)
    assert (ref.id, ref.product, ref.rhythm, ref.lane) == (text, product, rhythm, f"{product}/{rhythm}")
    if weekly:
        assert ref.week == iso_week_of(day) and ref.date is None
        assert monday_of_week(ref.week) <= day < monday_of_week(ref.week).add(days=7)
    else:
        assert ref.date == day and ref.week is None and ref.key == day.isoformat()
