"""How a subcommand declares its options: once, for argparse and for `--stdin` alike.

A schedule command's fields may come as flags or as a JSON object on stdin; each is
declared here once (`Option`), and both `add_options` (the flags) and `gather` (the
values, flag over stdin, type-checked) read that one declaration. `CommandParser`
turns every argparse refusal into an exception `main` prints as the JSON error
shape, and gives every subcommand `--journal`, so it may come before or after the
subcommand's name. Imports stay light: building the parser must not load the
database or Textual.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from factory_schedule.tui.cli.output import BadInput
from factory_schedule.tui.host.files import MIB, read_regular_text

JOURNAL_HELP = "journal URL (default: $FACTORY_JOURNAL, else the user data file); before or after the subcommand"
MAX_JSON_DEPTH = 64  # deeper than any document the engine takes; refused before it can exhaust the stack
MAX_COMMISSION_BYTES = 4 * MIB  # far above any commission; a path to a device or a huge file is refused, not read
MAX_SECONDS = 86_400.0  # a day: longer than any TTL, grace or poll interval the tool has a use for
# The largest integer any flag takes: exact in every JSON reader and in a 64-bit database column, so a number
# the journal could not store (or a reader would round) is refused at the flag, before anything is opened.
MAX_INTEGER = 2**53 - 1
MIN_LEASE_TTL_SECONDS = 1.0
MAX_PID = 2**22  # the largest pid Linux can give (its pid_max ceiling); macOS's are smaller


class ArgumentsRefused(BadInput):
    """argparse refused the command line; `main` prints it as `{"error": "INVALID", ...}` and exits 2, on stderr
    when the refusing parser's command sends its errors there (`errors_to_stderr`)."""

    def __init__(self, message: str, *, to_stderr: bool = False) -> None:
        super().__init__(message)
        self.to_stderr = to_stderr


class CommandParser(argparse.ArgumentParser):
    """An ArgumentParser that raises instead of printing usage, and that takes `--journal` at every level."""

    def __init__(self, *args: Any, journal_help: str = JOURNAL_HELP, **kwargs: Any) -> None:
        """`journal_help`: what `--journal` means for this command (argparse.SUPPRESS: it opens no journal)."""
        super().__init__(*args, **kwargs)
        self.add_argument("--journal", metavar="URL", default=argparse.SUPPRESS, help=journal_help)

    def error(self, message: str) -> NoReturn:
        raise ArgumentsRefused(f"{self.prog}: {message}", to_stderr=bool(self.get_default("errors_to_stderr")))


@dataclass(frozen=True)
class Option:
    """One field of a schedule command: its flag `--name-with-dashes`, its stdin key, its type and help."""

    name: str
    kind: type = str  # str, int, bool (given as on/off), or float (a number of seconds, up to a day)
    required: bool = True
    help: str | None = None
    low: float = 0  # the range of an int or a float, both ends included (a float's is also `seconds`')
    high: float = MAX_INTEGER

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


def add_options(parser: argparse.ArgumentParser, options: Iterable[Option], stdin: bool = True) -> None:
    """The flags for `options` (all optional to argparse: `gather` checks presence after `--stdin`)."""
    for option in options:
        kind: Any = {int: integer, bool: on_off, float: seconds}.get(option.kind, text)
        parser.add_argument(option.flag, dest=option.name, type=kind, help=option.help)
    if stdin:
        parser.add_argument("--stdin", action="store_true",
                            help="read the arguments as a JSON object on stdin (keys are the flag names)")


def add_command(parent: Any, name: str, text: str, options: Sequence[Option], handler: str,
                stdin: bool = True) -> argparse.ArgumentParser:
    """A subcommand `name` under `parent` (a subparsers action) with the flags for `options` and its handler."""
    parser: argparse.ArgumentParser = parent.add_parser(name, help=text, description=text)
    add_options(parser, options, stdin=stdin)
    parser.set_defaults(handler=handler)
    return parser


