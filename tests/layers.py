#!/usr/bin/python3
"""layers.py - keep the house's floors (DESIGN.md "Layout").

    layers.py [ROOT]     check the tree at ROOT (default: this checkout)
    layers.py --fixture  prove the check has teeth on small fixture trees

Reads every `#include "..."` of the C sources (tests, adapters' own code and
generated files aside), resolves it against the including file's folder, then
the tree's root, and fails on
  - an include that runs up a floor (a folder includes only its own floor
    and the floors below it),
  - a circle between folders of one floor,
  - a circle between modules (x.c and x.h are one module),
  - a source file whose folder has no floor,
  - a source file over MAX_LINES lines (split it by responsibility).
Each finding is one line: FILE:LINE: what is wrong.  Exit 0 clean, 1 findings.
"""
import os
import re
import sys

import treecheck

FLOORS = {
    "core": 1,
    "faults": 2,
    "protocols": 3,
    "workloads": 4,
    "check": 5, "report": 5, "run": 5, "explore": 5,
    "cli": 6,
}
MAX_LINES = 1000
SKIP = ("tests", "build", "adapters", "bench", ".git", "docs", "scenarios", "ci", "scripts")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def sources(root):
    for dirpath, dirs, files in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        top = rel.split(os.sep)[0]
        if top in SKIP or top.startswith("build"):
            dirs[:] = []
            continue
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.normpath(os.path.join(rel, f))


def folder(path):
    return path.split(os.sep)[0] if os.sep in path else ""


def module(path):
    return os.path.splitext(path)[0]


def edges(root):
    """(from_file, line_no, to_file) for every include of ours."""
    out = []
    for src in sources(root):
        with open(os.path.join(root, src), encoding="utf-8", errors="replace") as fh:
            for no, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                for base in (os.path.dirname(src), ""):
                    cand = os.path.normpath(os.path.join(base, m.group(1)))
                    if os.path.isfile(os.path.join(root, cand)):
                        out.append((src, no, cand))
                        break
    return out


def cycles(graph):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, on, stack, comps, counter = {}, {}, set(), [], [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return comps


def check(root):
    findings = []
    for src in sources(root):
        if folder(src) not in FLOORS:
            findings.append("%s:1: folder '%s' has no floor (tests/layers.py FLOORS)" % (src, folder(src) or "."))
        with open(os.path.join(root, src), encoding="utf-8", errors="replace") as fh:
            n = sum(1 for _ in fh)
        if n > MAX_LINES:
            findings.append("%s:%d: %d lines, over %d: split it by responsibility" % (src, MAX_LINES + 1, n, MAX_LINES))
    es = edges(root)
    where = {}
    fgraph, mgraph = {}, {}
    for src, no, dst in es:
        a, b = folder(src), folder(dst)
        fa, fb = FLOORS.get(a), FLOORS.get(b)
        if fa is not None and fb is not None and fb > fa:
            findings.append("%s:%d: includes %s: floor %d (%s/) runs up to floor %d (%s/)"
                            % (src, no, dst, fa, a, fb, b))
        if a != b and fa == fb:
            fgraph.setdefault(a, set()).add(b)
            where.setdefault((a, b), (src, no, dst))
        ma, mb = module(src), module(dst)
        if ma != mb:
            mgraph.setdefault(ma, set()).add(mb)
            where.setdefault((ma, mb), (src, no, dst))
    for comp in cycles(fgraph):
        for a in comp:
            for b in sorted(fgraph.get(a, ())):
                if b in comp:
                    src, no, dst = where[(a, b)]
                    findings.append("%s:%d: includes %s: folders %s in a circle"
                                    % (src, no, dst, " <-> ".join(comp)))
    for comp in cycles(mgraph):
        for a in comp:
            for b in sorted(mgraph.get(a, ())):
                if b in comp:
                    src, no, dst = where[(a, b)]
                    findings.append("%s:%d: includes %s: modules %s in a circle"
                                    % (src, no, dst, " <-> ".join(comp)))
    return findings


def fixture():
    """Each tree must give exactly the findings named; the clean one none."""
    trees = {
        "clean": ({"core/a.h": "", "core/a.c": '#include "a.h"\n',
                   "faults/f.c": '#include "../core/a.h"\n', "cli/main.c": '#include "faults/f.h"\n',
                   "faults/f.h": ""}, []),
        "upward": ({"core/a.c": '#include <stdio.h>\n\n#include "../faults/f.h"\n', "faults/f.h": ""},
                   ["core/a.c:3: includes faults/f.h: floor 1 (core/) runs up to floor 2 (faults/)"]),
        "module circle": ({"core/a.c": '#include "b.h"\n', "core/a.h": "", "core/b.c": '#include "a.h"\n',
                           "core/b.h": ""},
                          ["core/a.c:1: includes core/b.h: modules core/a <-> core/b in a circle",
                           "core/b.c:1: includes core/a.h: modules core/a <-> core/b in a circle"]),
        "folder circle": ({"run/x.c": '#include "../check/y.h"\n', "check/y.h": "",
                           "check/y.c": '#include "../run/z.h"\n', "run/z.h": ""},
                          ["check/y.c:1: includes run/z.h: folders check <-> run in a circle",
                           "run/x.c:1: includes check/y.h: folders check <-> run in a circle"]),
        "no floor": ({"harness/x.c": ""}, ["harness/x.c:1: folder 'harness' has no floor (tests/layers.py FLOORS)"]),
        "too long": ({"core/big.c": "int x;\n" * (MAX_LINES + 1), "core/ok.c": "int y;\n" * MAX_LINES},
                     ["core/big.c:1001: 1001 lines, over 1000: split it by responsibility"]),
    }
    return treecheck.run_fixtures(check, trees, "lockstorm-layers.")


def main(argv):
    return treecheck.main(argv, check, fixture, "layers: %d finding(s); the floors are in DESIGN.md \"Layout\"",
                          lambda root: "layers: %d includes kept the floors" % len(edges(root)))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
