/*
 * integ_compare.cc - `lockstorm compare`: revisions side by side on the same
 * seeds and fault plan, interleaved; table, JSON, markdown and JUnit; exit 1
 * when a revision had a violation, 2 on bad usage.  Runs are short (-d 1s or
 * --ops, time constants scaled by 0.01); nothing asserts on timing (a violation that needs it is
 * shown by a bounded list of seeds).
 */
#include <gtest/gtest.h>
#include <jansson.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

#include "testutil.h"

static const std::string BIN = LOCKSTORM_BIN;

static json_t *load(const std::string &path)
{
	json_error_t err;
	return json_load_file(path.c_str(), 0, &err);
}

static json_t *rev(json_t *root, size_t i)
{
	return json_array_get(json_object_get(root, "revisions"), i);
}

/* Whether mkdir-legacy's stalled holders meet their reclaimers within 1 s is the machine's timing:
 * a bounded list of seeds until one shows its exclusion failure; the table, JSON, markdown and
 * JUnit are then checked on that seed's files. */
TEST(Compare, LegacyViolatesExits1AndWritesJsonMarkdownJunit)
{
	ScratchDir d;
	CmdResult r;
	std::string seen, tag;
	int seed = first_seed_showing({ 1, 2, 3, 4, 5, 6 }, [&](int s, std::string *said) {
		tag = std::to_string(s);
		r = run_cmd(BIN + " compare -p mkdir-legacy,mkdir-owner -n 8 -d 1s --faults stalls --time-scale 0.01 -s " +
			    tag + " --json " + d.sub("c" + tag + ".json") + " --markdown " + d.sub("c" + tag + ".md") +
			    " --junit " + d.sub("c" + tag + ".xml"));
		*said = "exit " + std::to_string(r.status) + "\n" + r.out + r.err;
		json_t *root = load(d.sub("c" + tag + ".json"));
		json_t *v = json_object_get(json_object_get(rev(root, 0), "summary"), "violations");
		bool shown = r.status == 1 && json_integer_value(json_object_get(v, "exclusion")) > 0;
		json_decref(root);
		return shown;
	}, &seen);
	ASSERT_NE(seed, -1) << "no seed of the list showed mkdir-legacy's exclusion failure:\n" << seen;
	ASSERT_EQ(r.status, 1) << r.out << r.err;
	/* the side-by-side table */
	for (const char *row : { "mkdir-legacy", "mkdir-owner", "verdict", "ops/s median", "ops/s spread",
				 "wait p50 ms", "wait p99 ms", "exclusion", "reclaims", "lost-lock aborts", "errors" })
		EXPECT_NE(r.out.find(row), std::string::npos) << row << "\n" << r.out;
	EXPECT_NE(r.out.find("verdict: FAIL (mkdir-legacy: exclusion"), std::string::npos) << r.out;
	/* not a TTY: one progress line per finished run */
	EXPECT_NE(r.err.find("compare: [1/2] mkdir-legacy seed " + tag + ": FAIL"), std::string::npos) << r.err;
	EXPECT_NE(r.err.find("compare: [2/2] mkdir-owner seed " + tag + ": "), std::string::npos) << r.err;

	json_t *root = load(d.sub("c" + tag + ".json"));
	ASSERT_TRUE(root) << slurp(d.sub("c" + tag + ".json"));
	EXPECT_STREQ(json_string_value(json_object_get(root, "schema")), "lockstorm-compare/1");
	EXPECT_STREQ(json_string_value(json_object_get(root, "verdict")), "fail");
	ASSERT_EQ(json_array_size(json_object_get(root, "revisions")), 2u);
	EXPECT_STREQ(json_string_value(json_object_get(rev(root, 0), "name")), "mkdir-legacy");
	EXPECT_STREQ(json_string_value(json_object_get(rev(root, 1), "name")), "mkdir-owner");
	json_t *legacy = json_object_get(rev(root, 0), "summary");
	EXPECT_STREQ(json_string_value(json_object_get(legacy, "verdict")), "fail");
	EXPECT_GT(json_integer_value(json_object_get(json_object_get(legacy, "violations"), "exclusion")), 0);
	EXPECT_GT(json_number_value(json_object_get(json_object_get(legacy, "ops_per_s"), "median")), 0);
	/* every run's full report is kept */
	json_t *run0 = json_array_get(json_object_get(rev(root, 0), "runs"), 0);
	EXPECT_STREQ(json_string_value(json_object_get(json_object_get(run0, "report"), "schema")), "lockstorm-report/1");
	json_decref(root);

	std::string md = slurp(d.sub("c" + tag + ".md"));
	EXPECT_NE(md.find("### lockstorm compare: FAIL"), std::string::npos) << md;
	EXPECT_NE(md.find("| | mkdir-legacy | mkdir-owner |"), std::string::npos) << md;
	EXPECT_NE(md.find("| exclusion | **"), std::string::npos) << md;

	/* JUnit: one testsuite per revision */
	r = run_cmd(std::string("/usr/bin/python3 ") + LS_SOURCE_DIR + "/tests/junit_shape.py " + d.sub("c" + tag + ".xml"));
	ASSERT_EQ(r.status, 0) << r.err;
	json_error_t err;
	json_t *j = json_loads(r.out.c_str(), 0, &err);
	ASSERT_TRUE(j);
	json_t *suites = json_object_get(j, "suites");
	ASSERT_EQ(json_array_size(suites), 2u);
	EXPECT_STREQ(json_string_value(json_object_get(json_array_get(suites, 0), "name")),
		     "lockstorm compare mkdir-legacy/update");
	EXPECT_GT(json_integer_value(json_object_get(json_array_get(suites, 0), "failures")), 0);
	json_decref(j);
}

