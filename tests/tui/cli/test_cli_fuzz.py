"""Hostile input to every schedule command: one JSON line and an exit code, never a traceback, and an error
writes nothing.

The command line runs in this process through `main(argv)` (fast enough for hypothesis), over one
commissioned journal with a running occurrence and the staged lanes configured with a week's Top-N; a
success may change the journal, an error must change neither the schedule nor the pipeline.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from factory_schedule.core import SCHEDULE_AGGREGATE
from factory_schedule.core.pipeline import PIPELINE_AGGREGATE
from factory_schedule.store import open_journal
from factory_schedule.tui.cli.main import main
from tests.tui.runner_support import commission_due_now, commission_file

HOSTILE_TEXT = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.characters(codec=None, categories=("Cc", "Cs", "Cf", "Zl", "Zp")), max_size=10),
    st.sampled_from(["", "-", "--", "\x00", "\x1b[2J\x1b[1;1Hall good", "\ud800", "a\udcff", "r-1", "discovery/x",
                     "../../etc/passwd", "' ; rm -rf / #", "\u202e", "x" * 5000]),
)
HOSTILE_NUMBER = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["nan", "inf", "-inf", "1e300", "1.5", "0x10", "", " 1", "9" * 400, "-0", "1_000"]),
)


def _nested(depth: int, leaf: Any = 1) -> str:
    return "[" * depth + json.dumps(leaf) + "]" * depth


HOSTILE_JSON = st.one_of(
    st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
                 lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children,
                                                                                   max_size=3),
                 max_leaves=10).map(json.dumps),
    st.integers(min_value=50, max_value=20_000).map(_nested),
    st.integers(min_value=50, max_value=20_000).map(lambda depth: '{"kind": ' + _nested(depth) + "}"),
    st.sampled_from(["", "not json", '{"kind": "result", "tokens": 1e400}', '"\\ud800"', '{"a": "\\udcff"}',
                     "\udcff", '{"kind": "result", "tokens": 12, "output": "ok"}', "[]", "null"]),
)

TEXT_FLAGS = ("--occurrence", "--runner", "--task", "--work", "--sign-in", "--reason", "--settled-by", "--status",
              "--account", "--recorded-by", "--lane", "--confirmed-by", "--evidence", "--scope", "--owner",
              "--run", "--week", "--decided-by", "--decision", "--approval", "--candidate", "--action",
              "--requested-by", "--approved")
NUMBER_FLAGS = ("--bound", "--attempt", "--call", "--segment", "--sequence", "--ttl", "--grace", "--pid")

COMMANDS = (
    ("call", "admit"), ("call", "end"), ("defer",), ("settle",), ("reconcile",), ("record-account",), ("start",),
    ("status",), ("plan",), ("show",), ("lease", "list"), ("lease", "heartbeat"), ("lease", "release"),
    ("record-commission",), ("health",), ("health", "--json"), ("tick",), ("launchd", "print"),
    ("launchd", "install"), ("lanes", "top-n"), ("lanes", "claim"), ("lanes", "report"),
    ("lanes", "heartbeat"), ("lanes", "abandon"), ("lanes", "escalation"), ("lanes", "approval-request"),
    ("lanes", "approval-decide"), ("lanes", "approval-use"), ("lanes", "show"),
)


def valid_invocations(occurrence: str) -> list[list[str]]:
    """One well-formed call of each writing command, for the fuzz to spoil one field of at a time."""
    return [
        ["call", "admit", "--occurrence", occurrence, "--runner", "r-1", "--task", "scan", "--work", "w1",
         "--bound", "1000", "--sign-in", "me", "--attempt", "1"],
        ["call", "end", "--occurrence", occurrence, "--runner", "r-1", "--call", "1", "--report",
         '{"kind": "result", "tokens": 12, "output": "ok"}'],
        ["defer", "--occurrence", occurrence, "--runner", "r-1", "--reason", "usage-limit", "--segment", "1"],
        ["settle", "--occurrence", occurrence, "--settled-by", "me", "--status", "completed", "--reason", "done"],
        ["reconcile", "--occurrence", occurrence, "--runner", "r-1", "--confirmed-by", "me", "--evidence", "gone"],
        ["record-account", "--account", "claude", "--sequence", "1", "--sign-in", "me", "--overage", "off",
         "--recorded-by", "owner"],
        ["start", "--lane", "alpha/basic", "--runner", "r-2"],
        ["lease", "heartbeat", "--scope", "worker", "--owner", "me"],
        ["tick", "--lane", "alpha/basic", "--ttl", "60", "--", "/bin/true"],
        ["lanes", "claim", "--lane", "promotion", "--run", "promotion", "--runner", "p-1", "--ttl", "60"],
        ["lanes", "report", "--lane", "promotion", "--task", "1", "--runner", "p-1", "--report",
         '{"artifact": "select.md", "sha256": "' + "ab" * 32 + '", "evidence": ["top-n"]}'],
        ["lanes", "top-n", "--week", "2026-W51", "--candidates", '[{"candidate": "c", "product": "alpha", "rank": 1}]'],
        ["lanes", "abandon", "--lane", "promotion", "--task", "1", "--runner", "p-1", "--confirmed-by", "me",
         "--evidence", "gone"],
        ["lanes", "approval-request", "--approval", "a-1", "--candidate", "c", "--action", "public-publish",
         "--requested-by", "p-1", "--reason", "listing"],
        ["lanes", "approval-decide", "--approval", "a-1", "--decided-by", "owner", "--approved", "on"],
        ["lanes", "show", "--lane", "maturation"],
    ]


@st.composite
def hostile_invocations(draw: st.DrawFn, occurrence: str) -> tuple[list[str], str]:
    if draw(st.booleans()):  # a well-formed call with one or two of its values spoiled
        argv = list(draw(st.sampled_from(valid_invocations(occurrence))))
        for _ in range(draw(st.integers(min_value=1, max_value=2))):
            flags = [index for index, word in enumerate(argv) if word.startswith("--") and word != "--"]
            index = draw(st.sampled_from(flags)) + 1
            if index < len(argv) and not argv[index].startswith("--"):
                argv[index] = draw(st.one_of(HOSTILE_TEXT, HOSTILE_NUMBER, HOSTILE_JSON))
        return argv, draw(HOSTILE_JSON)
    command = list(draw(st.sampled_from(COMMANDS)))
    words: list[str] = []
    for _ in range(draw(st.integers(min_value=0, max_value=6))):
        kind = draw(st.sampled_from(("text", "number", "stdin", "positional", "real")))
        if kind == "text":
            words += [draw(st.sampled_from(TEXT_FLAGS)), draw(HOSTILE_TEXT)]
        elif kind == "number":
            words += [draw(st.sampled_from(NUMBER_FLAGS)), draw(HOSTILE_NUMBER)]
        elif kind == "stdin":
            words.append(draw(st.sampled_from(("--stdin", "--report", "-"))))
            if words[-1] == "--report":
                words.append(draw(HOSTILE_JSON))
        elif kind == "positional":
            words.append(draw(HOSTILE_TEXT))
        else:  # a valid-looking field, so the hostile one is not the only thing wrong
            words += draw(st.sampled_from((["--occurrence", occurrence], ["--runner", "r-1"], ["--call", "1"],
                                           ["--bound", "1000"], ["--", "/bin/true"])))
    return command + words, draw(HOSTILE_JSON)


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    folder = tmp_path_factory.mktemp("fuzz")
    url = f"sqlite:///{folder / 'journal.db'}"
    commission = commission_file(Path(folder), {**commission_due_now(), "pipeline": {"threshold": 1}})
    top_n = json.dumps([{"candidate": "alpha-one", "product": "alpha", "rank": 1}])
    with contextlib.redirect_stdout(io.StringIO()) as out:
        assert main(["--journal", url, "record-commission", str(commission)]) == 0
        assert main(["--journal", url, "lanes", "top-n", "--week", "2026-W50", "--candidates", top_n]) == 0
        assert main(["--journal", url, "start", "--lane", "alpha/basic", "--runner", "r-1"]) == 0
    occurrence = json.loads(out.getvalue().splitlines()[-1])["occurrence"]["id"]
    return url, occurrence


def _run(url: str, argv: list[str], stdin: str) -> tuple[int, list[str], str]:
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([*argv, "--journal", url] if "--" not in argv else ["--journal", url, *argv])
    finally:
        sys.stdin = saved
    return code, out.getvalue().splitlines(), err.getvalue()


@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "300")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_runner_subcommand_answers_hostile_input_with_json_and_an_error_writes_nothing(
    journal: tuple[str, str], data: st.DataObject
) -> None:
    url, occurrence = journal
    argv, stdin = data.draw(hostile_invocations(occurrence))
    if argv[:1] == ["tick"] and "--" not in argv:
        argv += ["--", "/bin/true"] if data.draw(st.booleans()) else []
    heads = (SCHEDULE_AGGREGATE, PIPELINE_AGGREGATE)
    before = [open_journal(url).head(aggregate) for aggregate in heads]
    code, lines, err = _run(url, argv, stdin)
    assert "Traceback" not in err
    documents = [json.loads(line) for line in lines if line.startswith("{")]
    assert not [d for d in documents if d.get("error") == "UNEXPECTED"], (argv, documents)
    if code in (0, 10, 50) or argv[0] == "health":  # success, or a command that may print text
        return
    assert documents, (argv, lines, err)
    last = documents[-1]
    if argv[0] == "tick" and code == 6:  # its runner failed: reported as a segment run
        return
    if argv[:2] == ["lanes", "report"] and code == 5:  # recorded, but a lock had passed to another run
        return
    assert "error" in last or "admitted" in last or "findings" in last, (argv, last)
    assert last.get("error") != "UNEXPECTED", (argv, last)
    if "error" in last and argv[0] != "tick":
        assert [open_journal(url).head(aggregate) for aggregate in heads] == before, (argv, last)
