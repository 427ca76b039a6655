"""Whether tonight will run: the preflight's rules over facts the shell gathered, one line per check.

Every line is `ok`, `warn` (tonight runs, but something is worth the owner's minute) or `no` (a lane
will not run, or will stop at its first call), and every `no` and `warn` names the command that fixes
it. The checks are those a night depends on: a commission with lanes due in the next day, each of
those lanes' prompts, CLI and sign-in, the account records they are paid from (current at the lane's
slot, not just now), the LaunchAgent that fires the tick, the notifier that tells the owner when
something stops, and the week's remaining tokens against tonight's bounds. Pure: facts in, lines out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from .health import Finding
from .results import LanePlan, ScheduleView
from .schedule_document import AccountState, at
from .zones import iso_week_of, local_date_of, local_wall_of

Mark = Literal["ok", "warn", "no"]
NIGHT_AHEAD = timedelta(hours=24)
ACCOUNT_OF_PROVIDER = {"claude": "claude", "codex": "chatgpt"}
LOGIN_COMMAND = {"claude": "claude auth login", "codex": "codex login"}
# Health's findings the preflight shows as they are: the LaunchAgent's, a journal that cannot be trusted (its chain,
# its state, an owner key past this machine's), and the staged lanes running on older settings than the commission
# in force carries.
SHOWN_FINDINGS = ("launch-agent-", "journal-chain-broken", "state-unreadable", "account-sign-in-needed",
                  "account-overage", "account-window-closed", "pipeline-settings-behind", "owner-key-replaced")


@dataclass(frozen=True)
class Line:
    mark: Mark
    subject: str
    text: str
    fix: str | None = None


@dataclass(frozen=True)
class LaneFacts:
    """What the shell found for one lane due tonight: its prompt binding (or why it cannot be used), the CLI,
    and the sign-in the runner will observe (the CLI's own report, else lane.toml's)."""

    lane: str
    binding_problem: str | None = None
    provider: str | None = None
    executable: str | None = None
    executable_found: bool = False
    units: int = 0
    logged_in: bool | None = None
    sign_in: str | None = None
    sign_in_from: str | None = None  # "cli" or "lane.toml"
    from_path: bool = False  # the CLI was found on this shell's PATH, which a LaunchAgent's tick does not have
    cli_version: str | None = None
    cli_problem: str | None = None  # what the CLI itself says would fail every call, with its fix
    cli_warning: str | None = None


@dataclass(frozen=True)
class PreflightFacts:
    now: datetime
    view: ScheduleView | None
    plans: Sequence[LanePlan]
    lanes: Mapping[str, LaneFacts]  # by lane ID, for the lanes due tonight; empty when no prompt folder was given
    prompts: str | None  # the prompt folder, None when none was given
    findings: Sequence[Finding]  # health's, over the same journal
    launch_agent: str | None  # the installed LaunchAgent's path, None when none was found
    launch_agent_expected: bool  # this host runs launchd (a Mac), so the night needs one
    notifier: str | None  # the notifier's command, None when there is none
    notifier_off: str | None  # why there is none
    # Off a Mac: the owner's crontab lines that run factory-schedule's tick (empty: none), None when this host has
    # no cron to ask.
    cron_ticks: tuple[str, ...] | None = ()


@dataclass(frozen=True)
class Preflight:
    lines: tuple[Line, ...]

    @property
    def ready(self) -> bool:
        return all(line.mark != "no" for line in self.lines)


def _tokens(number: int) -> str:
    return f"{number:,}"


def tonight(view: ScheduleView, plans: Sequence[LanePlan], now: datetime) -> list[LanePlan]:
    """The lanes of the next night (the local date of the first lane due in the next 24 hours, or running now),
    in start order."""
    due = sorted((plan for plan in plans if plan.action in ("admit", "resume", "running")
                  and (plan.at is None or plan.at <= now + NIGHT_AHEAD)), key=lambda plan: (plan.at or now, plan.lane))
    if not due:
        return []
    zone = view.commission["zone"]
    night = local_date_of(zone, max(due[0].at or now, now))
    return [plan for plan in due if local_date_of(zone, max(plan.at or now, now)) == night]


def _lane_config(view: ScheduleView, lane: str) -> Mapping[str, Any]:
    return next((entry for entry in view.commission.get("lanes", []) if entry.get("lane") == lane), {})


def _accounts(view: ScheduleView, lane: str) -> list[str]:
    return list(dict.fromkeys(str(task["account"]) for task in _lane_config(view, lane).get("tasks", [])))


def _record_fix(account: str, state: AccountState | None, sign_in: str | None) -> str:
    sequence = 1 if state is None or state.record is None else state.record.sequence + 1
    named = sign_in or (state.record.sign_in if state is not None and state.record is not None else "YOU@EXAMPLE.COM")
    return (f"factory-schedule record-account --account {account} --sequence {sequence} --sign-in {named} "
            f"--overage off --recorded-by YOU")


def _when(view: ScheduleView, plan: LanePlan, now: datetime) -> str:
    if plan.action == "running":
        return "running now"
    if plan.at is None or plan.reason == "due now" or plan.at <= now:
        return "due now"
    return local_wall_of(view.commission["zone"], plan.at)[1]


def _commission_line(view: ScheduleView | None, due: list[LanePlan], plans: Sequence[LanePlan],
                     now: datetime) -> Line:
    if view is None:
        return Line("no", "commission", "no commission is recorded: nothing is scheduled",
                    "factory-schedule commission new --products A,B --weekly-tokens N > commission.json && "
                    "factory-schedule record-commission commission.json")
    zone = view.commission["zone"]
    revision = view.commission.get("revision")
    if not due:
        later = sorted((plan for plan in plans if plan.at is not None), key=lambda plan: plan.at or now)
        after = (f"; the next is {later[0].lane} at {later[0].at.isoformat() if later[0].at else ''}"
                 if later else "")
        return Line("warn", "commission", f"revision {revision} is recorded, but no lane is due in the next 24 "
                    f"hours{after}", "factory-schedule plan")
    first = min((plan.at or now for plan in due), default=now)
    date = local_date_of(zone, first)
    when = _when(view, due[0], now)
    first_at = when if when in ("due now", "running now") else f"at {when}"
    return Line("ok", "commission", f"revision {revision}: {len(due)} lanes tonight, the first "
                f"{first_at} on {date.to_date_string()} ({zone})")


def _account_lines(view: ScheduleView, due: list[LanePlan], lanes: Mapping[str, LaneFacts],
                   now: datetime) -> list[Line]:
    max_age = timedelta(days=int(view.commission.get("recordMaxAgeDays", 30)))
    last_slot: dict[str, datetime] = {}
    for plan in due:
        for account in _accounts(view, plan.lane):
            last_slot[account] = max(last_slot.get(account, now), plan.at or now)
    lines = []
    for account in sorted(last_slot):
        state = next((candidate for candidate in view.accounts if candidate.account == account), None)
        observed = next((facts.sign_in for facts in lanes.values()
                         if facts.provider and ACCOUNT_OF_PROVIDER.get(facts.provider) == account and facts.sign_in),
                        None)
        if state is None or state.record is None:
            lines.append(Line("no", account, "has no owner record: no call is admitted on it",
                              _record_fix(account, state, observed)))
            continue
        record = state.record
        expires = at(record.recorded_at) + max_age
        if expires <= last_slot[account]:
            lines.append(Line("no", account, f"record {record.sequence} stops being current at {expires.isoformat()}, "
                              "before tonight's last lane on it", _record_fix(account, state, record.sign_in)))
        elif record.overage:
            lines.append(Line("no", account, f"record {record.sequence} has paid overage on: no call is admitted",
                              _record_fix(account, state, record.sign_in)))
        else:
            lines.append(Line("ok", account, f"record {record.sequence} is current until {expires.date().isoformat()} "
                              f"(sign-in {record.sign_in}, overage off)"))
    return lines


def _lane_line(view: ScheduleView, plan: LanePlan, facts: LaneFacts | None, prompts: str | None,
               now: datetime) -> Line:
    subject = f"{plan.lane} {_when(view, plan, now)}"
    if facts is None:
        return Line("warn", subject, "its prompts, CLI and sign-in were not checked (no prompt folder)",
                    "factory-schedule check --prompts DIR (or set $FACTORY_PROMPTS)")
    if facts.binding_problem is not None:
        return Line("no", subject, facts.binding_problem,
                    f"fix the file it names, then: factory-schedule run --check --prompts {prompts} --lane {plan.lane}")
    provider = facts.provider or "?"
    if not facts.executable_found:
        return Line("no", subject, f"{provider} is not found at {facts.executable}",
                    f"install {provider}, or set executable = \"/full/path/to/{provider}\" in its lane.toml")
    if facts.cli_problem is not None and facts.logged_in is not False:
        return Line("no", subject, facts.cli_problem,
                    f"factory-schedule run --check --prompts {prompts} --lane {plan.lane} (after the fix)")
    if facts.logged_in is False:
        return Line("no", subject, f"{provider} at {facts.executable} is not signed in: the segment would defer "
                    "logged-out", LOGIN_COMMAND.get(provider))
    account = ACCOUNT_OF_PROVIDER.get(provider)
    state = next((candidate for candidate in view.accounts if candidate.account == account), None)
    recorded = state.record.sign_in if state is not None and state.record is not None else None
    said = "its CLI reports" if facts.sign_in_from == "cli" else "lane.toml names"
    if recorded is not None and facts.sign_in != recorded:
        return Line("no", subject, f"the runner will observe sign-in {facts.sign_in!r} ({said} it), but the {account} "
                    f"record names {recorded!r}: every call would be refused overage-unverified",
                    f"{_record_fix(str(account), state, facts.sign_in)}  (or sign {provider} in as {recorded})")
    signed = "signed in" if facts.logged_in else "sign-in not reported"
    if facts.cli_warning is not None:
        return Line("warn", subject, facts.cli_warning, f"check args in {prompts}/{plan.lane}/lane.toml")
    if facts.from_path:
        return Line("warn", subject, f"{provider} was found on your PATH ({facts.executable}); the LaunchAgent's "
                    "PATH is only the system's and factory-schedule's folder",
                    f"set executable = \"{facts.executable}\" in {prompts}/{plan.lane}/lane.toml")
    version = f" {facts.cli_version}" if facts.cli_version else ""
    return Line("ok", subject, f"{provider}{version} at {facts.executable}, {signed} as {facts.sign_in} ({said} it), "
                f"{facts.units} {'prompt' if facts.units == 1 else 'prompts'}")


CRON_EVERY_MINUTES = 20  # a tick at least this often, all day, starts each lane within minutes of its slot


def _fires_all_day(line: str) -> bool:
    """Whether a crontab line fires every few minutes, every hour of every day, for every lane: in any zone the
    host keeps (cron fires in it, and not every cron reads CRON_TZ) and across clock changes, a tick then comes
    soon after each lane's slot, and a tick starts only the lanes that are due."""
    fields = line.split()
    if len(fields) < 6 or fields[1:5] != ["*", "*", "*", "*"] or "--lane" in fields:
        return False
    minute = fields[0]
    if minute == "*":
        return True
    step = minute.removeprefix("*/")
    return minute.startswith("*/") and step.isdigit() and 0 < int(step) <= CRON_EVERY_MINUTES


