"""nightlib - what ci/nightly and `lockstorm merge` (report/merge.py) share.

Cells: one `lockstorm run` of one protocol revision under one fault profile with one seed (kind
"run"), or one `lockstorm explore` of one revision with one seed (kind "explore", profile
"explore": a deterministic interleaving search instead of a fault profile).  Cell ids are
PROTOCOL__PROFILE__sSEED (":" in a protocol becomes "-": artifact-safe); the matrix is ordered seed-major, then profile (the explore cells of a
seed last), then protocol, and shard I of N takes the cells whose index is I-1 modulo N:
deterministic, disjoint, and together exactly the matrix.  Only the built-in revisions can be
explored: ext: adapters, exec and the `none` control get run cells only.

Baseline (ci/nightly-baseline.txt): known failures, one per line,
    PROTOCOL  PROFILE  INVARIANT  [note...]
each of the three a glob (fnmatch: `*` for any); `#` starts a comment.  PROFILE `explore` names
the explore cells (a profile glob `*` matches them too).  A failing invariant of a
cell is *known* when a line matches (protocol, profile, invariant), else *new*.  A cell that could
not be judged (exit 2/3) fails invariant `harness`.  The night fails only on new failures.

Confirmation (ci/nightly --reruns K, default 3): a run cell with a NEW failure is run again K times
(the same command) and triaged (`lockstorm triage`); cell['confirm'] then says
    confirmed    triage turned a NEW failure into a counterexample (confirm['cex']: its files)
    repeats      k of the K re-runs showed a NEW failure again (confirm['repeats'] = k >= 1)
    seen-once    neither: the failure did not come back (kept, reported; fails only with --strict)
    unchecked    not re-run: the budget had no room (fails the night, like an unconfirmed failure)
An explore cell's NEW failure is a counterexample already: confirmed.  The night fails on a NEW
failure unless it is seen-once (fails_night()).
"""
import fnmatch
import html
import json
import os
import time

SHARD_SCHEMA = "lockstorm-nightly/1"
MERGED_SCHEMA = "lockstorm-nightly-merged/1"
EXPLORE = "explore"  # the profile column of explore cells


def cell_id(protocol, profile, seed):
    """A name safe as a folder and as an artifact path everywhere (actions/upload-artifact
    refuses " : < > | * ? \\ and CR/LF): ext:flock1 becomes ext-flock1, a fleet a+b."""
    safe = protocol.replace(",", "+").replace(":", "-")
    return "%s__%s__s%d" % ("".join(ch if ch.isalnum() or ch in "+-._" else "_" for ch in safe), profile, seed)


def explorable(protocol):
    """Can `lockstorm explore` schedule it? Built-in revisions only (A+B: every part), not the none control."""
    return all(p and not p.startswith("ext:") and p not in ("exec", "none") for p in protocol.split("+"))


def matrix(protocols, profiles, seeds, explore_protocols=()):
    """Every cell in the fixed order: [{id, kind, protocol, profile, seed, index}]."""
    cells = []
    for seed in seeds:
        for prof in profiles:
            for proto in protocols:
                cells.append({"id": cell_id(proto, prof, seed), "kind": "run", "protocol": proto, "profile": prof,
                              "seed": seed})
        for proto in explore_protocols:
            cells.append({"id": cell_id(proto, EXPLORE, seed), "kind": "explore", "protocol": proto,
                          "profile": EXPLORE, "seed": seed})
    for i, c in enumerate(cells):
        c["index"] = i
    return cells


def is_explore(cell):
    return cell.get("kind") == "explore"


def load_cell_report(celldir, cell):
    """A run cell's lockstorm-report/1, or an explore cell's lockstorm-explore/1 with every distinct
    failure's counterexample (story, examples) read in from its cex-N.json; None when absent."""
    p = os.path.join(celldir, "explore.json" if is_explore(cell) else "report.json")
    if not os.path.exists(p):
        return None
    rep = load_json(p)
    if is_explore(cell):
        for d in rep.get("distinct", []):
            try:
                cex = load_json(os.path.join(celldir, os.path.basename(d["file"])))
            except (OSError, ValueError):
                continue
            d["story"], d["examples"] = cex.get("story", []), cex.get("examples", [])
    return rep


