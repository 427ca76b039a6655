"""Every hypothesis test in the suite runs without wall-clock checks, so a busy machine cannot fail it.

A deadline per example or the "too slow" health check fails correct tests under CPU contention (two cores
shared by `-n 2` and other work): `tests/conftest.py` loads a profile without them, and this test finds
every property test and stateful machine and checks its effective settings, so a new test's own `@settings`
cannot bring them back unnoticed.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Iterator
from types import ModuleType

from hypothesis import HealthCheck, settings

import tests


def _test_modules() -> Iterator[ModuleType]:
    for info in pkgutil.walk_packages(tests.__path__, prefix="tests."):
        if info.name.rsplit(".", 1)[-1].startswith("test_") and ".bench" not in info.name:
            yield importlib.import_module(info.name)


def _hypothesis_settings() -> Iterator[tuple[str, settings]]:
    for module in _test_modules():
        for name, value in vars(module).items():
            if inspect.isfunction(value) and getattr(value, "is_hypothesis_test", False):
                yield f"{module.__name__}.{name}", value._hypothesis_internal_use_settings  # type: ignore[attr-defined]
            elif inspect.isclass(value) and name.startswith("Test"):  # a stateful machine's TestCase
                candidate = getattr(value, "settings", None)
                if isinstance(candidate, settings):
                    yield f"{module.__name__}.{name}", candidate


def test_no_hypothesis_test_times_its_examples_against_the_wall_clock():
    found = dict(_hypothesis_settings())
    assert "tests.store.test_canonical.test_an_object_joined_from_its_members_texts_is_its_canonical_text" in found
    slow = {name: (s.deadline, s.suppress_health_check) for name, s in found.items()
            if s.deadline is not None or HealthCheck.too_slow not in s.suppress_health_check}
    assert not slow, f"tests that can fail on a busy machine: {slow}"
