"""The environment a provider CLI starts with: an allow-list, never the factory's own variables.

A provider is a coding agent with a shell tool, and a prompt injected through a page or a repository it
reads can make it run any command the runner could. So it gets what the CLI itself needs (PATH, HOME,
the user and locale, the temporary and XDG folders, a proxy and its certificates, its own configuration
folder) and the names the owner lists for the lane, and nothing else: never the journal's URL (for
PostgreSQL it carries a password), the runner token, the lease, the owner's passphrase, or any
`FACTORY_*` variable, whichever list names it. An API key is not passed either unless the owner lists
it: for a subscription sign-in it would turn the calls into paid API calls.

One name is added by the runner itself, never by the owner: `CALL_MARK`, set to the runner's session ID. A
provider's tools inherit it even where they leave the runner's session (Claude Code's shell tool starts each
command detached, in a session of its own, with the CLI's own environment), so health counts any process
carrying it as the run's and never reconciles the run while one lives. It is no secret (the session ID is
in the run's lease for anyone who reads the journal), and a provider that forges it only keeps a run counted
as alive, which health then reports with the pids.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

FACTORY_PREFIX = "FACTORY_"
CALL_MARK = "SCHEDULED_CALL_SESSION"

# What any CLI needs to run as the owner's user: where programs are, who and where it is, its locale and
# terminal, where it may write temporary files and its caches, and how it reaches the network.
COMMON_NAMES = (
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TMPDIR", "TZ", "LANG", "LANGUAGE",
    "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
    "HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "all_proxy", "no_proxy",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
)
LOCALE_PREFIX = "LC_"

# Each provider CLI's own configuration folder, where its sign-in lives.
OWN_CONFIG: dict[str, tuple[str, ...]] = {
    "claude": ("CLAUDE_CONFIG_DIR",),
    "codex": ("CODEX_HOME",),
}


def refused_name(name: str) -> str | None:
    """Why the owner may not list `name` for a provider, or None when it may pass."""
    if name.upper().startswith(FACTORY_PREFIX):
        return f"{name}: a factory variable never reaches a provider"
    if not name or "=" in name or "\0" in name:
        return f"{name!r}: not an environment variable's name"
    return None


def provider_environment(base: Mapping[str, str], provider: str | None = None,
                         extra: Iterable[str] = ()) -> dict[str, str]:
    """The allow-listed part of `base` for `provider` (None: a provider this host does not know, as the
    example runners start), plus the `extra` names the owner lists; a factory variable never passes."""
    wanted = {*COMMON_NAMES, *OWN_CONFIG.get(provider or "", ()), *extra}
    return {name: value for name, value in base.items()
            if (name in wanted or name.startswith(LOCALE_PREFIX)) and refused_name(name) is None}


def call_mark(session: int) -> str:
    """The `NAME=value` entry a call of the runner in `session` carries in its environment."""
    return f"{CALL_MARK}={session}"


def marked(environment: Mapping[str, str], session: int) -> dict[str, str]:
    """`environment` with the call mark of the runner in `session` (a call's processes and their tools)."""
    return {**environment, CALL_MARK: str(session)}
