/*
 * integ_report.cc - `lockstorm report OUTDIR --html FILE --markdown FILE` end to end.
 *
 * A real run (the `none` control under the stalls profile, time constants
 * scaled by 0.01, so it has faults to mark and violations to draw) is
 * rendered; the page must be self-contained (no external src, href, url()
 * or import), carry every section, and open in headless Chromium.  Nothing
 * here sleeps or asserts on timing.
 */
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "testutil.h"

static const std::string BIN = LOCKSTORM_BIN;

/* A kept run with violations and injected faults in DIR/out. */
static void kept_run(const ScratchDir &d)
{
	CmdResult r = run_cmd(BIN + " run -p none -n 8 -d 600ms --faults stalls --time-scale 0.01 -q -o " +
			      d.sub("out"));
	ASSERT_EQ(r.status, 1) << r.out << r.err;
}

static size_t count(const std::string &s, const std::string &what)
{
	size_t n = 0;
	for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1))
		n++;
	return n;
}

TEST(Report, HtmlIsSelfContainedAndHasEverySection)
{
	ScratchDir d;
	kept_run(d);
	CmdResult r = run_cmd(BIN + " report " + d.sub("out") + " --html " + d.sub("r.html") + " --markdown " +
			      d.sub("r.md"));
	ASSERT_EQ(r.status, 0) << r.err;
	std::string html = slurp(d.sub("r.html"));
	ASSERT_FALSE(html.empty());
	EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
	EXPECT_NE(html.find("</html>"), std::string::npos);
	for (const char *id : { "verdict", "config", "invariants", "throughput", "latency", "fairness", "timeline" })
		EXPECT_NE(html.find(std::string("id=\"") + id + "\""), std::string::npos) << "section " << id;

	/* self-contained: every src is an inlined PNG; nothing to fetch */
	size_t imgs = 0;
	for (size_t p = html.find("src=\""); p != std::string::npos; p = html.find("src=\"", p + 1)) {
		size_t end = html.find('"', p + 5);
		ASSERT_NE(end, std::string::npos);
		std::string v = html.substr(p + 5, end - p - 5);
		EXPECT_EQ(v.rfind("data:image/png;base64,iVBORw0KGgo", 0), 0u) << v.substr(0, 80);
		imgs++;
	}
	EXPECT_GE(imgs, 4u); /* throughput, latency, fairness, at least one timeline */
	EXPECT_EQ(count(html, "<img"), imgs);
	EXPECT_EQ(count(html, "href="), 0u);
	EXPECT_EQ(count(html, "url("), 0u);
	EXPECT_EQ(count(html, "@import"), 0u);
	EXPECT_EQ(count(html, "<script"), 0u);
	EXPECT_EQ(count(html, "<link"), 0u);
	EXPECT_EQ(count(html, "http://") + count(html, "https://"), 0u);

	/* what the sections say */
	EXPECT_NE(html.find("FAIL: exclusion"), std::string::npos);
	EXPECT_NE(html.find("stall@"), std::string::npos);                    /* config: the fault plan */
	EXPECT_NE(html.find("alt=\"timeline: exclusion\""), std::string::npos); /* a swimlane */
	EXPECT_NE(html.find("max/min"), std::string::npos);                   /* fairness */
	EXPECT_NE(html.find("p99"), std::string::npos);

	std::string md = slurp(d.sub("r.md"));
	EXPECT_NE(md.find("### lockstorm: FAIL (exclusion"), std::string::npos) << md;
	EXPECT_NE(md.find("| exclusion | **FAIL** |"), std::string::npos) << md;
	EXPECT_NE(md.find("ops/s"), std::string::npos) << md;
}

TEST(Report, PassingRunAndMarkdownOnly)
{
	ScratchDir d;
	CmdResult r = run_cmd(BIN + " run -p flock -w hold -n 3 --ops 300 -q -o " + d.sub("out"));
	ASSERT_EQ(r.status, 0) << r.out << r.err;
	r = run_cmd(BIN + " report " + d.sub("out") + " --markdown " + d.sub("r.md"));
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_NE(slurp(d.sub("r.md")).find("### lockstorm: PASS"), std::string::npos);
	r = run_cmd(BIN + " report " + d.sub("out") + " --html " + d.sub("r.html"));
	ASSERT_EQ(r.status, 0) << r.err;
	std::string html = slurp(d.sub("r.html"));
	EXPECT_NE(html.find("PASS: every invariant held"), std::string::npos);
	EXPECT_NE(html.find("No violations"), std::string::npos);
}

TEST(Report, BadOutdirExits2WithOneLine)
{
	ScratchDir d;
	for (const std::string &args : std::vector<std::string>{ " report " + d.sub("missing") + " --html " + d.sub("x.html"),
					 " report " + d.path + " --html " + d.sub("x.html"),
					 " report " + d.path, " report", " report " + d.path + " --bogus" }) {
		CmdResult r = run_cmd(BIN + args);
		EXPECT_EQ(r.status, 2) << args << ": " << r.err;
		EXPECT_EQ(count(r.err, "\n"), 1u) << args << ": " << r.err;
		EXPECT_EQ(r.err.rfind("lockstorm: report: ", 0), 0u) << r.err;
	}
	struct stat st;
	EXPECT_NE(stat(d.sub("x.html").c_str(), &st), 0);
}

