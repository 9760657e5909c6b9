#!/usr/bin/python3
"""toy.py MODE - adapters for the tests of the external worker protocol
(tests/integ_external.cc), run with `lockstorm run --exec 'toy.py MODE'`.

  nolock     the update workload with no lock at all: the checker must catch it.
             Workers 0 and 1 meet inside their first critical section (a FIFO
             both open, one side each: open(2) returns only once the other
             side has opened it), so two holders overlap and both commit the
             same revision on every run, not by chance.
  garble     a correct first op, then a line that is not an event
  hang       a correct first op, then silence outside any lock call (it waits
             for a signal that never comes; the driver kills it)
  hang-lock  `attempt`, then silence: a lock call that never returns
  exit       a correct first op, a word on stderr, then exit 4 before `stop`
  badclock   events stamped with CLOCK_REALTIME instead of CLOCK_MONOTONIC
"""
import json
import os
import signal
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
    """nolock: workers 0 and 1 wait for each other in their first op.  Both open
    one FIFO, 0 to write and 1 to read; open(2) blocks each side until the other
    has opened it.  A partner that never comes ends the wait after 30 s."""
    if op != 0 or WORKER > 1:
        return
    path = os.path.join(os.path.dirname(STATE), "toy-meet")
    try:
        os.mkfifo(path)
    except FileExistsError:
        pass

    def give_up(signum, frame):
        raise TimeoutError

    signal.signal(signal.SIGALRM, give_up)
    signal.alarm(30)
    try:
        os.close(os.open(path, os.O_WRONLY if WORKER == 0 else os.O_RDONLY))
    except TimeoutError:
        pass
    finally:
        signal.alarm(0)


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
            signal.pause()
        elif ops >= 1 and MODE == "exit":
            sys.stderr.write("toy: giving up after one op\n")
            return 4
        if MODE == "hang-lock":
            event("attempt", " n=0")
            signal.pause()
        update(op)
        ops += 1
        emit("next")
    return 0


if __name__ == "__main__":
    sys.exit(main())
