/*
 * integ_scenario.cc - `lockstorm scenario` end to end: the library under
 * scenarios/ runs as expected (this is how every scenario runs in ./ci/test),
 * a scenario pointed at the wrong expectation exits 1 naming the invariant,
 * `scenario new --from-run` turns a failing kept run into a scenario that
 * reproduces it, and a malformed file exits 2 with file:line.
 *
 * The configurations in the temporary scenarios are the ones the other
 * integration tests prove (K-ML-2 in integ_run.cc, K-VL-3 in
 * integ_volter.cc, K-ML-4 in integ_faults.cc).  Nothing here sleeps or
 * asserts on timing.
 */
#include <gtest/gtest.h>
#include <jansson.h>
#include <string.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "testutil.h"

static const std::string BIN = LOCKSTORM_BIN;

static CmdResult lockstorm(const std::string &args)
{
	return run_cmd(BIN + " " + args);
}

static void write_file(const std::string &path, const std::string &text)
{
	std::ofstream f(path);
	f << text;
}

static size_t count_lines(const std::string &s)
{
	size_t n = 0;
	for (char c : s)
		n += c == '\n';
	return n;
}

/* The per-revision lines of scenario NAME in OUT: "NAME  REVISION  ok  1.0s  expect ..  got ..". */
static std::vector<std::string> lines_of(const std::string &out, const std::string &name)
{
	std::vector<std::string> v;
	std::istringstream in(out);
	std::string line;
	while (std::getline(in, line))
		if (line.compare(0, name.size() + 1, name + " ") == 0 && line.find("  expect ") != std::string::npos)
			v.push_back(line);
	return v;
}

/* The library: every scenario, every revision, as expected. */
TEST(IntegScenario, TheWholeLibraryRunsAsExpected)
{
	ScratchDir d;
	CmdResult list = lockstorm("scenario list");
	ASSERT_EQ(list.status, 0) << list.err;
	CmdResult r = run_cmd("TMPDIR=" + d.path + " " + BIN + " scenario run --all -q");
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	EXPECT_NE(r.out.find("every revision as expected"), std::string::npos) << r.out;
	EXPECT_EQ(r.out.find("MISMATCH"), std::string::npos) << r.out;
	EXPECT_EQ(r.out.find("ERROR"), std::string::npos) << r.out;
	/* one scenario per known bad interleaving (PROTOCOLS.md K-ML-1..4, K-VL-1..6, K-JL-1..3) */
	for (const char *name : { "two-reclaimers", "paused-holder-writes", "swept-namespace-folder",
				  "windows-delete-pending", "empty-record-lock", "leftover-recovery", "waits-on-itself",
				  "same-pid-earlier-process", "carried-over-restore", "record-write-enospc",
				  "duplicate-seqs", "readers-write-snapshot", "quadratic-replay" }) {
		EXPECT_NE(list.out.find(name), std::string::npos) << name;
		std::vector<std::string> lines = lines_of(r.out, name);
		EXPECT_GE(lines.size(), 1u) << name << "\n" << r.out;
		for (const std::string &l : lines) {
			EXPECT_NE(l.find(" ok "), std::string::npos) << l;
			EXPECT_NE(l.find("expect "), std::string::npos) << l;
			EXPECT_NE(l.find("got "), std::string::npos) << l;
		}
	}
	/* the old revision side by side with the new one, with its invariant */
	std::vector<std::string> erl = lines_of(r.out, "empty-record-lock");
	ASSERT_EQ(erl.size(), 2u) << r.out;
	EXPECT_NE(erl[0].find("got FAIL (liveness)"), std::string::npos) << erl[0];
	EXPECT_NE(erl[1].find("got PASS"), std::string::npos) << erl[1];
	/* nothing left in TMPDIR: reports and logs are removed without -o */
	CmdResult ls = run_cmd("ls -A " + d.path);
	EXPECT_EQ(ls.out, "") << ls.out;
}

static std::string legacy_stalls(int seed)
{
	return "-w update\n"
	       "-n 8\n"
	       "--ops 300\n"
	       "--time-scale 0.01\n"
	       "-s " + std::to_string(seed) + "\n"
	       "--fault stall@update/write/after-read:p=0.05,for=1.5stale\n";
}

/* An old bug come back: the legacy revision where the scenario expects a pass.  A pass is
 * judged by one torture run, and whether that run shows K-ML-2 (a stalled holder's write after
 * its reclaim) is the machine's timing: a bounded list of seeds, one scenario file each, until
 * one's run breaks zombie-write (paused-holder-writes.cex.json shows it exactly). */