/* The page opens in a real browser: headless Chromium (Debian `chromium`,
 * installed by ./ci/setup) renders it to a screenshot. */
TEST(Report, ChromiumRendersAScreenshot)
{
	CmdResult which = run_cmd("(command -v chromium || command -v chromium-browser)");
	if (which.status != 0 || which.out.empty())
		GTEST_SKIP() << "chromium is not installed (./ci/setup installs Debian's chromium)";
	std::string chromium = which.out.substr(0, which.out.find('\n'));
	ScratchDir d;
	kept_run(d);
	CmdResult r = run_cmd(BIN + " report " + d.sub("out") + " --html " + d.sub("r.html"));
	ASSERT_EQ(r.status, 0) << r.err;
	mkdir(d.sub("profile").c_str(), 0700);
	r = run_cmd("timeout 120 " + chromium +
		    " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
		    " --disable-background-networking --disable-component-update --disable-sync --disable-dev-shm-usage"
		    " --user-data-dir=" + d.sub("profile") + " --screenshot=" + d.sub("shot.png") +
		    " --window-size=1280,2000 file://" + d.sub("r.html"));
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(r.err.find("net::ERR_"), std::string::npos) << r.err;
	std::string png = slurp(d.sub("shot.png"));
	ASSERT_GT(png.size(), 10000u) << r.out << r.err;
	EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}

/* Without numpy (shadowed here by a module that refuses to import), the
 * report says what to install in one line and exits 3, not 1 ("a
 * violation") with a traceback; matplotlib's cache never goes to $HOME. */
TEST(Report, MissingModulesFailInOneLineAndHomeStaysClean)
{
	ScratchDir d;
	CmdResult r = run_cmd(BIN + " run -p flock -w hold -n 2 --ops 50 -q -o " + d.sub("out"));
	ASSERT_EQ(r.status, 0) << r.out << r.err;
	ASSERT_EQ(run_cmd("mkdir -p " + d.sub("shadow/numpy") + " " + d.sub("home")).status, 0);
	put(d.sub("shadow/numpy/__init__.py"), "raise ImportError('No module named numpy')\n");
	r = run_cmd("env PYTHONPATH=" + d.sub("shadow") + " " + BIN + " report " + d.sub("out") + " --markdown " +
		    d.sub("r.md"));
	EXPECT_EQ(r.status, 3) << r.err;
	EXPECT_EQ(count(r.err, "\n"), 1u) << r.err;
	EXPECT_NE(r.err.find("needs python3-matplotlib and python3-numpy"), std::string::npos) << r.err;
	EXPECT_EQ(r.err.find("Traceback"), std::string::npos) << r.err;

	r = run_cmd("env -u XDG_CONFIG_HOME -u XDG_CACHE_HOME -u MPLCONFIGDIR HOME=" + d.sub("home") + " " + BIN + " report " +
		    d.sub("out") + " --html " + d.sub("r.html"));
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(entries(d.sub("home")), std::vector<std::string>{}) << "matplotlib wrote into $HOME";
}

/* A mixed fleet's page: a per-revision table with each revision's colour swatch, a legend of the
 * fairness colours; the violations marked on the throughput plot; no absolute work path anywhere
 * (the kept run is named relative to the page's folder). */
TEST(Report, MixedFleetHasARevisionTableAndNoAbsolutePaths)
{
	ScratchDir d;
	CmdResult r = run_cmd(BIN + " run -p none,flock -n 4 -d 600ms --faults stalls --time-scale 0.01 -q -o " +
			      d.sub("out"));
	ASSERT_EQ(r.status, 1) << r.out << r.err;
	mkdir(d.sub("pages").c_str(), 0700);
	r = run_cmd("cd " + d.path + " && " + BIN + " report out --html pages/r.html");
	ASSERT_EQ(r.status, 0) << r.err;
	std::string html = slurp(d.sub("pages/r.html"));
	size_t at = html.find("<section id=\"revisions\">");
	ASSERT_NE(at, std::string::npos);
	std::string table = html.substr(at, html.find("</section>", at) - at);
	EXPECT_NE(table.find("class=\"sw\""), std::string::npos);
	EXPECT_NE(table.find(">none</td>"), std::string::npos) << table;
	EXPECT_NE(table.find(">flock</td>"), std::string::npos) << table;
	EXPECT_NE(html.find("lockstorm check ../out"), std::string::npos);
	EXPECT_EQ(html.find(d.path), std::string::npos) << "an absolute work path on the page";
	EXPECT_NE(html.find("triangles above the curve are violations"), std::string::npos);
	/* one revision: no table */
	r = run_cmd(BIN + " run -p flock -n 2 --ops 40 -q -o " + d.sub("one"));
	ASSERT_EQ(r.status, 0) << r.err;
	r = run_cmd(BIN + " report " + d.sub("one") + " --html " + d.sub("one.html"));
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(slurp(d.sub("one.html")).find("id=\"revisions\""), std::string::npos);
}
