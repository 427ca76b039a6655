"""What a person may be shown of a journal URL: everything but its password.

A PostgreSQL URL can carry a password in two places libpq reads: the user info
(`postgresql+psycopg://owner:PASSWORD@host/db`) and a `password` parameter
(`...?password=PASSWORD`). The runners need it (FACTORY_JOURNAL), but a header,
a refusal, a log line or a repr must not print it, including when the text is
too malformed to parse as a URL at all.
"""

from __future__ import annotations

import re

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

MASK = "***"
_USER_INFO_PASSWORD = re.compile(r"(?<=:)[^:/@]*(?=@)")  # user:PASSWORD@, parsed or not
_PASSWORD_PARAMETER = re.compile(r"(?i)(?<=[?&]password=)[^&#]*")


def shown_url(url: str) -> str:
    """`url` with any password replaced by `***`."""
    try:
        text = make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):  # not a URL SQLAlchemy can read: mask what looks like a password
        text = _USER_INFO_PASSWORD.sub(MASK, url)
    return _PASSWORD_PARAMETER.sub(MASK, text)