def shard_cells(cells, index, count):
    """Shard INDEX (1-based) of COUNT."""
    return [c for c in cells if c["index"] % count == index - 1]


class BaselineError(Exception):
    pass


def load_baseline(path):
    """[(protocol glob, profile glob, invariant glob, note, line number)]."""
    if not path:
        return []
    entries = []
    try:
        with open(path) as f:
            for no, line in enumerate(f, 1):
                line = line.split("#", 1)[0].strip()
                if not line:
                    continue
                parts = line.split(None, 3)
                if len(parts) < 3:
                    raise BaselineError("%s:%d: want PROTOCOL PROFILE INVARIANT [note]" % (path, no))
                entries.append((parts[0], parts[1], parts[2], parts[3] if len(parts) > 3 else "", no))
    except OSError as e:
        raise BaselineError("%s: %s" % (path, e.strerror))
    return entries


def known_by(baseline, protocol, profile, invariant):
    for e in baseline:
        if (fnmatch.fnmatchcase(protocol, e[0]) and fnmatch.fnmatchcase(profile, e[1])
                and fnmatch.fnmatchcase(invariant, e[2])):
            return e
    return None


def classify(cell, baseline):
    """Fill cell['new'] / cell['known'] from cell['failing'] (and a harness error)."""
    failing = list(cell.get("failing", []))
    if cell.get("verdict") == "error":
        failing.append("harness")
    cell["new"], cell["known"] = [], []
    for inv in failing:
        e = known_by(baseline, cell["protocol"], cell["profile"], inv)
        if e:
            cell["known"].append({"invariant": inv, "baseline_line": e[4], "note": e[3]})
        else:
            cell["new"].append(inv)
    return cell


def confirm_label(cell):
    """'confirmed (cells/ID/triage/cex-1.json)', 'repeats 2/3', 'seen once (0/3 re-runs, triage: not
    reproduced)', 'not re-run (budget)', or '' for a cell without a NEW failure or a confirmation."""
    if not cell.get("new"):
        return ""
    if is_explore(cell):
        files = [x["file"] for x in cell.get("cex", []) if x["invariant"] in cell["new"]]
        return "confirmed (%s)" % ", ".join(files[:3]) if files else ""
    k = cell.get("confirm")
    if not k:
        return ""
    if k["label"] == "confirmed":
        files = sorted(set(k["cex"]))
        return "confirmed (%s%s), repeats %d/%d" % (", ".join(files[:3]), ", ..." if len(files) > 3 else "",
                                                    k["repeats"], k["reruns"])
    if k["label"] == "repeats":
        return "repeats %d/%d" % (k["repeats"], k["reruns"])
    if k["label"] == "seen-once":
        return "seen once (0/%d re-runs, triage: %s)" % (k["reruns"], k.get("triage", "not reproduced"))
    return "not re-run (%s)" % k.get("why", "budget")


def fails_night(cell, strict=False):
    """Does this cell fail the night? A NEW failure does, unless the re-runs and triage found it
    seen once (then only with strict)."""
    if not cell.get("new"):
        return False
    k = cell.get("confirm")
    return strict or not (k and k["label"] == "seen-once" and not is_explore(cell))


def unmatched_baseline(baseline, cells, protocols, profiles):
    """Baseline lines about this matrix that no cell failed: fixed, or flaky - worth a look."""
    out = []
    for e in baseline:
        if not any(fnmatch.fnmatchcase(p, e[0]) for p in protocols):
            continue
        if not any(fnmatch.fnmatchcase(p, e[1]) for p in profiles):
            continue
        hit = any(k["baseline_line"] == e[4] for c in cells for k in c.get("known", []))
        if not hit:
            out.append({"line": e[4], "entry": "%s %s %s" % e[:3], "note": e[3]})
    return out


# ---- JUnit: one testsuite per cell, one testcase per invariant; known failures are skipped ----

def _x(s):
    s = "".join(ch if ch in "\t\n\r" or ord(ch) >= 0x20 else "?" for ch in str(s))
    return html.escape(s, quote=True)