def _cron_line(ticks: tuple[str, ...] | None, prompts: str) -> Line:
    """Off a Mac nothing here installs the scheduler: the owner's crontab, read, says whether it fires the tick."""
    wanted = (f"`*/10 * * * * /full/path/factory-schedule tick -- /full/path/factory-schedule run --prompts "
              f"{prompts}` (every ten minutes all day, whatever the host's zone: a tick starts only the lanes that "
              "are due; `command -v factory-schedule` prints the path; set FACTORY_JOURNAL=... on a line above it "
              "if you set it in your shell)")
    found = next((line for line in ticks or () if _fires_all_day(line)), None)
    if found is not None:
        return Line("ok", "scheduler", f"cron fires the tick every few minutes: {found}")
    if ticks is None:
        return Line("warn", "scheduler", "not a Mac, and no cron here (`crontab` is not installed): nothing "
                    "here can tell what fires the tick tonight (a systemd timer cannot be seen)",
                    f"install cron and add the crontab line {wanted}, or a systemd timer doing the same")
    if ticks:
        return Line("warn", "scheduler", f"your crontab runs the tick, but not every few minutes all day for every "
                    f"lane ({ticks[0]}): a lane whose slot falls between its firings starts late or not at all",
                    f"crontab -e, and make it {wanted}")
    return Line("warn", "scheduler", "not a Mac, and no tick in your crontab: nothing here can tell what fires the "
                "tick tonight (a systemd timer cannot be seen)", f"crontab -e, and add {wanted}")


