"""`factory-schedule owner ...` and the owner commands on the command line, as real processes: the key sealed
in the user data folder (0600), the passphrase from a file descriptor or the terminal only, and an owner
command refused, writing nothing, without it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from factory_schedule.core import SCHEDULE_AGGREGATE
from factory_schedule.store import open_journal
from factory_schedule.tui.cli.output import ERROR_EXIT_CODES, PIPELINE_EXIT_CODES
from tests.tui.runner_support import CLI, REPO, cli_env, commission_due_now

PASSPHRASE = "correct horse battery"


class Owner:
    """The owner's shell: its own HOME and data folder, no terminal (a new session)."""

    def __init__(self, tmp_path: Path, url: str) -> None:
        self.tmp, self.url = tmp_path, url
        self.env = cli_env(url, HOME=str(tmp_path / "home"), XDG_DATA_HOME=str(tmp_path / "data"))

    def __call__(self, *args: str, secrets: tuple[str, ...] | None = None) -> tuple[int, Any]:
        command = [*CLI, "--journal", self.url, *args]
        descriptor = None
        if secrets is not None:
            path = self.tmp / "secrets"
            path.write_text("".join(f"{line}\n" for line in secrets))
            descriptor = os.open(path, os.O_RDONLY)
            command += ["--passphrase-fd", str(descriptor)]
        try:
            done = subprocess.run(command, capture_output=True, text=True, env=self.env, cwd=REPO, timeout=120,
                                  start_new_session=True, pass_fds=() if descriptor is None else (descriptor,))
        finally:
            if descriptor is not None:
                os.close(descriptor)
        lines = [line for line in done.stdout.splitlines() if line.strip()]
        return done.returncode, json.loads(lines[-1]) if lines else done.stderr

    def head(self) -> int:
        return open_journal(self.url).head(SCHEDULE_AGGREGATE)


@pytest.fixture
def owner(tmp_path: Path, sqlite_url: str) -> Owner:
    shell = Owner(tmp_path, sqlite_url)
    (tmp_path / "commission.json").write_text(json.dumps(commission_due_now()))
    assert shell("record-commission", str(tmp_path / "commission.json"))[0] == 0
    return shell


def _account(owner: Owner, sequence: int, secrets: tuple[str, ...] | None) -> tuple[int, Any]:
    return owner("record-account", "--account", "claude", "--sequence", str(sequence), "--sign-in",
                 "owner@example.com", "--overage", "off", "--recorded-by", "owner", secrets=secrets)


def test_owner_init_seals_the_key_in_the_user_data_folder_and_records_its_public_half(owner: Owner) -> None:
    code, made = owner("owner", "init", secrets=(PASSPHRASE,))
    assert code == 0, made
    key_file = Path(made["key_file"])
    assert key_file == owner.tmp / "data" / "factory-schedule" / "owner-key.json"
    assert key_file.stat().st_mode & 0o777 == 0o600
    assert PASSPHRASE not in key_file.read_text() and len(made["recovery_code"].split("-")) == 13
    code, shown = owner("owner", "show")
    assert shown["protected"] and shown["owner_key"]["keys"][0]["publicKey"] == made["key"]["publicKey"]


def test_once_the_journal_holds_a_key_an_owner_command_needs_the_passphrase_and_writes_nothing_without_it(
        owner: Owner) -> None:
    assert _account(owner, 1, None)[0] == 0  # no key yet: unsigned, as always
    assert owner("owner", "init", secrets=(PASSPHRASE,))[0] == 0
    before = owner.head()
    code, refused = _account(owner, 2, None)  # no terminal, no descriptor
    assert code == 2 and "passphrase" in refused["message"] and owner.head() == before
    code, wrong = _account(owner, 2, ("not the passphrase",))
    assert code == 2 and "does not open" in wrong["message"] and owner.head() == before
    code, signed = _account(owner, 2, (PASSPHRASE,))
    assert code == 0 and signed["replayed"] is False and owner.head() == before + 1


def test_a_rotation_needs_the_current_passphrase_and_a_recovery_the_recovery_code(owner: Owner) -> None:
    assert owner("owner", "init", secrets=(PASSPHRASE,))[0] == 0
    code, rotated = owner("owner", "rotate", secrets=(PASSPHRASE, "a second passphrase"))
    assert code == 0 and rotated["key"]["how"] == "rotated"
    assert _account(owner, 1, (PASSPHRASE,))[0] == 2  # the old passphrase opens nothing now
    code, recovered = owner("owner", "recover", secrets=(rotated["recovery_code"], "a third passphrase"))
    assert code == 0 and recovered["key"]["how"] == "recovered"
    assert _account(owner, 1, ("a third passphrase",))[0] == 0
    code, shown = owner("owner", "show")
    assert [key["how"] for key in shown["owner_key"]["keys"]] == ["init", "rotated", "recovered"]