def _explore_cases(c, rep, cls, known, n):
    """An explore cell's testcases: one per invariant the explorer checks for the workload (and any
    other that failed); a failing one carries its distinct counterexamples' stories and replays."""
    cases = []
    by = {}
    for d in (rep or {}).get("distinct", []):
        by.setdefault(d["invariant"], []).append(d)
    names = list(c.get("explore", {}).get("invariants", []))
    names += [i for i in by if i not in names]
    for name in names:
        n["tests"] += 1
        head = '    <testcase classname="%s" name="%s" time="0"' % (_x(cls), _x(name))
        found = by.get(name, [])
        if found and name in known:
            n["skipped"] += 1
            cases.append(head + '>\n      <skipped message="%s"/>\n    </testcase>' % _x(
                "known failure (baseline line %d%s): %d distinct counterexamples" % (
                    known[name]["baseline_line"], ": " + known[name]["note"] if known[name]["note"] else "",
                    len(found))))
        elif found:
            n["failures"] += 1
            ex = found[0].get("examples") or [""]
            text = []
            for d in found[:3]:
                f = os.path.basename(d["file"])
                text += ["%s (%d-step story): lockstorm replay cells/%s/%s" % (f, d.get("story_steps", 0), c["id"], f)]
                text += ["  " + ln for ln in d.get("story", [])] + ["  - " + e for e in d.get("examples", [])] + [""]
            if len(found) > 3:
                text.append("and %d more in cells/%s/" % (len(found) - 3, c["id"]))
            cases.append(head + '>\n      <failure type="%s" message="%s">%s</failure>\n    </testcase>' % (
                _x(name), _x("NEW, confirmed: %d distinct counterexamples%s" % (len(found), ": " + ex[0] if ex[0]
                                                                              else "")),
                _x("\n".join(text))))
        else:
            cases.append(head + "/>")
    return cases


def _not_run_suite(c, why):
    """A cell the shard did not run to its end (skipped for the budget, or cut): one skipped testcase."""
    cls = "nightly.%s.%s.s%d" % (c["protocol"].replace(",", "+"), c["profile"], c["seed"])
    return ('  <testsuite name="%s" tests="1" failures="0" errors="0" skipped="1" time="0" timestamp="%s">\n'
            '    <testcase classname="%s" name="cell" time="0">\n      <skipped message="%s"/>\n    </testcase>\n'
            '  </testsuite>' % (_x("nightly %s" % c["id"]), time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()),
                                _x(cls), _x(why)))


