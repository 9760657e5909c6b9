/*
 * integ_explore.cc - `lockstorm explore` and `lockstorm replay` end to end.
 *
 * The explorer finds PROTOCOLS.md K-ML-1 (a double holder) and K-ML-2 (a
 * lost write) in mkdir-legacy from scratch, shrinks each to a story of at
 * most 12 steps, saves it, and replay gives the same story and verdict every
 * time; the kernel lock (flock) is never caught and `none` always is; a
 * bounded DFS says when its space is exhausted; the same seed finds the same
 * thing; bad input is exit 2 with one line; nothing is left in the scratch
 * directory.  Nothing here sleeps or asserts on timing.
 */
#include <dirent.h>
#include <gtest/gtest.h>
#include <jansson.h>

#include <regex>
#include <set>
#include <string>
#include <vector>

#include "testutil.h"

static const std::string BIN = LOCKSTORM_BIN;

static CmdResult lockstorm(const std::string &args)
{
	return run_cmd(BIN + " " + untimed(args));
}

/* The story's numbered lines ("   3. w1 stalls ..."). */
static size_t story_steps(const std::string &out)
{
	static const std::regex line("^ +[0-9]+\\. (w[0-9]+|a sweeper)[ ,']");
	size_t n = 0;
	size_t pos = 0;
	while (pos < out.size()) {
		size_t end = out.find('\n', pos);
		std::string l = out.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
		n += std::regex_search(l, line);
		if (end == std::string::npos)
			break;
		pos = end + 1;
	}
	return n;
}

static std::set<std::string> scratch_dirs(const std::string &base)
{
	std::set<std::string> s;
	DIR *d = opendir(base.c_str());
	if (!d)
		return s;
	while (struct dirent *de = readdir(d))
		if (!strncmp(de->d_name, "lockstorm-explore.", 18))
			s.insert(de->d_name);
	closedir(d);
	return s;
}

/* Explore, check the find and its story, then replay the saved file REPEAT times. */
/* The names of the files in DIR that end with SUFFIX (a missing DIR is a
 * failure of the test). */
static std::vector<std::string> files_ending(const std::string &dir, const std::string &suffix)
{
	std::vector<std::string> names;
	DIR *d = opendir(dir.c_str());
	if (!d) {
		ADD_FAILURE() << dir;
		return names;
	}
	while (struct dirent *de = readdir(d)) {
		std::string name = de->d_name;
		if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
			names.push_back(name);
	}
	closedir(d);
	return names;
}

static void find_and_replay(const std::string &args, const std::string &invariant, int repeat)
{
	ScratchDir dir;
	CmdResult r = lockstorm("explore " + args + " -o " + dir.sub("out") + " --dir " + dir.path);
	ASSERT_EQ(r.status, 1) << r.out << r.err;
	EXPECT_NE(r.out.find("violated: " + invariant), std::string::npos) << r.out;
	size_t steps = story_steps(r.out);
	EXPECT_GE(steps, 4u) << r.out;
	EXPECT_LE(steps, 14u) << r.out;
	std::string cex = dir.sub("out/cex-1.json");
	ASSERT_FALSE(slurp(cex).empty()) << r.out;
	EXPECT_TRUE(scratch_dirs(dir.path).empty()) << "explore left its scratch directory behind";

	/* the story in the file is the one printed */
	json_error_t jerr;
	json_t *o = json_load_file(cex.c_str(), 0, &jerr);
	ASSERT_TRUE(o) << jerr.text;
	EXPECT_STREQ(json_string_value(json_object_get(o, "invariant")), invariant.c_str());
	EXPECT_EQ(json_array_size(json_object_get(o, "story")), steps);
	json_decref(o);

	std::string first;
	for (int i = 0; i < repeat; i++) {
		CmdResult p = lockstorm("replay " + cex + " --dir " + dir.path);
		ASSERT_EQ(p.status, 1) << p.out << p.err;
		EXPECT_NE(p.out.find("steps: the same "), std::string::npos) << p.out;
		EXPECT_NE(p.out.find("verdict: FAIL (" + invariant + ")"), std::string::npos) << p.out;
		if (i == 0)
			first = p.out;
		else
			EXPECT_EQ(p.out, first) << "replay " << i + 1 << " differs";
	}
	EXPECT_EQ(story_steps(first), steps);
}

