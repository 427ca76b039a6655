"""`factory-schedule owner init|rotate|recover|show`: the owner key that signs every owner record.

`init` makes the key (or, when this machine already has one, uses it for another journal), seals it
under the owner's passphrase in the user data folder (mode 0600) and records its public half in the
journal with a first owner record; it prints a recovery code, once, to write down. `rotate` replaces the
key with a new one, signed by the current key. `recover` replaces a lost key (or a forgotten passphrase)
with a new one, signed by the recovery key: the journal keeps the recovery in the key's history, and
`owner show` and health's findings show it. Passphrases and the recovery code come from the terminal,
without echo, or (for the owner's own scripts) one line each from `--passphrase-fd N`.
"""

from __future__ import annotations

from typing import Any

OWNER_SECRETS_FD_HELP = ("read each secret the command asks for (passphrase, recovery code), one line each in the "
                         "order asked, from this file descriptor (for your own scripts; default: ask on the "
                         "terminal, without echo)")


def register(subcommands: Any) -> None:
    owner = subcommands.add_parser("owner", help="the owner key that signs every owner record")
    commands = owner.add_subparsers(dest="owner_command", metavar="COMMAND", required=True)
    for name, text, handler in (
        ("init", "make the owner key (passphrase-sealed, in the user data folder) and record it in the journal; "
                 "prints a recovery code once", "init_owner_key"),
        ("rotate", "replace the owner key with a new one, signed by the current key", "rotate_owner_key"),
        ("recover", "replace a lost owner key with a new one, signed by the recovery code's key (recorded for all "
                    "to see)", "recover_owner_key"),
        ("show", "the journal's owner key and its history", "show_owner_key"),
    ):
        parser = commands.add_parser(name, help=text, description=text)
        if name != "show":
            parser.add_argument("--passphrase-fd", type=int, metavar="N", help=OWNER_SECRETS_FD_HELP)
        parser.set_defaults(handler=f"factory_schedule.tui.cli.owner:{handler}")
