"""The documentation's generated reference: the command line from its own parsers, the commission from its schema.

`python -m factory_schedule.tui.cli.reference` (what `./dev docs-gen` runs) rewrites the generated part of
docs/reference/cli.md and docs/reference/commission.md, the text between a page's `<!-- generated:NAME -->`
and `<!-- end generated:NAME -->` markers; `--check` writes nothing and exits 1 naming each stale page. The
pages' prose around the markers is written by hand. Generating the tables from the parsers, the exit codes
and the JSON Schema is what keeps them from going stale: a test fails when a page differs from what this
module renders now.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factory_schedule.core import commission_json_schema
from factory_schedule.tui.cli import output
from factory_schedule.tui.cli.main import build_parser

REPOSITORY = Path(__file__).resolve().parents[2]
CLI_PAGE = Path("docs/reference/cli.md")
COMMISSION_PAGE = Path("docs/reference/commission.md")

# What each exit code named by a constant means. The codes a table maps from a refusal or an error code
# (`call admit`'s refusals, the schedule's and the staged lanes' errors) are described from that table.
# A new exit code needs its line here: a test fails while any code has none.
EXIT_MEANINGS: dict[int, str] = {
    output.EXIT_OK: "done; for `call admit`: admitted with `\"dispatch\": true` (one contact licensed)",
    output.EXIT_UNEXPECTED: "unexpected failure (a bug): `{\"error\": \"UNEXPECTED\", \"message\": ...}`",
    output.EXIT_BAD_INPUT: "bad input or `INVALID`, argparse's refusals included; nothing written",
    output.EXIT_JOURNAL: "the journal does not exist, could not be opened, read or written (`\"error\": \"JOURNAL\"`)",
    output.EXIT_LEASE_HELD: "a lease or a staged lane's lock is held by someone else (`LEASE_HELD`)",
    output.EXIT_NOT_LEASE_OWNER: "a lease heartbeat or release by someone who does not hold it (`NOT_LEASE_OWNER`)",
    output.EXIT_RUNNER_FAILED: "`tick`: a runner exited non-zero or left its segment running",
    output.EXIT_CHAIN_BROKEN: "`verify`: an aggregate's hash chain does not verify from its first event or against "
                              "an earlier check's checkpoint (`problems` says where it breaks); `tick`: a chain "
                              "does not verify from its checkpoint, and nothing was started",
    output.EXIT_UNRECORDED: "`run`: the journal would not take a report after every retry (about five minutes); the "
                            "report is printed in an `\"unrecorded\"` line and the segment left running for a "
                            "supervisor",
    output.EXIT_REPLAY_NO_DISPATCH: "`call admit`: a replay of a recorded admission; no contact licensed "
                                    "(`in_flight` says whether it never ended)",
    output.EXIT_REPLAY_STILL_RUNNING: "`defer`: the replay of an earlier segment's deferral while this token runs a "
                                      "later segment (`still_running` names it); that segment was NOT deferred: "
                                      "use a fresh token per segment",
    output.EXIT_REPLAY_NOT_LICENSED: "`lanes approval-use`: a replay of a recorded use of the approval (`\"licensed\": "
                                     "false`); the action was licensed once, to the call that recorded it: do not "
                                     "act again",
    output.EXIT_REFUSED_OTHER: "`call admit` refused for a reason this table does not name",
    output.EXIT_IDLE: "`lanes claim`: nothing this run may take; nothing written",
    output.EXIT_BROKEN_PIPE: "the reader of stdout went away (a pipe into `head`); what was committed stays committed",
}

# What each error code of the schedule and of the staged lanes means (both print it as `"error"`).
ERROR_MEANINGS: dict[str, str] = {
    "CORRUPT": "the stored state or the journal is not as sealed; nothing is written over it",
    "CONFLICT": "a different request under a command ID already recorded",
    "CONTENDED": "other writers kept moving the state while this command re-planned",
    "LIMIT": "the state would grow past its size limit",
    "NOT_COMMISSIONED": "no commission is recorded",
    "NOT_CONFIGURED": "no commission revision with `pipeline` settings is adopted",
    "REVISION": "out of order: not the next revision",
    "NOT_A_LANE": "no such lane in the current commission",
    "UNKNOWN_OCCURRENCE": "no such occurrence",
    "UNKNOWN_CALL": "no such call of the occurrence",
    "UNKNOWN_TASK": "no such task of the lane",
    "NOT_RUNNING": "the occurrence has no running segment",
    "NOT_OWNER": "the segment or task belongs to another runner token",
    "CALL_OPEN": "a call of the occurrence is still in flight",
    "SETTLED": "the occurrence is already settled",
    "STALE": "a newer decision already ended it (a reconciled call, a reported task)",
    "RULE": "the request breaks a rule of the schedule",
    "WRONG_RUN": "the run is not the one the task or the occurrence belongs to",
    "SELF_REVIEW": "a runner that produced an artifact of the work may not review it",
    "CONTRACT": "the report misses or misnames a field its stage requires",
    "CRITERIA_CHANGED": "`verify` names other criteria or another verifier than the frozen ones",
    "VERIFIER_REQUIRED": "`decide` cites no verify artifact, or GO without a passing one",
    "CAP_REACHED": "the work is at its cap (`maxSlices`)",
    "APPROVAL_REQUIRED": "an external action without the owner's approval record for it",
    "NOT_ADMITTED": "a scheduled run claimed without the occurrence admitted for its token",
    "UNSIGNED": "an owner record without the owner's signature, in a journal that holds an owner key",
    "BAD_SIGNATURE": "a signature that is not the journal's owner key's over this record for this journal",
    "SELF_DECIDED": "an approval decided by the one who requested it",
}


@dataclass(frozen=True)
class ExitCode:
    code: int
    meaning: str


def defined_exit_codes(root: Path = REPOSITORY) -> set[int]:
    """Every exit code the command line defines: each module-level `EXIT_*` integer in tui/ and the codes
    output.py maps refusals and errors to. Read from the source, so a code added anywhere is found."""
    codes = {code for mapping in _code_tables().values() for code in mapping.values()}
    for path in sorted((root / "tui").rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                value = node.value.value
                if isinstance(value, int) and not isinstance(value, bool) and any(
                        isinstance(target, ast.Name) and target.id.startswith("EXIT_") for target in node.targets):
                    codes.add(value)
    return codes


def _code_tables() -> dict[str, Mapping[str, int]]:
    return {"call admit": output.REFUSAL_EXIT_CODES, "schedule": output.ERROR_EXIT_CODES,
            "lanes": output.PIPELINE_EXIT_CODES}


def exit_codes(root: Path = REPOSITORY) -> list[ExitCode]:
    """Every defined exit code with its meaning, in order; a code with no meaning says so."""
    meanings: dict[int, list[str]] = {}
    for code, meaning in EXIT_MEANINGS.items():
        meanings.setdefault(code, []).append(meaning)
    for reason, code in output.REFUSAL_EXIT_CODES.items():
        meanings.setdefault(code, []).append(
            f"`call admit` refused `{reason}` ([what a runner does](../guides/runner.md#refusals))")
    for name, table in (("the schedule", output.ERROR_EXIT_CODES), ("the staged lanes", output.PIPELINE_EXIT_CODES)):
        for error, code in table.items():
            if code != output.EXIT_BAD_INPUT:
                meanings.setdefault(code, []).append(f"{name}: `{error}`, {ERROR_MEANINGS.get(error, 'UNDESCRIBED')}")
    return [ExitCode(code, "; ".join(meanings.get(code, ["UNDESCRIBED"])))
            for code in sorted(defined_exit_codes(root) | set(meanings))]


# -- the command line ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Command:
    """One subcommand: its words after `factory-schedule`, what it does, and its parser."""

    words: tuple[str, ...]
    summary: str
    parser: argparse.ArgumentParser


def commands(parser: argparse.ArgumentParser | None = None) -> list[Command]:
    """Every subcommand, nested ones included (`call admit`), in the order `--help` lists them."""
    return list(_walk(parser or build_parser(), ()))


def _walk(parser: argparse.ArgumentParser, words: tuple[str, ...]) -> Iterator[Command]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            summaries = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, subparser in action.choices.items():
                here = (*words, name)
                yield Command(here, summaries.get(name, ""), subparser)
                yield from _walk(subparser, here)


def _has_subcommands(parser: argparse.ArgumentParser) -> bool:
    return any(isinstance(action, argparse._SubParsersAction) for action in parser._actions)


def _cell(text: str) -> str:
    """`text` on one line as a table cell: a pipe outside a code span is escaped (inside one it is kept)."""
    parts = " ".join(text.split()).split("`")
    return "`".join(part if inside % 2 else part.replace("|", "\\|") for inside, part in enumerate(parts))


def _help_of(action: argparse.Action, prog: str) -> str:
    if not action.help:
        return ""
    try:
        return action.help % {**vars(action), "prog": prog}
    except (KeyError, TypeError, ValueError):
        return action.help


def _usage(command: Command) -> str:
    words = ["factory-schedule", *command.words]
    for action in command.parser._actions:
        if action.option_strings or isinstance(action, argparse._SubParsersAction):
            continue
        name = action.metavar if isinstance(action.metavar, str) else action.dest.upper()
        words.append(f"[{name} ...]" if action.nargs in ("*", argparse.REMAINDER) else
                     f"{name} ..." if action.nargs == "+" else f"[{name}]" if action.nargs == "?" else name)
    if _has_subcommands(command.parser):
        words.append("COMMAND")
    options = [a for a in command.parser._actions if a.option_strings and a.dest not in ("help", "journal")]
    if options:
        words.insert(1 + len(command.words), "[options]")
    return " ".join(words)


def _argument_rows(command: Command) -> list[str]:
    rows = []
    prog = "factory-schedule " + " ".join(command.words)
    for action in command.parser._actions:
        if action.dest in ("help", "journal") or isinstance(action, argparse._SubParsersAction):
            continue
        if action.option_strings:
            name = ", ".join(f"`{flag}`" for flag in action.option_strings)
            if action.nargs != 0:
                metavar = action.metavar if isinstance(action.metavar, str) else action.dest.upper()
                name += f" `{metavar}`"
        else:
            name = f"`{action.metavar if isinstance(action.metavar, str) else action.dest.upper()}`"
        notes = []
        if action.choices is not None:
            notes.append("one of " + ", ".join(f"`{choice}`" for choice in action.choices))
        if action.required:
            notes.append("required")
        text = _help_of(action, prog)
        if (action.default not in (None, False, argparse.SUPPRESS, [], ()) and action.option_strings
                and "(default" not in text):  # a help that names its default says it once, in its own words
            notes.append(f"default `{action.default}`")
        if notes:
            text = f"{text} ({'; '.join(notes)})" if text else "; ".join(notes)
        rows.append(f"| {name} | {_cell(text)} |")
    return rows


def cli_reference(parser: argparse.ArgumentParser | None = None, root: Path = REPOSITORY) -> str:
    """The generated part of docs/reference/cli.md: every subcommand with its flags, then every exit code."""
    listed = commands(parser)
    lines = ["## Commands", "", "| command | what it does |", "| --- | --- |"]
    lines += [f"| [`{' '.join(c.words)}`](#{'-'.join(c.words)}) | {_cell(c.summary)} |" for c in listed]
    for command in listed:
        lines += ["", f"### {' '.join(command.words)} {{#{'-'.join(command.words)}}}", ""]
        description = command.parser.description or command.summary
        if description:
            lines += [_cell(description.split("\n\n")[0]), ""]
        lines += ["```", _usage(command), "```"]
        rows = _argument_rows(command)
        if rows:
            lines += ["", "| argument | meaning |", "| --- | --- |", *rows]
    lines += ["", "## Exit codes", "", "| code | meaning |", "| --- | --- |"]
    lines += [f"| {entry.code} | {_cell(entry.meaning)} |" for entry in exit_codes(root)]
    return "\n".join(lines)


# -- the commission ---------------------------------------------------------------------------------------


def _number(value: int | None) -> str:
    """A bound as the pages write numbers (`10 000 000 000`); an open end as `…`."""
    return "…" if value is None else f"{value:,}".replace(",", " ")


def _constraints(schema: Mapping[str, Any]) -> str:
    parts = [_constraints(option) for option in schema.get("anyOf", ()) if option.get("type") != "null"]
    parts = [part for part in parts if part]
    if "const" in schema:
        parts.append(f"always `{schema['const']}`")
    if "enum" in schema:
        parts.append("one of " + ", ".join(f"`{value}`" for value in schema["enum"]))
    for low, high, unit in (("minimum", "maximum", ""), ("minItems", "maxItems", " items"),
                            ("minLength", "maxLength", " characters")):
        if low in schema or high in schema:
            parts.append(f"{_number(schema.get(low))} – {_number(schema.get(high))}{unit}")
    if "pattern" in schema:
        parts.append(f"matches `{schema['pattern']}`")
    if "default" in schema and schema["default"] is not None:
        parts.append(f"default `{json.dumps(schema['default'])}`")
    return "; ".join(parts)


def _type_of(schema: Mapping[str, Any], definitions: Mapping[str, Any]) -> tuple[str, Mapping[str, Any] | None]:
    """A field's type in words, and the object definition it nests (for its own rows), if any."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return "object", definitions[name]
    if "anyOf" in schema:
        kinds = [_type_of(option, definitions) for option in schema["anyOf"] if option.get("type") != "null"]
        if len(kinds) == 1:
            return f"{kinds[0][0]} (optional)", kinds[0][1]
        return " or ".join(kind for kind, _ in kinds), None
    if schema.get("type") == "array":
        item, nested = _type_of(schema.get("items", {}), definitions)
        return f"array of {item}", nested
    return str(schema.get("type", "any")), None


