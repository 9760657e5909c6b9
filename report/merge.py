#!/usr/bin/python3
"""merge.py - join ci/nightly shard folders into one report (`lockstorm merge [-o OUTDIR] DIR..`).

Every DIR is a shard's artifacts folder (DIR/shard.json, schema lockstorm-nightly/1).  The shards
must come from one matrix (same protocols, profiles, explore cells, seeds, shard count) and together
hold every cell exactly once; merge says which cells are missing or doubled otherwise.  Run cells and
explore cells (profile `explore`: explore.json, cex-N.json) are merged alike.

OUTDIR (default nightly-merged) gets:
  merged.json   schema lockstorm-nightly-merged/1: the matrix, every cell, new failures, baseline
                entries that did not fail anywhere (fixed? flaky?)
  summary.md    a CI job summary, new failures first; the explore cells' search and coverage
  junit.xml     one testsuite per cell (known failures skipped)
  index.html    the matrix at a glance; each cell links to its report in its shard folder

With --baseline FILE the cells are judged again against FILE; without, each shard's judgement stands.
A NEW failure keeps its shard's confirmation (confirmed, repeats k/K, seen once: ci/nightly --reruns);
one seen once fails the merged night only with --strict (or when a shard ran with --strict).
exit: 0 no new failure (or only NEW ones seen once), 1 a new failure that fails the night, 2 bad input (not shard folders, different matrices, a cell
missing or doubled).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import nightlib  # noqa: E402

MARKER = ".lockstorm-merged"


def die(code, msg):
    print("lockstorm: merge: %s" % msg, file=sys.stderr)
    sys.exit(code)


def main(argv):
    ap = argparse.ArgumentParser(prog="lockstorm merge", description="join ci/nightly shard folders")
    ap.add_argument("-o", "--out", default="nightly-merged")
    ap.add_argument("--baseline")
    ap.add_argument("--strict", action="store_true", help="a NEW failure seen once fails the night too")
    ap.add_argument("dirs", nargs="+", metavar="SHARD_DIR")
    try:
        a = ap.parse_args(argv)
    except SystemExit as e:
        sys.exit(0 if e.code == 0 else 2)

    shards = []
    for d in a.dirs:
        p = os.path.join(d, "shard.json")
        try:
            s = nightlib.load_json(p)
        except FileNotFoundError:
            die(2, "%s has no shard.json: not a ci/nightly artifacts folder" % d)
        except (OSError, ValueError) as e:
            die(2, "%s: %s" % (p, e))
        if s.get("schema") != nightlib.SHARD_SCHEMA:
            die(2, "%s: not a %s file" % (p, nightlib.SHARD_SCHEMA))
        s["_dir"] = os.path.abspath(d)
        shards.append(s)

    m0 = shards[0]["matrix"]
    count = shards[0]["shard"]["count"]
    for s in shards[1:]:
        if s["matrix"] != m0:
            die(2, "%s and %s ran different matrices (protocols, profiles, explore cells, seeds or run options)"
                % (shards[0]["_dir"], s["_dir"]))
        if s["shard"]["count"] != count:
            die(2, "%s is a shard of %d, %s of %d" % (shards[0]["_dir"], count, s["_dir"], s["shard"]["count"]))
    seen_idx = {}
    for s in shards:
        i = s["shard"]["index"]
        if i in seen_idx:
            die(2, "shard %d/%d given twice (%s and %s)" % (i, count, seen_idx[i], s["_dir"]))
        seen_idx[i] = s["_dir"]

    baseline = None
    if a.baseline:
        try:
            baseline = nightlib.load_baseline(a.baseline)
        except nightlib.BaselineError as e:
            die(2, str(e))

    order = {cid: k for k, cid in enumerate(m0["cells"])}
    cells, where = [], {}
    problems = []
    for s in shards:
        for c in s["cells"]:
            if c["id"] not in order:
                problems.append("cell %s of %s is not in the matrix" % (c["id"], s["_dir"]))
                continue
            if c["id"] in where:
                problems.append("cell %s is in %s and %s" % (c["id"], where[c["id"]], s["_dir"]))
                continue
            where[c["id"]] = s["_dir"]
            c = dict(c)
            c["shard_dir"] = s["_dir"]
            if baseline is not None:
                nightlib.classify(c, baseline)
            cells.append(c)
        if s.get("skipped"):
            problems.append("shard %d/%d (%s) skipped %d cells for its budget: %s" % (
                s["shard"]["index"], count, s["_dir"], len(s["skipped"]),
                ", ".join(x["id"] for x in s["skipped"][:5]) + (", ..." if len(s["skipped"]) > 5 else "")))
        elif not s.get("complete"):
            problems.append("shard %d/%d (%s) did not finish" % (s["shard"]["index"], count, s["_dir"]))
    missing = [cid for cid in m0["cells"] if cid not in where]
    absent = sorted(set(range(1, count + 1)) - set(seen_idx))
    if missing:
        problems.append("%d of %d cells missing%s" % (
            len(missing), len(order), " (shards %s of %d not given)" % (",".join(map(str, absent)), count)
            if absent else ": " + ", ".join(missing[:5])))
    cells.sort(key=lambda c: order[c["id"]])

    out = os.path.abspath(a.out)
    if os.path.isdir(out) and os.listdir(out) and not os.path.exists(os.path.join(out, MARKER)):
        die(2, "-o %s is not empty and not a merge folder (%s): refusing to use it" % (out, MARKER))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, MARKER), "w") as f:
        f.write("made by lockstorm merge\n")

    if baseline is None:
        # each shard's baseline judged its cells; the entries nobody failed need the whole matrix
        paths = {s.get("baseline") for s in shards if s.get("baseline")}
        try:
            bl = nightlib.load_baseline(paths.pop()) if len(paths) == 1 else []
        except nightlib.BaselineError:
            bl = []
    else:
        bl = baseline
    explore_protocols = (m0.get("explore") or {}).get("protocols", [])
    columns = m0["profiles"] + ([nightlib.EXPLORE] if explore_protocols else [])
    fixed = nightlib.unmatched_baseline(bl, cells, m0["protocols"], columns) if not missing else []
    strict = a.strict or any((s.get("confirm") or {}).get("strict") for s in shards)
    new = [c for c in cells if nightlib.fails_night(c, strict)]
    doc = {"schema": nightlib.MERGED_SCHEMA, "matrix": m0, "shards": [
        {"index": s["shard"]["index"], "count": count, "dir": s["_dir"], "elapsed_s": s.get("elapsed_s"),
         "complete": s.get("complete", False)} for s in sorted(shards, key=lambda s: s["shard"]["index"])],
        "complete": not problems, "problems": problems, "cells": cells,
        "new_failures": sum(1 for c in cells if c.get("new")), "failing_the_night": len(new), "strict": strict,
        "baseline_not_failing": fixed}
    with open(os.path.join(out, "merged.json"), "w") as f:
        json.dump(doc, f, indent=1)

    def load_report(c):
        return nightlib.load_cell_report(os.path.join(c["shard_dir"], c["dir"]), c)

    nightlib.write_junit(os.path.join(out, "junit.xml"), cells, load_report, strict=strict)
    title = "lockstorm nightly (%d shard%s merged)" % (len(shards), "" if len(shards) == 1 else "s")
    md = nightlib.summary_markdown(title, cells, fixed, strict=strict)
    if problems:
        md += "\n**Incomplete:** " + "; ".join(problems) + "\n"
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write(md)

    def link(c):
        target = os.path.join(c["shard_dir"], c["dir"], "report.html" if c.get("html") else "run.log")
        return os.path.relpath(target, out)

    with open(os.path.join(out, "index.html"), "w") as f:
        f.write(nightlib.index_html(title, cells, m0["protocols"], m0["profiles"], m0["seeds"], link, fixed,
                                    "%d cells from %d shards; time-scale %s, %d workers, %s%s%s" % (
                                        len(cells), len(shards), m0["time_scale"], m0["workers"], m0["workload"],
                                        "; explore cells: %d workers x %d ops" % (
                                            m0["explore"]["workers"], m0["explore"]["ops"]) if explore_protocols
                                        else "",
                                        "; INCOMPLETE: " + "; ".join(problems) if problems else ""),
                                    explore_protocols, strict=strict))
    print(md)
    if problems:
        die(2, "; ".join(problems))
    return 1 if new else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
