"""lockstorm.py - the worker side of lockstorm's external-worker protocol, for
Python adapters (docs/external-workers.md).  Standard library only.

    import lockstorm
    lockstorm.serve(acquire, release)     # returns on `stop`: exit 0
    lockstorm.serve(acquire, release, update=my_update)

    acquire()  True (held) or False (gave up within its own wait budget:
               `busy`); any exception it raises (the library's own types
               too) is `acquire-error errno=<name> error=<its type name>`,
               errno=EIO unless it is an OSError with an errno.
    release()  returns once the library's unlock returned; any exception is
               `release-error errno=<name> error=<type>`.
    update()   optional: the write step while the lock is held, in place of
               update_state (read, revision+1, own counter+1, tmp + rename);
               it reports its own `read`, `commit-begin` and `commit` with
               emit(); any exception is `write-error`.

Per op: `next` on the event fd, one line from stdin (`op N` or `stop`; EOF is
stop), then acquire; update: read the state, revision+1 and own counter+1,
write <state>.<pid>.tmp and rename it over the state (workloads/update.c);
hold: sleep LOCKSTORM_HOLD_MS; release.  Every event line is one os.write()
on the event fd, stamped with time.monotonic_ns() (CLOCK_MONOTONIC).
"""
import errno
import json
import os
import re
import sys
import time

ENV = os.environ
EVENT_FD = int(ENV.get("LOCKSTORM_EVENT_FD", "3"))
WORKER = int(ENV.get("LOCKSTORM_WORKER", "0"))
WORKERS = int(ENV.get("LOCKSTORM_WORKERS", "1"))
STATE = ENV.get("LOCKSTORM_STATE") or ENV.get("LOCKSTORM_RESOURCE", "state.json")
RESOURCE = ENV.get("LOCKSTORM_RESOURCE") or STATE
LOCK = ENV.get("LOCKSTORM_LOCK") or RESOURCE + ".lock"


def emit(event, fields=""):
    """One event line, one write(2)."""
    line = "%d %s%s\n" % (time.monotonic_ns(), event, " " + fields if fields else "")
    os.write(EVENT_FD, line.encode())


def errno_name(err):
    e = getattr(err, "errno", None) if isinstance(err, OSError) else None
    return errno.errorcode.get(e if isinstance(e, int) else 0, "EIO")


def error_fields(err):
    """`errno=<name> error=<type>` for any exception, as event fields."""
    name = re.sub(r"[^A-Za-z0-9_.:-]", "_", type(err).__qualname__)[:64] or "Exception"
    return "errno=%s error=%s" % (errno_name(err), name)


def param(name, default):
    """LOCKSTORM_PARAM_<NAME> as a number (already scaled by --time-scale)."""
    v = ENV.get("LOCKSTORM_PARAM_" + name.upper(), "").strip()
    if v == "":
        return default
    try:
        return int(v)
    except ValueError:
        try:
            return float(v)
        except ValueError:
            sys.exit("lockstorm adapter: LOCKSTORM_PARAM_%s=%s is not a number" % (name.upper(), v))


def _int(v):
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def state_parse(text):
    """workloads/update_state.c's shape rules; None if the text breaks one."""
    def no_dups(pairs):
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)):
            raise ValueError("duplicate key")
        return dict(pairs)
    try:
        root = json.loads(text, object_pairs_hook=no_dups)
    except ValueError:
        return None
    if not isinstance(root, dict) or not _int(root.get("revision")):
        return None
    if "version" in root and not (isinstance(root["version"], int) and not isinstance(root["version"], bool)):
        return None
    counts = root.get("counts")
    if not isinstance(counts, dict):
        return None
    out = [0] * WORKERS
    for k, v in counts.items():
        if not re.fullmatch(r"[0-9]{1,9}", k) or not _int(v):
            return None
        if int(k) < WORKERS:
            out[int(k)] = v
    return root["revision"], out


def state_format(revision, counts):
    c = {str(w): n for w, n in enumerate(counts) if n}
    return json.dumps({"version": 1, "revision": revision, "counts": c}, separators=(",", ":")) + "\n"


def update_state():
    try:
        with open(STATE, "rb") as f:
            text = f.read()
        st = state_parse(text)
    except FileNotFoundError:
        st = (-1, [0] * WORKERS)
    except OSError as e:
        emit("read", "rev=-1 own=0 errno=%s" % errno_name(e))
        return
    if st is None:
        emit("read", "rev=-1 own=0 errno=EBADMSG")
        return
    read_rev, counts = st
    own = counts[WORKER]
    emit("read", "rev=%d own=%d" % (read_rev, own))
    new_rev = max(read_rev, 0) + 1
    counts[WORKER] = own + 1
    tmp = "%s.%d.tmp" % (STATE, os.getpid())
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            data = state_format(new_rev, counts).encode()
            while data:
                data = data[os.write(fd, data):]
        finally:
            os.close(fd)
    except OSError as e:
        emit("write-error", "errno=%s" % errno_name(e))
        return
    emit("commit-begin", "rev=%d own=%d" % (new_rev, own + 1))
    try:
        os.rename(tmp, STATE)
    except OSError as e:
        emit("write-error", "errno=%s" % errno_name(e))
        return
    emit("commit", "rev=%d own=%d" % (new_rev, own + 1))


def op(acquire, release, update=None):
    emit("attempt", "n=0")
    try:
        held = acquire()
    except Exception as e:  # the library's own types too: an event, never our end
        emit("acquire-error", error_fields(e))
        return
    if not held:
        emit("busy")
        return
    emit("acquired")
    if ENV.get("LOCKSTORM_WORKLOAD") == "hold":
        ms = int(ENV.get("LOCKSTORM_HOLD_MS", "0") or 0)
        if ms > 0:
            time.sleep(ms / 1000.0)
    else:
        try:
            (update or update_state)()
        except Exception as e:
            emit("write-error", error_fields(e))
    emit("release-begin")
    try:
        release()
        emit("released")
    except Exception as e:
        emit("release-error", error_fields(e))


def serve(acquire, release, update=None):
    """The control loop: `next`, then `op N` or `stop` (EOF is stop)."""
    stdin = sys.stdin.buffer
    while True:
        emit("next")
        line = stdin.readline()
        if not line.startswith(b"op "):
            return
        op(acquire, release, update)