def _field_rows(path: str, schema: Mapping[str, Any], definitions: Mapping[str, Any]) -> list[str]:
    rows = []
    required = set(schema.get("required", ()))
    for name, field in schema.get("properties", {}).items():
        kind, nested = _type_of(field, definitions)
        here = f"{path}{name}"
        rule = _constraints(field)
        description = field.get("description", "")
        rows.append(f"| `{here}` | {kind} | {'yes' if name in required else 'no'} | {_cell(description)} | "
                    f"{_cell(rule)} |")
        if nested is not None:
            suffix = "[]." if field.get("type") == "array" else "."
            rows += _field_rows(f"{here}{suffix}", nested, definitions)
    return rows


def commission_reference() -> str:
    """The generated part of docs/reference/commission.md: every field of the JSON Schema, nested ones too."""
    schema = commission_json_schema()
    lines = ["| field | type | required | what it is | rule |", "| --- | --- | --- | --- | --- |"]
    lines += _field_rows("", schema, schema.get("$defs", {}))
    return "\n".join(lines)


# -- the pages -------------------------------------------------------------------------------------------


def replace_generated(text: str, name: str, generated: str) -> str:
    """`text` with the part between its `generated:NAME` markers replaced; a page without them is refused."""
    start, end = f"<!-- generated:{name} -->", f"<!-- end generated:{name} -->"
    if text.count(start) != 1 or text.count(end) != 1 or text.index(start) > text.index(end):
        raise ValueError(f"the page needs exactly one {start} ... {end} pair")
    before, rest = text.split(start, 1)
    _, after = rest.split(end, 1)
    return f"{before}{start}\n{generated}\n{end}{after}"


def rendered_pages(root: Path = REPOSITORY) -> dict[Path, str]:
    """Each generated page as it should read now."""
    return {
        root / CLI_PAGE: replace_generated((root / CLI_PAGE).read_text(), "cli", cli_reference(root=root)),
        root / COMMISSION_PAGE: replace_generated((root / COMMISSION_PAGE).read_text(), "commission",
                                                  commission_reference()),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m factory_schedule.tui.cli.reference",
                                     description="Regenerate the documentation's generated reference pages.")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a page is stale")
    args = parser.parse_args(argv)
    stale = [path for path, text in rendered_pages().items() if path.read_text() != text]
    if args.check:
        for path in stale:
            print(f"{path.relative_to(REPOSITORY)} is stale: run ./dev docs-gen", file=sys.stderr)
        return 1 if stale else 0
    for path, text in rendered_pages().items():
        if path in stale:
            path.write_text(text)
            print(f"wrote {path.relative_to(REPOSITORY)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