/* K-ML-1: two processes both hold (here: the stalled holder's release removes
 * the reclaimer's lock, and it takes the lock again while the reclaimer is inside). */
TEST(IntegExplore, FindsTheDoubleHolderOfMkdirLegacyAndReplaysIt)
{
	find_and_replay("-p mkdir-legacy -n 3 --ops 2 --invariant exclusion", "exclusion", 10);
}

/* K-ML-2: a holder that stalls after its read writes over the reclaimer's commit. */
TEST(IntegExplore, FindsTheLostWriteOfMkdirLegacyAndReplaysIt)
{
	find_and_replay("-p mkdir-legacy -w update -n 3 --ops 2 --invariant no-lost-writes", "no-lost-writes", 10);
}

TEST(IntegExplore, NoneIsCaughtFlockIsNot)
{
	ScratchDir dir;
	CmdResult none = lockstorm("explore -p none -n 2 --ops 1 -q --no-shrink -o " + dir.sub("none") +
				   " --dir " + dir.path);
	EXPECT_EQ(none.status, 1) << none.out << none.err;
	CmdResult fl = lockstorm("explore -p flock -n 2 --ops 2 --schedules 300 -o " + dir.sub("flock") +
				 " --dir " + dir.path + " --json " + dir.sub("flock.json"));
	EXPECT_EQ(fl.status, 0) << fl.out << fl.err;
	EXPECT_NE(fl.out.find("nothing found\nverdict: PASS\n"), std::string::npos) << fl.out;
	EXPECT_TRUE(slurp(dir.sub("flock/cex-1.json")).empty()) << "nothing found, nothing saved";
	json_error_t jerr;
	json_t *o = json_load_file(dir.sub("flock.json").c_str(), 0, &jerr);
	ASSERT_TRUE(o) << jerr.text;
	EXPECT_EQ(json_integer_value(json_object_get(o, "schedules")), 300);
	json_t *cov = json_object_get(o, "coverage");
	EXPECT_GT(json_integer_value(json_object_get(cov, "points_hit")), 0);
	EXPECT_GT(json_integer_value(json_object_get(cov, "step_pairs")), 0);
	EXPECT_STREQ(json_string_value(json_object_get(o, "verdict")), "pass");
	json_decref(o);
}

/* A worker whose flock found the lock taken is offered again only once a
 * step of another may have let it go, and its grant is the next try: 3
 * workers x 2 updates take 48 steps when nobody waits, 56.3 a schedule on
 * average with the waits (seed 1), where offering it again after any step
 * took 78.3.  Steps are the explorer's own count: no timing. */
TEST(IntegExplore, ABlockedFlockWaitsForARelease)
{
	ScratchDir dir;
	CmdResult r = lockstorm("explore -p flock -n 3 --ops 2 --max-faults all=0 --schedules 300 -q -o " +
				dir.sub("o") + " --dir " + dir.path + " --json " + dir.sub("x.json"));
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	json_error_t jerr;
	json_t *o = json_load_file(dir.sub("x.json").c_str(), 0, &jerr);
	ASSERT_TRUE(o) << jerr.text;
	EXPECT_EQ(json_integer_value(json_object_get(o, "schedules")), 300);
	const json_int_t steps = json_integer_value(json_object_get(o, "steps"));
	EXPECT_GE(steps, 300 * 48) << "every schedule runs its 6 updates, 8 steps each";
	EXPECT_LT(steps, 300 * 66) << "a blocked flock tried again after steps that cannot release it";
	json_decref(o);
}