def write_junit(path, cells, load_report, skipped=(), strict=False):
    """load_report(cell) -> the cell's load_cell_report() dict or None; skipped: cells the budget left out
    ({id, protocol, profile, seed, reason}).  A NEW failure's message carries its confirm_label(); one
    seen once is a skipped testcase (it does not fail the night) unless strict.  Valid against Jenkins xUnit's junit-10.xsd
    (tests/junit-10.xsd): the root carries tests, failures, errors and time only."""
    suites, tot = [], {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for c in skipped:
        tot["tests"] += 1
        tot["skipped"] += 1
        suites.append(_not_run_suite(c, "not run: " + c.get("reason", "budget")))
    for c in cells:
        if c.get("verdict") == "cut":
            tot["tests"] += 1
            suites.append(_not_run_suite(c, "cut at the end of the budget (exit %s): INCOMPLETE" % c.get("exit")))
            continue
        rep = load_report(c)
        cls = "nightly.%s.%s.s%d" % (c["protocol"].replace(",", "+"), c["profile"], c["seed"])
        cases, n = [], {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        known = {k["invariant"]: k for k in c.get("known", [])}
        if is_explore(c) and c.get("verdict") != "error":
            cases = _explore_cases(c, rep, cls, known, n)
        for inv in (rep or {}).get("invariants", []) if not is_explore(c) else []:
            name = inv["name"]
            n["tests"] += 1
            head = '    <testcase classname="%s" name="%s" time="0"' % (_x(cls), _x(name))
            if not inv.get("applicable", True):
                n["skipped"] += 1
                cases.append(head + '>\n      <skipped message="n/a: the workload does not exercise it"/>\n'
                             '    </testcase>')
            elif inv["violations"] and name in known:
                n["skipped"] += 1
                cases.append(head + '>\n      <skipped message="%s"/>\n    </testcase>' % _x(
                    "known failure (baseline line %d%s): %d violations" % (
                        known[name]["baseline_line"], ": " + known[name]["note"] if known[name]["note"] else "",
                        inv["violations"])))
            elif inv["violations"] and name in c.get("new", []) and not fails_night(c, strict):
                n["skipped"] += 1
                ex = [e["text"] for e in inv.get("examples", [])]
                cases.append(head + '>\n      <skipped message="%s"/>\n    </testcase>' % _x(
                    "NEW, %s: %d violations%s; artifacts: cells/%s/" % (
                        confirm_label(c), inv["violations"], ": " + ex[0] if ex else "", c["id"])))
            elif inv["violations"]:
                n["failures"] += 1
                ex = [e["text"] for e in inv.get("examples", [])]
                label = confirm_label(c)
                cases.append(head + '>\n      <failure type="%s" message="%s">%s</failure>\n    </testcase>' % (
                    _x(name), _x("NEW%s: %d violations%s" % (", " + label if label else "", inv["violations"],
                                                            ": " + ex[0] if ex else "")),
                    _x("\n".join(ex) + ("\n" + label if label else "") +
                       "\nartifacts: cells/%s/ (lockstorm check, lockstorm report)" % c["id"])))
            else:
                cases.append(head + "/>")
        if c.get("verdict") == "error":
            n["tests"] += 1
            if "harness" in known:
                n["skipped"] += 1
                cases.append('    <testcase classname="%s" name="harness" time="0">\n      <skipped message='
                             '"known harness failure"/>\n    </testcase>' % _x(cls))
            else:
                n["errors"] += 1
                cases.append('    <testcase classname="%s" name="harness" time="0">\n      <error message="%s"/>\n'
                             '    </testcase>' % (_x(cls), _x("the %s exited %s: see cells/%s/run.log"
                                                          % ("explore" if is_explore(c) else "run", c.get("exit"),
                                                             c["id"]))))
        for k in tot:
            tot[k] += n[k]
        suites.append('  <testsuite name="%s" tests="%d" failures="%d" errors="%d" skipped="%d" time="%.3f" '
                      'timestamp="%s">\n    <properties>\n      <property name="kind" value="%s"/>\n'
                      '      <property name="protocol" value="%s"/>\n'
                      '      <property name="profile" value="%s"/>\n      <property name="seed" value="%d"/>\n'
                      '      <property name="duration_ms" value="%d"/>\n    </properties>\n%s\n  </testsuite>' % (
                          _x("nightly %s" % c["id"]), n["tests"], n["failures"], n["errors"], n["skipped"],
                          c.get("elapsed_s", 0.0), time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()),
                          "explore" if is_explore(c) else "run",
                          _x(c["protocol"]), _x(c["profile"]), c["seed"], c.get("duration_ms", 0),
                          "\n".join(cases)))
    with open(path, "w") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        f.write('<testsuites name="lockstorm nightly" tests="%d" failures="%d" errors="%d" time="%.3f">\n' % (
            tot["tests"], tot["failures"], tot["errors"], sum(c.get("elapsed_s", 0.0) for c in cells)))
        f.write("\n".join(suites))
        f.write("\n</testsuites>\n")


# ---- summaries ----

def summary_markdown(title, cells, fixed, extra="", skipped=(), pending=(), status="", strict=False):
    """status: '' for a finished shard, else what it is doing or why it is incomplete (shown first)."""
    new = [c for c in cells if c.get("new")]
    failing = [c for c in new if fails_night(c, strict)]
    once = len(new) - len(failing)
    known = [c for c in cells if c.get("known") and not c.get("new")]
    cut = [c for c in cells if c.get("verdict") == "cut"]
    head = ("FAIL (%d cells with new failures)" % len(failing) if failing else
            "INCOMPLETE (no new failures so far)" if (status or skipped or cut) and not once else
            "INCOMPLETE (%d cells with new failures seen once)" % once if status or skipped or cut else
            "PASS (%d cells with new failures seen once, not confirmed)" % once if once else
            "PASS (no new failures)")
    lines = ["### %s: %s" % (title, head), ""]
    if status:
        lines += ["**%s**" % status, ""]
    lines += ["%d cells: %d passed, %d with known failures only, %d with new failures%s%s" % (
        len(cells), sum(1 for c in cells if c.get("verdict") == "pass"), len(known), len(new),
        ", %d cut at the end of the budget" % len(cut) if cut else "", extra), ""]
    if skipped:
        lines += ["Skipped (not run: the budget ran out): " + ", ".join("`%s`" % x["id"] for x in skipped), ""]
    if pending:
        lines += ["Not run yet: " + ", ".join("`%s`" % x for x in pending), ""]
    if new:
        # the night's failures first, then those seen once (kept, reported; they fail only with --strict)
        lines += ["| cell | new failures | confirmation | known | first example |", "|---|---|---|---|---|"]
        for c in failing + [c for c in new if c not in failing]:
            lines.append("| %s | **%s** | %s | %s | %s |" % (
                c["id"], ", ".join(c["new"]), confirm_label(c).replace("|", "\\|") or "-",
                ", ".join(k["invariant"] for k in c["known"]) or "-",
                (c.get("first_example") or "").replace("|", "\\|")))
        lines.append("")
    if known:
        lines += ["<details><summary>%d cells with known failures only</summary>" % len(known), "",
                  "| cell | known failures |", "|---|---|"]
        for c in known:
            lines.append("| %s | %s |" % (c["id"], ", ".join(k["invariant"] for k in c["known"])))
        lines += ["", "</details>", ""]
    lines += explore_coverage_markdown(cells)
    if fixed:
        lines += ["Baseline entries that did not fail (fixed? flaky?): " +
                  "; ".join("line %d `%s`" % (f["line"], f["entry"]) for f in fixed), ""]
    return "\n".join(lines)


def _found(c):
    """'exclusion x3, own-release' from an explore cell's distinct counterexamples."""
    counts = {}
    for x in c.get("cex", []):
        counts[x["invariant"]] = counts.get(x["invariant"], 0) + 1
    return ", ".join("%s x%d" % (i, k) if k > 1 else i for i, k in counts.items())


def explore_coverage_markdown(cells):
    """What the explore cells searched and covered, and which declared points none of them hit."""
    ex = [c for c in cells if is_explore(c)]
    if not ex:
        return []
    lines = ["#### Explore cells: search and coverage", "",
             "| cell | schedules | points hit | step pairs | distinct failures | points not hit |", "|---|---|---|---|---|---|"]
    missed_by = {}
    for c in ex:
        e = c.get("explore")
        if c.get("verdict") == "error" or not e:
            lines.append("| %s | harness error (exit %s) | - | - | - | - |" % (c["id"], c.get("exit")))
            continue
        lines.append("| %s | %d in %.1f s%s | %d / %d | %d | %s | %s |" % (
            c["id"], e["schedules"], c.get("duration_ms", 0) / 1000.0, " (exhausted)" if e.get("exhausted") else "",
            e["points_hit"], e["points"], e["step_pairs"], _found(c) or "none",
            ", ".join("`%s`" % m for m in e.get("missed", [])) or "-"))
        m = set(e.get("missed", []))
        missed_by[c["protocol"]] = missed_by[c["protocol"]] & m if c["protocol"] in missed_by else m
    lines.append("")
    several = [p for p in missed_by if sum(1 for c in ex if c["protocol"] == p and c.get("explore")) > 1]
    if several:
        lines.append("Points no explore cell hit, by protocol (all seeds together):")
        lines.append("")
        for p in several:
            lines.append("- %s: %s" % (p, ", ".join("`%s`" % m for m in sorted(missed_by[p])) or "none (all hit)"))
        lines.append("")
    return lines


def index_html(title, cells, protocols, profiles, seeds, link, fixed, note="", explore_protocols=(), skipped=(),
               pending=(), status="", strict=False):
    """A matrix page: protocols x profiles (and an explore column when explore_protocols), one chip per
    seed; link(cell) -> href of its report or None.  A NEW failure seen once has a chip of its own."""
    css = ("body{font-family:system-ui,sans-serif;margin:20px;color:#222}table{border-collapse:collapse}"
           "td,th{border:1px solid #ddd;padding:4px 8px;font-size:13px;vertical-align:top}th{background:#f3f3f3}"
           ".c{display:inline-block;margin:1px;padding:1px 6px;border-radius:3px;color:#fff;font-size:12px;"
           "text-decoration:none}.pass{background:#1b7f3b}.known{background:#b08900}.new{background:#b3261e}"
           ".error{background:#000}.na{background:#bbb}.skip{background:#777}.once{background:#d9730d}"
           "h1{padding:10px 14px;border-radius:4px;color:#fff;font-size:22px}"
           "h1.ok{background:#1b7f3b}h1.bad{background:#b3261e}h1.part{background:#8a5a00}")
    by = {(c["protocol"], c["profile"], c["seed"]): c for c in cells}
    skip_by = {(c["protocol"], c["profile"], c["seed"]): c for c in skipped}
    allnew = [c for c in cells if c.get("new")]
    new = [c for c in allnew if fails_night(c, strict)]
    once = [c for c in allnew if c not in new]
    incomplete = bool(status or skipped or any(c.get("verdict") == "cut" for c in cells))
    out = ['<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>%s</title><style>%s</style></head><body>'
           % (_x(title), css),
           '<h1 id="verdict" class="%s">%s: %s</h1>%s<p>%s</p>' % (
               "bad" if new else "part" if incomplete else "ok", _x(title),
               "%d cells with new failures" % len(new) if new else
               "INCOMPLETE, no new failures so far" if incomplete and not once else
               "INCOMPLETE, %d new failures seen once" % len(once) if incomplete else
               "no confirmed or repeating new failures (%d seen once)" % len(once) if once else
               "no new failures",
               "<p><b>%s</b></p>" % _x(status) if status else "", _x(note)),
           '<p><span class="c pass">pass</span> <span class="c known">known failures only</span> '
           '<span class="c new">new failure (confirmed, repeating or unchecked)</span> '
           '<span class="c once">new failure seen once</span> <span class="c error">harness error</span> '
           '<span class="c skip">skipped or cut (budget)</span> <span class="c na">not in this shard, or not run yet</span></p>'
           '<table><tr><th>protocol</th>']
    columns = list(profiles) + ([EXPLORE] if explore_protocols else [])
    out += ["<th>%s</th>" % _x(p) for p in columns]
    out.append("</tr>")
    for proto in protocols:
        out.append("<tr><th>%s</th>" % _x(proto))
        for prof in columns:
            if prof == EXPLORE and proto not in explore_protocols:
                out.append('<td title="no explore cell: explore runs the built-in revisions but the none control">-</td>')
                continue
            chips = []
            for s in seeds:
                c = by.get((proto, prof, s))
                sk = skip_by.get((proto, prof, s))
                if sk or (c and c.get("verdict") == "cut"):
                    chips.append('<span class="c skip" title="%s">s%d</span>' % (
                        _x(sk["reason"] if sk else "cut at the end of the budget"), s))
                    continue
                if not c:
                    chips.append('<span class="c na">s%d</span>' % s)
                    continue
                cls = ("new" if c in new else "once" if c in once else "error" if c.get("verdict") == "error" else
                       "known" if c.get("known") else "pass")
                tip = ", ".join(c.get("new", []) + [k["invariant"] + " (known)" for k in c.get("known", [])])
                if confirm_label(c):
                    tip += " - " + confirm_label(c)
                if c.get("explore"):
                    e = c["explore"]
                    tip += "%s%d schedules, %d/%d points, %d step pairs" % (
                        "; " if tip else "", e["schedules"], e["points_hit"], e["points"], e["step_pairs"])
                href = link(c)
                tag = ('<a class="c %s" href="%s" title="%s">s%d</a>' % (cls, _x(href), _x(tip), s) if href else
                       '<span class="c %s" title="%s">s%d</span>' % (cls, _x(tip), s))
                chips.append(tag)
            out.append("<td>%s</td>" % " ".join(chips))
        out.append("</tr>")
    out.append("</table>")
    for head, group in (("New failures", new), ("New failures seen once (kept; they fail the night only with "
                                                 "--strict)", once)):
        if not group:
            continue
        out.append("<h2>%s</h2><ul>" % _x(head))
        for c in group:
            out.append('<li><b>%s</b>: %s <span class="label">[%s]</span><br><small>%s</small></li>' % (
                _x(c["id"]), _x(", ".join(c["new"])), _x(confirm_label(c) or "not re-run"),
                _x(c.get("first_example") or "")))
        out.append("</ul>")
    if fixed:
        out.append("<h2>Baseline entries that did not fail</h2><ul>%s</ul>" % "".join(
            "<li>line %d: <code>%s</code> %s</li>" % (f["line"], _x(f["entry"]), _x(f["note"])) for f in fixed))
    out.append("</body></html>\n")
    return "".join(out)


def explore_html(cell, rep, command):
    """A self-contained page for an explore cell: the search, its coverage, every distinct
    counterexample's story and how to replay it (rep: load_cell_report())."""
    css = ("body{font-family:system-ui,sans-serif;margin:20px;color:#222}pre{background:#f6f6f6;padding:8px;"
           "font-size:12px;white-space:pre-wrap}code{font-size:12px}h1.pass{color:#1b7f3b}h1.fail{color:#b3261e}"
           "summary{cursor:pointer}li{margin:2px 0}section.inv{border-left:4px solid #b3261e;padding-left:10px;"
           "margin:14px 0}h3{margin:6px 0}")
    e, cex = cell.get("explore", {}), rep.get("distinct", [])
    out = ['<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>explore %s</title><style>%s</style>'
           '</head><body>' % (_x(cell["id"]), css),
           '<h1 id="verdict" class="%s">explore %s: %s</h1>' % (
               "fail" if cex else "pass", _x(cell["id"]),
               "%d distinct counterexamples (%s)" % (len(cex), _x(_found(cell))) if cex else "nothing found"),
           '<p id="config"><code>%s</code><br>%s: %d schedules (%d steps) in %.1f s, %.0f schedules/s%s</p>' % (
               _x(command), _x(rep.get("strategy", "")), rep.get("schedules", 0), rep.get("steps", 0),
               rep.get("elapsed_s", 0.0), rep.get("schedules_per_s", 0.0),
               ", bounded space exhausted" if rep.get("exhausted") else ""),
           '<h2 id="coverage">Coverage: %d of %d points, %d ordered step pairs across workers</h2>' % (
               e.get("points_hit", 0), e.get("points", 0), e.get("step_pairs", 0)),
           '<p>Not hit: %s</p>' % (", ".join("<code>%s</code>" % _x(m) for m in e.get("missed", [])) or "none")]
    if cex:
        # grouped by invariant (the most counterexamples first), each group's shortest story first: the
        # one to read is at the top, the longer variants of the same bug below it
        groups = {}
        for d in cex:
            groups.setdefault(d["invariant"], []).append(d)
        order = sorted(groups, key=lambda i: (-len(groups[i]), min(d.get("story_steps", 0) for d in groups[i]), i))
        out.append('<h2 id="counterexamples">Counterexamples by invariant</h2><ul id="groups">%s</ul>' % "".join(
            '<li><a href="#inv-%s"><b>%s</b></a>: %d, the shortest a %d-step story</li>' % (
                _x(i), _x(i), len(groups[i]), min(d.get("story_steps", 0) for d in groups[i])) for i in order))
        for inv in order:
            ds = sorted(groups[inv], key=lambda d: (d.get("story_steps", 0), d["file"]))
            out.append('<section class="inv" id="inv-%s"><h3>%s: %d counterexample%s</h3>' % (
                _x(inv), _x(inv), len(ds), "" if len(ds) == 1 else "s"))
            for d in ds:
                f = os.path.basename(d["file"])
                out.append('<details%s><summary><b>%d steps</b> %s%s</summary><pre>%s</pre>'
                           '<p>replay: <code>lockstorm replay %s</code> (<code>--full</code> for every step)</p>'
                           '</details>' % (
                               " open" if d is ds[0] else "", d.get("story_steps", 0), _x(f),
                               ": " + _x(d["examples"][0]) if d.get("examples") else "",
                               _x("\n".join(d.get("story", []) + ["violated: " + d["invariant"]] +
                                            ["  - " + x for x in d.get("examples", [])])), _x(f)))
            out.append("</section>")
    out.append("</body></html>\n")
    return "".join(out)


def load_json(path):
    with open(path) as f:
        return json.load(f)
