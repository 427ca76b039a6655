"""Occurrence identity: Product IDs, lane IDs and the three occurrence ID forms.

An occurrence is named by its lane and its local date (basic) or ISO week (every
weekly rhythm), so the same night or week always gets the same ID however often
a runner asks:

    discovery/<product>/basic/<YYYY-MM-DD>
    discovery/<product>/full/<YYYY-Www>
    discovery/portfolio/<audit|synthesis|bundle>/<YYYY-Www>
    discovery/portfolio/<promotion|promotion-reviewer|maturation|maturation-reviewer>/<YYYY-MM-DD>

The last form is the staged lanes' runs (core/pipeline): daily portfolio rhythms named after the
runs they schedule, so a run's identity is its lane's rhythm. They share the schedule's `discovery/`
occurrence prefix because they are occurrences of the same schedule (the same admission, ceiling
and account stops); the pipeline's own commands keep their `pipeline/` prefix.

Product IDs are 1-32 characters of lowercase ASCII letters, digits and hyphens,
starting and ending with a letter or digit (so an ID is safe in a path, a
command ID and a launchd label). `portfolio` is reserved for the portfolio
rhythms and refused as a Product ID.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re
from dataclasses import dataclass

from pendulum import Date

from .errors import invalid
from .text import checked_text
from .zones import iso_week_of, monday_of_week, parse_local_date

# The staged lanes' runs, in their stagger order (promotion, its reviewer, maturation, its reviewer).
PIPELINE_RHYTHMS: tuple[str, ...] = ("promotion", "promotion-reviewer", "maturation", "maturation-reviewer")
DISCOVERY_RHYTHMS: tuple[str, ...] = ("basic", "full", "audit", "synthesis", "bundle")
RHYTHMS: tuple[str, ...] = (*DISCOVERY_RHYTHMS, *PIPELINE_RHYTHMS)
PRODUCT_RHYTHMS: tuple[str, ...] = ("basic", "full")
PORTFOLIO = "portfolio"
PORTFOLIO_RHYTHMS: tuple[str, ...] = ("audit", "synthesis", "bundle")  # discovery's weekly portfolio rhythms
WEEKLY_RHYTHMS: tuple[str, ...] = ("full", "audit", "synthesis", "bundle")
DAILY_RHYTHMS: tuple[str, ...] = ("basic", *PIPELINE_RHYTHMS)
OCCURRENCE_PREFIX = "discovery"

PRODUCT_ID_PATTERN = r"^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$"
PRODUCT_ID_RULE = ("1 to 32 lowercase letters, digits and hyphens, starting and ending with a letter or digit, "
                   "not 'portfolio'")
_PRODUCT_ID = re.compile(PRODUCT_ID_PATTERN)
_DATE_KEY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_WEEK_KEY = re.compile(r"^\d{4}-W\d{2}$")


def is_valid_product_id(value: object) -> bool:
    """A Product ID by the pattern above; `portfolio` is reserved and so is not one."""
    return isinstance(value, str) and value != PORTFOLIO and _PRODUCT_ID.match(value) is not None


def is_valid_lane_owner(product: object, rhythm: object) -> bool:
    """Whether `product` may have a lane of `rhythm`: Products have basic and full, portfolio the rest."""
    if product == PORTFOLIO:
        return rhythm in PORTFOLIO_RHYTHMS or rhythm in PIPELINE_RHYTHMS
    return is_valid_product_id(product) and rhythm in PRODUCT_RHYTHMS


def _check_owner(product: object, rhythm: object) -> None:
    if rhythm not in RHYTHMS:
        raise invalid(f"unknown rhythm {rhythm!r} (one of {', '.join(RHYTHMS)})")
    if product == PORTFOLIO:
        if rhythm not in PORTFOLIO_RHYTHMS and rhythm not in PIPELINE_RHYTHMS:
            raise invalid(f"portfolio has only the {', '.join(PORTFOLIO_RHYTHMS + PIPELINE_RHYTHMS)} rhythms, "
                          f"not {rhythm!r}")
        return
    if not is_valid_product_id(product):
        raise invalid(f"invalid Product ID {product!r} (1-32 of a-z, 0-9 and '-', not starting or ending with '-')")
    if rhythm not in PRODUCT_RHYTHMS:
        raise invalid(f"a Product has only the basic and full rhythms; {rhythm!r} belongs to portfolio")


def is_weekly(rhythm: str) -> bool:
    return rhythm in WEEKLY_RHYTHMS


def is_pipeline_rhythm(rhythm: object) -> bool:
    """Whether `rhythm` schedules a staged lane's run (its identity is the rhythm's name)."""
    return rhythm in PIPELINE_RHYTHMS


def pipeline_lane_of_run(run: str) -> str:
    """The staged lane (promotion or maturation) a scheduled run works: the run's name up to its '-'."""
    return run.split("-", 1)[0]


