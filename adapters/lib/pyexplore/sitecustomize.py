"""sitecustomize.py - the Python side of `lockstorm explore -p ext:NAME`.

The explorer puts this directory first on PYTHONPATH with LOCKSTORM_EXPLORE=1,
so Python runs it before the adapter (whether or not the adapter uses
adapters/lib/lockstorm.py) and every file-system call the adapter and its
library make becomes a step the explorer grants, as adapters/lib/lsexplore.js
does for Node (docs/external-workers.md, "Exploring your own library"):

  adapter (fd 3)                        explorer (stdin)
    step K CALL PATH [PATH2]  --->        (the call waits to be granted)
    quiet -1                  --->  <---  go K T      make call K at virtual ms T
                                    <---  go K T ERRNO  fail it with ERRNO (not made)
    done K ENOSPC             --->  <---  go K T short-write  an os.write: its first 10
                                          bytes land, then it fails with ENOSPC
    done K part               --->  <---  go K T split-write  an os.write: its first 10
    step K2 write FD rest     --->        bytes land; the rest is a call of its own
    done K ok|ERRNO           --->  <---  time T      the clock is T
    quiet T                   --->        (sleeping until virtual ms T)
    next, then quiet -1       --->  <---  op N T | stop

Python is synchronous: the process is quiet whenever it waits: for a grant,
in a sleep (until the explorer's clock passes its end), or for its next op
(reading stdin).  Wrapped: os.open/close/read/write/fsync/ftruncate (on
descriptors it opened), os.rename/replace/unlink/remove/mkdir/rmdir/stat/
lstat/fstat/utime/link, builtins.open and io.open (a file object opened for
writing on a path in the store, LOCKSTORM_STATE's folder, or by os.fdopen on
a descriptor os.open opened there, has a raw layer whose write(2) and
ftruncate(2) are the wrapped os.write/os.ftruncate: steps, tearable, when the
object's buffer makes them), fcntl.flock (a blocking LOCK_EX polls
LOCK_NB every 10 ms of virtual time), time.time/monotonic/perf_counter (and
_ns)/sleep, and subprocess.run of util-linux `flock [-E N] [-w S|-n|-u] FD`
(flock(2) on that same inherited descriptor, made here: the tool itself
would block in the kernel outside the explorer's sight).  File times are the
virtual clock's: every object a granted call creates or changes gets
mtime = now.  Nothing here runs without LOCKSTORM_EXPLORE=1.
"""
import os
import sys

