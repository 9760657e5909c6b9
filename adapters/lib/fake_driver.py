#!/usr/bin/python3
"""fake_driver.py - a stand-alone check of one adapter, without lockstorm.

    /usr/bin/python3 adapters/lib/fake_driver.py ADAPTER [-n WORKERS] [--ops N]
        [-w update|hold] [--hold-ms MS] [--param K=V].. [-v]

Spawns WORKERS copies of adapters/ADAPTER/run with the external-worker
environment (docs/external-workers.md), the event pipe on fd 3 and the control
lines on stdin; answers every `next` with `op K` until each worker has done
N ops, then `stop`.  At the end it checks what it can from the events alone:
every line well-formed, no two holders at once (acquired .. release-begin,
by CLOCK_MONOTONIC), and (update) the final state's counters equal each
worker's commits and its revision their sum.  Exit 0 if all held.
"""
import argparse
import json
import os
import re
import selectors
import subprocess
import sys
import tempfile

LINE = re.compile(r"^(\d+) ([a-z-]+)((?: [a-z_]+=\S+)*)$")
EVENTS = {"next", "attempt", "acquired", "busy", "acquire-error", "read", "commit-begin", "commit",
          "lost", "write-error", "release-begin", "released", "release-error", "log"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("adapter")
    ap.add_argument("-n", type=int, default=4)
    ap.add_argument("--ops", type=int, default=50)
    ap.add_argument("-w", default="update")
    ap.add_argument("--hold-ms", type=int, default=0)
    ap.add_argument("--param", action="append", default=[])
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()

    here = os.path.dirname(os.path.abspath(__file__))
    run = os.path.join(here, "..", a.adapter, "run")
    work = tempfile.mkdtemp(prefix="ls-fake-")
    state = os.path.join(work, "state.json")
    procs, sel = [], selectors.DefaultSelector()
    events = {w: [] for w in range(a.n)}
    done = {w: 0 for w in range(a.n)}
    bad = []
    for w in range(a.n):
        r, wfd = os.pipe()
        env = dict(os.environ, LOCKSTORM_RESOURCE=state, LOCKSTORM_STATE=state,
                   LOCKSTORM_LOCK=state + ".lock", LOCKSTORM_WORKER=str(w), LOCKSTORM_WORKERS=str(a.n),
                   LOCKSTORM_SEED="1", LOCKSTORM_WORKLOAD=a.w, LOCKSTORM_HOLD_MS=str(a.hold_ms),
                   LOCKSTORM_EVENT_FD="3")
        for kv in a.param:
            k, v = kv.split("=", 1)
            env["LOCKSTORM_PARAM_" + k.upper()] = v
        p = subprocess.Popen([run], stdin=subprocess.PIPE, env=env, pass_fds=(3,),
                             preexec_fn=lambda wfd=wfd: os.dup2(wfd, 3))
        os.close(wfd)
        procs.append(p)
        sel.register(r, selectors.EVENT_READ, (w, bytearray()))
    live = a.n
    while live:
        for key, _ in sel.select():
            w, buf = key.data
            chunk = os.read(key.fd, 65536)
            if not chunk:
                sel.unregister(key.fd)
                os.close(key.fd)
                live -= 1
                continue
            buf += chunk
            while b"\n" in buf:
                line, _, rest = bytes(buf).partition(b"\n")
                buf[:] = rest
                text = line.decode()
                m = LINE.match(text)
                if a.v:
                    print("w%d %s" % (w, text))
                if not m or m.group(2) not in EVENTS:
                    if not (m and m.group(2) == "log"):
                        bad.append("w%d malformed: %r" % (w, text))
                    continue
                events[w].append((int(m.group(1)), m.group(2), m.group(3).strip()))
                if m.group(2) == "next":
                    msg = ("op %d\n" % done[w]) if done[w] < a.ops else "stop\n"
                    done[w] += 1
                    try:
                        procs[w].stdin.write(msg.encode())
                        procs[w].stdin.flush()
                    except BrokenPipeError:
                        pass
    rcs = [p.wait() for p in procs]

    holds, commits, counts = [], {w: 0 for w in range(a.n)}, {}
    for w, evs in events.items():
        start = None
        for t, ev, f in evs:
            if ev == "acquired":
                start = t
            elif ev == "release-begin" and start is not None:
                holds.append((start, t, w))
                start = None
            elif ev == "commit":
                commits[w] += 1
            counts[ev] = counts.get(ev, 0) + 1
    holds.sort()
    overlaps = sum(1 for x, y in zip(holds, holds[1:]) if y[0] < x[1])
    print("adapter %s: %d workers, rc %s, events %s" % (a.adapter, a.n, rcs, json.dumps(counts, sort_keys=True)))
    ok = not bad and all(rc == 0 for rc in rcs) and overlaps == 0
    if overlaps:
        print("exclusion: %d overlapping holds" % overlaps)
    if a.w == "update":
        try:
            st = json.load(open(state))
        except (OSError, ValueError) as e:
            st = {"revision": 0, "counts": {}} if sum(commits.values()) == 0 else None
            if st is None:
                print("state: %s" % e)
                ok = False
        if st is not None:
            final = {int(k): v for k, v in st["counts"].items()}
            lost = {w: commits[w] - final.get(w, 0) for w in commits if commits[w] != final.get(w, 0)}
            print("state: revision %d, commits %d%s" % (st["revision"], sum(commits.values()),
                  (", lost writes %s" % lost) if lost else ""))
            ok = ok and not lost and st["revision"] == sum(commits.values())
    for b in bad[:5]:
        print(b)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
