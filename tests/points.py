#!/usr/bin/python3
"""points.py - every fault point name is written once, in its points table.

    points.py [ROOT]     check the tree at ROOT (default: this checkout)
    points.py --fixture  prove the check has teeth on small fixture trees

A points table is an array `const char *const <x>_points[] = { ... };` built
with designated initialisers from an `enum <x>_point`; a step fires the
table's own entry, PT(NAME) (the seam keys its caches by the name's address,
faults/fsx.h).  Reads the C sources (comments aside; tests, adapters and
generated files aside) and fails on
  - fsx_point("...") with a string literal, anywhere,
  - a point-name literal ("<x>/<op>/<before|mid|after>-<label>") in
    protocols/ or workloads/ outside a points table (a helper's argument,
    a struct of names),
  - a constant of an `enum <x>_point` that no table entry is initialised
    with (a hole would end the NULL-terminated list early).
Each finding is one line: FILE:LINE: what is wrong.  Exit 0 clean, 1 findings.
"""
import os
import re
import sys

import treecheck

SKIP = ("tests", "build", "adapters", "bench", ".git", "docs", "scenarios", "ci", "scripts")
NAMED = ("protocols", "workloads")  # where a point-name literal must be in a table
POINT = re.compile(r"[a-z0-9-]+/[a-z0-9*-]+/(before|mid|after)-[a-z0-9-]+")
TABLE = re.compile(r"const\s+char\s*\*\s*const\s+\w+_points\s*\[\s*\]\s*=\s*\{")
ENUM = re.compile(r"\benum\s+\w+_point\s*\{([^}]*)\}")
DESIGNATOR = re.compile(r"\[\s*(\w+)\s*\]\s*=")
FSX_POINT_LITERAL = re.compile(r"\bfsx_point\s*\(\s*\"")


def sources(root):
    for dirpath, dirs, files in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        top = rel.split(os.sep)[0]
        if top in SKIP or top.startswith("build"):
            dirs[:] = []
            continue
        dirs.sort()
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.normpath(os.path.join(rel, f))


def strip(src):
    """The source with comments blanked (newlines kept) and the spans
    (start, end, text) of its string literals."""
    out, strings, i, n = [], [], 0, len(src)
    while i < n:
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(c if c == "\n" else " " for c in src[i:j]))
            i = j
        elif src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src[i] in "\"'":
            q, j = src[i], i + 1
            while j < n and src[j] != q and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            j = min(j + 1, n)
            if q == '"':
                strings.append((i, j, src[i + 1:j - 1]))
            out.append(src[i:j])
            i = j
        else:
            out.append(src[i])
            i += 1
    return "".join(out), strings


def tables(code):
    """(start, end) of each points table's braces."""
    spans = []
    for m in TABLE.finditer(code):
        depth, j = 0, m.end() - 1
        while j < len(code):
            if code[j] == "{":
                depth += 1
            elif code[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        spans.append((m.end() - 1, j + 1))
    return spans


def check(root):
    findings, enums, initialised = [], [], set()
    for src in sources(root):
        with open(os.path.join(root, src), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        code, strings = strip(text)

        def line(pos):
            return code.count("\n", 0, pos) + 1

        spans = tables(code)
        for a, b in spans:
            initialised.update(DESIGNATOR.findall(code[a:b]))
        flagged = set()
        for m in FSX_POINT_LITERAL.finditer(code):
            flagged.add(m.end() - 1)
            findings.append("%s:%d: fsx_point(\"...\") with a literal: add the name to its points table, fire PT(NAME)"
                            % (src, line(m.start())))
        if src.split(os.sep)[0] in NAMED:
            for a, b, s in strings:
                if a in flagged or not POINT.fullmatch(s) or any(x <= a < y for x, y in spans):
                    continue
                findings.append("%s:%d: point name \"%s\" outside a points table: use its table entry, PT(NAME)"
                                % (src, line(a), s))
        for m in ENUM.finditer(code):
            at = m.start(1)
            for c in m.group(1).split(","):
                name = c.split("=")[0].strip()
                if name:
                    enums.append((src, line(at + c.index(name)), name))
                at += len(c) + 1
    for src, no, name in enums:
        if name not in initialised:
            findings.append("%s:%d: %s has no entry in a points table (a hole ends the list early)"
                            % (src, no, name))
    return findings


CLEAN = """/* "a/b/after-c" in a comment is fine */
enum ab_point {
\tAB_PT_B_AFTER_C,
\tAB_NPOINTS
};
static const char *const ab_points[] = {
\t[AB_PT_B_AFTER_C] = "ab/b/after-c",
\t[AB_NPOINTS] = NULL,
};
#define PT(name) ab_points[AB_PT_##name]
static void f(void) { fsx_point(PT(B_AFTER_C)); puts("not/a/point"); }
"""


def fixture():
    """Each tree must give exactly the findings named; the clean one none."""
    trees = {
        "clean": ({"protocols/ab.c": CLEAN, "cli/main.c": 'const char *h = "ab/b/after-c";\n'}, []),
        "call-site literal": ({"protocols/ab.c": CLEAN + 'void g(void)\n{\n\tfsx_point("ab/b/after-c");\n}\n',
                               "explore/x.c": 'void h(void) { fsx_point ( "x/y/after-z" ); }\n'},
                              ['protocols/ab.c:14: fsx_point("...") with a literal: add the name to its points table, fire PT(NAME)',
                               'explore/x.c:1: fsx_point("...") with a literal: add the name to its points table, fire PT(NAME)']),
        "helper literal": ({"workloads/w.c": CLEAN + 'void g(void) { helper(1,\n\t"ab/persist/mid-write"); }\n'},
                           ['workloads/w.c:13: point name "ab/persist/mid-write" outside a points table: use its table entry, PT(NAME)']),
        "hole": ({"protocols/ab.h": "enum ab_point { AB_PT_B_AFTER_C, AB_PT_B_AFTER_D, AB_NPOINTS };\n",
                  "protocols/ab.c": CLEAN.replace("enum ab_point", "enum ab_unused")},
                 ["protocols/ab.h:1: AB_PT_B_AFTER_D has no entry in a points table (a hole ends the list early)"]),
    }
    return treecheck.run_fixtures(check, trees, "lockstorm-points.")


def main(argv):
    return treecheck.main(argv, check, fixture,
                          "points: %d finding(s); a point's name is written once, in its points table (faults/fsx.h)",
                          lambda root: "points: every point name is in a points table")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