TEST(IntegScenario, LegacyRevisionExpectedToPassExits1NamingTheInvariant)
{
	ScratchDir d;
	CmdResult r;
	std::string seen;
	int seed = first_seed_showing({ 7, 1, 2, 3, 4, 5 }, [&](int s, std::string *said) {
		std::string f = d.sub("regressed-" + std::to_string(s) + ".scenario");
		write_file(f, std::string("name regressed\n"
					  "story beta.5 pretending to be the fixed revision\n"
					  "revision beta.5 mkdir-legacy\n"
					  "expect beta.5 pass\n") + legacy_stalls(s));
		r = lockstorm("scenario run " + f);
		*said = "exit " + std::to_string(r.status) + "\n" + r.out + r.err;
		return r.status == 1 && r.out.find("MISMATCH") != std::string::npos &&
		       r.out.find("zombie-write") != std::string::npos;
	}, &seen);
	ASSERT_NE(seed, -1) << "no seed of the list broke zombie-write:\n" << seen;
	EXPECT_EQ(r.status, 1) << r.out << r.err;
	std::vector<std::string> lines = lines_of(r.out, "regressed");
	ASSERT_EQ(lines.size(), 1u) << r.out;
	EXPECT_NE(lines[0].find("MISMATCH"), std::string::npos) << lines[0];
	EXPECT_NE(r.out.find("zombie-write"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("broke"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("regressed beta.5: expected every invariant to hold"), std::string::npos) << r.out;
}

/* The other way round: a fixed revision where a failure is expected. */
TEST(IntegScenario, FixedRevisionExpectedToFailExits1NamingTheInvariantThatHeld)
{
	ScratchDir d;
	std::string f = d.sub("fixed.scenario");
	write_file(f, "name fixed\n"
		      "revision 2.0.0-win32 mkdir-owner\n"
		      "expect 2.0.0-win32 fail liveness\n"
		      "-w hold\n-n 1\n--ops 1\n--time-scale 0.01\n"
		      "--param form=try\n--param platform=win32\n"
		      "--fault errno@fs/mkdir:nth=1,err=EPERM,path=*.lock\n");
	CmdResult r = lockstorm("scenario run -q " + f);
	EXPECT_EQ(r.status, 1) << r.out << r.err;
	EXPECT_NE(r.out.find("expected liveness to break; liveness held"), std::string::npos) << r.out;
}

/* A failure found at night becomes a regression test: kept run -> scenario -> the same failure. */
TEST(IntegScenario, NewFromAFailingRunReproducesTheFailure)
{
	ScratchDir d;
	CmdResult run = lockstorm("run -p lockfile-legacy -w hold -n 1 --ops 6 --time-scale 0.01 "
				  "--fault split-identity -q --dir " + d.sub("w") + " -o " + d.sub("night"));
	ASSERT_EQ(run.status, 1) << run.out << run.err;

	CmdResult out = lockstorm("scenario new waits-on-itself-again --from-run " + d.sub("night"));
	ASSERT_EQ(out.status, 0) << out.err;
	std::string f = d.sub("regress.scenario");
	CmdResult made = lockstorm("scenario new waits-on-itself-again --from-run " + d.sub("night") + " -o " + f);
	ASSERT_EQ(made.status, 0) << made.err;
	std::string text = slurp(f);
	EXPECT_EQ(text, out.out) << "stdout and -o FILE write the same scenario";
	for (const char *want : { "name waits-on-itself-again\n", "revision lockfile-legacy\n",
				  "expect lockfile-legacy fail liveness\n", "-w hold\n", "-n 1\n", "--ops 6\n",
				  "--time-scale 0.01\n", "--fault split-identity\n", "story liveness: " })
		EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;

	/* -o refuses to overwrite */
	CmdResult again = lockstorm("scenario new x --from-run " + d.sub("night") + " -o " + f);
	EXPECT_EQ(again.status, 2);

	CmdResult r = lockstorm("scenario run " + f + " -o " + d.sub("kept"));
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	std::vector<std::string> lines = lines_of(r.out, "waits-on-itself-again");
	ASSERT_EQ(lines.size(), 1u) << r.out;
	EXPECT_NE(lines[0].find("got FAIL (liveness)"), std::string::npos) << lines[0];
	/* -o keeps the revision's run: check re-derives the same verdict */
	std::string kept = d.sub("kept") + "/waits-on-itself-again/lockfile-legacy";
	EXPECT_TRUE(exists(kept + "/report.json"));
	EXPECT_TRUE(exists(d.sub("kept") + "/waits-on-itself-again/lockfile-legacy.log"));
	CmdResult c = lockstorm("check -q " + kept);
	EXPECT_EQ(c.status, 1) << c.out << c.err;
}

/* A passing kept run with a fault profile, a mixed fleet and parameters comes back as the same options. */
TEST(IntegScenario, NewKeepsProfilesParamsAndFleets)
{
	ScratchDir d;
	CmdResult run = lockstorm("run -p mkdir-legacy,mkdir-owner -w hold --param hold_ms=1ms -n 2 --ops 40 "
				  "--time-scale 0.01 -s 3 --faults windows --fault 'stall@hold/hold/after-acquire:nth=2,for=1ms' "
				  "-q --dir " + d.sub("w") + " -o " + d.sub("out"));
	ASSERT_TRUE(run.status == 0 || run.status == 1) << run.out << run.err;
	CmdResult out = lockstorm("scenario new fleet --from-run " + d.sub("out"));
	ASSERT_EQ(out.status, 0) << out.err;
	for (const char *want : { "revision mkdir-legacy,mkdir-owner\n", "--faults windows\n",
				  "--fault stall@hold/hold/after-acquire:nth=2,for=1ms\n", "--param hold_ms=1ms\n",
				  "-s 3\n", "--ops 40\n" })
		EXPECT_NE(out.out.find(want), std::string::npos) << want << "\n" << out.out;
	EXPECT_EQ(out.out.find("--fault errno@fs/rmdir"), std::string::npos) << "profile rules come back as --faults\n"
									       << out.out;
	EXPECT_NE(out.out.find(run.status == 0 ? "expect mkdir-legacy,mkdir-owner pass\n"
					       : "expect mkdir-legacy,mkdir-owner fail "),
		  std::string::npos) << out.out;
	/* and it parses: show prints the command line */
	std::string f = d.sub("fleet.scenario");
	write_file(f, out.out);
	CmdResult show = lockstorm("scenario show " + f);
	EXPECT_EQ(show.status, 0) << show.err;
	EXPECT_NE(show.out.find("lockstorm run -p mkdir-legacy,mkdir-owner -w hold"), std::string::npos) << show.out;
}

struct BadScenario {
	std::string text;
	int line;
	const char *says;
};

TEST(IntegScenario, MalformedFilesExit2WithFileAndLine)
{
	ScratchDir d;
	const std::string head = "name bad\nrevision beta.5 mkdir-legacy\nexpect beta.5 pass\n-w hold\n";
	const BadScenario cases[] = {
		{ "name bad\nrevision mkdir-legacy\nfrobnicate now\nexpect mkdir-legacy pass\n", 3, "unknown line 'frobnicate'" },
		{ "name bad\nrevision mkdir-legacy\nexpect mkdir-owner pass\n", 3, "names revision 'mkdir-owner'" },
		{ "name bad\nrevision mkdir-legacy\nexpect mkdir-legacy fail exclusionn\n", 3, "unknown invariant 'exclusionn'" },
		{ "name bad\n# a comment\n\nrevision mkdir-legacy\n", 4, "no `expect` line" },
		{ "name bad\nrevision nosuch\nexpect nosuch pass\n", 2, "unknown protocol 'nosuch'" },
		{ "name bad\nrevision x mkdir-legacy\nexpect x maybe\n", 3, "not pass, fail or bound" },
		{ "name bad\nrevision x mkdir-legacy\nexpect x bound\n", 3, "bound" },
		{ "revision x mkdir-legacy\nexpect x pass\n", 2, "no `name` line" },
		{ "name bad\nname again\n", 2, "a second `name`" },
		{ "name two words\n", 1, "name 'two words'" },
		{ head + "-n 0\n", 5, "-n: bad number '0'" },
		{ head + "-d 1500\n", 5, "give a unit (ms, s, m, h)" },
		{ head + "--ops 5\n-d 1s\n", 6, "exclude each other" },
		{ head + "--fault explode@*\n", 5, "unknown kind 'explode'" },
		{ head + "--fault stall@mkdir-owner/reclaim/*\n", 5, "no point of this run matches" },
		{ head + "--param platform=win32\n", 5, "platform=win32" },
		{ head + "-p flock\n", 5, "revision" },
		{ head + "--dir /tmp/x\n", 5, "not allowed" },
		{ head + "--bogus 3\n", 5, "unknown run option '--bogus'" },
		{ head + "--ops\n", 5, "needs a value" },
		{ head + "--respawn yes\n", 5, "takes no value" },
		{ head + "option beta.6 --ops 5\n", 5, "names revision 'beta.6'" },
		/* a per-revision option that only the other revision's protocol knows */
		{ "name bad\nrevision a mkdir-legacy\nrevision b mkdir-owner\nexpect a pass\nexpect b pass\n-w hold\n"
		  "option a --param platform=win32\n", 7, "revision a: --param platform=win32" },
	};
	int i = 0;
	for (const BadScenario &c : cases) {
		std::string f = d.sub("bad" + std::to_string(i++) + ".scenario");
		write_file(f, c.text);
		CmdResult r = lockstorm("scenario run " + f);
		EXPECT_EQ(r.status, 2) << c.text << "\n" << r.out << r.err;
		std::string at = f + ":" + std::to_string(c.line) + ": ";
		EXPECT_EQ(r.err.find("lockstorm: " + at), 0u) << "want " << at << "\n" << c.text << "\n" << r.err;
		EXPECT_NE(r.err.find(c.says), std::string::npos) << c.says << "\n" << r.err;
		EXPECT_EQ(count_lines(r.err), 1u) << r.err;
		EXPECT_EQ(r.out, "") << "nothing ran\n" << r.out;
		/* show and the library run report the same */
		CmdResult s = lockstorm("scenario show " + f);
		EXPECT_EQ(s.status, 2) << s.out;
	}
}

/* A bad file in the library stops `run --all` before anything runs. */
TEST(IntegScenario, ABadLibraryFileStopsRunAllBeforeAnythingRuns)
{
	ScratchDir d;
	ASSERT_EQ(mkdir(d.sub("lib").c_str(), 0777), 0);
	write_file(d.sub("lib/a-good.scenario"), "name good\nrevision flock\nexpect flock pass\n-w hold\n-n 1\n--ops 5\n");
	write_file(d.sub("lib/b-bad.scenario"), "name bad\nrevision flock\nexpect flock pass\n--ops many\n");
	CmdResult r = run_cmd("LOCKSTORM_SCENARIOS=" + d.sub("lib") + " " + BIN + " scenario run --all");
	EXPECT_EQ(r.status, 2) << r.out << r.err;
	EXPECT_NE(r.err.find(d.sub("lib/b-bad.scenario") + ":4: "), std::string::npos) << r.err;
	EXPECT_EQ(r.out.find("good"), std::string::npos) << r.out;

	/* without it, the library runs, and a name finds a file by its `name` line */
	ASSERT_EQ(unlink(d.sub("lib/b-bad.scenario").c_str()), 0);
	CmdResult ok = run_cmd("LOCKSTORM_SCENARIOS=" + d.sub("lib") + " " + BIN + " scenario run good");
	EXPECT_EQ(ok.status, 0) << ok.out << ok.err;
	EXPECT_EQ(lines_of(ok.out, "good").size(), 1u) << ok.out;
}

TEST(IntegScenario, UsageErrorsAndShow)
{
	for (const char *args : { "scenario", "scenario frob", "scenario run", "scenario run --all x",
				  "scenario run no-such-scenario", "scenario show", "scenario new x",
				  "scenario new 'a b' --from-run /nonexistent", "scenario new x --from-run /nonexistent" }) {
		CmdResult r = lockstorm(args);
		EXPECT_EQ(r.status, 2) << args << "\n" << r.out << r.err;
	}
	CmdResult help = lockstorm("--help");
	EXPECT_NE(help.out.find("scenario"), std::string::npos);
	CmdResult show = lockstorm("scenario show empty-record-lock");
	EXPECT_EQ(show.status, 0) << show.err;
	EXPECT_NE(show.out.find("lockstorm run -p lockfile-legacy"), std::string::npos) << show.out;
	EXPECT_NE(show.out.find("lockstorm run -p lockfile-recorded"), std::string::npos) << show.out;
	EXPECT_NE(show.out.find("expect FAIL (liveness)"), std::string::npos) << show.out;
}

/* A FAIL revision with a counterexample: its replay decides, the torture run only informs. */
TEST(IntegScenario, ACounterexampleDecidesAFailWhateverTheTortureShows)
{
	ScratchDir d;
	const std::string kml1 = std::string(LS_SOURCE_DIR) + "/docs/cex/mkdir-legacy-k-ml-1.json";
	write_file(d.sub("k.cex.json"), slurp(kml1));
	/* one worker cannot hold twice: the torture passes every time */
	const std::string sc = "name k\nrevision beta.5 mkdir-legacy\nexpect beta.5 fail exclusion\ncex beta.5\n"
			       "-w update\n-n 1\n--ops 5\n";
	write_file(d.sub("k.scenario"), sc);
	CmdResult r = run_cmd("TMPDIR=" + d.path + " " + BIN + " scenario run " + d.sub("k.scenario") + " -q");
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	std::vector<std::string> l = lines_of(r.out, "k");
	ASSERT_GE(l.size(), 1u) << r.out;
	EXPECT_NE(l[0].find(" ok "), std::string::npos) << l[0];
	EXPECT_NE(l[0].find("got FAIL (exclusion"), std::string::npos) << l[0];
	EXPECT_NE(l[0].find(") replayed; torture PASS"), std::string::npos) << l[0];

	/* the counterexample edited: it no longer replays, and the line says so */
	json_t *o = json_load_file(kml1.c_str(), 0, nullptr);
	ASSERT_TRUE(o);
	json_array_set_new(json_object_get(o, "steps"), 2, json_string("w7 rename a -> b -> ok"));
	ASSERT_EQ(json_dump_file(o, d.sub("k.cex.json").c_str(), JSON_INDENT(1)), 0);
	json_decref(o);
	CmdResult m = run_cmd("TMPDIR=" + d.path + " " + BIN + " scenario run " + d.sub("k.scenario") + " -q");
	EXPECT_EQ(m.status, 1) << m.out << m.err;
	EXPECT_NE(m.out.find("MISMATCH"), std::string::npos) << m.out;
	EXPECT_NE(m.out.find("counterexample k.cex.json no longer replays: step 3 differs"), std::string::npos) << m.out;

	/* a cex line on a revision that expects pass, and one naming a missing file: bad files */
	write_file(d.sub("p.scenario"), "name p\nrevision flock\nexpect flock pass\ncex flock k.cex.json\n-w update\n");
	EXPECT_EQ(lockstorm("scenario run " + d.sub("p.scenario")).status, 2);
	write_file(d.sub("q.scenario"), "name q\nrevision none\nexpect none fail exclusion\ncex none\n-w update\n");
	CmdResult q = lockstorm("scenario run " + d.sub("q.scenario"));
	EXPECT_EQ(q.status, 2) << q.out;
	EXPECT_NE(q.err.find("q.scenario:4: cex none: no file "), std::string::npos) << q.err;
	CmdResult ls = run_cmd("ls -A " + d.path);
	EXPECT_EQ(ls.out, "k.cex.json\nk.scenario\np.scenario\nq.scenario\n") << "nothing left in TMPDIR";
}

/* Without a counterexample a FAIL tries the file's seeds until one shows it. */
TEST(IntegScenario, SeedsAreTriedInTurnUntilOneShowsTheFailure)
{
	ScratchDir d;
	/* 8 unlocked workers and 3000 ops: 100 ops of 4 were so few that a loaded
	 * machine ran them one process after another, on every seed (stress run 2) */
	write_file(d.sub("s.scenario"), "name s\nrevision none\nexpect none fail exclusion\nseeds 1,2,3,4\n"
					"-w update\n-n 8\n--ops 3000\n");
	CmdResult r = run_cmd("TMPDIR=" + d.path + " " + BIN + " scenario run " + d.sub("s.scenario") + " -q");
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	EXPECT_NE(r.out.find(" of 4 tried)"), std::string::npos) << r.out;
	write_file(d.sub("t.scenario"), "name t\nrevision none\nexpect none fail exclusion\nseeds 1,x\n-w update\n");
	EXPECT_EQ(lockstorm("scenario run " + d.sub("t.scenario")).status, 2);
}

/* -o keeps a library scenario whose FAIL is decided by a counterexample: the
 * replay comes first, before any torture run has made the scenario's folder
 * (it used to exit 127 there: "replay ... exited 127", INCOMPLETE). */
TEST(IntegScenario, KeptOutputOfAScenarioWithACounterexample)
{
	ScratchDir d;
	CmdResult r = lockstorm("scenario run " + std::string(LS_SOURCE_DIR) + "/scenarios/two-reclaimers.scenario -q -o " +
				d.sub("kept"));
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	EXPECT_NE(r.out.find("every revision as expected"), std::string::npos) << r.out;
	EXPECT_TRUE(exists(d.sub("kept") + "/two-reclaimers/beta.5.cex-1.json"));
	EXPECT_TRUE(exists(d.sub("kept") + "/two-reclaimers/beta.5.cex-1.log"));
}
