"""The owner's protection: a journal without an owner key, a key the recovery code replaced, and a lane's
provider that may write the journal's folder."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from factory_schedule.core.owner import MAX_KEYS, OwnerState

from .report import Finding


def owner_key_findings(state: OwnerState | None, key_here: str | None = None,
                       recorded: tuple[str, ...] = ()) -> list[Finding]:
    """A journal without an owner key takes any owner record from anyone who can run the command line; a key
    the recovery code replaced is shown until the owner rotates it, so a recovery they did not make is seen.

    A key recorded past the one this machine's key file holds (`key_here`, an earlier key of this journal) is
    a rotation made elsewhere, or a key a process of the owner's user appended through the store itself, past
    every signature check: the journal stays consistent, and only the owner's own file tells. A file holding a
    key this journal never held is another journal's key (one machine's key serves every journal it made).
    A key list that is not the keys the chain's own events recorded (`recorded`, in order) was rewritten past
    every check, the file's key perhaps dropped from it: that is said whatever the file holds."""
    if state is None:
        return [Finding("owner-key-missing", "error",
                        "owner decisions are not protected: any process that can run factory-schedule can record "
                        "them in the owner's name; run `factory-schedule owner init`")]
    current = state.current
    findings = []
    if recorded and tuple(key.public_key for key in state.keys) != recorded[-MAX_KEYS:]:  # the last it keeps
        findings.append(Finding(
            "owner-key-replaced", "error",
            f"the journal's owner key list (current: key {current.n}, recorded at {current.recorded_at}) is not the "
            "keys its own history recorded: a process of your user rewrote it past every signature check; owner "
            "records since may be forged; restore the journal from a copy you trust",
            {"journalKey": current.n, "recordedAt": current.recorded_at, "stateDisagreesWithHistory": True}))
        return findings
    here = next((key for key in state.keys[:-1] if key.public_key == key_here), None)
    if here is not None and key_here != current.public_key:
        findings.append(Finding(
            "owner-key-replaced", "error",
            f"the journal's owner key is key {current.n} ({current.how} at {current.recorded_at}), but this "
            f"machine's key file holds key {here.n}: if you did not rotate or recover it on another machine, a "
            f"process of your user recorded a key of its own, and owner records since {current.recorded_at} may "
            "be forged with it; restore the journal from a copy you trust from before then (if it was you, copy "
            "that machine's key file here)",
            {"journalKey": current.n, "thisMachinesKey": here.n, "recordedAt": current.recorded_at}))
    if current.how == "recovered":
        findings.append(Finding("owner-key-recovered", "warning",
                                f"the owner key was replaced with the recovery code at {current.recorded_at} (key "
                                f"{current.n}): if you did not do it, your recovery code is known; rotate the key "
                                f"(`factory-schedule owner rotate`) once you have checked",
                                {"key": current.n, "recordedAt": current.recorded_at}))
    return findings


@dataclass(frozen=True)
class ProviderReach:
    """What a lane's provider CLI may write: its extra arguments, and whether its workdir holds the journal."""

    lane: str
    provider: str
    args: tuple[str, ...]
    workdir_holds_journal: bool


def _option(args: tuple[str, ...], *names: str) -> list[str]:
    """Every value given to one of `names` (`--name value` or `--name=value`)."""
    values = []
    for i, arg in enumerate(args):
        for name in names:
            if arg == name and i + 1 < len(args):
                values.append(args[i + 1])
            elif arg.startswith(name + "="):
                values.append(arg[len(name) + 1:])
    return values


def provider_writes(reach: ProviderReach) -> str | None:
    """Why the lane's provider may write anywhere its user can ("anywhere") or inside its workdir ("workdir"),
    from the CLI's own sandbox and permission options; None: it may write neither."""
    args = reach.args
    if reach.provider == "claude":
        modes = _option(args, "--permission-mode")
        tools = " ".join(_option(args, "--allowedTools", "--allowed-tools"))
        if "--dangerously-skip-permissions" in args or "bypassPermissions" in modes or re.search(
                r"(^|[\s,])Bash(\(\*?\))?($|[\s,])", tools):
            return "anywhere"
        return "workdir" if "acceptEdits" in modes or re.search(r"(^|[\s,])(Edit|Write)\b", tools) else None
    sandbox = _option(args, "--sandbox", "-s")
    if "--dangerously-bypass-approvals-and-sandbox" in args or "danger-full-access" in sandbox:
        return "anywhere"
    return "workdir" if "--full-auto" in args or "workspace-write" in sandbox else None


def provider_write_findings(reaches: Sequence[ProviderReach]) -> list[Finding]:
    """A lane whose provider may write the journal's folder: an injected prompt could then rewrite or delete
    the journal itself, which no signature prevents."""
    findings = []
    for reach in reaches:
        writes = provider_writes(reach)
        if writes == "anywhere" or (writes == "workdir" and reach.workdir_holds_journal):
            where = "anywhere your user can" if writes == "anywhere" else "its workdir, which holds the journal"
            findings.append(Finding(
                "provider-writes-journal", "warning",
                f"{reach.lane}: its {reach.provider} CLI may write {where}, the journal's folder included: narrow "
                f"its permissions in lane.toml (`args`) or move its workdir away from the journal",
                {"lane": reach.lane, "provider": reach.provider, "writes": writes}))
    return findings

