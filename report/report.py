#!/usr/bin/python3
"""report.py - one self-contained HTML page (and a markdown CI summary) for a kept lockstorm run.

usage: report.py OUTDIR [--html FILE] [--markdown FILE]

Normally started by `lockstorm report OUTDIR --html FILE [--markdown FILE]`, which runs it with
/usr/bin/python3 (Debian's python3-matplotlib).  Reads OUTDIR/report.json, OUTDIR/run.json and the
journals (see lsdata.py).  The page has no external reference: every plot is a base64 PNG inlined
as a data: URI, the style sheet is inline.

Sections (each an element with this id): verdict, config, revisions (a mixed fleet: one row per
revision), invariants, throughput, latency, fairness, timeline.  Paths on the page are relative to
the folder the page is written to.
exit: 0 written, 2 OUTDIR is not a kept run or bad usage, 3 the script itself failed.
"""
import argparse
import atexit
import base64
import html
import io
import os
import shutil
import sys
import tempfile

NEEDS = ("needs python3-matplotlib and python3-numpy, run with /usr/bin/python3 "
         "(apt-get install python3-matplotlib python3-numpy)")

# matplotlib's font cache goes to a folder of this run's, removed at exit, never $HOME.
if not os.environ.get("MPLCONFIGDIR"):
    os.environ["MPLCONFIGDIR"] = tempfile.mkdtemp(prefix="lockstorm-mpl.")
    atexit.register(shutil.rmtree, os.environ["MPLCONFIGDIR"], True)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    import lsdata  # noqa: E402 (imports numpy)
except ImportError as e:
    print("lockstorm: report: %s (%s)" % (NEEDS, e), file=sys.stderr)
    sys.exit(3)

MAX_TIMELINES = 4
# one colour per protocol slot of a mixed fleet (worker w runs protocol w mod n): fairness bars, the
# per-revision table's swatches
SLOT_COLORS = ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#000000"]
INV_STYLE = {"exclusion": "#c00000", "zombie-write": "#7b3294", "no-lost-writes": "#d95f02",
             "serial-updates": "#1b9e77", "own-release": "#e7298a", "liveness": "#000000",
             "state-intact": "#666666", "journal-seq": "#a6761d"}
MAX_LANES = 24

FAULT_STYLE = {  # kind -> (color, marker)
    "stall": ("#e69f00", "v"),
    "stop": ("#cc79a7", "s"),
    "crash": ("#d55e00", "X"),
    "killed": ("#7f2704", "P"),
    "watchdog-kill": ("#000000", "X"),
    "liveness": ("#000000", "*"),
    "errno": ("#0072b2", "o"),
    "short-write": ("#56b4e9", "D"),
}


def die(code, msg):
    print("lockstorm: report: %s" % msg, file=sys.stderr)
    sys.exit(code)


def plt_module():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        die(3, NEEDS)


def png(fig, plt):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def img(uri, alt):
    return '<img alt="%s" src="%s">' % (html.escape(alt), uri)


# ---- plots ----

MAX_MARKS = 3000   # markers per plot before they are thinned
MAX_SEGMENTS = 2000  # bars or lines per plot before touching ones are merged


def coalesce(lanes, starts, ends, eps):
    """Merge the intervals of each lane that overlap or lie within eps of each other (drawing 300k
    segments costs minutes; at the plot's resolution the merged ones look the same)."""
    import numpy as np
    lanes, starts, ends = np.asarray(lanes), np.asarray(starts, dtype=np.float64), np.asarray(ends, dtype=np.float64)
    out_l, out_s, out_e = [], [], []
    for lane in np.unique(lanes):
        m = lanes == lane
        order = np.argsort(starts[m], kind="stable")
        st, en = starts[m][order], ends[m][order]
        run = np.maximum.accumulate(en)
        new = np.ones(len(st), dtype=bool)
        new[1:] = st[1:] > run[:-1] + eps
        first = np.flatnonzero(new)
        last = np.append(first[1:] - 1, len(st) - 1)
        out_l.append(np.full(len(first), lane))
        out_s.append(st[first])
        out_e.append(run[last])
    if not out_l:
        return lanes[:0], starts[:0], ends[:0]
    return np.concatenate(out_l), np.concatenate(out_s), np.concatenate(out_e)