def gather(args: argparse.Namespace, options: Sequence[Option]) -> dict[str, Any]:
    """The command's fields from its flags, falling back to `--stdin`'s JSON object; BadInput when wrong."""
    from_stdin: dict[str, Any] = {}
    if getattr(args, "stdin", False):
        document = read_stdin_json("the arguments")
        if not isinstance(document, dict):
            raise BadInput("the arguments on stdin must be a JSON object")
        from_stdin = {key.replace("-", "_"): item for key, item in document.items()}
        unknown = set(from_stdin) - {option.name for option in options}
        if unknown:
            raise BadInput(f"unknown argument(s) on stdin: {', '.join(sorted(map(repr, unknown)))}")
    values: dict[str, Any] = {}
    for option in options:
        value = getattr(args, option.name, None)
        if value is None:
            value = from_stdin.get(option.name)
        if value is None:
            if option.required:
                raise BadInput(f"missing {option.flag}")
            continue
        values[option.name] = _typed(option, value)
    return values


def _typed(option: Option, value: Any) -> Any:
    if option.kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise BadInput(f"{option.flag} must be an integer, got {json.dumps(value)[:80]}")
    if option.kind is int and not option.low <= value <= option.high:
        raise BadInput(f"{option.flag}: expected an integer from {option.low:.0f} to {option.high:.0f}, "
                       f"got {str(value)[:40]}")
    if option.kind is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise BadInput(f"{option.flag} must be a number of seconds, got {json.dumps(value)[:80]}")
        try:
            number = seconds(str(value))
        except argparse.ArgumentTypeError as error:
            raise BadInput(f"{option.flag}: {error}") from None
        if not option.low <= number <= option.high:
            raise BadInput(f"{option.flag}: expected {option.low:g} to {option.high:g} seconds, got {number:g}")
        return number
    if option.kind is str and not isinstance(value, str):
        raise BadInput(f"{option.flag} must be a string, got {json.dumps(value)[:80]}")
    if option.kind is bool:
        if isinstance(value, str):
            try:
                return on_off(value)
            except argparse.ArgumentTypeError as error:
                raise BadInput(f"{option.flag}: {error}") from None
        if not isinstance(value, bool):
            raise BadInput(f"{option.flag} must be on or off, got {json.dumps(value)[:80]}")
    return value


# -- argument types (each raises ArgumentTypeError, which argparse reports as a refusal) ----


def text(value: str) -> str:
    """Any text that is valid Unicode (an argument that was not UTF-8 arrives with lone surrogates)."""
    check_unicode(value, "the argument")
    return value


