#!/usr/bin/python3
"""odr.py - no two test files define a class of one name at file scope.

    odr.py [ROOT]     check ROOT/tests/*.cc (default: this checkout)
    odr.py --fixture  prove the check has teeth on small fixture trees

The test binaries link many .cc files into one.  A `struct Bg { ... }` with
members defined inside it, in two files, is two inline definitions of one
name: the linker keeps one of each member function, silently (an ODR
violation).  Session 6 found one that way: the other file's destructor ran
and freed nothing of this one's (eight LeakSanitizer reports).  A class
inside an anonymous namespace (`namespace {` .. `} // namespace`) is the
file's own and is never counted.  Each finding is one line: FILE:LINE: what
is wrong.  Exit 0 clean, 1 findings.
"""
import glob
import os
import re
import sys

import treecheck

CLASS = re.compile(r"^(?:struct|class)\s+(\w+)\s*(?:final\s*)?(?::[^{;]*)?\{")
ANON_OPEN = re.compile(r"^namespace\s*\{")
NS_CLOSE = re.compile(r"^\}\s*//\s*(anonymous\s+)?namespace\b")  # a function's own } is no close


def classes(path):
    """(name, line) of every class defined at file scope outside an anonymous namespace."""
    out, anon = [], False
    with open(path, encoding="utf-8", errors="replace") as fh:
        for no, line in enumerate(fh, 1):
            if ANON_OPEN.match(line):
                anon = True
            elif anon and NS_CLOSE.match(line):
                anon = False
            m = CLASS.match(line)
            if m and not anon:
                out.append((m.group(1), no))
    return out


def check(root):
    seen, findings = {}, []
    for path in sorted(glob.glob(os.path.join(root, "tests", "*.cc"))):
        rel = os.path.relpath(path, root)
        for name, no in classes(path):
            seen.setdefault(name, []).append((rel, no))
    for name, where in sorted(seen.items()):
        files = sorted({f for f, _ in where})
        if len(files) < 2:
            continue
        for f, no in where:
            others = ", ".join(o for o in files if o != f)
            findings.append("%s:%d: class %s is also defined in %s: put each in an anonymous namespace"
                            % (f, no, name, others))
    return findings


def fixture():
    trees = {
        "clean": ({"tests/a.cc": "namespace {\nstruct Bg {\n};\n} // namespace\n",
                   "tests/b.cc": "struct Bg {\n};\n", "tests/c.cc": "struct Other {\n};\n"}, []),
        "twice": ({"tests/a.cc": "struct Bg {\n\tint x;\n};\n", "tests/b.cc": "#include <x>\n\nstruct Bg {\n};\n"},
                  ["tests/a.cc:1: class Bg is also defined in tests/b.cc: put each in an anonymous namespace",
                   "tests/b.cc:3: class Bg is also defined in tests/a.cc: put each in an anonymous namespace"]),
        "a function inside the namespace": ({"tests/a.cc": "namespace {\nvoid f()\n{\n}\nstruct Bg {\n};\n} // namespace\n",
                                             "tests/b.cc": "struct Bg {\n};\n"}, []),
        "after a namespace": ({"tests/a.cc": "namespace {\nint f();\n} // namespace\nstruct Bg {\n};\n",
                               "tests/b.cc": "class Bg : public Base {\n};\n"},
                              ["tests/a.cc:4: class Bg is also defined in tests/b.cc: put each in an anonymous namespace",
                               "tests/b.cc:1: class Bg is also defined in tests/a.cc: put each in an anonymous namespace"]),
    }
    return treecheck.run_fixtures(check, trees, "lockstorm-odr.")


def main(argv):
    return treecheck.main(argv, check, fixture, "odr: %d finding(s)",
                          lambda root: "odr: no class defined twice at file scope in tests/")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
