#!/usr/bin/python3
"""bench/mkjournal.py OUTDIR OPS [FORMAT] - a kept run of OPS hold-workload ops
by 2 flock workers (4 records an op: attempt, acquired, release-begin,
released), made directly as journal files, for bench/checker-rate: a real run
of 10M records takes minutes on a loaded machine.  OUTDIR must already hold a
real 2-worker flock/hold run's run.json (the bench makes one).  FORMAT 1
(default: both the old and the new reader take it) or 2 (CRC32C)."""
import os
import sys

import numpy as np

EV = {n: i for i, n in enumerate(
    "none,attempt,acquired,busy,acquire-error,read,commit-begin,commit,lost,write-error,"
    "release-begin,released,release-error,fault,step,append,worker-start,worker-exit".split(","))}
EV["stop"] = 22
REC = np.dtype([("type", "<u2"), ("worker", "<u2"), ("pid", "<i4"), ("op", "<u4"), ("err", "<i4"),
                ("seq", "<u8"), ("ns", "<u8"), ("a", "<i8"), ("b", "<i8"), ("c", "<i8"),
                ("magic", "<u2"), ("pad", "<u2"), ("check", "<u4")])


def seal(r, fmt):
    n = len(r)
    r["magic"] = 0x4C53 if fmt == 1 else 0x4C43
    raw = r.view(np.uint8).reshape(n, 64)
    if fmt == 1:
        w = raw.view("<u8").reshape(n, 8).copy()
        w[:, 7] &= np.uint64(0xFFFFFFFF)
        h = np.full(n, 0xCBF29CE484222325, dtype=np.uint64)
        with np.errstate(over="ignore"):
            for i in range(8):
                h ^= w[:, i]
                h *= np.uint64(0x100000001B3)
                h ^= h >> np.uint64(29)
        r["check"] = ((h ^ (h >> np.uint64(32))) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    else:
        t = np.zeros(256, dtype=np.uint32)
        for i in range(256):
            c = i
            for _ in range(8):
                c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
            t[i] = c
        c = np.full(n, 0xFFFFFFFF, dtype=np.uint32)
        for i in range(60):
            c = t[(c ^ raw[:, i]) & np.uint32(0xFF)] ^ (c >> np.uint32(8))
        r["check"] = c ^ np.uint32(0xFFFFFFFF)


def main():
    out, ops = sys.argv[1], int(sys.argv[2])
    fmt = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    jdir = os.path.join(out, "journal")
    os.makedirs(jdir, exist_ok=True)
    for f in os.listdir(jdir):
        os.unlink(os.path.join(jdir, f))
    t0 = 1_000_000_000
    # the ops: worker op % 2, records 4 a op, seqs 3.. in order
    n = ops * 4
    r = np.zeros(n, dtype=REC)
    op = np.arange(ops, dtype=np.uint64)
    idx = np.arange(n, dtype=np.uint64)
    r["type"] = np.tile(np.array([EV["attempt"], EV["acquired"], EV["release-begin"], EV["released"]],
                                 dtype=np.uint16), ops)
    r["worker"] = np.repeat((op % 2).astype(np.uint16), 4)
    r["pid"] = 1000 + r["worker"].astype(np.int32)
    r["op"] = np.repeat(op.astype(np.uint32), 4)
    r["seq"] = idx + 3
    r["ns"] = t0 + 1000 * (idx + 3)
    for w in (0, 1):
        start = np.zeros(1, dtype=REC)
        start["type"], start["worker"], start["pid"], start["seq"], start["ns"] = EV["worker-start"], w, 1000 + w, 1 + w, t0 + 1000 * (1 + w)
        end = np.zeros(1, dtype=REC)
        end["type"], end["worker"], end["pid"] = EV["worker-exit"], w, 1000 + w
        end["seq"], end["ns"] = n + 3 + w, t0 + 1000 * (n + 3 + w)
        mine = np.concatenate([start, r[r["worker"] == w], end])
        seal(mine, fmt)
        mine.tofile(os.path.join(jdir, "w%04d.bin" % w))
    stop = np.zeros(1, dtype=REC)
    stop["type"], stop["worker"], stop["pid"], stop["seq"], stop["ns"] = EV["stop"], 0xFFFF, 999, n + 5, t0 + 1000 * (n + 5)
    seal(stop, fmt)
    stop.tofile(os.path.join(jdir, "driver.bin"))
    print(n + 5)


main()
