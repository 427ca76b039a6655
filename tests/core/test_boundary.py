"""core is pure: its source imports and calls no host clock, file, process, network, environment or randomness.

Read with `ast`, so the rule covers every line of core, including code no test executes. Time reaches
core only through an injected clock (`self.clock.now()` is fine; `pendulum.now()` is not).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[2] / "core"

# Top-level modules core may import: its own package, store (the journal's types and canonical JSON,
# not open_journal), pendulum and pydantic, and stdlib modules that touch nothing outside the process.
ALLOWED_MODULES = frozenset(
    {
        "__future__",
        "abc",
        "base64",
        "binascii",
        "bisect",
        "collections",
        "contextlib",
        "copy",
        "dataclasses",
        "datetime",
        "decimal",
        "enum",
        "fractions",
        "functools",
        "hashlib",
        "heapq",
        "itertools",
        "json",
        "math",
        "numbers",
        "operator",
        "plistlib",
        "re",
        "string",
        "textwrap",
        "types",
        "typing",
        "typing_extensions",
        "unicodedata",
        "pendulum",
        "pydantic",
        "pydantic_core",
        "factory_schedule.store",
        "factory_schedule.core",
    }
)
# Signature verification is computation over bytes (no I/O, no randomness): core may import the Ed25519 public
# key and the exception it raises, and nothing else of `cryptography` (a private key's `generate` reads the
# operating system's randomness; signing belongs to the host, injected like the clock).
ALLOWED_EXACT_MODULES = frozenset({"cryptography.hazmat.primitives.asymmetric.ed25519", "cryptography.exceptions"})
FORBIDDEN_FROM_ED25519 = frozenset({"Ed25519PrivateKey"})
# Named so the failure says why; none of these is in ALLOWED_MODULES either.
FORBIDDEN_MODULES = frozenset(
    {
        "os", "sys", "subprocess", "socket", "random", "secrets", "pathlib", "threading", "asyncio", "time",
        "shutil", "tempfile", "io", "glob", "signal", "multiprocessing", "urllib", "http", "uuid", "platform",
        "ctypes", "importlib", "zoneinfo", "tzlocal", "textual", "factory_schedule.tui", "sqlite3",
        "sqlalchemy", "sqlmodel", "psycopg", "logging", "selectors", "select", "concurrent",
    }
)  # fmt: skip
FORBIDDEN_FROM_STORE = frozenset({"open_journal", "opening"})
FORBIDDEN_FROM_PENDULUM = frozenset(
    {"now", "today", "tomorrow", "yesterday", "local", "local_timezone", "set_local_timezone", "travel", "travel_to"}
)
FORBIDDEN_BUILTINS = frozenset({"open", "input", "print", "breakpoint", "exec", "eval", "compile", "__import__"})
# Attributes that read the host clock, zone or environment wherever they appear.
FORBIDDEN_ATTRIBUTES = frozenset(
    {
        "utcnow", "local_timezone", "set_local_timezone", "travel", "travel_to", "travel_back", "freeze",
        "localtime", "gmtime", "monotonic", "perf_counter", "getenv", "environ", "urandom",
    }
)  # fmt: skip
# Attributes that read the host clock when asked of a date/time module or class (not of an injected clock).
CLOCK_ATTRIBUTES = frozenset({"now", "today", "tomorrow", "yesterday", "local"})
CLOCK_OWNERS = frozenset({"pendulum", "datetime", "date", "DateTime", "Date", "_dt", "dt", "time", "_time"})


def _owner_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _top(module: str) -> str:
    """The package an import names: `factory_schedule.store` for `factory_schedule.store.x`, else its top."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "factory_schedule" else parts[0]


