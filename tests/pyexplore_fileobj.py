#!/usr/bin/python3
"""pyexplore_fileobj.py PYEXPLORE_DIR - Python file objects under the
explorer's Python seam (adapters/lib/pyexplore/sitecustomize.py), with this
script as a fake explorer (tests/integ_xext.cc, IntegXext.PythonFileObjects*).

Each case runs a child Python with LOCKSTORM_EXPLORE=1, its event fd a pipe
to us and its stdin a pipe from us; we grant every step at once (`go K T`),
or tear the one write a case names, and compare the child's steps and what
it printed with what the case expects.  A write through a file object opened
for writing in the store is a `write` step at the write(2) its buffer makes
(a flush, a close that flushes, an unbuffered write); reads, seeks and a
close with nothing to flush are not steps; the file object is the usual one;
pathlib (io.open) and os.fdopen of a descriptor os.open opened in the store
write through the seam too.
Prints `ok N cases` and exits 0, or the first difference and exits 1."""
import json
import os
import subprocess
import sys
import tempfile

T = 1700000000000


def run(lib, store, code, tear=None):
    """Run CODE under the seam; TEAR = (index of the write step, kind).
    Returns (steps as 'CALL PATH...' strings, their results, child stdout, exit status)."""
    ev_r, ev_w = os.pipe()
    env = dict(os.environ, LOCKSTORM_EXPLORE="1", PYTHONPATH=lib, LOCKSTORM_EVENT_FD=str(ev_w),
               LOCKSTORM_STATE=os.path.join(store, "state.json"), LOCKSTORM_WORKER="0")
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             env=env, cwd=store, pass_fds=(ev_w,))
    os.close(ev_w)
    steps, done, writes = [], [], 0
    with os.fdopen(ev_r, "rb") as ev:
        for line in ev:
            w = line.decode().split()
            if w[0] == "step":
                paths = [os.path.relpath(p, store) if p.startswith("/") else p for p in w[3:]]
                steps.append(" ".join([w[2]] + paths))
                kind = ""
                if w[2] == "write" and "rest" not in w:
                    if tear and tear[0] == writes:
                        kind = " " + tear[1]
                    writes += 1
                child.stdin.write(("go %s %d%s\n" % (w[1], T, kind)).encode())
                child.stdin.flush()
            elif w[0] == "done":
                done.append(w[2])
            elif w[0] == "quiet" and w[1] != "-1":
                child.stdin.write(("time %s\n" % w[1]).encode())
                child.stdin.flush()
    out = child.stdout.read().decode()
    child.wait()
    return steps, done, out, child.returncode


SETUP = "import io, os, json\nout = {}\n"


