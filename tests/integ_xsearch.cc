/*
 * integ_xsearch.cc - issue 13 items 2 and 3 end to end: --param lists
 * alternate across workers (mixed revisions) in explore and run, with the
 * revision of each worker in the story and the figures; `explore -j N`
 * finds the same set as one process for a fixed seed and schedule count;
 * `--strategy guided` finds a known case.  Nothing sleeps or asserts on
 * timing: every search is bounded by its schedule count.
 */
#include <gtest/gtest.h>
#include <jansson.h>

#include <set>
#include <string>

#include "testutil.h"

static const std::string BIN = LOCKSTORM_BIN;

static CmdResult lockstorm(const std::string &args)
{
	return run_cmd(BIN + " " + untimed(args));
}

/* The signatures of a --json summary's distinct failures. */
static std::set<std::string> signatures(const std::string &path)
{
	std::set<std::string> s;
	json_error_t jerr;
	json_t *o = json_load_file(path.c_str(), 0, &jerr);
	EXPECT_TRUE(o) << path << ": " << jerr.text;
	if (!o)
		return s;
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(o, "distinct"), i, v)
		s.insert(std::string(json_string_value(json_object_get(v, "invariant"))) + "/" +
			 json_string_value(json_object_get(v, "signature")));
	json_decref(o);
	return s;
}

/* Issue 13's done-means: journal-legacy and journal-append workers in one
 * session; each finding says which revision's worker caused it. */
