#!/usr/bin/env python3
"""A stand-in for a paid provider: one invocation is one contact, logged, answered with a report.

    fake_provider.py --work KEY --bound TOKENS

prints the report `factory-schedule call end` takes and exits 0. Every contact is
appended to $FAKE_PROVIDER_LOG (one JSON line: work, pid) before it answers, so a
test can count how often each unit of work was sent. $FAKE_PROVIDER_MODE picks
the answer: `ok` (default), `limit` (a usage limit, nothing performed), `signin`
(a 401), `hang` (never answers: a call in flight when its runner is killed), or
`MODE:WORK` to behave so only for that work key and answer `ok` otherwise.

With `--answer PATH` (a staged lane's run, examples/lane_runner.sh) an `ok` contact also writes its
final answer to PATH: the stage's report JSON, $FAKE_PROVIDER_ANSWER when set, else an artifact with
evidence (what the promotion lane's select and evidence stages must report).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time


def _mode_for(work: str) -> str:
    mode = os.environ.get("FAKE_PROVIDER_MODE", "ok")
    if ":" in mode:
        mode, only = mode.split(":", 1)
        return mode if work in only.split(",") else "ok"
    return mode


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", required=True)
    parser.add_argument("--bound", type=int, required=True)
    parser.add_argument("--answer", help="write the final answer (a stage's report JSON) to this file")
    args = parser.parse_args()
    log = os.environ.get("FAKE_PROVIDER_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"work": args.work, "pid": os.getpid()}) + "\n")
    mode = _mode_for(args.work)
    resets_at = int(time.time()) + 3600
    if mode == "hang":
        while True:
            time.sleep(3600)
    if mode == "limit":
        report = {"kind": "usage-limit", "tokens": 0,
                  "observation": {"status": "rejected", "rateLimitType": "five_hour", "resetsAt": resets_at,
                                  "isUsingOverage": False}}
    elif mode == "signin":
        report = {"kind": "sign-in-needed", "tokens": 0, "httpStatus": 401}
    else:
        report = {"kind": "result", "tokens": min(1234, args.bound), "output": "ok",
                  "observation": {"status": "allowed", "rateLimitType": "five_hour", "resetsAt": resets_at,
                                  "isUsingOverage": False}}
    if args.answer and report["kind"] == "result":
        answer = os.environ.get("FAKE_PROVIDER_ANSWER") or json.dumps({
            "artifact": f"artifacts/{args.work}.md", "sha256": hashlib.sha256(args.work.encode()).hexdigest(),
            "evidence": [f"evidence/{args.work}.md"]})
        with open(args.answer, "w", encoding="utf-8") as handle:
            handle.write(answer + "\n")
    sys.stdout.write(json.dumps(report) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