TEST(IntegExplore, BoundedDfsSaysWhenItsSpaceIsExhausted)
{
	ScratchDir dir;
	CmdResult r = lockstorm("explore -p flock -n 2 --ops 1 --strategy dfs:preempt=1 --max-stalls 0 "
				"--max-crashes 0 -o " + dir.sub("o") + " --dir " + dir.path);
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	EXPECT_NE(r.out.find("bounded space exhausted"), std::string::npos) << r.out;
	/* more preemptions, more schedules */
	std::smatch m1, m2;
	std::regex n("explored ([0-9]+) schedules");
	ASSERT_TRUE(std::regex_search(r.out, m1, n)) << r.out;
	CmdResult r2 = lockstorm("explore -p flock -n 2 --ops 1 --strategy dfs:preempt=2 --max-stalls 0 "
				 "--max-crashes 0 -o " + dir.sub("o") + " --dir " + dir.path);
	ASSERT_TRUE(std::regex_search(r2.out, m2, n)) << r2.out;
	EXPECT_GT(std::stoul(m2[1]), std::stoul(m1[1]));
	/* and a DFS finds what none lets through */
	CmdResult bad = lockstorm("explore -p none -n 2 --ops 1 --strategy dfs:preempt=1 -q -o " + dir.sub("n") +
				  " --dir " + dir.path);
	EXPECT_EQ(bad.status, 1) << bad.out << bad.err;
}

TEST(IntegExplore, PctStatesItsProbabilityBound)
{
	ScratchDir dir;
	CmdResult r = lockstorm("explore -p mkdir-legacy -n 3 --ops 2 --strategy pct:d=3 -o " + dir.sub("o") +
				" --dir " + dir.path);
	EXPECT_EQ(r.status, 1) << r.out << r.err;
	EXPECT_NE(r.out.find("pct d=3: each schedule finds a bug of depth <= 3 with probability >= "),
		  std::string::npos) << r.out;
}

TEST(IntegExplore, TheSameSeedFindsTheSameThing)
{
	ScratchDir dir;
	std::string args = "explore -p mkdir-legacy -n 3 --ops 2 --dir " + dir.path + " -o ";
	CmdResult a = lockstorm(args + dir.sub("a"));
	CmdResult b = lockstorm(args + dir.sub("b"));
	ASSERT_EQ(a.status, 1);
	ASSERT_EQ(b.status, 1);
	EXPECT_EQ(slurp(dir.sub("a/cex-1.json")), slurp(dir.sub("b/cex-1.json")));
}

TEST(IntegExplore, ABadOptionOrFileIsExit2WithOneLine)
{
	ScratchDir dir;
	for (const char *args : { "explore --strategy dfs:preempt=x", "explore -n 99", "explore -p nosuch",
				  "explore --invariant nosuch", "explore --dir /nonexistent", "explore -p ext:flock1,flock", "replay",
				  "replay /nonexistent/cex.json" }) {
		CmdResult r = lockstorm(args);
		EXPECT_EQ(r.status, 2) << args << ": " << r.err;
		EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
	}
	std::string notcex = dir.sub("x.json");
	FILE *f = fopen(notcex.c_str(), "w");
	fputs("{\"schema\": \"lockstorm-report/1\"}", f);
	fclose(f);
	CmdResult r = lockstorm("replay " + notcex);
	EXPECT_EQ(r.status, 2) << r.err;
	EXPECT_NE(r.err.find("not a lockstorm counterexample"), std::string::npos) << r.err;
}

/* The counterexamples kept under docs/cex/ (findings.md cites them) still
 * replay to the same steps and the same violation. */
TEST(IntegExplore, SavedCounterexamplesStillReplay)
{
	ScratchDir dir;
	std::string cexdir = std::string(LS_SOURCE_DIR) + "/docs/cex";
	std::vector<std::string> names = files_ending(cexdir, ".json");
	for (const std::string &name : names) {
		CmdResult r = lockstorm("replay " + cexdir + "/" + name + " -q --dir " + dir.path);
		EXPECT_EQ(r.status, 1) << name << ": " << r.out << r.err;
		EXPECT_NE(r.out.find("steps: the same "), std::string::npos) << name << ": " << r.out;
	}
	EXPECT_GE(names.size(), 3u);
}

