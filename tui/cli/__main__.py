"""`python -m factory_schedule.tui.cli`: the same program as the `factory-schedule` script."""

import sys

from factory_schedule.tui.cli.main import main

sys.exit(main())