def thin(xs, ys):
    """At most MAX_MARKS evenly spaced points."""
    if len(xs) <= MAX_MARKS:
        return list(xs), list(ys)
    step = len(xs) / MAX_MARKS
    idx = [int(i * step) for i in range(MAX_MARKS)]
    return [xs[i] for i in idx], [ys[i] for i in idx]

def plot_throughput(run, plt):
    import numpy as np
    ops = run.ops_records()
    t = run.sec(ops["ns"]) if len(ops) else np.zeros(0)
    span = max(float(run.sec(run.t1)), 1e-3)
    nbins = int(min(120, max(10, span / 0.05)))
    edges = np.linspace(0, span, nbins + 1)
    counts, _ = np.histogram(t, bins=edges)
    width = edges[1] - edges[0]
    fig, ax = plt.subplots(figsize=(11, 3.6))
    ax.step(edges[:-1], counts / width, where="post", color="#333333", lw=1.2, label="ops/s")
    ax.fill_between(edges[:-1], counts / width, step="post", color="#99c2e0", alpha=0.6)
    ax.set_xlim(0, span)
    ax.set_xlabel("seconds since the first worker record")
    ax.set_ylabel("ops/s (%s)" % ("commits" if len(run.of("commit")) else "releases"))
    top = max(1.0, float((counts / width).max()) if len(counts) else 1.0)
    ax.set_ylim(-0.12 * top, top * 1.08)
    by_kind = {}
    for sec, w, kind, dur, point in run.faults():
        by_kind.setdefault(kind, []).append((sec, dur))
    for kind, ev in sorted(by_kind.items()):
        color, marker = FAULT_STYLE.get(kind, ("#999999", "|"))
        xs, ys = thin([e[0] for e in ev], [-0.06 * top] * len(ev))
        ax.plot(xs, ys, marker=marker, color=color, ms=6, ls="none", alpha=0.8, label="%s (%d)" % (kind, len(ev)))
        long_ = [e for e in ev if e[1] > 0]
        if long_:
            _, ls_, le_ = coalesce([0] * len(long_), [e[0] for e in long_], [e[0] + e[1] for e in long_],
                                   span / MAX_SEGMENTS)
            ax.hlines([-0.06 * top] * len(ls_), ls_, le_, color=color, lw=1, alpha=0.4)
    stop = run.of("stop")
    if len(stop):
        ax.axvline(float(run.sec(stop["ns"][0])), color="#666666", ls="--", lw=1, label="stop")
    # violations: each example at the first journal record it cites, above the curve
    for name, xs in sorted(violation_instants(run).items()):
        xs, ys = thin(xs, [top * 1.03] * len(xs))
        ax.plot(xs, ys, marker="v", color=INV_STYLE.get(name, "#c00000"), ms=8, ls="none", mec="#000000", mew=0.5,
                label="%s violation (%d shown)" % (name, len(xs)), zorder=5)
    ax.set_ylim(-0.12 * top, top * 1.12)
    ax.axhline(0, color="#bbbbbb", lw=0.8)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, framealpha=0.9)
    ax.set_title("Throughput over time (faults marked below the axis, violations above the curve)", fontsize=11)
    ax.grid(alpha=0.25)
    return png(fig, plt)


def violation_instants(run):
    """{invariant: [seconds]}: where each reported example happened (its first cited journal record)."""
    out = {}
    for inv in run.report["invariants"]:
        if not inv.get("applicable", True) or not inv["violations"]:
            continue
        for ex in inv.get("examples", []):
            ns = [run.ns_of_seq(q) for q in ex.get("seqs", []) if q]
            ns = [v for v in ns if v is not None]
            if ns:
                out.setdefault(inv["name"], []).append(float(run.sec(min(ns))))
    return out