/* False alarms of the checker, each kept as the counterexample that showed
 * it (tests/cex/, docs/findings.md says what each was): every one replays
 * to its saved steps, and the violation it once reported no longer happens.
 * Each has a twin that must still fail in the unit tests (CheckerClaims,
 * CheckerOracle). */
TEST(IntegExplore, KeptFalseAlarmsReplayToPass)
{
	ScratchDir dir;
	std::string cexdir = std::string(LS_SOURCE_DIR) + "/tests/cex";
	std::vector<std::string> names = files_ending(cexdir, ".cex.json");
	for (const std::string &name : names) {
		CmdResult r = lockstorm("replay " + cexdir + "/" + name + " --dir " + dir.path);
		EXPECT_EQ(r.status, 0) << name << ": " << r.out << r.err;
		EXPECT_NE(r.out.find("steps: the same "), std::string::npos) << name << ": " << r.out;
		EXPECT_NE(r.out.find("no longer happens on the saved steps"), std::string::npos) << name << ": " << r.out;
	}
	EXPECT_GE(names.size(), 1u);
}

/* Several stall lengths: the strategy picks one per stall; the file says
 * which, and replay takes the same one. */
TEST(IntegExplore, StallLengthsAreChoicesToo)
{
	ScratchDir dir;
	CmdResult r = lockstorm("explore -p mkdir-legacy -n 3 --ops 2 --stall 0.5,3 --max-faults all=0,stall=1,crash=1 "
				"--invariant no-lost-writes -o " +
				dir.sub("o") + " --dir " + dir.path);
	ASSERT_EQ(r.status, 1) << r.out << r.err;
	json_error_t jerr;
	json_t *o = json_load_file(dir.sub("o/cex-1.json").c_str(), 0, &jerr);
	ASSERT_TRUE(o) << jerr.text;
	EXPECT_EQ(json_array_size(json_object_get(o, "stall")), 2u);
	int stalls = 0;
	json_t *ch = json_object_get(o, "choices");
	for (size_t i = 0; i < json_array_size(ch); i++) {
		json_t *c = json_array_get(ch, i);
		if (!strcmp(json_string_value(json_object_get(c, "do")), "stall")) {
			stalls++;
			double k = json_number_value(json_object_get(c, "stall"));
			EXPECT_TRUE(k == 0.5 || k == 3.0) << k;
		}
	}
	EXPECT_EQ(stalls, 1) << "a lost write needs its holder stalled past the stale age";
	json_decref(o);
	CmdResult p = lockstorm("replay " + dir.sub("o/cex-1.json") + " --dir " + dir.path);
	EXPECT_EQ(p.status, 1) << p.out;
	EXPECT_NE(p.out.find("steps: the same "), std::string::npos) << p.out;
	EXPECT_NE(lockstorm("explore --stall 0.5,x").status, 0);
}

/* --points: protocol points are decisions too; the file says so and replays. */
TEST(IntegExplore, PointsAreDecisionsWhenAsked)
{
	ScratchDir dir;
	CmdResult r = lockstorm("explore -p mkdir-legacy -n 3 --ops 2 --points -o " + dir.sub("o") + " --dir " + dir.path);
	ASSERT_EQ(r.status, 1) << r.out << r.err;
	json_error_t jerr;
	json_t *o = json_load_file(dir.sub("o/cex-1.json").c_str(), 0, &jerr);
	ASSERT_TRUE(o) << jerr.text;
	EXPECT_TRUE(json_is_true(json_object_get(o, "points")));
	bool reaches = false;
	json_t *steps = json_object_get(o, "steps");
	for (size_t i = 0; i < json_array_size(steps); i++)
		reaches |= strstr(json_string_value(json_array_get(steps, i)), " reaches mkdir-legacy/") != nullptr;
	EXPECT_TRUE(reaches) << "the points are steps of the execution";
	json_decref(o);
	CmdResult p = lockstorm("replay " + dir.sub("o/cex-1.json") + " --dir " + dir.path);
	EXPECT_EQ(p.status, 1) << p.out;
	EXPECT_NE(p.out.find("steps: the same "), std::string::npos) << p.out;
}
