"""Journal URLs: what one names (`JournalUrl`), and what a person may be shown of it (`shown_url`).

The URL form is SQLAlchemy's (`dialect+driver://user:password@host:port/database?key=value`), read
here with the same pattern SQLAlchemy's `make_url` uses, so that a command line opening a journal
does not import SQLAlchemy (about 0.2 s of start-up) just to split a string.

A PostgreSQL URL can carry a password in two places libpq reads: the user info
(`postgresql+psycopg://owner:PASSWORD@host/db`) and a `password` parameter
(`...?password=PASSWORD`). The runners need it (FACTORY_JOURNAL), but a header,
a refusal, a log line or a repr must not print it, including when the text is
too malformed to parse as a URL at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote

MASK = "***"
_USER_INFO_PASSWORD = re.compile(r"(?<=:)[^:/@]*(?=@)")  # user:PASSWORD@, parsed or not
_PASSWORD_PARAMETER = re.compile(r"(?i)(?<=[?&]password=)[^&#]*")
# Text that does not parse as a URL: after `scheme:`, any slashes and the user name's `:`, up to the last `@`.
_UNPARSED_USER_INFO_PASSWORD = re.compile(r"^(?P<user>[\w+]+:/{0,2}[^:/@]*:).*@")
# SQLAlchemy's own URL pattern (sqlalchemy.engine.url._parse_url), so both read a URL alike.
_URL = re.compile(
    r"""
    (?P<name>[\w+]+)://
    (?:(?P<username>[^:/]*)(?::(?P<password>[^@]*))?@)?
    (?:(?:\[(?P<ipv6host>[^/?]+)\]|(?P<ipv4host>[^/:?]+))?(?::(?P<port>[^/?]*))?)?
    (?:/(?P<database>[^?]*))?
    (?:\?(?P<query>.*))?
    """,
    re.X,
)


class UrlError(ValueError):
    """The text is not a URL of the `dialect+driver://...` form."""


@dataclass(frozen=True)
class JournalUrl:
    """The parts of a journal URL, decoded."""

    drivername: str
    username: str | None
    password: str | None
    host: str | None
    port: int | None
    database: str | None
    query: dict[str, str]

    @property
    def backend(self) -> str:
        """`sqlite` or `postgresql` (the part before any `+driver`)."""
        return self.drivername.split("+", 1)[0]

    @property
    def driver(self) -> str | None:
        """The driver after `+`, or None when the URL names none."""
        return self.drivername.split("+", 1)[1] if "+" in self.drivername else None


def parse_url(text: str) -> JournalUrl:
    """The parts of `text`; UrlError when it is not a URL of that form (or its port is not a number)."""
    match = _URL.fullmatch(text)
    if match is None:
        raise UrlError(f"{shown_url(text)!r} is not a URL")
    parts = match.groupdict()
    try:
        port = int(parts["port"]) if parts["port"] else None
    except ValueError:
        raise UrlError(f"{shown_url(text)!r} has a port that is not a number") from None
    query = dict(parse_qsl(parts["query"])) if parts["query"] else {}
    return JournalUrl(
        drivername=parts["name"],
        username=unquote(parts["username"]) if parts["username"] is not None else None,
        password=unquote(parts["password"]) if parts["password"] is not None else None,
        host=parts["ipv4host"] or parts["ipv6host"],
        port=port,
        database=unquote(parts["database"]) if parts["database"] is not None else None,
        query=query,
    )


def shown_url(url: str) -> str:
    """`url` with any password replaced by `***`.

    A URL that parses has its password masked exactly where the connection reads it (the same pattern
    splits both), a password typed with a raw `/`, `:`, `?` or `@` included; its host, database and
    query are shown as they are. A SQLite URL names a file and carries no password: it is shown whole,
    and names the journal's side files. Text that does not parse is masked from the user's `:` to the
    last `@`, and a `password` parameter anywhere."""
    if url.startswith("sqlite:"):
        return url
    match = _URL.fullmatch(url)
    if match is None:
        url = _UNPARSED_USER_INFO_PASSWORD.sub(lambda found: f"{found['user']}{MASK}@", url, count=1)
        url = _USER_INFO_PASSWORD.sub(MASK, url)
    elif match.group("password") is not None:
        start, end = match.span("password")
        host = match.group("ipv4host") or ""
        if "@" in host:  # a raw `@` in the password: the pattern took the rest of it for the host
            end = match.start("ipv4host") + host.rindex("@")
        url = url[:start] + MASK + url[end:]
    return _PASSWORD_PARAMETER.sub(MASK, url)