def plot_latency(run, plt):
    import numpy as np
    thr = run.report["throughput"]
    waits = run.waits_ms()
    h = run.holds()
    holds = ((h["e"] - h["s"]) / 1e6)[h["ended"] >= 0]
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
    for ax, data, key, title, color in ((axes[0], waits, "wait_ms", "Acquire wait (last attempt to acquired)", "#0072b2"),
                                        (axes[1], holds, "hold_ms", "Hold time (acquired to release)", "#009e73")):
        d = thr.get(key, {})
        if len(data):
            lo = max(float(data.min()), 1e-3)
            hi = max(float(data.max()), lo * 10)
            bins = np.logspace(np.log10(lo), np.log10(hi), 50)
            ax.hist(np.clip(data, lo, None), bins=bins, color=color, alpha=0.75)
            ax.set_xscale("log")
            ax.set_yscale("log")
        else:
            ax.text(0.5, 0.5, "no samples", ha="center", transform=ax.transAxes)
        for q, ls in (("p50", "--"), ("p99", ":")):
            if d.get("n") and d.get(q, 0) > 0:
                ax.axvline(d[q], color="#d55e00", ls=ls, lw=1.5, label="%s %.3g ms" % (q, d[q]))
        ax.set_xlabel("ms (log)")
        ax.set_ylabel("count (log)")
        ax.set_title(title, fontsize=10)
        if d.get("n"):
            ax.legend(fontsize=8)
        ax.grid(alpha=0.25)
    fig.tight_layout()
    return png(fig, plt)


def fairness_counts(run):
    import numpy as np
    acq = run.of("acquired")
    return np.bincount(acq["worker"].astype(np.int64), minlength=run.workers)[: run.workers]


def plot_fairness(run, counts, plt):
    from matplotlib.patches import Patch
    fig, ax = plt.subplots(figsize=(11, 3.0))
    protos = run.report["config"]["protocols"]
    colors = SLOT_COLORS
    ax.bar(range(len(counts)), counts, color=[colors[w % len(protos) % len(colors)] for w in range(len(counts))])
    handles = []
    if len(protos) > 1:  # the legend of the colours: which revision each worker ran
        handles = [Patch(facecolor=colors[i % len(colors)], label=p) for i, p in enumerate(protos)]
    if len(counts):
        handles.append(ax.axhline(counts.max(), color="#666666", ls="--", lw=1, label="max %d" % counts.max()))
        handles.append(ax.axhline(counts.min(), color="#d55e00", ls=":", lw=1.5, label="min %d" % counts.min()))
    if handles:
        ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_xlabel("worker")
    ax.set_ylabel("acquisitions")
    if len(counts) <= 64:
        ax.set_xticks(range(len(counts)))
        ax.set_xticklabels(["w%d" % w for w in range(len(counts))], fontsize=7 if len(counts) > 16 else 9)
    ax.set_title("Acquisitions per worker" + (" (colour: the worker's revision)" if len(protos) > 1 else ""),
                 fontsize=10)
    ax.grid(alpha=0.25, axis="y")
    return png(fig, plt)


def pick_examples(rep):
    """Violations that cite journal records, round robin over the failing invariants (first examples first)."""
    lists = [(inv["name"], [e for e in inv.get("examples", []) if any(e.get("seqs", []))])
             for inv in rep["invariants"] if inv.get("applicable", True) and inv["violations"]]
    out, k = [], 0
    while any(k < len(ex) for _, ex in lists):
        for name, ex in lists:
            if k < len(ex):
                out.append((name, ex[k]))
        k += 1
    return out