TEST(Compare, RevisionsInterleavedOnTheSameSeeds)
{
	ScratchDir d;
	CmdResult r = run_cmd(BIN + " compare -p flock,none -n 3 --ops 100 --repeat 2 -s 7 -q --json " + d.sub("c.json"));
	ASSERT_EQ(r.status, 1) << r.out << r.err; /* none is always caught */
	EXPECT_TRUE(r.err.empty()) << r.err;   /* -q: no progress lines */
	json_t *root = load(d.sub("c.json"));
	ASSERT_TRUE(root);
	for (size_t v = 0; v < 2; v++) {
		json_t *runs = json_object_get(rev(root, v), "runs");
		ASSERT_EQ(json_array_size(runs), 2u);
		for (size_t k = 0; k < 2; k++) {
			json_t *run = json_array_get(runs, k);
			EXPECT_EQ(json_integer_value(json_object_get(run, "seed")), (json_int_t)(7 + k));
			/* A B A B: run k of revision v was the (2k + v + 1)th */
			EXPECT_EQ(json_integer_value(json_object_get(run, "order")), (json_int_t)(2 * k + v + 1));
			EXPECT_EQ(json_integer_value(json_object_get(json_object_get(json_object_get(run, "report"), "config"),
								    "seed")),
				  (json_int_t)(7 + k));
		}
	}
	EXPECT_STREQ(json_string_value(json_object_get(json_object_get(rev(root, 0), "summary"), "verdict")), "pass");
	EXPECT_STREQ(json_string_value(json_object_get(json_object_get(rev(root, 1), "summary"), "verdict")), "fail");
	json_decref(root);
}

TEST(Compare, BadUsageExits2)
{
	for (const std::string &args : std::vector<std::string>{
		     " compare", " compare -p bogus,flock", " compare -p flock --repeat 0", " compare -p flock -x",
		     " compare -p flock --fault 'stall@nope/*'", " compare -p flock extra" }) {
		CmdResult r = run_cmd(BIN + args);
		EXPECT_EQ(r.status, 2) << args << ": " << r.out << r.err;
		EXPECT_EQ(r.err.rfind("lockstorm: compare: ", 0), 0u) << args << ": " << r.err;
		EXPECT_TRUE(r.out.empty()) << args << ": " << r.out;
	}
}

/* --json, --markdown and --junit are checked writable before any run: exit 2,
 * one line naming the option, and nothing ran (no -o folder made). */
TEST(Compare, UnwritableOutputFilesAreRefusedBeforeAnyRun)
{
	ScratchDir d;
	for (const std::string opt : { "--markdown", "--json", "--junit" }) {
		for (const std::string &path : std::vector<std::string>{ d.sub("nonexistent/dir/x.out"), d.path }) {
			std::string out = d.sub("o" + opt.substr(2));
			CmdResult r = run_cmd(BIN + " compare -p flock,mkdir-owner -w update -n 2 --ops 20 -o " + out + " " +
					      opt + " " + path);
			EXPECT_EQ(r.status, 2) << opt << " " << path << ": " << r.out << r.err;
			EXPECT_EQ(r.err.rfind("lockstorm: compare: " + opt + " " + path + ": ", 0), 0u) << r.err;
			EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
			EXPECT_TRUE(r.out.empty()) << r.out;
			EXPECT_FALSE(exists(out)) << "nothing ran: " << out;
		}
	}
	/* a writable one is fine */
	CmdResult ok = run_cmd(BIN + " compare -p flock -w update -n 2 --ops 20 -q --markdown " + d.sub("t.md"));
	EXPECT_EQ(ok.status, 0) << ok.out << ok.err;
	EXPECT_TRUE(exists(d.sub("t.md")));
}