def _launch_agent_line(facts: PreflightFacts) -> list[Line]:
    shown = [finding for finding in facts.findings if finding.kind.startswith("launch-agent-")
             and finding.severity != "info"]
    prompts = facts.prompts or "DIR"
    if facts.launch_agent is None:
        if not facts.launch_agent_expected:
            return [_cron_line(facts.cron_ticks, prompts)]
        return [Line("no", "LaunchAgent", "none is installed: nothing fires the tick tonight",
                     f"factory-schedule launchd install --commission commission.json --output "
                     f"~/Library/LaunchAgents/com.factory-schedule.tick.plist -- factory-schedule run --prompts "
                     f"{prompts} && launchctl bootstrap gui/$(id -u) "
                     "~/Library/LaunchAgents/com.factory-schedule.tick.plist")]
    if not shown:
        return [Line("ok", "LaunchAgent", f"{facts.launch_agent} fires the tick at the commission's times")]
    return [Line("no" if finding.severity == "error" else "warn", "LaunchAgent", finding.message)
            for finding in shown]


def _notifier_line(facts: PreflightFacts) -> Line:
    if facts.notifier is not None:
        return Line("ok", "notifier", f"{facts.notifier} tells you when something needs you")
    return Line("warn", "notifier", f"{facts.notifier_off}: nobody is told when a lane stops",
                "export FACTORY_NOTIFY='COMMAND' (it gets the text as its last argument), where the tick runs too "
                "(the LaunchAgent's environment, or a line of the crontab)")