TEST(IntegXsearch, MixedJournalRevisionsSayWhichWorkerCausedTheFinding)
{
	ScratchDir dir;
	CmdResult r = lockstorm("explore -p flock -w append --param rev=legacy,append --param locked=1 -n 2 --ops 2 "
				"-o " + dir.sub("out") + " --dir " + dir.path + " --json " + dir.sub("x.json"));
	ASSERT_EQ(r.status, 1) << r.out << r.err;
	EXPECT_NE(r.out.find("  workers: w0 flock rev=legacy, w1 flock rev=append\n"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("  caused by: w"), std::string::npos) << r.out;
	EXPECT_TRUE(r.out.find("a flock rev=legacy worker") != std::string::npos ||
		    r.out.find("a flock rev=append worker") != std::string::npos) << r.out;
	json_error_t jerr;
	json_t *o = json_load_file(dir.sub("out/cex-1.json").c_str(), 0, &jerr);
	ASSERT_TRUE(o) << jerr.text;
	json_t *rev = json_object_get(o, "revision_of_worker");
	ASSERT_EQ(json_array_size(rev), 2u);
	EXPECT_STREQ(json_string_value(json_array_get(rev, 0)), "flock rev=legacy");
	EXPECT_STREQ(json_string_value(json_array_get(rev, 1)), "flock rev=append");
	EXPECT_TRUE(json_is_object(json_object_get(o, "caused_by")));
	json_decref(o);
	/* the saved counterexample replays (the list is in its params) */
	CmdResult p = lockstorm("replay " + dir.sub("out/cex-1.json") + " --dir " + dir.path);
	EXPECT_EQ(p.status, 1) << p.out << p.err;
	EXPECT_NE(p.out.find("steps: the same "), std::string::npos) << p.out;
}

/* One revision throughout finds nothing there to blame on a mix: a single
 * value is not a list, and a list of one revision is no mixed fleet. */
TEST(IntegXsearch, ASingleRevisionIsNoMixedFleet)
{
	ScratchDir dir;
	CmdResult r = lockstorm("explore -p flock -w append --param rev=append --param locked=1 -n 2 --ops 2 "
				"--max-faults all=0,stall=1,crash=1 --schedules 200 -o " + dir.sub("out") + " --dir " + dir.path);
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	EXPECT_EQ(r.out.find("workers:"), std::string::npos) << r.out;
}

/* In `run` the figures are by revision: report.txt and report.json. */
TEST(IntegXsearch, RunGivesFiguresByRevisionOfAParamList)
{
	ScratchDir dir;
	CmdResult r = lockstorm("run -p flock -w append --param rev=legacy,append --param locked=1 -n 4 --ops 20 -o " +
				dir.sub("run"));
	ASSERT_TRUE(r.status == 0 || r.status == 1) << r.out << r.err;
	std::string all = r.out;
	EXPECT_NE(all.find("by revision"), std::string::npos) << all;
	EXPECT_NE(all.find("flock rev=legacy"), std::string::npos) << all;
	EXPECT_NE(all.find("flock rev=append"), std::string::npos) << all;
	json_error_t jerr;
	json_t *o = json_load_file(dir.sub("run/report.json").c_str(), 0, &jerr);
	ASSERT_TRUE(o) << jerr.text;
	char *text = json_dumps(o, 0);
	std::string js = text ? text : "";
	free(text);
	EXPECT_NE(js.find("flock rev=legacy"), std::string::npos) << js;
	json_decref(o);
}

TEST(IntegXsearch, ParamListsRefuseBadInput)
{
	CmdResult r = lockstorm("explore -p flock -w append --param rev=legacy,bogus -n 2");
	EXPECT_EQ(r.status, 2) << r.out << r.err;
	EXPECT_NE(r.err.find("bogus"), std::string::npos) << r.err;
	r = lockstorm("explore -p flock -w append --param rev=legacy, -n 2");
	EXPECT_EQ(r.status, 2) << r.out << r.err;
	r = lockstorm("explore -p flock -w append --param rev=legacy,append,legacy --param locked=0,1,0,1,0 -n 2");
	EXPECT_EQ(r.status, 2) << r.out << r.err; /* 15 slots do not */
	r = lockstorm("explore -p flock -j 2 --strategy dfs");
	EXPECT_EQ(r.status, 2) << r.out << r.err;
}

/* -j 2 runs exactly the schedules -j 1 runs (each process every second
 * number): the same distinct failures for a fixed seed and count. */
TEST(IntegXsearch, TwoProcessesFindTheSameSetAsOne)
{
	ScratchDir dir;
	const std::string common = "explore -p mkdir-legacy -n 3 --ops 2 --all --no-shrink -s 7 --schedules 200 "
				   "--time-budget 10m -q --dir " + dir.path;
	CmdResult one = lockstorm(common + " -o " + dir.sub("o1") + " --json " + dir.sub("j1.json") + " -j 1");
	CmdResult two = lockstorm(common + " -o " + dir.sub("o2") + " --json " + dir.sub("j2.json") + " -j 2");
	ASSERT_EQ(one.status, 1) << one.out << one.err;
	ASSERT_EQ(two.status, 1) << two.out << two.err;
	std::set<std::string> a = signatures(dir.sub("j1.json")), b = signatures(dir.sub("j2.json"));
	EXPECT_FALSE(a.empty());
	EXPECT_EQ(a, b);
	json_error_t jerr;
	json_t *o = json_load_file(dir.sub("j2.json").c_str(), 0, &jerr);
	ASSERT_TRUE(o) << jerr.text;
	EXPECT_EQ(json_integer_value(json_object_get(o, "schedules")), 200);
	EXPECT_EQ(json_integer_value(json_object_get(o, "jobs")), 2);
	json_decref(o);
	/* each saved counterexample replays */
	CmdResult p = lockstorm("replay " + dir.sub("o2/cex-1.json") + " --dir " + dir.path);
	EXPECT_EQ(p.status, 1) << p.out << p.err;
	EXPECT_NE(p.out.find("steps: the same "), std::string::npos) << p.out;
	/* the same again: the same set, whatever the timing */
	CmdResult again = lockstorm(common + " -o " + dir.sub("o3") + " --json " + dir.sub("j3.json") + " -j 2");
	EXPECT_EQ(signatures(dir.sub("j3.json")), b);
}

/* A flock search finds nothing with -j 2 either, and says it ran every schedule. */
TEST(IntegXsearch, TwoProcessesPassWhatOnePasses)
{
	ScratchDir dir;
	CmdResult r = lockstorm("explore -p flock -n 2 --ops 2 --schedules 301 -j 2 -o " + dir.sub("o") + " --dir " +
				dir.path + " --json " + dir.sub("j.json"));
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	EXPECT_NE(r.out.find("explored 301 schedules"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("verdict: PASS"), std::string::npos) << r.out;
}

/* Guided finds K-ML-1 (a double holder of mkdir-legacy) and keeps a corpus. */
TEST(IntegXsearch, GuidedFindsTheDoubleHolderOfMkdirLegacy)
{
	ScratchDir dir;
	CmdResult r = lockstorm("explore -p mkdir-legacy -n 3 --ops 2 --strategy guided --invariant exclusion --schedules 5000 "
				"--time-budget 10m -o " + dir.sub("out") + " --dir " + dir.path);
	ASSERT_EQ(r.status, 1) << r.out << r.err;
	EXPECT_NE(r.out.find("violated: exclusion"), std::string::npos) << r.out;
	CmdResult p = lockstorm("replay " + dir.sub("out/cex-1.json") + " --dir " + dir.path);
	EXPECT_EQ(p.status, 1) << p.out << p.err;
	json_error_t jerr;
	json_t *o = json_load_file(dir.sub("out/cex-1.json").c_str(), 0, &jerr);
	ASSERT_TRUE(o) << jerr.text;
	EXPECT_STREQ(json_string_value(json_object_get(json_object_get(o, "found_by"), "strategy")), "guided");
	json_decref(o);
}

/* volter's boot-time carried-lock sweep (PROTOCOLS.md 5.6) runs in the
 * worker's init under the seam: its steps are scheduled, so the explorer
 * reaches its points (and can stall or crash a worker inside it). */
TEST(IntegXsearch, TheBootSweepIsExplored)
{
	ScratchDir dir;
	CmdResult r = lockstorm("explore -p lockfile-recorded --param carried_sweep=1 -w update --param carried=empty "
				"-n 2 --ops 1 --schedules 100 -q -o " + dir.sub("o") + " --dir " + dir.path + " --json " +
				dir.sub("j.json"));
	ASSERT_TRUE(r.status == 0 || r.status == 1) << r.out << r.err;
	json_error_t jerr;
	json_t *o = json_load_file(dir.sub("j.json").c_str(), 0, &jerr);
	ASSERT_TRUE(o) << jerr.text;
	std::set<std::string> hit;
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(json_object_get(o, "coverage"), "hit"), i, v)
		hit.insert(json_string_value(v));
	json_decref(o);
	EXPECT_TRUE(hit.count("lockfile-recorded/carried/after-stat")) << "the sweep's steps were not scheduled";
	EXPECT_TRUE(hit.count("lockfile-recorded/carried/after-recovery-take"));
}

/* Two module instances of lockfile-recorded in one process share a pid:
 * one instance takes a lock recorded with its own pid that the other
 * holds as "waiting on ourselves" (SR3) and reclaims it - it removes a lock
 * the other instance holds, which the explorer finds.  With one instance per
 * process it does not happen in the same search. */
TEST(IntegXsearch, TwoInstancesInOneProcessShareAPid)
{
	ScratchDir dir;
	const std::string common = "explore -p lockfile-recorded -n 2 --ops 2 --max-faults all=0 "
				   "--schedules 300 --time-budget 10m -q --no-shrink --dir " + dir.path;
	CmdResult two = lockstorm(common + " --param instances=2 -o " + dir.sub("two"));
	EXPECT_EQ(two.status, 1) << two.out << two.err;
	EXPECT_NE(two.out.find("  processes: pid 2000 = w0 w1 (module instances"), std::string::npos) << two.out;
	CmdResult one = lockstorm(common + " -o " + dir.sub("one"));
	EXPECT_EQ(one.status, 0) << one.out << one.err;
	CmdResult bad = lockstorm("explore -p flock --param instances=2");
	EXPECT_EQ(bad.status, 2) << bad.out << bad.err;
	EXPECT_NE(bad.err.find("per module instance"), std::string::npos) << bad.err;
}