def swimlane_window(run, holds, ex):
    """(lo ns, hi ns, cited instants, named workers) around an example, or None if it cites no record."""
    import numpy as np
    marks = [run.ns_of_seq(s) for s in ex.get("seqs", []) if s]
    marks = [m for m in marks if m is not None]
    if not marks:
        return None
    lo, hi = min(marks), max(marks)
    # widen to the holds of the workers the example names that contain a cited instant
    involved = [w for w in ex.get("workers", []) if w >= 0]
    for m in marks:
        hit = np.isin(holds["w"], involved) & (holds["s"] <= m) & (holds["e"] >= m)
        if hit.any():
            lo, hi = min(lo, int(holds["s"][hit].min())), max(hi, int(holds["e"][hit].max()))
    span = max(hi - lo, 1_000_000)
    return max(lo - span // 4, run.t0), hi + span // 4, marks, involved


def overlaps(starts, ends):
    """The stretches [(a, b)] where two or more of the intervals [starts[i], ends[i]] overlap (a sweep)."""
    ev = sorted([(x, 1) for x in starts] + [(x, -1) for x in ends], key=lambda e: (e[0], e[1]))
    out, depth, begin = [], 0, None
    for x, d in ev:
        depth += d
        if depth >= 2 and begin is None:
            begin = x
        elif depth < 2 and begin is not None:
            if x > begin:
                out.append((begin, x))
            begin = None
    return out


def plot_swimlane(run, holds, waits, faults, window, inv, ex, plt):
    import textwrap
    from matplotlib.patches import Rectangle
    import numpy as np
    lo, hi, marks, involved = window
    inh = (holds["e"] >= lo) & (holds["s"] <= hi)
    inw = (waits["e"] >= lo) & (waits["s"] <= hi)
    active = sorted(set(holds["w"][inh].tolist()) | set(waits["w"][inw].tolist()) | set(involved))
    if len(active) > MAX_LANES:
        keep = set(involved)
        for w in active:
            if len(keep) >= MAX_LANES:
                break
            keep.add(w)
        active = sorted(keep)
    lane = {w: i for i, w in enumerate(active)}
    scale = 1e6  # ms
    x = lambda ns: (ns - lo) / scale  # noqa: E731
    fig, ax = plt.subplots(figsize=(11, 0.9 + 0.42 * max(len(active), 2)))
    width = (hi - lo) / scale
    hw, hs, he, hop = (holds[k][inh].tolist() for k in ("w", "s", "e", "op"))
    keep = [i for i, w in enumerate(hw) if w in lane]
    hw, hs, he, hop = [hw[i] for i in keep], [hs[i] for i in keep], [he[i] for i in keep], [hop[i] for i in keep]
    hx0, hx1 = [x(max(v, lo)) for v in hs], [x(min(v, hi)) for v in he]
    if len(hw) > MAX_SEGMENTS:  # too many to tell apart: merge the touching ones, no labels
        hw, hx0, hx1 = (v.tolist() for v in coalesce(hw, hx0, hx1, width / MAX_SEGMENTS))
        hop = None
    bars = {}
    for i, w in enumerate(hw):
        bars.setdefault(w, []).append((hx0[i], hx1[i] - hx0[i]))
        if hop is not None and hx1[i] - hx0[i] > width * 0.06 and hs[i] >= lo:
            ax.text(hx0[i] + width * 0.004, lane[w], "op %d" % hop[i], va="center", fontsize=7, color="white",
                    zorder=3)
    for w, segs in bars.items():
        ax.broken_barh(segs, (lane[w] - 0.32, 0.64), facecolors="#d55e00" if w in involved else "#7fa7c9",
                       edgecolors="#333333", linewidth=0.5, alpha=0.85, zorder=2)
    # overlaps: the stretches where two or more workers held at once (legal reclaims included: the
    # invariants say which were violations), shaded across every lane
    spans = overlaps(hx0, hx1)
    for a, b in spans:
        ax.axvspan(a, b, color="#ff4d4d", alpha=0.18, lw=0, zorder=0)
    if spans:
        ax.add_patch(Rectangle((0, 0), 0, 0, facecolor="#ff4d4d", alpha=0.3, lw=0,
                               label="2+ holders at once (%d)" % len(spans)))
    ww = [w for w in waits["w"][inw].tolist()]
    wsel = [i for i, w in enumerate(ww) if w in lane]
    if wsel:
        wx0 = [x(max(v, lo)) for v in waits["s"][inw].tolist()]
        wx1 = [x(min(v, hi)) for v in waits["e"][inw].tolist()]
        wl_, ws_, we_ = coalesce([lane[ww[i]] for i in wsel], [wx0[i] for i in wsel], [wx1[i] for i in wsel],
                                 width / MAX_SEGMENTS)
        ax.hlines(wl_, ws_, we_, color="#888888", lw=1, alpha=0.8, zorder=1)
    ax.plot([], [], color="#888888", lw=1, label="waiting")
    ax.add_patch(Rectangle((0, 0), 0, 0, facecolor="#d55e00", edgecolor="#333333", lw=0.5, label="hold (named)"))
    ax.add_patch(Rectangle((0, 0), 0, 0, facecolor="#7fa7c9", edgecolor="#333333", lw=0.5, label="hold"))
    by_kind = {}
    for sec, w, kind, dur, point in faults:
        ns = run.t0 + sec * 1e9
        if w in lane and ns + dur * 1e9 >= lo and ns <= hi:
            by_kind.setdefault(kind, []).append((lane[w] + 0.42, x(max(ns, lo)), x(min(ns + dur * 1e9, hi)), dur))
    for kind, ev in sorted(by_kind.items()):
        color, marker = FAULT_STYLE.get(kind, ("#999999", "|"))
        xs, ys = thin([e[1] for e in ev], [e[0] for e in ev])
        ax.plot(xs, ys, marker=marker, color=color, ms=7, ls="none", label=kind, zorder=4)
        long_ = [e for e in ev if e[3] > 0]
        if long_:
            fl, fs, fe = coalesce([e[0] for e in long_], [e[1] for e in long_], [e[2] for e in long_],
                                  width / MAX_SEGMENTS)
            ax.hlines(fl, fs, fe, color=color, lw=2, alpha=0.6, zorder=4)
    commits = run.of("commit")
    sel = commits[(commits["ns"] >= lo) & (commits["ns"] <= hi)]
    cw, cns = sel["worker"].tolist(), sel["ns"].tolist()
    cx = [x(t) for w, t in zip(cw, cns) if w in lane]
    cy = [lane[w] for w in cw if w in lane]
    if cx:
        cx, cy = thin(cx, cy)
        ax.plot(cx, cy, "o", color="white", mec="#000000", ms=4, ls="none", label="commit")
    for i, m in enumerate(marks):
        ax.axvline(x(m), color="#c00000", lw=1.2, ls="--", label="cited records" if i == 0 else None)
    ax.set_yticks(range(len(active)))
    ax.set_yticklabels(["w%d" % w for w in active])
    for t in ax.get_yticklabels():
        if int(t.get_text()[1:]) in involved:
            t.set_color("#c00000")
            t.set_fontweight("bold")
    ax.set_ylim(-0.7, len(active) - 0.3)
    ax.invert_yaxis()
    ax.set_xlim(0, (hi - lo) / scale)
    ax.set_xlabel("ms from %.3f s into the run" % ((lo - run.t0) / 1e9))
    ax.set_title(inv + ": " + "\n".join(textwrap.wrap(ex.get("text", ""), 140)), fontsize=9, loc="left")
    ax.grid(alpha=0.25, axis="x")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return png(fig, plt)


# ---- page ----

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#222;background:#fafafa}
main{max-width:1180px;margin:0 auto;padding:0 20px 40px}
header{padding:18px 24px;color:#fff}
header.v-pass{background:#1b7f3b} header.v-fail{background:#b3261e}
header h1{margin:0;font-size:28px} header p{margin:4px 0 0;font-size:15px;opacity:.95}
header code{background:rgba(255,255,255,.18);color:#fff}
section{background:#fff;border:1px solid #ddd;border-radius:6px;margin:18px 0;padding:12px 18px}
h2{font-size:18px;margin:4px 0 10px} h3{font-size:14px;margin:14px 0 6px}
table{border-collapse:collapse;font-size:13px;width:100%}
th,td{border-bottom:1px solid #eee;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f3} td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.ok{color:#1b7f3b;font-weight:600} .fail{color:#b3261e;font-weight:700} .na{color:#888}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;background:#f3f3f3;padding:1px 3px}
img{max-width:100%;display:block;margin:6px 0}
ul.ex{margin:0;padding-left:16px} ul.ex li{font-size:12px;margin:2px 0}
.note{color:#666;font-size:12px}
.sw{display:inline-block;width:12px;height:12px;margin-right:6px;vertical-align:-1px;border:1px solid #333}
"""


def esc(s):
    return html.escape(str(s))


def revision_table(rep):
    """A mixed fleet's per-revision rows (report.json by_revision), each with its colour swatch; '' for one."""
    rows = rep.get("by_revision") or []
    if len(rows) < 2:
        return ""
    keys = [("workers", "workers"), ("attempts", "attempts"), ("acquired", "acquired"), ("committed", "committed"),
            ("busy", "busy"), ("errors", "errors"), ("lost", "lost"), ("crashes", "crashes"), ("stalls", "stalls")]
    out = ['<section id="revisions"><h2>Per revision (mixed fleet)</h2><p class="note">Worker w runs revision '
           'w mod %d; the swatch is its colour in the fairness plot. Violations: those whose examples name a '
           'worker of the revision.</p><table><tr><th>revision</th>' % len(rows)]
    out += ['<th class="num">%s</th>' % esc(h) for _, h in keys]
    out.append('<th class="num">ops/s</th><th class="num">violations</th></tr>')
    for i, r in enumerate(rows):
        out.append('<tr><td><span class="sw" style="background:%s"></span>%s</td>' % (
            SLOT_COLORS[i % len(SLOT_COLORS)], esc(r.get("protocol", "?"))))
        out += ['<td class="num">%d</td>' % r.get(k, 0) for k, _ in keys]
        v = r.get("violations", 0)
        out.append('<td class="num">%.1f</td><td class="num %s">%d</td></tr>' % (
            r.get("ops_per_s", 0.0), "fail" if v else "ok", v))
    out.append("</table></section>")
    return "".join(out)


def shown_path(path, page):
    """PATH as the page shows it: relative to the folder the page is written to (no absolute work paths)."""
    base = os.path.dirname(os.path.abspath(page)) if page else os.getcwd()
    rel = os.path.relpath(os.path.abspath(path), base)
    return rel if rel != "." else "."


def render_html(run, title=None, page=None):
    plt = plt_module()
    rep, cfg = run.report, run.config
    fails = lsdata.failing(rep)
    verdict = rep.get("verdict", "fail").upper()
    tot, thr = rep["totals"], rep["throughput"]
    c = rep["config"]
    out = []
    w = out.append
    w("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
    w("<title>%s</title><style>%s</style></head><body>" % (esc(title or "lockstorm report: " + verdict), CSS))
    w('<header id="verdict" class="%s"><h1>%s</h1><p>%s</p><p>%s</p></header><main>' % (
        "v-pass" if verdict == "PASS" else "v-fail",
        "PASS: every invariant held" if verdict == "PASS" else "FAIL: " + esc(", ".join(fails) or "see below"),
        esc(lsdata.describe_config(rep, cfg)),
        "re-derive the verdict: <code>lockstorm check %s</code>" % esc(shown_path(run.outdir, page))))

    # config
    dur = "%.1f s" % (c["duration_ms"] / 1000.0) if c.get("duration_ms") else "%d ops" % c.get("ops", 0)
    rows = [("protocols", ", ".join(c["protocols"])), ("workload", c["workload"]), ("workers", c["workers"]),
            ("length", dur), ("seed", c["seed"]), ("time scale", "%g" % c["time_scale"]),
            ("fault profile", cfg.get("fault_profile") or "-"),
            ("faults", "<br>".join("<code>%s</code>" % esc(f) for f in c.get("faults", [])) or "none"),
            ("params", "<br>".join("<code>%s</code>" % esc(p) for p in c.get("params", [])) or "defaults"),
            ("respawn", "yes" if c.get("respawn") else "no"),
            ("totals", ", ".join("%s %d" % (k, v) for k, v in tot.items())),
            ("throughput", "%.1f ops/s, %d ops over %.2f s" % (thr["ops_per_s"], thr["ops"], thr["elapsed_s"]))]
    if rep.get("fs_calls"):
        rows.append(("fs calls", ", ".join("%s %d" % kv for kv in rep["fs_calls"].items())))
    if rep.get("online_breaches"):
        rows.append(("online", "%d overlapping holds seen the instant they happened (legal reclaims and dead "
                               "holders included; the verdict is the checker's)" % rep["online_breaches"]))
    if rep.get("torn_bytes") or run.torn:
        rows.append(("journals", "%d torn bytes skipped at journal tails" % max(rep.get("torn_bytes", 0), run.torn)))
    w('<section id="config"><h2>Configuration</h2><table>')
    for k, v in rows:
        safe = v if k in ("faults", "params") else esc(v)
        w("<tr><th style=\"width:140px\">%s</th><td>%s</td></tr>" % (esc(k), safe))
    w("</table></section>")

    w(revision_table(rep))

    # invariants
    w('<section id="invariants"><h2>Invariants</h2><table><tr><th>invariant</th><th>result</th>'
      '<th class="num">violations</th><th>examples</th></tr>')
    for inv in rep["invariants"]:
        if not inv.get("applicable", True):
            w('<tr><td>%s</td><td class="na">n/a</td><td class="num">-</td><td class="na">the workload does not '
              'exercise it</td></tr>' % esc(inv["name"]))
            continue
        bad = inv["violations"] > 0
        exs = "".join("<li>%s</li>" % esc(e["text"]) for e in inv.get("examples", []))
        w('<tr><td>%s</td><td class="%s">%s</td><td class="num">%d</td><td>%s</td></tr>' % (
            esc(inv["name"]), "fail" if bad else "ok", "FAIL" if bad else "ok", inv["violations"],
            '<ul class="ex">%s</ul>' % exs if exs else ""))
    w("</table></section>")

    w('<section id="throughput"><h2>Throughput over time</h2>%s<p class="note">Markers below the axis are '
      'injected faults (a line after a stall or stop shows its length) and driver kills; the dashed line is the '
      'stop; triangles above the curve are violations, one colour per invariant, each reported example at the '
      'first journal record it cites.</p></section>' % img(plot_throughput(run, plt), "throughput over time"))

    wd, hd = thr["wait_ms"], thr["hold_ms"]
    w('<section id="latency"><h2>Acquire wait and hold time</h2>%s<table><tr><th></th><th class="num">p50 ms</th>'
      '<th class="num">p99 ms</th><th class="num">max ms</th><th class="num">samples</th></tr>'
      % img(plot_latency(run, plt), "wait and hold histograms"))
    for name, d in (("acquire wait", wd), ("hold", hd)):
        w('<tr><td>%s</td><td class="num">%.3f</td><td class="num">%.3f</td><td class="num">%.3f</td>'
          '<td class="num">%d</td></tr>' % (name, d["p50"], d["p99"], d["max"], d["n"]))
    w("</table></section>")

    counts = fairness_counts(run)
    if len(counts):
        mn, mx = int(counts.min()), int(counts.max())
        ratio = ("%.2f" % (mx / mn)) if mn else "inf (a worker never acquired)"
        summary = "min %d (w%d), max %d (w%d), max/min %s" % (mn, int(counts.argmin()), mx, int(counts.argmax()), ratio)
    else:
        summary = "no acquisitions"
    w('<section id="fairness"><h2>Per-worker fairness</h2><p>Acquisitions per worker: %s.</p>%s</section>'
      % (esc(summary), img(plot_fairness(run, counts, plt), "acquisitions per worker")))

    w('<section id="timeline"><h2>Timeline around violations</h2>')
    picks = pick_examples(rep)
    if not picks:
        w("<p>%s</p>" % ("No violations: nothing to show." if not fails else
                         "The violations found cite no journal records (e.g. the final state): see the invariants table."))
    else:
        w('<p class="note">One lane per worker; bars are holds (acquired to release-begin, or death), red lanes '
          'are the workers the example names, markers are faults (a line after a stall shows its length), circles '
          'are commits, grey lines are acquire attempts waiting, dashed red lines the records the example cites.</p>')
        holds, waits, faults = run.holds(), run.waits(), run.faults()
        shown = []  # [lo, hi, inv, ex, window, [(inv, ex) also in this stretch]]
        for inv, ex in picks:
            win = swimlane_window(run, holds, ex)
            if not win:
                continue
            same = [sh for sh in shown if all(sh[0] <= m <= sh[1] for m in win[2])]
            if same:  # the same stretch as a timeline already chosen (e.g. a zombie write and its serial-updates twin)
                if len(same[0][5]) < 3 and inv not in [a[0] for a in same[0][5]] + [same[0][2]]:
                    same[0][5].append((inv, ex))
                continue
            if len(shown) < MAX_TIMELINES:
                shown.append([win[0], win[1], inv, ex, win, []])
        for lo, hi, inv, ex, win, also in shown:
            w("<h3>%s</h3><p>%s</p>" % (esc(inv), esc(ex["text"])))
            for ainv, aex in also:
                w('<p class="note">also in this stretch: <b>%s</b>: %s</p>' % (esc(ainv), esc(aex["text"])))
            w(img(plot_swimlane(run, holds, waits, faults, win, inv, ex, plt), "timeline: " + inv))
    w("</section>")
    w('<p class="note">lockstorm report of %s (relative to this page)</p></main></body></html>\n' % esc(
        shown_path(run.outdir, page)))
    return "".join(out)


def render_markdown(run):
    rep = run.report
    fails = lsdata.failing(rep)
    thr = rep["throughput"]
    verdict = rep.get("verdict", "fail").upper()
    lines = ["### lockstorm: %s%s" % (verdict, (" (" + ", ".join(fails) + ")") if fails else ""), "",
             lsdata.describe_config(rep, run.config), "",
             "| invariant | result | violations | first example |", "|---|---|---:|---|"]
    for inv in rep["invariants"]:
        if not inv.get("applicable", True):
            lines.append("| %s | n/a | - | |" % inv["name"])
            continue
        ex = inv["examples"][0]["text"] if inv.get("examples") else ""
        lines.append("| %s | %s | %d | %s |" % (inv["name"], "**FAIL**" if inv["violations"] else "ok",
                                               inv["violations"], ex.replace("|", "\\|")))
    t = rep["totals"]
    lines += ["", "%.1f ops/s over %.2f s; wait p50 %.3f p99 %.3f ms; hold p50 %.3f p99 %.3f ms; "
              "%d reclaims, %d lost, %d errors, %d crashes, %d stalls" % (
                  thr["ops_per_s"], thr["elapsed_s"], thr["wait_ms"]["p50"], thr["wait_ms"]["p99"],
                  thr["hold_ms"]["p50"], thr["hold_ms"]["p99"], t["reclaims"], t["lost"], t["errors"],
                  t["crashes"], t["stalls"]), ""]
    return "\n".join(lines)


def write(path, text):
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError as e:
        die(2, "cannot write %s: %s" % (path, e.strerror))


def main(argv):
    ap = argparse.ArgumentParser(prog="lockstorm report", description="HTML and markdown report of a kept run")
    ap.add_argument("outdir")
    ap.add_argument("--html")
    ap.add_argument("--markdown")
    ap.add_argument("--title")
    try:
        a = ap.parse_args(argv)
    except SystemExit as e:
        sys.exit(0 if e.code == 0 else 2)
    if not a.html and not a.markdown:
        die(2, "want --html FILE and/or --markdown FILE")
    try:
        run = lsdata.Run(a.outdir)
    except lsdata.BadInput as e:
        die(2, str(e))
    if a.html:
        write(a.html, render_html(run, a.title, a.html))
    if a.markdown:
        write(a.markdown, render_markdown(run))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (KeyError, TypeError, ValueError) as e:
        die(2, "%s: unexpected content in report.json/run.json (%s: %s)" % (
            sys.argv[1] if len(sys.argv) > 1 else "?", type(e).__name__, e))
    except ImportError as e:
        die(3, "%s (%s)" % (NEEDS, e))
    except Exception as e:  # a bug of the script: one line, exit 3 (never 1, "a violation")
        if os.environ.get("LOCKSTORM_DEBUG"):
            raise
        die(3, "the report script failed: %s: %s (LOCKSTORM_DEBUG=1 shows the traceback)" % (type(e).__name__, e))