def test_an_approval_decided_on_the_command_line_without_the_passphrase_is_unsigned(owner: Owner) -> None:
    assert owner("owner", "init", secrets=(PASSPHRASE,))[0] == 0
    code, _ = owner("lanes", "approval-decide", "--approval", "a-1", "--decided-by", "owner", "--approved", "on",
                    secrets=("wrong passphrase",))
    assert code == 2
    assert ERROR_EXIT_CODES["UNSIGNED"] == 46 and PIPELINE_EXIT_CODES["UNSIGNED"] == 68


def test_health_with_the_prompts_reports_a_lane_whose_cli_may_write_the_journals_folder(owner: Owner) -> None:
    from tests.tui.host.test_run import BOUND, write_lane
    from tests.tui.provider_support import fake_path

    owner.env["PATH"] = fake_path(owner.env["PATH"])
    prompts = owner.tmp / "prompts"
    write_lane(prompts, "alpha/basic", f'provider = "claude"\nsign_in = "owner@example.com"\nbound = {BOUND}\n'
               f'workdir = "{owner.tmp}"\nargs = ["--permission-mode", "acceptEdits"]\n',
               {"scan": {"10-scan.md": "Scan.\n"}})
    _code, report = owner("health", "--json", "--prompts", str(prompts))
    [finding] = [f for f in report["findings"] if f["kind"] == "provider-writes-journal"]
    assert finding["evidence"] == {"lane": "alpha/basic", "provider": "claude", "writes": "workdir"}


@pytest.mark.parametrize("command", ["rotate", "recover"])
def test_a_new_owner_key_is_recorded_only_with_its_key_file_in_place_whatever_is_in_its_way(
        owner: Owner, command: str) -> None:
    """A provider runs as the owner's user and may plant anything in the key's folder. Whatever it plants, the
    journal never ends up holding a key whose private half (or recovery code) the owner does not have: either
    the command records nothing and the current passphrase still signs, or the new passphrase signs."""
    code, made = owner("owner", "init", secrets=(PASSPHRASE,))
    assert code == 0, made
    folder = Path(made["key_file"]).parent
    for planted in ("owner-key.json.new", "owner-key.json.rotated-1", "owner-key.json.replaced-by-recovery-2"):
        (folder / planted / "in-the-way").mkdir(parents=True)
    first = PASSPHRASE if command == "rotate" else made["recovery_code"]
    code, answer = owner("owner", command, secrets=(first, "a second passphrase"))
    signs = [passphrase for passphrase in (PASSPHRASE, "a second passphrase")
             if _account(owner, 1, (passphrase,))[0] == 0]
    assert signs, (code, answer)
    if signs == ["a second passphrase"]:
        assert code == 0 and len(answer["recovery_code"].split("-")) == 13


def test_a_key_file_that_is_not_a_regular_file_is_refused_and_never_waited_on(owner: Owner) -> None:
    """A provider may put a FIFO where the key file was: an owner command says so (exit 2) instead of waiting
    forever for a writer."""
    code, made = owner("owner", "init", secrets=(PASSPHRASE,))
    assert code == 0, made
    key_file = Path(made["key_file"])
    key_file.unlink()
    os.mkfifo(key_file, 0o600)
    before = owner.head()
    code, refused = _account(owner, 1, (PASSPHRASE,))
    assert code == 2 and "not a regular file" in refused["message"] and owner.head() == before


def test_a_key_recorded_past_the_one_this_machine_holds_is_reported_with_when(owner: Owner) -> None:
    """A process of the owner's user that can write the journal can append a key of its own through the store,
    past every signature check; the journal is consistent, but this machine's key file still holds the key it
    replaced. Health says so, naming when, and that owner records since may not be the owner's."""
    from factory_schedule.core.owner import OWNER_AGGREGATE, OwnerState
    from factory_schedule.store import Decision, NewEvent
    from factory_schedule.tui.host.owner_key import KeySigner

    assert owner("owner", "init", secrets=(PASSPHRASE,))[0] == 0
    _code, report = owner("health", "--json")
    assert "owner-key-replaced" not in [finding["kind"] for finding in report["findings"]]
    journal = open_journal(owner.url)
    version, text = journal.load_text(OWNER_AGGREGATE)
    assert text is not None
    state = OwnerState.model_validate_json(text)
    worker_key = KeySigner.generate().public_key
    forged = {**state.keys[0].doc(), "n": 2, "publicKey": worker_key, "how": "rotated",
              "recordedAt": "2026-12-03T09:00:00.000Z"}
    document = {**state.doc(), "keys": [*state.doc()["keys"], forged]}
    journal.execute(OWNER_AGGREGATE, "owner/key/2", {"how": "rotated"}, version,
                    lambda _state, _v: Decision([NewEvent("owner-key-recorded", forged)], document, {}))
    _code, report = owner("health", "--json")
    [replaced] = [finding for finding in report["findings"] if finding["kind"] == "owner-key-replaced"]
    assert replaced["severity"] == "error"
    assert replaced["evidence"] == {"journalKey": 2, "thisMachinesKey": 1, "recordedAt": "2026-12-03T09:00:00.000Z"}
    assert "2026-12-03T09:00:00.000Z" in replaced["message"] and "forged" in replaced["message"]


