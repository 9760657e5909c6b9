"""lsdata - read a kept lockstorm run (run -o OUTDIR) for the report scripts.

OUTDIR/report.json   the checker's verdict (schema lockstorm-report/1, docs/report-schema.md)
OUTDIR/run.json      the run's configuration (schema lockstorm-run/1)
OUTDIR/journal/*.bin 64-byte records (harness/journal.h, docs/journal.md), read here with numpy:
                     a file is trusted up to its first record whose magic, type or checksum is wrong,
                     exactly as harness/journal.c reads it.

Names that live in the C code (event types, fault kinds, point names) come from the lockstorm
binary: `lockstorm report` passes them in LOCKSTORM_EV_TYPES / LOCKSTORM_FAULT_KINDS and its own
path in LOCKSTORM_BIN; run directly, the script falls back to the names below and looks for the
binary next to itself (build/reports/ -> build/lockstorm).
"""
import glob
import json
import os
import subprocess

import numpy as np


class BadInput(Exception):
    """The OUTDIR is not a kept run: the caller prints one line and exits 2."""


# Fallbacks: the order of enum ev_type / enum fault_kind when the binary does not say.
EV_TYPES = ("none,attempt,acquired,busy,acquire-error,read,commit-begin,commit,lost,write-error,"
            "release-begin,released,release-error,fault,step,append,worker-start,worker-exit,"
            "obj-create,obj-remove,killed,liveness,stop,read-begin").split(",")
FAULT_KINDS = "none,stall,crash,stop,errno,short-write,sweep,skew,coarse-mtime,pid-reuse".split(",")

JOURNAL_MAGIC = 0x4C43     # format 2: CRC32C checksums
JOURNAL_MAGIC_V1 = 0x4C53  # format 1: the FNV-style hash, still read
DRIVER = 0xFFFF

REC = np.dtype([("type", "<u2"), ("worker", "<u2"), ("pid", "<i4"), ("op", "<u4"), ("err", "<i4"),
                ("seq", "<u8"), ("ns", "<u8"), ("a", "<i8"), ("b", "<i8"), ("c", "<i8"),
                ("magic", "<u2"), ("pad", "<u2"), ("check", "<u4")])
assert REC.itemsize == 64

_FNV_OFF = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


def _crc32c_table():
    t = np.zeros(256, dtype=np.uint32)
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t[i] = c
    return t


_CRC32C = _crc32c_table()


def ev_types():
    env = os.environ.get("LOCKSTORM_EV_TYPES")
    return env.split(",") if env else list(EV_TYPES)


def fault_kinds():
    env = os.environ.get("LOCKSTORM_FAULT_KINDS")
    return env.split(",") if env else list(FAULT_KINDS)


def lockstorm_bin():
    env = os.environ.get("LOCKSTORM_BIN")
    if env and os.access(env, os.X_OK):
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (os.path.join(here, "..", "lockstorm"), os.path.join(here, "..", "build", "lockstorm")):
        if os.access(cand, os.X_OK):
            return os.path.normpath(cand)
    return None


