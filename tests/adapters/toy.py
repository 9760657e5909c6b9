#!/usr/bin/python3
"""toy.py MODE - adapters for the tests of the external worker protocol
(tests/integ_external.cc), run with `lockstorm run --exec 'toy.py MODE'`.

  nolock     the update workload with no lock at all: the checker must catch it.
             Workers 0 and 1 meet inside their first critical section (each
             waits for the other's marker file), so two holders overlap and
             both commit the same revision on every run, not by chance.
  garble     a correct first op, then a line that is not an event
  hang       a correct first op, then silence outside any lock call
  hang-lock  `attempt`, then silence: a lock call that never returns
  exit       a correct first op, a word on stderr, then exit 4 before `stop`
  badclock   events stamped with CLOCK_REALTIME instead of CLOCK_MONOTONIC
"""
import json
import os
import sys
import time

MODE = sys.argv[1]
EV_FD = int(os.environ["LOCKSTORM_EVENT_FD"])
STATE = os.environ["LOCKSTORM_STATE"]
WORKER = int(os.environ["LOCKSTORM_WORKER"])
clock = time.time_ns if MODE == "badclock" else time.monotonic_ns


def emit(line):
    os.write(EV_FD, line.encode() + b"\n")


def event(name, extra=""):
    emit("%d %s%s" % (clock(), name, extra))


def meet(op):
    """nolock: workers 0 and 1 wait for each other in their first op."""
    if op != 0 or WORKER > 1:
        return
    here = os.path.dirname(STATE)
    open(os.path.join(here, "toy-met-%d" % WORKER), "w").close()
    other = os.path.join(here, "toy-met-%d" % (1 - WORKER))
    deadline = time.monotonic() + 30
    while not os.path.exists(other) and time.monotonic() < deadline:
        time.sleep(0.001)


def update(op):
    event("attempt", " n=0")
    event("acquired")
    try:
        with open(STATE) as f:
            doc = json.load(f)
        rev, counts = doc["revision"], doc["counts"]
    except FileNotFoundError:
        rev, counts = -1, {}
    own = counts.get(str(WORKER), 0)
    event("read", " rev=%d own=%d" % (rev, own))
    if MODE == "nolock":
        meet(op)
    counts[str(WORKER)] = own + 1
    new = max(rev, 0) + 1
    tmp = "%s.%d.tmp" % (STATE, os.getpid())
    with open(tmp, "w") as f:
        f.write(json.dumps({"version": 1, "revision": new, "counts": counts}) + "\n")
    event("commit-begin", " rev=%d own=%d" % (new, own + 1))
    os.rename(tmp, STATE)
    event("commit", " rev=%d own=%d" % (new, own + 1))
    event("release-begin")
    event("released")


def main():
    ops = 0
    emit("next")
    for line in sys.stdin:
        if line.strip() == "stop":
            return 0
        op = int(line.split()[1])
        if ops >= 1 and MODE == "garble":
            emit("this is not an event")
        elif ops >= 1 and MODE == "hang":
            time.sleep(3600)
        elif ops >= 1 and MODE == "exit":
            sys.stderr.write("toy: giving up after one op\n")
            return 4
        if MODE == "hang-lock":
            event("attempt", " n=0")
            time.sleep(3600)
        update(op)
        ops += 1
        emit("next")
    return 0


if __name__ == "__main__":
    sys.exit(main())