def integer(value: str) -> int:
    """Any decimal integer: its range is the Option's, checked with every other field in `gather`."""
    try:
        return int(value, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {value[:80]!r}") from None


def segment_number(value: str) -> int:
    """A segment's number: an integer from 1."""
    number = integer(value)
    if not 1 <= number <= MAX_INTEGER:
        raise argparse.ArgumentTypeError(f"expected an integer from 1 to {MAX_INTEGER}, got {value[:40]!r}")
    return number


def on_off(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("on", "true", "yes", "1"):
        return True
    if lowered in ("off", "false", "no", "0"):
        return False
    raise argparse.ArgumentTypeError(f"expected on/off, got {value!r}")


def _number(value: str, what: str) -> float:
    """`value` as a float, or argparse's error naming `what`. Every caller bounds it on both sides, and a
    comparison with `nan` is false, so `nan`, `inf` and `1e300` all fail the caller's range."""
    try:
        return float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {value!r}") from None


def seconds(value: str) -> float:
    """A positive, finite number of seconds up to a day (`nan`, `inf` and `1e300` are refused)."""
    number = _number(value, "a number of seconds")
    if not 0 < number <= MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"expected more than 0 and at most {MAX_SECONDS:g} seconds, got {value!r}")
    return number


def lease_ttl_seconds(value: str) -> float:
    """A lease's TTL: `seconds`, and at least one second (a shorter lease goes stale between heartbeats
    of a busy host, and one that rounds to 0 ms is stale the moment it is taken)."""
    number = seconds(value)
    if number < MIN_LEASE_TTL_SECONDS:
        raise argparse.ArgumentTypeError(f"expected at least {MIN_LEASE_TTL_SECONDS:g} second, got {value!r}")
    return number


def minutes(value: str) -> float:
    """A finite number of minutes from 0 up to a day."""
    number = _number(value, "a number of minutes")
    if not 0 <= number <= MAX_SECONDS / 60:
        raise argparse.ArgumentTypeError(f"expected 0 to {MAX_SECONDS / 60:g} minutes, got {value!r}")
    return number


def positive_number(value: str) -> float:
    """A positive, finite number (the demo's speed)."""
    number = _number(value, "a number")
    if not 0 < number <= 1e6:
        raise argparse.ArgumentTypeError(f"expected a number above 0 and at most 1000000, got {value!r}")
    return number


# -- JSON input ----------------------------------------------------------------------------


def check_unicode(value: str, what: str) -> None:
    """Refuse text with lone surrogates (bytes that were not UTF-8, or a `\\ud800` escape in JSON)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise argparse.ArgumentTypeError(f"{what} is not valid UTF-8 (it holds a lone surrogate)") from None


def parse_json(text_: str, what: str) -> Any:
    """JSON text as a document, BadInput for anything a person should fix (syntax, depth, encoding)."""
    try:
        document = json.loads(text_)
    except RecursionError:
        raise BadInput(f"{what} is nested too deeply (at most {MAX_JSON_DEPTH} levels)") from None
    except ValueError as error:
        raise BadInput(f"{what} is not JSON: {error}") from None
    check_document(document, what)
    return document


def check_document(document: Any, what: str) -> None:
    """Refuse a document nested deeper than MAX_JSON_DEPTH or holding text that is not valid Unicode."""
    pending: list[tuple[Any, int]] = [(document, 1)]
    while pending:
        value, depth = pending.pop()
        if depth > MAX_JSON_DEPTH:
            raise BadInput(f"{what} is nested too deeply (at most {MAX_JSON_DEPTH} levels)")
        if isinstance(value, str):
            _unicode_or_bad_input(value, what)
        elif isinstance(value, dict):
            for key, item in value.items():
                _unicode_or_bad_input(key, what)
                pending.append((item, depth + 1))
        elif isinstance(value, list):
            pending.extend((item, depth + 1) for item in value)


def _unicode_or_bad_input(value: str, what: str) -> None:
    try:
        check_unicode(value, what)
    except argparse.ArgumentTypeError as error:
        raise BadInput(str(error)) from None


def read_commission_file(path: str) -> Any:
    """A commission JSON document from a file, or from stdin for `-`; BadInput when it cannot be read."""
    try:
        document_text = sys.stdin.read() if path == "-" else read_regular_text(path, MAX_COMMISSION_BYTES)
    except UnicodeDecodeError:
        raise BadInput(f"{path} is not UTF-8 text (a commission is a JSON file)") from None
    except OSError as error:
        raise BadInput(f"cannot read {path}: {error.strerror}") from None
    return parse_json(document_text, path)


def read_stdin_json(what: str) -> Any:
    try:
        document_text = sys.stdin.read()
    except UnicodeDecodeError:
        raise BadInput(f"{what} on stdin is not valid UTF-8") from None
    if not document_text.strip():
        raise BadInput(f"expected {what} as JSON on stdin, got nothing")
    return parse_json(document_text, f"{what} on stdin")


PASSPHRASE_FD_HELP = ("read the owner passphrase from this file descriptor (for your own scripts; default: ask "
                      "on the terminal, without echo); only asked when the journal holds an owner key")


def add_passphrase_option(parser: argparse.ArgumentParser) -> None:
    """`--passphrase-fd N` on an owner command: where its passphrase comes from when the journal holds an owner key
    (tui/cli/owner_signing.py)."""
    parser.add_argument("--passphrase-fd", type=int, metavar="N", help=PASSPHRASE_FD_HELP)