CASES = [
    # name, code, expected steps (CALL PATH, the step number dropped), expected out, tear
    ("text write: one write(2) at the close of the with block",
     SETUP + "with open('state.json', 'w', encoding='utf-8') as f:\n"
     "    out['type'] = type(f).__name__; out['raw'] = type(f.buffer.raw).__mro__[1].__name__\n"
     "    f.write('hello\\n'); f.write('world\\n'); out['fileno'] = f.fileno() > 2\n"
     "    out['name'] = f.name; out['mode'] = f.mode\n"
     "out['closed'] = f.closed\n"
     "print(json.dumps(out, sort_keys=True))\n",
     ["open state.json", "write state.json"],
     {"type": "TextIOWrapper", "raw": "FileIO", "fileno": True, "name": "state.json", "mode": "w", "closed": True},
     None, "hello\nworld\n"),
    ("flush is the step; a close with nothing to flush is none",
     SETUP + "f = open('state.json', 'w')\nf.write('a')\nf.flush()\nf.close()\n"
     "print(json.dumps(out))\n",
     ["open state.json", "write state.json"], {}, None, "a"),
    ("reads, seeks, iteration are no steps; a read-only open is the open only",
     SETUP + "open('state.json', 'w').close()\n"
     "with open('state.json', 'w') as f: f.write('one\\ntwo\\n')\n"
     "with open('state.json') as f: out['lines'] = list(f)\n"
     "with open('state.json', 'rb') as f: out['b'] = f.read(3).decode(); f.seek(0); out['all'] = f.read().decode()\n"
     "print(json.dumps(out, sort_keys=True))\n",
     ["open state.json", "open state.json", "write state.json", "open state.json", "open state.json"],
     {"lines": ["one\n", "two\n"], "b": "one", "all": "one\ntwo\n"}, None, "one\ntwo\n"),
    ("r+: read, seek, write, truncate",
     SETUP + "with open('state.json', 'w') as f: f.write('0123456789abcdef')\n"
     "with open('state.json', 'r+') as f:\n"
     "    out['r'] = f.read(4); f.seek(0); f.write('XY'); out['t'] = f.truncate(); out['tell'] = f.tell()\n"
     "print(json.dumps(out, sort_keys=True))\n",
     ["open state.json", "write state.json", "open state.json", "write state.json", "ftruncate state.json"],
     {"r": "0123", "t": 2, "tell": 2}, None, "XY"),
    ("binary unbuffered: each write is a step; append mode appends",
     SETUP + "with open('state.json', 'wb', buffering=0) as f: out['n'] = f.write(b'ab'); f.write(b'cd')\n"
     "with open('state.json', 'ab') as f: f.write(b'ef')\n"
     "print(json.dumps(out, sort_keys=True))\n",
     ["open state.json", "write state.json", "write state.json", "open state.json", "write state.json"],
     {"n": 2}, None, "abcdef"),
    ("an encoding other than UTF-8, and newline translation",
     SETUP + "with open('state.json', 'w', encoding='utf-16', newline='\\r\\n') as f: f.write('h\\u00e9\\n')\n"
     "with open('state.json', encoding='utf-16', newline='') as f: out['s'] = f.read()\n"
     "print(json.dumps(out, sort_keys=True))\n",
     ["open state.json", "write state.json", "open state.json"], {"s": "h\u00e9\r\n"}, None, None),
    ("a file outside the store: its open is a step, its writes are not",
     SETUP + "with open('../outside', 'w') as f: f.write('x')\n"
     "with open('../outside') as f: out['x'] = f.read()\n"
     "print(json.dumps(out, sort_keys=True))\n",
     ["open ../outside", "open ../outside"], {"x": "x"}, None, None),
    ("pathlib: write_text and read_text (io.open)",
     SETUP + "import pathlib\np = pathlib.Path('state.json')\nout['n'] = p.write_text('abc')\n"
     "out['r'] = p.read_text()\nprint(json.dumps(out, sort_keys=True))\n",
     ["open state.json", "write state.json", "open state.json"], {"n": 3, "r": "abc"}, None, "abc"),
    ("os.fdopen of a descriptor os.open opened in the store",
     SETUP + "fd = os.open('state.json', os.O_WRONLY | os.O_CREAT | os.O_TRUNC)\n"
     "with os.fdopen(fd, 'w') as f: f.write('xyz')\n"
     "fd = os.open('state.json', os.O_RDONLY)\nout['r'] = os.read(fd, 10).decode()\nos.close(fd)\n"
     "print(json.dumps(out, sort_keys=True))\n",
     ["open state.json", "write state.json", "open state.json", "read state.json", "close state.json"],
     {"r": "xyz"}, None, "xyz"),
    ("closefd=False: the descriptor stays the helper's after the object's close",
     SETUP + "fd = os.open('state.json', os.O_WRONLY | os.O_CREAT | os.O_TRUNC)\n"
     "f = open(fd, 'wb', closefd=False)\nf.write(b'q')\nf.close()\nos.write(fd, b'r')\nos.close(fd)\n"
     "print(json.dumps(out, sort_keys=True))\n",
     ["open state.json", "write state.json", "write state.json", "close state.json"], {}, None, "qr"),
    ("a short write: the first 10 bytes land, the close raises ENOSPC (binary: no retry)",
     SETUP + "try:\n    with open('state.json', 'wb') as f: f.write(b'0123456789abcdefghij')\n"
     "except OSError as e: out['err'] = e.errno == 28\n"
     "print(json.dumps(out, sort_keys=True))\n",
     ["open state.json", "write state.json"], {"err": True}, (0, "short-write"), "0123456789"),
    ("a short write in text mode: the close flushes twice (TextIOWrapper, then its buffer), as CPython does",
     SETUP + "try:\n    with open('state.json', 'w') as f: f.write('0123456789abcdefghij')\n"
     "except OSError as e: out['err'] = e.errno == 28\n"
     "print(json.dumps(out, sort_keys=True))\n",
     ["open state.json", "write state.json", "write state.json"], {"err": True}, (0, "short-write"),
     "01234567890123456789abcdefghij"),
    ("a split write: the first 10 bytes, then the rest as a step of its own",
     SETUP + "with open('state.json', 'w') as f: f.write('0123456789abcdefghij')\n"
     "print(json.dumps(out, sort_keys=True))\n",
     ["open state.json", "write state.json", "write state.json rest"], {}, (0, "split-write"),
     "0123456789abcdefghij"),
]


def main():
    lib = os.path.abspath(sys.argv[1])
    n = 0
    for name, code, want_steps, want_out, tear, want_file in CASES:
        with tempfile.TemporaryDirectory() as base:
            store = os.path.join(base, "store")
            os.mkdir(store)
            steps, done, out, rc = run(lib, store, code, tear)
            got = steps
            if rc != 0 or got != want_steps:
                print("FAIL %s: exit %d, steps %s, want %s\n%s" % (name, rc, got, want_steps, out))
                return 1
            try:
                printed = json.loads(out.strip().splitlines()[-1])
            except (ValueError, IndexError):
                print("FAIL %s: printed %r" % (name, out))
                return 1
            torn = {"short-write": "ENOSPC", "split-write": "part"}.get(tear[1]) if tear else None
            if torn and torn not in done or not torn and set(done) != {"ok"}:
                print("FAIL %s: results %s" % (name, done))
                return 1
            if printed != want_out:
                print("FAIL %s: printed %s, want %s" % (name, printed, want_out))
                return 1
            if want_file is not None:
                with open(os.path.join(store, "state.json"), "rb") as f:
                    data = f.read().decode()
                if data != want_file:
                    print("FAIL %s: the file holds %r, want %r" % (name, data, want_file))
                    return 1
            n += 1
    print("ok %d cases" % n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