def test_a_key_list_rewritten_to_drop_this_machines_key_is_reported_from_the_chains_own_events(
        owner: Owner) -> None:
    """The forger writes the state too: a key list holding only its own key leaves no earlier key to compare this
    machine's file with. The chain's own `owner-key-recorded` events (which the checkpoints hold) still say which
    keys were recorded, and the list no longer folds from them."""
    from factory_schedule.core.owner import OWNER_AGGREGATE, OwnerState
    from factory_schedule.store import Decision, NewEvent
    from factory_schedule.tui.host.owner_key import KeySigner

    assert owner("owner", "init", secrets=(PASSPHRASE,))[0] == 0
    journal = open_journal(owner.url)
    version, text = journal.load_text(OWNER_AGGREGATE)
    assert text is not None
    state = OwnerState.model_validate_json(text)
    forged = {**state.keys[0].doc(), "n": 2, "publicKey": KeySigner.generate().public_key, "how": "rotated"}
    document = {**state.doc(), "keys": [forged]}  # the list rewritten: this machine's key 1 is gone from it
    journal.execute(OWNER_AGGREGATE, "owner/key/2", {"how": "rotated"}, version,
                    lambda _state, _v: Decision([NewEvent("owner-key-recorded", forged)], document, {}))
    _code, report = owner("health", "--json")
    [replaced] = [finding for finding in report["findings"] if finding["kind"] == "owner-key-replaced"]
    assert replaced["severity"] == "error" and replaced["evidence"]["stateDisagreesWithHistory"] is True
    code, _shown = owner("owner", "rotate", secrets=(PASSPHRASE, PASSPHRASE + "2", PASSPHRASE + "2"))
    assert code != 0  # nor can the owner's own key sign for it: the journal's current key is the forger's


def test_an_owner_command_with_bad_input_says_so_before_it_asks_for_the_passphrase(owner: Owner) -> None:
    """Unlocking the key takes a passphrase and a second of Argon2: input the command can refuse on its own is
    refused first, so the owner never types a passphrase for a command that was never going to run."""
    assert owner("owner", "init", secrets=(PASSPHRASE,))[0] == 0
    before = owner.head()
    code, refused = owner("record-account", "--account", "gemini", "--sequence", "1", "--sign-in", "x",
                          "--overage", "off", "--recorded-by", "owner")  # no terminal, no descriptor
    assert code == 2 and "account: one of claude, chatgpt" in refused["message"], refused
    bad = owner.tmp / "bad.json"
    bad.write_text(json.dumps({**commission_due_now(), "revision": 2, "zone": "Mars/Olympus"}))
    code, refused = owner("record-commission", str(bad))
    assert code == 2 and "Mars/Olympus" in refused["message"], refused
    assert owner.head() == before


def test_an_empty_passphrase_descriptor_says_no_line_was_read(owner: Owner) -> None:
    assert owner("owner", "init", secrets=(PASSPHRASE,))[0] == 0
    code, refused = _account(owner, 1, ())
    assert code == 2 and "no line" in refused["message"] and "does not open" not in refused["message"], refused


def test_a_new_passphrase_too_short_is_refused_before_it_is_asked_again(owner: Owner) -> None:
    """On a real terminal (a pseudo-terminal here): typing a short passphrase twice to hear it is too short
    wastes the owner's second typing."""
    import pty
    import select

    pid, terminal = pty.fork()
    if pid == 0:  # the child: the command line on the terminal, as the owner runs it
        os.chdir(REPO)
        os.execve(CLI[0], [*CLI, "--journal", owner.url, "owner", "init"], owner.env)
    said = b""

    def read_until(wanted: bytes, seconds: float = 60) -> None:
        nonlocal said
        while wanted not in said:
            ready, _, _ = select.select([terminal], [], [], seconds)
            assert ready, said
            try:
                chunk = os.read(terminal, 4096)
            except OSError:  # the child ended
                return
            if not chunk:
                return
            said += chunk

    try:
        read_until(b"passphrase: ")
        os.write(terminal, b"short\n")
        read_until(b"too short", seconds=30)
    finally:
        if os.waitpid(pid, os.WNOHANG) == (0, 0):  # still waiting for a second passphrase: the old behaviour
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(terminal)
    assert b"too short" in said and b"Again" not in said, said