def lane_id(product: str, rhythm: str) -> str:
    """`<product>/<rhythm>`, refusing a pairing the commission could not hold."""
    _check_owner(product, rhythm)
    return f"{product}/{rhythm}"


def parse_lane_id(value: object) -> tuple[str, str]:
    """(product, rhythm) of a lane ID; INVALID otherwise."""
    if not isinstance(value, str) or value.count("/") != 1:
        raise invalid(f"a lane ID is '<product>/<rhythm>', got {value!r}")
    checked_text("lane", value)
    product, rhythm = value.split("/")
    _check_owner(product, rhythm)
    return product, rhythm


def occurrence_key(rhythm: str, key: object) -> str:
    """The canonical key of an occurrence of `rhythm`: its local date for basic, its ISO week otherwise.

    A weekly rhythm also accepts a date and takes the ISO week that date lies in.
    """
    if rhythm not in RHYTHMS:
        raise invalid(f"unknown rhythm {rhythm!r}")
    if not is_weekly(rhythm):
        if isinstance(key, str) and _DATE_KEY.match(key) is None:
            raise invalid(f"a {rhythm} occurrence is keyed by its local date 'YYYY-MM-DD', got {key!r}")
        return parse_local_date(key).to_date_string()
    if isinstance(key, _dt.date):
        return iso_week_of(key)
    if isinstance(key, str) and _WEEK_KEY.match(key) is not None:
        monday_of_week(key)
        return key
    raise invalid(f"a {rhythm} occurrence is keyed by its ISO week 'YYYY-Www', got {key!r}")


def occurrence_id(product: str, rhythm: str, key: object) -> str:
    """The occurrence ID of a lane on a local date (basic) or ISO week (weekly rhythms)."""
    _check_owner(product, rhythm)
    return f"{OCCURRENCE_PREFIX}/{product}/{rhythm}/{occurrence_key(rhythm, key)}"


@dataclass(frozen=True)
class OccurrenceRef:
    """A parsed occurrence ID. `key` is the date or week string; exactly one of `date`/`week` is set."""

    product: str
    rhythm: str
    key: str
    lane: str
    date: Date | None
    week: str | None

    @property
    def id(self) -> str:
        return f"{OCCURRENCE_PREFIX}/{self.product}/{self.rhythm}/{self.key}"

    @property
    def weekly(self) -> bool:
        return self.week is not None


def parse_occurrence_id(value: object) -> OccurrenceRef:
    """Parse one of the three forms, refusing anything else with INVALID; parsing is exact, so
    `parse_occurrence_id(x).id == x` for every accepted `x`."""
    if not isinstance(value, str):
        raise invalid(f"an occurrence ID is a string, got {type(value).__name__}")
    return _parsed_occurrence_id(str(value))


@functools.lru_cache(maxsize=1024)
def _parsed_occurrence_id(value: str) -> OccurrenceRef:
    """`parse_occurrence_id` of a string, memoised: a runner names the same few occurrences in every command, and
    the answer (frozen, of immutable values) depends on the text alone; a refusal raises and is never kept."""
    checked_text("occurrence ID", value)
    parts = value.split("/")
    if len(parts) != 4 or parts[0] != OCCURRENCE_PREFIX:
        raise invalid(f"an occurrence ID is 'discovery/<product>/<rhythm>/<date or week>', got {value!r}")
    _prefix, product, rhythm, key = parts
    _check_owner(product, rhythm)
    canonical = occurrence_key(rhythm, key)
    if canonical != key:
        raise invalid(f"occurrence ID key {key!r} is not canonical (expected {canonical!r})")
    if is_weekly(rhythm):
        return OccurrenceRef(product, rhythm, key, f"{product}/{rhythm}", None, key)
    return OccurrenceRef(product, rhythm, key, f"{product}/{rhythm}", parse_local_date(key), None)