def violations(source: str, filename: str = "<core>") -> list[str]:
    """Every impure import or call in `source`, as 'file:line: what'."""
    found: list[str] = []

    def flag(node: ast.AST, what: str) -> None:
        found.append(f"{filename}:{getattr(node, 'lineno', 0)}: {what}")

    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = _top(alias.name)
                if alias.name in ALLOWED_EXACT_MODULES:
                    continue
                if top in FORBIDDEN_MODULES or top not in ALLOWED_MODULES:
                    flag(node, f"imports {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            top = _top(node.module or "")
            names = {alias.name for alias in node.names}
            exact = (node.module or "") in ALLOWED_EXACT_MODULES
            if node.level == 0 and not exact and (top in FORBIDDEN_MODULES or top not in ALLOWED_MODULES):
                flag(node, f"imports from {node.module}")
            if exact and names & FORBIDDEN_FROM_ED25519:
                flag(node, f"imports {sorted(names & FORBIDDEN_FROM_ED25519)}: core verifies, the host signs")
            if top == "factory_schedule.store" and (names & FORBIDDEN_FROM_STORE or "opening" in (node.module or "")):
                flag(node, f"imports {sorted(names & FORBIDDEN_FROM_STORE) or node.module} from store")
            if top == "pendulum" and names & FORBIDDEN_FROM_PENDULUM:
                flag(node, f"imports {sorted(names & FORBIDDEN_FROM_PENDULUM)} from pendulum")
            if "*" in names:
                flag(node, "star import")
        elif isinstance(node, ast.Attribute):
            if node.attr in FORBIDDEN_ATTRIBUTES:
                flag(node, f"uses .{node.attr}")
            elif node.attr in CLOCK_ATTRIBUTES and _owner_name(node.value) in CLOCK_OWNERS:
                flag(node, f"reads the host clock: {_owner_name(node.value)}.{node.attr}")
        elif isinstance(node, ast.Call):
            function = node.func
            if isinstance(function, ast.Name) and function.id in FORBIDDEN_BUILTINS:
                flag(node, f"calls {function.id}()")
            if isinstance(function, ast.Attribute):
                if function.attr == "astimezone" and not node.args and not node.keywords:
                    flag(node, "astimezone() with no zone converts to the host's zone")
                if function.attr == "fromtimestamp" and len(node.args) < 2 and not node.keywords:
                    flag(node, "fromtimestamp() without a zone reads the host's zone")
    return found


CORE_FILES = sorted(CORE.rglob("*.py"))


def test_core_has_source_to_check() -> None:
    assert {path.name for path in CORE_FILES} >= {"zones.py", "identity.py", "commission.py", "launchd.py"}


@pytest.mark.parametrize("path", CORE_FILES, ids=[str(path.relative_to(CORE)) for path in CORE_FILES])
def test_core_reads_no_host_clock_and_does_no_io(path: Path) -> None:
    assert violations(path.read_text(encoding="utf-8"), str(path.relative_to(CORE.parent))) == []


IMPURE = [
    "import os",
    "import os.path",
    "from os import environ",
    "import sys",
    "import subprocess",
    "import socket",
    "import random",
    "from random import choice",
    "import secrets",
    "from pathlib import Path",
    "import time",
    "from time import time",
    "import threading",
    "import asyncio",
    "import textual",
    "from factory_schedule.tui import cli",
    "import requests",
    "import core",
    "from store import canonical_json",
    "from factory_schedule.store import open_journal",
    "from factory_schedule.store.opening import open_journal",
    "from pendulum import now",
    "import pendulum\npendulum.now()",
    "import pendulum\npendulum.today()",
    "import pendulum\npendulum.local(2026, 1, 1)",
    "import pendulum\npendulum.local_timezone()",
    "import pendulum\npendulum.DateTime.now()",
    "import pendulum\npendulum.Date.today()",
    "import pendulum\nclock = pendulum.now",
    "import datetime\ndatetime.datetime.now()",
    "import datetime\ndatetime.datetime.utcnow()",
    "from datetime import date\ndate.today()",
    "import datetime as _dt\n_dt.date.today()",
    "from datetime import datetime\ndatetime.fromtimestamp(0)",
    "def f(instant):\n    return instant.astimezone()",
    "open('x')",
    "print('x')",
    "__import__('os')",
    "eval('1')",
    "import factory_schedule.store\nfactory_schedule.store.anything.environ",
    "from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey",
    "from cryptography.hazmat.primitives.asymmetric import ed25519",
    "from cryptography.hazmat.primitives.kdf.argon2 import Argon2id",
    "import cryptography",
]


@pytest.mark.parametrize("source", IMPURE)
def test_the_boundary_check_catches_each_impurity(source: str) -> None:
    assert violations(source) != []


PURE = [
    "from __future__ import annotations",
    "from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey",
    "from cryptography.exceptions import InvalidSignature",
    "import pendulum\npendulum.parse('2026-12-07T02:00:00Z')",
    "import pendulum\npendulum.datetime(2026, 12, 7, tz='UTC')",
    "from pendulum import Date, DateTime",
    "from factory_schedule.store import canonical_json, NewEvent, VersionConflictError",
    "from pydantic import BaseModel",
    "import hashlib, json, re, plistlib",
    "from datetime import datetime, timezone\ndatetime.fromtimestamp(0, timezone.utc)",
    "def tick(self):\n    return self.clock.now()",
    "def f(clock):\n    return clock.now().in_timezone('UTC')",
    "def f(instant, zone):\n    return instant.astimezone(zone)",
    "from .zones import zoned_instant",
    "import datetime as _dt\n_dt.time(2, 0)",
    "def f(lane):\n    return lane.time",
]


@pytest.mark.parametrize("source", PURE)
def test_the_boundary_check_lets_pure_code_and_the_injected_clock_through(source: str) -> None:
    assert violations(source) == []