def _ceiling_line(view: ScheduleView, due: list[LanePlan], now: datetime) -> Line:
    zone = view.commission["zone"]
    bounds = sum(int(task["maxCalls"]) * int(task["callBound"])
                 for plan in due for task in _lane_config(view, plan.lane).get("tasks", []))
    night = min((plan.at or now for plan in due), default=now)
    week = iso_week_of(local_date_of(zone, night))
    kept = next((entry for entry in view.ledger if entry.week == week), None)
    ceiling = int(view.commission["weeklyTokens"]) if kept is None else kept.ceiling
    left = ceiling - (0 if kept is None else kept.debited)
    smallest = min((int(task["callBound"]) for plan in due for task in _lane_config(view, plan.lane).get("tasks", [])),
                   default=0)
    if due and left < smallest:
        return Line("no", "ceiling", f"{week} has {_tokens(left)} tokens left, less than any of tonight's calls "
                    f"may use: every call is refused budget-exhausted", "a commission revision with a higher "
                    "weeklyTokens (factory-schedule commission check FILE shows the week against it)")
    if bounds > left:
        return Line("warn", "ceiling", f"tonight's bounds add up to {_tokens(bounds)} tokens, more than the "
                    f"{_tokens(left)} left in {week}: the last calls may be refused budget-exhausted",
                    "a commission revision with a higher weeklyTokens, or lower maxCalls or callBound")
    return Line("ok", "ceiling", f"tonight's bounds add up to {_tokens(bounds)} of the {_tokens(left)} tokens left "
                f"in {week}")


def preflight(facts: PreflightFacts) -> Preflight:
    """Every check, in the order a night depends on them."""
    view, now = facts.view, facts.now
    due = tonight(view, facts.plans, now) if view is not None else []
    lines = [_commission_line(view, due, facts.plans, now)]
    lines += [Line("no" if finding.severity == "error" else "warn", finding.kind, finding.message)
              for finding in facts.findings
              if finding.severity != "info" and finding.kind.startswith(SHOWN_FINDINGS)
              and not finding.kind.startswith("launch-agent-")]
    if view is not None:
        lines += _account_lines(view, due, facts.lanes, now)
        lines += [_lane_line(view, plan, facts.lanes.get(plan.lane) if facts.prompts else None, facts.prompts, now)
                  for plan in due]
    lines += _launch_agent_line(facts)
    lines.append(_notifier_line(facts))
    if view is not None:
        lines.append(_ceiling_line(view, due, now))
    return Preflight(tuple(lines))


def headline(result: Preflight) -> str:
    """The first line: whether tonight will run, and how many lines stop it."""
    stopping = sum(1 for line in result.lines if line.mark == "no")
    if result.ready:
        return "Tonight will run: every check passed." if all(line.mark == "ok" for line in result.lines) else (
            "Tonight will run; the warnings below are worth a minute.")
    return f"Tonight will NOT run as it stands: {stopping} {'problem' if stopping == 1 else 'problems'} below."
