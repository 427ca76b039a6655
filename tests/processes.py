"""Real OS processes for the race, queue and crash tests, started from a fork server.

Each child is its own process with its own connections to the journal, as a tick, a runner or an owner's
command is. `PROCESSES` starts them from a fork server: a fresh interpreter (started as the `spawn` method
starts one, never a fork of the test process with its open connections and threads) that imports the engine
and the children's targets once. A child forks from it in milliseconds instead of importing them again,
which costs about 0.7 s of CPU per child on a slow host (the test of 32 racing writers: 13 s that way,
3.4 s from the server).

The server is started at its first use. A child gets the test process's working folder and import path,
but the environment of the server's start, so everything a child needs comes in its arguments. A child
ends with `os._exit`, as every fork-server child does: no atexit handler or finalizer runs and its
connections are not closed on the way out. A test whose rule needs a process's own exit (the last
connection's checkpoint on close) starts its children with `spawn` instead (`tests/store/test_double_open.py`).
"""

from __future__ import annotations

import multiprocessing

PROCESSES = multiprocessing.get_context("forkserver")
PROCESSES.set_forkserver_preload([
    "factory_schedule.core",
    "factory_schedule.store",
    "tests.store.support",
    "tests.store.test_leases",
    "tests.store.test_transactions",
    "tests.core.schedule.processes",
    "tests.core.pipeline.pipeline_processes",
])