def fnv1a(name):
    h = 0xCBF29CE484222325
    for ch in name.encode():
        h ^= ch
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def point_names():
    """hash (as the journal's signed int64) -> point name, from `lockstorm list points`."""
    exe = lockstorm_bin()
    if not exe:
        return {}
    try:
        out = subprocess.run([exe, "list", "points"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    names = {}
    for line in out.splitlines():
        if line.startswith(" ") and "/" in line:
            n = line.strip()
            h = fnv1a(n)
            names[h - (1 << 64) if h >= (1 << 63) else h] = n
    return names


def _crc32c(raw, n):
    b = raw[: n * 64].reshape(n, 64)
    c = np.full(n, 0xFFFFFFFF, dtype=np.uint32)
    for i in range(60):
        c = _CRC32C[(c ^ b[:, i]) & np.uint32(0xFF)] ^ (c >> np.uint32(8))
    return c ^ np.uint32(0xFFFFFFFF)


def _checksums(raw, n):
    """Each record's checksum as its format computes it (format 1: FNV-style, 2: CRC32C)."""
    magic = raw[: n * 64].view(REC)["magic"]
    return np.where(magic == JOURNAL_MAGIC_V1, _fnv_checksums(raw, n), _crc32c(raw, n))


def _fnv_checksums(raw, n):
    w = raw[: n * 64].view("<u8").reshape(n, 8).copy()
    w[:, 7] &= np.uint64(0xFFFFFFFF)
    h = np.full(n, _FNV_OFF, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for i in range(8):
            h ^= w[:, i]
            h *= _FNV_PRIME
            h ^= h >> np.uint64(29)
    return ((h ^ (h >> np.uint64(32))) & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def read_journal(path, ntypes):
    """(records, torn bytes) of one journal file: valid records up to the first bad one."""
    raw = np.fromfile(path, dtype=np.uint8)
    n = len(raw) // 64
    if n == 0:
        return np.zeros(0, dtype=REC), len(raw)
    recs = raw[: n * 64].view(REC)
    ok = (((recs["magic"] == JOURNAL_MAGIC) | (recs["magic"] == JOURNAL_MAGIC_V1)) & (recs["type"] > 0) & (recs["type"] < ntypes)
          & (_checksums(raw, n) == recs["check"]))
    bad = np.flatnonzero(~ok)
    end = int(bad[0]) if len(bad) else n
    tail = raw[end * 64:]
    torn = 0 if not tail.any() else len(tail)  # the zeros a killed mapped writer leaves are not torn
    return recs[:end].copy(), torn


class Run:
    """One kept run: .report, .config (run.json), .recs (sorted by seq), helpers."""

    def __init__(self, outdir):
        self.outdir = outdir
        if not os.path.isdir(outdir):
            raise BadInput("%s: no such directory" % outdir)
        self.report = self._json("report.json", "lockstorm-report/1")
        self.config = self._json("run.json", "lockstorm-run/1")
        self.types = ev_types()
        self.T = {name: i for i, name in enumerate(self.types)}
        self.kinds = fault_kinds()
        files = sorted(glob.glob(os.path.join(outdir, "journal", "*.bin")))
        if not files:
            raise BadInput("%s: no journals in %s/journal (keep them with run -o OUTDIR)" % (outdir, outdir))
        parts, self.torn = [], 0
        for f in files:
            r, torn = read_journal(f, len(self.types))
            parts.append(r)
            self.torn += torn
        recs = np.concatenate(parts) if parts else np.zeros(0, dtype=REC)
        self.recs = recs[np.argsort(recs["seq"], kind="stable")]
        wrec = self.recs[self.recs["worker"] != DRIVER]
        self.t0 = int(wrec["ns"].min()) if len(wrec) else (int(self.recs["ns"].min()) if len(self.recs) else 0)
        self.t1 = int(self.recs["ns"].max()) if len(self.recs) else self.t0
        self.workers = int(self.report["config"]["workers"])
        self._points = None

    def _json(self, name, schema):
        path = os.path.join(self.outdir, name)
        try:
            with open(path) as f:
                doc = json.load(f)
        except FileNotFoundError:
            raise BadInput("%s has no %s: not a kept run (use lockstorm run -o OUTDIR)" % (self.outdir, name))
        except (OSError, ValueError) as e:
            raise BadInput("%s: %s" % (path, e))
        if not isinstance(doc, dict) or doc.get("schema") != schema:
            raise BadInput("%s: not a %s file" % (path, schema))
        return doc

    def point(self, h):
        if self._points is None:
            self._points = point_names()
        return self._points.get(int(h), "point %x" % (int(h) & 0xFFFFFFFFFFFFFFFF))

    def of(self, *names):
        ids = [self.T[n] for n in names if n in self.T]
        return self.recs[np.isin(self.recs["type"], ids)]

    def sec(self, ns):
        return (np.asarray(ns, dtype=np.float64) - self.t0) / 1e9

    def ops_records(self):
        """What `ops` counts: commits (update and its kin) or releases (hold)."""
        c = self.of("commit")
        return c if len(c) else self.of("released")

    def _by_worker(self, names):
        """Records of these types (driver `killed` counted for its victim), ordered by (worker, seq):
        (worker, type, ns, op, next-is-same-worker, next type, next ns)."""
        import numpy as np
        sel = self.of(*names)
        killed = self.T.get("killed", -1)
        t = sel["type"].astype(np.int64)
        w = np.where(t == killed, sel["op"].astype(np.int64), sel["worker"].astype(np.int64))
        order = np.lexsort((sel["seq"], w))
        w, t, ns, op = w[order], t[order], sel["ns"][order].astype(np.int64), sel["op"][order].astype(np.int64)
        same = np.zeros(len(w), dtype=bool)
        same[:-1] = w[1:] == w[:-1]
        nt = np.full(len(w), -1, dtype=np.int64)
        nt[:-1] = t[1:]
        nns = np.full(len(w), self.t1, dtype=np.int64)
        nns[:-1] = ns[1:]
        return w, t, ns, op, same, nt, nns

    def holds(self):
        """Every hold as arrays w, s, e (ns), op, ended (event type that ended it, -1: the journals' end):
        acquired -> release-begin, or the worker's death (driver `killed`), a new incarnation, its exit,
        its next acquire, or the end of the journals."""
        import numpy as np
        w, t, ns, op, same, nt, nns = self._by_worker(
            ("acquired", "release-begin", "worker-start", "worker-exit", "killed"))
        acq = t == self.T["acquired"]
        end = np.where(same, nns, self.t1)
        ended = np.where(same, nt, -1)
        return {"w": w[acq], "s": ns[acq], "e": end[acq], "op": op[acq], "ended": ended[acq]}

    def waits(self):
        """Every acquire attempt as arrays w, s, e (ns), outcome (event type): from the last attempt to
        acquired, busy or acquire-error (the checker's wait distribution takes the acquired ones)."""
        import numpy as np
        T = self.T
        w, t, ns, op, same, nt, nns = self._by_worker(("attempt", "acquired", "busy", "acquire-error", "worker-start"))
        ends = [T[n] for n in ("acquired", "busy", "acquire-error") if n in T]
        m = (t == T["attempt"]) & same & np.isin(nt, ends)
        return {"w": w[m], "s": ns[m], "e": nns[m], "outcome": nt[m]}

    def waits_ms(self):
        wt = self.waits()
        return ((wt["e"] - wt["s"]) / 1e6)[wt["outcome"] == self.T["acquired"]]

    def faults(self):
        """Injected faults and driver kills: (sec, worker, label, duration s)."""
        out = []
        for r in self.of("fault"):
            k = int(r["a"])
            kind = self.kinds[k] if 0 <= k < len(self.kinds) else "kind %d" % k
            dur = int(r["c"]) / 1e3 if kind in ("stall", "stop") else 0.0
            out.append((float(self.sec(r["ns"])), int(r["worker"]), kind, dur, self.point(r["b"])))
        for r in self.of("killed"):
            out.append((float(self.sec(r["ns"])), int(r["op"]), "killed" if not int(r["c"]) else "watchdog-kill",
                        0.0, "signal %d" % int(r["a"])))
        for r in self.of("liveness"):
            out.append((float(self.sec(r["ns"])), int(r["op"]), "liveness", 0.0, self.point(r["a"])))
        return out

    def ns_of_seq(self, seq):
        i = int(np.searchsorted(self.recs["seq"], np.uint64(seq)))
        if i < len(self.recs) and int(self.recs["seq"][i]) == int(seq):
            return int(self.recs["ns"][i])
        return None


def describe_config(rep, run):
    c = rep["config"]
    dur = "%.1f s" % (c["duration_ms"] / 1000.0) if c.get("duration_ms") else "%d ops" % c.get("ops", 0)
    prof = run.get("fault_profile") if run else ""
    faults = ("faults " + prof) if prof else ("%d fault rules" % len(c.get("faults", [])) if c.get("faults") else "no faults")
    return "%s / %s, %d workers, %s, seed %d, time-scale %g, %s" % (
        ",".join(c["protocols"]), c["workload"], c["workers"], dur, c["seed"], c["time_scale"], faults)


def failing(rep):
    return [i["name"] for i in rep["invariants"] if i.get("applicable", True) and i["violations"]]