if os.environ.get("LOCKSTORM_EXPLORE") == "1":
    import builtins
    import errno as _errno
    import io
    import fcntl as _fcntl
    import subprocess as _subprocess
    import time as _time

    _EV = int(os.environ.get("LOCKSTORM_EVENT_FD", "3"))
    _T0 = int(os.environ.get("LOCKSTORM_EXPLORE_T0", "1700000000000"))
    _state = {"now": _T0, "step": 0, "sub": 0, "last": _T0, "busy": False}
    _write = os.write
    _read = os.read
    _fds = {}
    _WORKER = int(os.environ.get("LOCKSTORM_WORKER", "0"))
    os.getpid = lambda: 2000 + _WORKER  # virtual, as the built-in explorer's (tmp names)

    def _out(line):
        data = (line + "\n").encode()
        while data:
            data = data[_write(_EV, data):]

    _inbuf = [b""]

    def _cmd():
        while b"\n" not in _inbuf[0]:
            chunk = _read(0, 4096)
            if not chunk:
                return ["stop"]
            _inbuf[0] += chunk
        line, _, rest = _inbuf[0].partition(b"\n")
        _inbuf[0] = rest
        return line.decode().split()

    def _stop():
        os._exit(0)

    def _ns():
        now = _state["now"]
        if now != _state["last"]:
            _state["last"], _state["sub"] = now, 0
        _state["sub"] += 1
        return (now - _T0) * 1000000 + _state["sub"] * 1000

    # ---- virtual time ----
    def _vsleep(secs):
        if _state["busy"]:
            return
        end = _state["now"] + max(1, int(round(secs * 1000)))
        while _state["now"] < end:
            _out("quiet %d" % end)
            c = _cmd()
            if c[0] == "stop":
                _stop()
            if c[0] == "time":
                _state["now"] = max(_state["now"], int(c[1]))

    _time.sleep = _vsleep
    _time.time = lambda: _state["now"] / 1000.0
    _time.time_ns = lambda: _state["now"] * 1000000
    _time.monotonic = lambda: (_state["now"] - _T0) / 1000.0
    _time.monotonic_ns = _ns
    _time.perf_counter = _time.monotonic
    _time.perf_counter_ns = lambda: (_state["now"] - _T0) * 1000000

    # ---- steps ----
    _real = {}
    _store_fds = set()  # descriptors os.open opened in the store: os.fdopen of one writes through the seam

    def _show(p):
        if isinstance(p, int):
            return _fds.get(p, "fd%d" % p)
        if isinstance(p, bytes):
            p = p.decode(errors="replace")
        return str(os.fspath(p)).replace(" ", "_")

    def _stamp(p):
        t = _state["now"] / 1000.0
        try:
            _real["utime"](p, (t, t))
        except (OSError, TypeError, ValueError):
            pass

    _TEAR = 10  # short and split writes: the bytes that land first (explore/xfaults.c)

    def _step(name, paths, fn, tear=None, rest=False):
        """Call FN as a step.  TEAR (a write's data, and how a part of it is
        written) lets the explorer tear it: `short-write` (its first _TEAR
        bytes land, then ENOSPC) or `split-write` (they land; the rest is a
        step of its own, REST, and the call returns once it is written)."""
        if _state["busy"]:
            return fn()
        _state["step"] += 1
        k = _state["step"]
        _out("step %d %s %s%s" % (k, name, " ".join(_show(p) for p in paths), " rest" if rest else ""))
        _out("quiet -1")
        while True:
            c = _cmd()
            if c[0] == "stop":
                _stop()
            if c[0] == "time":
                _state["now"] = max(_state["now"], int(c[1]))
                _out("quiet -1")
                continue
            if c[0] == "go" and int(c[1]) == k:
                _state["now"] = int(c[2])
                break
        if len(c) > 3 and c[3] in ("short-write", "split-write") and tear and len(tear[0]) > _TEAR:
            data, part = tear
            _state["busy"] = True
            try:
                n = part(data[:_TEAR])
            except OSError as e:
                _out("done %d %s" % (k, _errno.errorcode.get(e.errno, "EIO") if e.errno else "EIO"))
                raise
            finally:
                _state["busy"] = False
            if c[3] == "short-write":  # the disk is full: the write is torn
                _out("done %d ENOSPC" % k)
                raise OSError(_errno.ENOSPC, "%s (the disk filled mid-write: lockstorm explore)"
                              % os.strerror(_errno.ENOSPC))
            _out("done %d part" % k)
            more = data[_TEAR:]
            return n + _step(name, paths, lambda: part(more), (more, part), rest=True)
        if len(c) > 3 and c[3] not in ("short-write", "split-write"):
            # go K T ERRNO: the call fails with it, not made (explore's errno choice)
            code = getattr(_errno, c[3], _errno.EIO)
            _out("done %d %s" % (k, c[3]))
            raise OSError(code, "%s (injected by lockstorm explore)" % os.strerror(code),
                          *(paths[:1] if paths and not isinstance(paths[0], int) else []))
        _state["busy"] = True
        try:
            r = fn()
        except OSError as e:
            _out("done %d %s" % (k, _errno.errorcode.get(e.errno, "EIO") if e.errno else "EIO"))
            raise
        except BaseException:
            _out("done %d EIO" % k)
            raise
        finally:
            _state["busy"] = False
        _out("done %d ok" % k)
        return r

    _MUT = {"open", "mkdir", "rename", "replace", "unlink", "remove", "rmdir", "link", "write", "ftruncate"}

    def _wrap(name, npaths, fdcall=False):
        real = getattr(os, name)
        _real[name] = real

        def w(*a, **kw):
            if fdcall and not (a and isinstance(a[0], int) and a[0] in _fds):
                return real(*a, **kw)
            paths = list(a[:max(npaths, 1)])

            def run(*b):  # the call; a torn write's parts: (fd, part)
                b = b or a
                r = real(*b, **kw)
                if name == "open":
                    _fds[r] = _show(b[0])
                    if _in_store(b[0]):
                        _store_fds.add(r)
                if name == "close":
                    _fds.pop(b[0], None)
                    _store_fds.discard(b[0])
                if name in _MUT:
                    if fdcall:
                        try:
                            _real["utime"](b[0], (_state["now"] / 1000.0,) * 2)
                        except OSError:
                            pass
                    else:
                        last = b[npaths - 1] if npaths else b[0]
                        if name not in ("rename", "replace", "unlink", "remove", "rmdir"):
                            _stamp(last)
                        _stamp(os.path.dirname(os.fspath(last)) or ".")
                return r
            if name == "write" and len(a) == 2 and not kw:  # a write the explorer may tear
                data = bytes(a[1])
                return _step(name, paths, run, (data, lambda part: run(a[0], part)))
            return _step(name, paths, run)
        setattr(os, name, w)

    _real["utime"] = os.utime
    _real_fstat = os.fstat
    for _n, _k in (("open", 1), ("rename", 2), ("replace", 2), ("unlink", 1), ("remove", 1), ("mkdir", 1),
                   ("rmdir", 1), ("stat", 1), ("lstat", 1), ("utime", 1), ("link", 2)):
        _wrap(_n, _k)
    for _n in ("close", "read", "write", "fsync", "ftruncate", "fstat"):
        _wrap(_n, 1, fdcall=True)

    # ---- file objects: their writes are os.write steps ----
    _open = builtins.open
    _STORE = os.path.dirname(os.path.abspath(os.environ.get("LOCKSTORM_STATE")
                                             or os.environ.get("LOCKSTORM_RESOURCE", "state.json")))

    def _in_store(p):
        """A path inside the store (LOCKSTORM_STATE's folder), as the C seam judges."""
        try:
            p = os.path.abspath(os.fsdecode(p))
        except (TypeError, ValueError):
            return False
        return p == _STORE or p.startswith(_STORE + os.sep)

    class _StepFileIO(io.FileIO):
        """The raw layer of a file object opened for writing in the store: a
        write(2) or ftruncate(2) it makes (f.write through its buffer, at a
        flush, at a close that flushes, or when the buffer fills) is the
        wrapped os.write / os.ftruncate, a step the explorer may tear; reads,
        seeks and the close itself are FileIO's own, not steps, as before."""

        def write(self, b):
            if not self.writable():
                raise io.UnsupportedOperation("File not open for writing")
            fd = self.fileno()
            if _fds.get(fd) is None:  # not ours (a dup2 over it, say): FileIO's own
                return super().write(b)
            return os.write(fd, bytes(b))

        def truncate(self, size=None):
            if not self.writable():
                raise io.UnsupportedOperation("File not open for writing")
            fd = self.fileno()
            if size is None:
                size = self.tell()
            if _fds.get(fd) is None:
                return super().truncate(size)
            os.ftruncate(fd, size)
            return size

        def close(self):
            fd = -1 if self.closed or not self.closefd else self.fileno()
            try:
                super().close()
            finally:
                if fd >= 0:  # the number may be reused by a call outside the store
                    _fds.pop(fd, None)
                    _store_fds.discard(fd)

    def _fopen(file, mode, buffering=-1, encoding=None, errors=None, newline=None, closefd=True, opener=None):
        """io.open's layering (Lib/_pyio.py) over a _StepFileIO, so the file
        object is the usual one: BufferedWriter/Reader/Random, TextIOWrapper."""
        modes = set(mode)
        if not isinstance(mode, str) or modes - set("axrwb+t") or len(mode) > len(modes):
            return _open(file, mode, buffering, encoding, errors, newline, closefd, opener)  # its own error
        text, binary, updating = "t" in modes, "b" in modes, "+" in modes
        if text and binary or sum(c in modes for c in "rwax") != 1 or (binary and (encoding or errors or newline)):
            return _open(file, mode, buffering, encoding, errors, newline, closefd, opener)
        raw = _StepFileIO(file, "".join(c for c in "xrwa+" if c in modes), closefd, opener=opener)
        _fds[raw.fileno()] = _show(file)
        _store_fds.add(raw.fileno())
        result = raw
        try:
            line_buffering = False
            if buffering == 1 or buffering < 0 and raw.isatty():
                buffering, line_buffering = -1, True
            if buffering < 0:
                buffering = io.DEFAULT_BUFFER_SIZE
                try:
                    bs = _real_fstat(raw.fileno()).st_blksize
                except OSError:
                    pass
                else:
                    if bs > 1:
                        buffering = bs
            if buffering == 0:
                if binary:
                    return result
                raise ValueError("can't have unbuffered text I/O")
            if updating:
                result = io.BufferedRandom(raw, buffering)
            elif "r" in modes:
                result = io.BufferedReader(raw, buffering)
            else:
                result = io.BufferedWriter(raw, buffering)
            if binary:
                return result
            result = io.TextIOWrapper(result, encoding, errors, newline, line_buffering)
            result.mode = mode
            return result
        except BaseException:
            result.close()
            raise

    def _bopen(file, mode="r", *a, **kw):
        writes = isinstance(mode, str) and any(c in mode for c in "wax+")
        if isinstance(file, int):  # os.fdopen, tempfile: no call, but a store descriptor's writes are steps
            return _fopen(file, mode, *a, **kw) if writes and file in _store_fds else _open(file, mode, *a, **kw)

        def run():
            if writes and _in_store(file):
                f = _fopen(file, mode, *a, **kw)
            else:
                f = _open(file, mode, *a, **kw)
            if writes:
                _stamp(file)
            return f
        return _step("open", [file], run)
    builtins.open = _bopen
    io.open = _bopen  # pathlib's Path.open/write_text, os.fdopen and tempfile call io.open

    _flock = _fcntl.flock

    def _vflock(fd, op):
        fdn = fd if isinstance(fd, int) else fd.fileno()
        if op & _fcntl.LOCK_UN or op & _fcntl.LOCK_NB:
            return _step("flock", [fdn], lambda: _flock(fdn, op))
        while True:  # a blocking LOCK_EX/LOCK_SH: polled on the virtual clock
            try:
                return _step("flock", [fdn], lambda: _flock(fdn, op | _fcntl.LOCK_NB))
            except BlockingIOError:
                _vsleep(0.010)
    _fcntl.flock = _vflock

    _run = _subprocess.run

    def _vrun(cmd, *a, **kw):
        if isinstance(cmd, (list, tuple)) and cmd and os.path.basename(str(cmd[0])) == "flock" and str(cmd[-1]).isdigit():
            fd, conflict, wait, nb, un = int(cmd[-1]), 1, None, False, False
            args = [str(x) for x in cmd[1:-1]]
            i = 0
            while i < len(args):
                if args[i] == "-E":
                    conflict, i = int(args[i + 1]), i + 1
                elif args[i] == "-w":
                    wait, i = float(args[i + 1]), i + 1
                elif args[i] == "-n":
                    nb = True
                elif args[i] == "-u":
                    un = True
                i += 1
            if un:
                _step("flock(1)-u", [fd], lambda: _flock(fd, _fcntl.LOCK_UN))
                return _subprocess.CompletedProcess(cmd, 0)
            end = None if wait is None else _state["now"] + int(wait * 1000)
            while True:
                try:
                    _step("flock(1)", [fd], lambda: _flock(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB))
                    return _subprocess.CompletedProcess(cmd, 0)
                except BlockingIOError:
                    if nb or (end is not None and _state["now"] >= end):
                        return _subprocess.CompletedProcess(cmd, conflict)
                    _vsleep(0.010)
        return _run(cmd, *a, **kw)
    _subprocess.run = _vrun

    # ---- the next op: stdin read only after `quiet` ----
    class _Stdin:
        def __init__(self, binary):
            self.binary = binary

        def readline(self, *a):
            _out("quiet -1")
            c = _cmd()
            if c[0] == "op":
                _state["now"] = int(c[2])
                line = "op %s\n" % c[1]
            else:
                line = "stop\n" if c[0] == "stop" else ""
            return line.encode() if self.binary else line

        def __iter__(self):
            return self

        def __next__(self):
            line = self.readline()
            if not line or line.strip() == "stop":
                raise StopIteration
            return line

        @property
        def buffer(self):
            return _Stdin(True)

        def fileno(self):
            return 0

    sys.stdin = _Stdin(False)
