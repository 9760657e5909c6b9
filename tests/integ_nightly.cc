/*
 * integ_nightly.cc - ci/nightly (sharded torture matrix, baseline of known
 * failures, artifacts), `lockstorm merge`, and ci/compare (hyperfine).
 *
 * Matrices here are tiny (the `none` control, which is always caught, and
 * `flock`, which never is; cells of at most 0.5 s with time constants scaled
 * by 0.01).  Nothing sleeps or asserts on timing: the legacy revision's failure, which needs the
 * machine's timing, is shown by a bounded list of seeds.
 */
#include <gtest/gtest.h>
#include <jansson.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "testutil.h"

static const std::string BIN = LOCKSTORM_BIN;
static const std::string SRC = LS_SOURCE_DIR;
static const std::string NIGHTLY = SRC + "/ci/nightly --bin " + BIN;

static std::vector<std::string> lines(const std::string &s)
{
	std::vector<std::string> v;
	std::istringstream in(s);
	std::string l;
	while (std::getline(in, l))
		if (!l.empty())
			v.push_back(l);
	return v;
}

static json_t *load(const std::string &path)
{
	json_error_t err;
	return json_load_file(path.c_str(), 0, &err);
}

static void write_file(const std::string &path, const std::string &text)
{
	std::ofstream(path) << text;
}

TEST(Nightly, ShardsCoverTheMatrixExactlyOnce)
{
	CmdResult all = run_cmd(NIGHTLY + " --list");
	ASSERT_EQ(all.status, 0) << all.err;
	std::vector<std::string> full = lines(all.out);
	ASSERT_GT(full.size(), 10u);
	EXPECT_EQ(std::set<std::string>(full.begin(), full.end()).size(), full.size());
	for (int n : { 2, 3, 5 }) {
		std::multiset<std::string> seen;
		for (int i = 1; i <= n; i++) {
			CmdResult r = run_cmd(NIGHTLY + " --list --shard " + std::to_string(i) + "/" + std::to_string(n));
			ASSERT_EQ(r.status, 0) << r.err;
			std::vector<std::string> part = lines(r.out);
			EXPECT_FALSE(part.empty());
			seen.insert(part.begin(), part.end());
			/* deterministic: the same shard twice is the same list */
			EXPECT_EQ(run_cmd(NIGHTLY + " --list --shard " + std::to_string(i) + "/" + std::to_string(n)).out, r.out);
		}
		EXPECT_EQ(seen.size(), full.size()) << n << " shards";
		for (const std::string &id : full)
			EXPECT_EQ(seen.count(id), 1u) << id << " in " << n << " shards";
	}
	for (const char *bad : { " --shard 0/2", " --shard 3/2", " --shard x", " --protocols bogus",
				 " --profiles bogus" })
		EXPECT_EQ(run_cmd(NIGHTLY + " --list" + bad).status, 2) << bad;
}

/* Two shards of a small matrix, merged; the baseline keeps the known failure
 * (the `none` control) from failing the night, and a merge judged against an
 * empty baseline fails. */
TEST(Nightly, ShardsRunMergeAndTheBaselineKeepsKnownFailures)
{
	ScratchDir d;
	write_file(d.sub("baseline.txt"), "# the control that takes no lock is always caught\nnone * *  control\n");
	write_file(d.sub("empty.txt"), "# nothing known\n");
	/* run cells only: the explore cells have their test below */
	std::string common = NIGHTLY + " --budget 120 --protocols none,flock --profiles none,stalls --seeds 1 --workers 3"
				       " --min-cell 0.3 --max-cell 0.5 --html failing --no-explore --baseline " +
			     d.sub("baseline.txt");
	for (int i = 1; i <= 2; i++) {
		CmdResult r = run_cmd(common + " --shard " + std::to_string(i) + "/2 --out " + d.sub("s" + std::to_string(i)));
		ASSERT_EQ(r.status, 0) << r.out << r.err;
		/* not a TTY: one line per finished cell */
		EXPECT_NE(r.err.find("nightly: [1/2] "), std::string::npos) << r.err;
		EXPECT_NE(r.err.find("nightly: [2/2] "), std::string::npos) << r.err;
		EXPECT_NE(r.out.find("PASS (no new failures)"), std::string::npos) << r.out;
		for (const char *f : { "shard.json", "summary.md", "junit.xml", "index.html" })
			EXPECT_TRUE(exists(d.sub("s" + std::to_string(i) + "/" + f))) << f;
	}

	CmdResult m = run_cmd(BIN + " merge -o " + d.sub("merged") + " " + d.sub("s1") + " " + d.sub("s2"));
	ASSERT_EQ(m.status, 0) << m.out << m.err;
	json_t *root = load(d.sub("merged/merged.json"));
	ASSERT_TRUE(root);
	EXPECT_STREQ(json_string_value(json_object_get(root, "schema")), "lockstorm-nightly-merged/1");
	EXPECT_TRUE(json_is_true(json_object_get(root, "complete")));
	json_t *cells = json_object_get(root, "cells");
	ASSERT_EQ(json_array_size(cells), 4u);
	std::set<std::string> ids;
	size_t i;
	json_t *c;
	json_array_foreach(cells, i, c) {
		std::string id = json_string_value(json_object_get(c, "id"));
		ids.insert(id);
		std::string dir = std::string(json_string_value(json_object_get(c, "shard_dir"))) + "/" +
				  json_string_value(json_object_get(c, "dir"));
		EXPECT_TRUE(exists(dir + "/report.json")) << id;
		EXPECT_TRUE(exists(dir + "/junit.xml")) << id;
		EXPECT_TRUE(exists(dir + "/command.txt")) << id;
		if (id.rfind("none__", 0) == 0) {
			/* the control fails, the baseline knows it; its artifacts stay replayable */
			EXPECT_STREQ(json_string_value(json_object_get(c, "verdict")), "fail") << id;
			EXPECT_EQ(json_array_size(json_object_get(c, "new")), 0u) << id;
			EXPECT_GT(json_array_size(json_object_get(c, "known")), 0u) << id;
			EXPECT_TRUE(exists(dir + "/report.html")) << id;
			EXPECT_TRUE(exists(dir + "/journal")) << id;
			EXPECT_EQ(run_cmd(BIN + " check -q " + dir).status, 1) << id;
		} else {
			EXPECT_STREQ(json_string_value(json_object_get(c, "verdict")), "pass") << id;
			EXPECT_FALSE(exists(dir + "/journal")) << id; /* passing cells keep no journals */
		}
	}
	EXPECT_EQ(ids, (std::set<std::string>{ "none__none__s1", "flock__none__s1", "none__stalls__s1",
					       "flock__stalls__s1" }));
	json_decref(root);
	EXPECT_NE(slurp(d.sub("merged/index.html")).find("none__stalls__s1"), std::string::npos);
	EXPECT_NE(slurp(d.sub("merged/summary.md")).find("PASS (no new failures)"), std::string::npos);
	CmdResult shape = run_cmd("/usr/bin/python3 " + SRC + "/tests/junit_shape.py " + d.sub("merged/junit.xml"));
	ASSERT_EQ(shape.status, 0) << shape.err;
	json_error_t err;
	json_t *j = json_loads(shape.out.c_str(), 0, &err);
	ASSERT_TRUE(j);
	EXPECT_EQ(json_array_size(json_object_get(j, "suites")), 4u);
	EXPECT_EQ(json_integer_value(json_object_get(j, "failures")), 0); /* known failures are skipped */
	json_decref(j);

	/* judged against an empty baseline, the control's failures are new */
	m = run_cmd(BIN + " merge --baseline " + d.sub("empty.txt") + " -o " + d.sub("merged2") + " " + d.sub("s1") +
		    " " + d.sub("s2"));
	EXPECT_EQ(m.status, 1) << m.out << m.err;
	EXPECT_NE(slurp(d.sub("merged2/summary.md")).find("new failures"), std::string::npos);

	/* one shard alone does not cover the matrix */
	m = run_cmd(BIN + " merge -o " + d.sub("merged3") + " " + d.sub("s1"));
	EXPECT_EQ(m.status, 2) << m.out << m.err;
	EXPECT_NE(m.err.find("missing"), std::string::npos) << m.err;
	/* the same shard twice */
	EXPECT_EQ(run_cmd(BIN + " merge -o " + d.sub("merged4") + " " + d.sub("s1") + " " + d.sub("s1")).status, 2);
	/* not a shard folder */
	EXPECT_EQ(run_cmd(BIN + " merge -o " + d.sub("merged5") + " " + d.path).status, 2);
}

TEST(Nightly, NewFailureFailsTheNight)
{
	ScratchDir d;
	write_file(d.sub("empty.txt"), "");
	CmdResult r = run_cmd(NIGHTLY + " --budget 120 --protocols none --profiles none --seeds 1 --workers 3"
				      " --min-cell 0.3 --max-cell 0.3 --html none --baseline " + d.sub("empty.txt") +
			      " --out " + d.sub("n"));
	EXPECT_EQ(r.status, 1) << r.out << r.err;
	EXPECT_NE(r.err.find("exclusion (NEW)"), std::string::npos) << r.err;
	CmdResult shape = run_cmd("/usr/bin/python3 " + SRC + "/tests/junit_shape.py " + d.sub("n/junit.xml"));
	ASSERT_EQ(shape.status, 0) << shape.err;
	json_error_t err;
	json_t *j = json_loads(shape.out.c_str(), 0, &err);
	ASSERT_TRUE(j);
	EXPECT_GT(json_integer_value(json_object_get(j, "failures")), 0);
	json_decref(j);
	/* a folder that is not the nightly's is refused */
	mkdir(d.sub("other").c_str(), 0700);
	write_file(d.sub("other/keep.txt"), "x");
	EXPECT_EQ(run_cmd(NIGHTLY + " --protocols flock --profiles none --seeds 1 --out " + d.sub("other")).status, 2);
	EXPECT_TRUE(exists(d.sub("other/keep.txt")));
}

static std::string str(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));
	return v ? v : "";
}

static bool has_invariant(json_t *list, const char *inv)
{
	size_t i;
	json_t *k;
	json_array_foreach(list, i, k)
		if (str(k, "invariant") == inv)
			return true;
	return false;
}

/* Explore cells: one per built-in revision and seed (none of the `none`
 * control or an ext: adapter), sharded and merged like run cells, with their
 * counterexamples replayable; the baseline keeps a known explore failure from
 * failing the night, and one outside it fails it.  mkdir-legacy's K-ML-1 is
 * found within the first schedules (docs/findings.md: exclusion at schedule 40
 * of seed 1), so a cell of 60 schedules finds it (a cell of 0.3 s did not, on
 * a machine under load: 14 schedules). */
TEST(Nightly, ExploreCellsShardMergeAndTheBaselineKeepsKnownOnes)
{
	/* which cells: explore cells for built-in revisions only, switched by --no-explore / --explore-only */
	std::string list = NIGHTLY + " --list --protocols mkdir-legacy,ext:flock1,none --profiles none";
	CmdResult r = run_cmd(list);
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(lines(r.out), (std::vector<std::string>{ "mkdir-legacy__none__s1", "ext-flock1__none__s1",
							  "none__none__s1", "mkdir-legacy__explore__s1" }));
	EXPECT_EQ(lines(run_cmd(list + " --no-explore").out).size(), 3u);
	EXPECT_EQ(lines(run_cmd(list + " --explore-only").out), (std::vector<std::string>{ "mkdir-legacy__explore__s1" }));
	EXPECT_EQ(run_cmd(NIGHTLY + " --list --explore-only --protocols ext:flock1,none").status, 2);
	EXPECT_EQ(run_cmd(list + " --no-explore --explore-only").status, 2);

	ScratchDir d;
	write_file(d.sub("baseline.txt"), "none  *        *  control\nmkdir-legacy  explore  *  K-ML-1/K-ML-2\n");
	write_file(d.sub("empty.txt"), "");
	/* explore cells of 60 schedules, not of 0.3 s: what they find does not depend on the machine's speed */
	std::string common = NIGHTLY + " --budget 120 --protocols mkdir-legacy,flock,none --profiles none --workers 3"
				       " --min-cell 0.3 --max-cell 0.5 --explore-schedules 60 --html failing --baseline " +
			     d.sub("baseline.txt");
	std::set<std::string> explore_ids;
	for (int i = 1; i <= 2; i++) {
		std::string out = d.sub("s" + std::to_string(i));
		r = run_cmd(common + " --shard " + std::to_string(i) + "/2 --out " + out);
		ASSERT_EQ(r.status, 0) << r.out << r.err;
		json_t *root = load(out + "/shard.json");
		ASSERT_TRUE(root);
		json_t *m = json_object_get(json_object_get(root, "matrix"), "explore");
		ASSERT_TRUE(json_is_object(m));
		EXPECT_EQ(json_integer_value(json_object_get(m, "workers")), 3);
		EXPECT_EQ(json_integer_value(json_object_get(m, "ops")), 2);
		size_t k;
		json_t *c;
		json_array_foreach(json_object_get(root, "cells"), k, c) {
			if (str(c, "kind") != "explore")
				continue;
			std::string id = str(c, "id"), dir = out + "/" + str(c, "dir");
			explore_ids.insert(id);
			EXPECT_EQ(str(c, "profile"), "explore");
			EXPECT_TRUE(exists(dir + "/explore.json")) << id;
			EXPECT_TRUE(exists(dir + "/run.log")) << id;
			std::string cmd = slurp(dir + "/command.txt");
			EXPECT_NE(cmd.find(" explore -p "), std::string::npos) << cmd;
			EXPECT_NE(cmd.find("--all"), std::string::npos) << cmd;
			json_t *e = json_object_get(c, "explore");
			ASSERT_TRUE(json_is_object(e)) << id;
			EXPECT_GT(json_integer_value(json_object_get(e, "schedules")), 0) << id;
			EXPECT_GT(json_integer_value(json_object_get(e, "points_hit")), 0) << id;
			EXPECT_GE(json_integer_value(json_object_get(e, "points")),
				  json_integer_value(json_object_get(e, "points_hit"))) << id;
			EXPECT_GT(json_integer_value(json_object_get(e, "step_pairs")), 0) << id;
			if (id == "mkdir-legacy__explore__s1") {
				/* found, known, and every counterexample replays */
				EXPECT_EQ(str(c, "verdict"), "fail");
				EXPECT_TRUE(has_invariant(json_object_get(c, "known"), "exclusion"));
				EXPECT_EQ(json_array_size(json_object_get(c, "new")), 0u);
				json_t *cex = json_object_get(c, "cex");
				ASSERT_GT(json_array_size(cex), 0u);
				std::string first = out + "/" + str(json_array_get(cex, 0), "file");
				EXPECT_TRUE(exists(first)) << first;
				EXPECT_NE(cmd.find("lockstorm replay " + first), std::string::npos) << cmd;
				EXPECT_EQ(run_cmd(BIN + " replay -q " + first).status, 1) << first;
				EXPECT_TRUE(exists(dir + "/report.html"));
			} else {
				EXPECT_EQ(str(c, "verdict"), "pass") << id; /* flock: the explorer finds nothing */
				EXPECT_EQ(json_array_size(json_object_get(c, "cex")), 0u) << id;
			}
		}
		json_decref(root);
		EXPECT_NE(slurp(out + "/summary.md").find("Explore cells"), std::string::npos);
	}
	EXPECT_EQ(explore_ids, (std::set<std::string>{ "mkdir-legacy__explore__s1", "flock__explore__s1" }));

	CmdResult m = run_cmd(BIN + " merge -o " + d.sub("merged") + " " + d.sub("s1") + " " + d.sub("s2"));
	ASSERT_EQ(m.status, 0) << m.out << m.err;
	json_t *root = load(d.sub("merged/merged.json"));
	ASSERT_TRUE(root);
	EXPECT_TRUE(json_is_true(json_object_get(root, "complete")));
	EXPECT_EQ(json_array_size(json_object_get(root, "cells")), 5u);
	size_t i;
	json_t *c;
	int merged_explore = 0;
	json_array_foreach(json_object_get(root, "cells"), i, c)
		merged_explore += str(c, "kind") == "explore";
	EXPECT_EQ(merged_explore, 2);
	json_decref(root);
	std::string md = slurp(d.sub("merged/summary.md"));
	EXPECT_NE(md.find("PASS (no new failures)"), std::string::npos) << md;
	EXPECT_NE(md.find("| flock__explore__s1 |"), std::string::npos) << md;
	EXPECT_NE(md.find("points not hit"), std::string::npos) << md;
	EXPECT_NE(slurp(d.sub("merged/index.html")).find("<th>explore</th>"), std::string::npos);
	CmdResult shape = run_cmd("/usr/bin/python3 " + SRC + "/tests/junit_shape.py " + d.sub("merged/junit.xml"));
	ASSERT_EQ(shape.status, 0) << shape.err;
	json_error_t err;
	json_t *j = json_loads(shape.out.c_str(), 0, &err);
	ASSERT_TRUE(j);
	EXPECT_EQ(json_array_size(json_object_get(j, "suites")), 5u);
	EXPECT_EQ(json_integer_value(json_object_get(j, "failures")), 0); /* known failures are skipped */
	EXPECT_GT(json_integer_value(json_object_get(j, "skipped")), 0);
	json_decref(j);

	/* judged against an empty baseline, the explore cell's failures are new ... */
	m = run_cmd(BIN + " merge --baseline " + d.sub("empty.txt") + " -o " + d.sub("merged2") + " " + d.sub("s1") +
		    " " + d.sub("s2"));
	EXPECT_EQ(m.status, 1) << m.out << m.err;
	/* ... and a night that finds one fails (junit: a failure per invariant found) */
	r = run_cmd(NIGHTLY + " --budget 120 --protocols mkdir-legacy --explore-only --min-cell 0.3 --max-cell 0.3"
			      " --explore-schedules 60 --html none --baseline " + d.sub("empty.txt") + " --out " + d.sub("n"));
	EXPECT_EQ(r.status, 1) << r.out << r.err;
	EXPECT_NE(r.err.find("mkdir-legacy explore seed 1"), std::string::npos) << r.err;
	EXPECT_NE(r.err.find("exclusion (NEW)"), std::string::npos) << r.err;
	shape = run_cmd("/usr/bin/python3 " + SRC + "/tests/junit_shape.py " + d.sub("n/junit.xml"));
	ASSERT_EQ(shape.status, 0) << shape.err;
	j = json_loads(shape.out.c_str(), 0, &err);
	ASSERT_TRUE(j);
	EXPECT_GT(json_integer_value(json_object_get(j, "failures")), 0);
	json_decref(j);
}

/* The shipped baseline keeps the legacy revision's known failure
 * (PROTOCOLS.md K-ML-1: mkdir-legacy breaks a stalled holder's lock).  Whether a 1 s cell under
 * the stalls profile shows it is the machine's timing: a bounded list of seeds (one cell each)
 * until one fails on exclusion; on every seed the night passes (the failure is known). */
TEST(Nightly, ShippedBaselineKnowsTheLegacyFailure)
{
	ScratchDir d;
	std::string seen;
	int shown = first_seed_showing({ 1, 2, 3, 4, 5, 6 }, [&](int seed, std::string *said) {
		std::string out = d.sub("n" + std::to_string(seed));
		CmdResult r = run_cmd(NIGHTLY + " --budget 120 --protocols mkdir-legacy --profiles stalls --seeds 1 --seed " +
				      std::to_string(seed) + " --min-cell 1 --max-cell 1 --html none --out " + out);
		EXPECT_EQ(r.status, 0) << "seed " << seed << ": " << r.out << r.err;
		json_t *root = load(out + "/shard.json");
		EXPECT_TRUE(root) << "seed " << seed << ": " << r.out << r.err;
		json_t *cell = json_array_get(json_object_get(root, "cells"), 0);
		bool exclusion_known = false;
		size_t i;
		json_t *k;
		json_array_foreach(json_object_get(cell, "known"), i, k)
			exclusion_known |= !strcmp(json_string_value(json_object_get(k, "invariant")), "exclusion");
		bool fail = str(cell, "verdict") == "fail";
		*said = "exit " + std::to_string(r.status) + ", verdict " + str(cell, "verdict") +
			(exclusion_known ? ", exclusion known" : ", exclusion not among the known") + "\n" + r.err;
		json_decref(root);
		return r.status == 0 && fail && exclusion_known;
	}, &seen);
	EXPECT_NE(shown, -1) << "no seed of the list showed the known exclusion failure:\n" << seen;
}

/* xmllint against tests/junit-10.xsd (Jenkins xUnit's schema): "" when valid, else its complaint. */
static std::string xsd_problem(const std::string &file)
{
	CmdResult r = run_cmd("xmllint --noout --schema " + SRC + "/tests/junit-10.xsd " + file);
	return r.status == 0 ? "" : r.err + r.out;
}

/* The budget is the budget: a shard that cannot fit a cell skips it, names it everywhere, and exits 4
 * (INCOMPLETE).  A budget below one cell's least cost skips every cell, whatever the machine's speed. */
TEST(Nightly, ABudgetTooSmallSkipsAndNamesTheCells)
{
	ScratchDir d;
	CmdResult r = run_cmd(NIGHTLY + " --budget 0.5 --protocols flock --profiles none,stalls --no-explore --workers 2"
				      " --min-cell 0.3 --max-cell 0.3 --baseline '' --out " + d.sub("n"));
	EXPECT_EQ(r.status, 4) << r.out << r.err;
	EXPECT_NE(r.err.find("flock none seed 1: SKIPPED"), std::string::npos) << r.err;
	EXPECT_NE(r.err.find("INCOMPLETE: 2 of 2 cells skipped"), std::string::npos) << r.err;
	json_t *root = load(d.sub("n/shard.json"));
	ASSERT_TRUE(root);
	EXPECT_FALSE(json_is_true(json_object_get(root, "complete")));
	EXPECT_EQ(json_array_size(json_object_get(root, "cells")), 0u);
	json_t *skipped = json_object_get(root, "skipped");
	ASSERT_EQ(json_array_size(skipped), 2u);
	EXPECT_EQ(str(json_array_get(skipped, 0), "id"), "flock__none__s1");
	EXPECT_EQ(str(json_array_get(skipped, 1), "id"), "flock__stalls__s1");
	json_decref(root);
	std::string md = slurp(d.sub("n/summary.md"));
	EXPECT_NE(md.find("INCOMPLETE"), std::string::npos) << md;
	EXPECT_NE(md.find("`flock__stalls__s1`"), std::string::npos) << md;
	std::string idx = slurp(d.sub("n/index.html"));
	EXPECT_NE(idx.find("INCOMPLETE"), std::string::npos);
	EXPECT_NE(idx.find("class=\"c skip\""), std::string::npos);
	EXPECT_EQ(xsd_problem(d.sub("n/junit.xml")), "");
	CmdResult shape = run_cmd("/usr/bin/python3 " + SRC + "/tests/junit_shape.py " + d.sub("n/junit.xml"));
	ASSERT_EQ(shape.status, 0) << shape.err;
	json_error_t err;
	json_t *j = json_loads(shape.out.c_str(), 0, &err);
	ASSERT_TRUE(j);
	EXPECT_EQ(json_integer_value(json_object_get(j, "skipped")), 2);
	json_decref(j);
	/* merge says which cells the shard skipped */
	CmdResult m = run_cmd(BIN + " merge -o " + d.sub("m") + " " + d.sub("n"));
	EXPECT_EQ(m.status, 2) << m.out << m.err;
	EXPECT_NE(m.err.find("skipped 2 cells"), std::string::npos) << m.err;
}

/* A shard killed (SIGKILL, no chance to clean up) after its first cell leaves shard.json, summary.md,
 * junit.xml and index.html as they stood after that cell: they are rewritten, whole, after every cell. */
TEST(Nightly, AKilledShardLeavesItsArtifacts)
{
	ScratchDir d;
	std::string cmd = NIGHTLY + " --budget 120 --protocols flock --profiles none,stalls,errnos --no-explore"
				    " --workers 2 --min-cell 0.3 --max-cell 0.3 --html none --baseline /dev/null --out " +
			  d.sub("n");
	/* the kill follows the first cell's progress line, which the shard prints after writing the four */
	/* in a subshell: run_cmd's own redirections must not replace the pipe grep reads */
	CmdResult r = run_cmd("( setsid sh -c 'echo $$ > " + d.sub("pid") + "; exec " + cmd + " 2>&1' | { grep -m1 -q "
			      "'nightly: \\[1/3\\]' && kill -KILL -$(cat " + d.sub("pid") + "); cat >/dev/null; } )");
	ASSERT_EQ(r.status, 0) << r.out << r.err;
	json_t *root = load(d.sub("n/shard.json"));
	ASSERT_TRUE(root);
	EXPECT_FALSE(json_is_true(json_object_get(root, "complete")));
	EXPECT_EQ(json_array_size(json_object_get(root, "cells")), 1u);
	EXPECT_EQ(json_array_size(json_object_get(root, "pending")), 2u);
	json_decref(root);
	std::string md = slurp(d.sub("n/summary.md"));
	EXPECT_NE(md.find("in progress (running cells): 1 of 3 cells done"), std::string::npos) << md;
	EXPECT_NE(md.find("`flock__errnos__s1`"), std::string::npos) << md; /* not run yet */
	EXPECT_NE(slurp(d.sub("n/index.html")).find("flock__none__s1/"), std::string::npos);
	EXPECT_EQ(xsd_problem(d.sub("n/junit.xml")), "");
	EXPECT_NE(slurp(d.sub("n/junit.xml")).find("nightly flock__none__s1"), std::string::npos);
}

/* The index's headline is white on a coloured banner, never green text on green. */
TEST(Nightly, PassingHeadlineIsReadable)
{
	ScratchDir d;
	CmdResult r = run_cmd(NIGHTLY + " --budget 120 --protocols flock --profiles none --no-explore --workers 2"
				      " --min-cell 0.3 --max-cell 0.3 --baseline '' --out " + d.sub("n"));
	ASSERT_EQ(r.status, 0) << r.out << r.err;
	std::string idx = slurp(d.sub("n/index.html"));
	EXPECT_NE(idx.find("<h1 id=\"verdict\" class=\"ok\">"), std::string::npos) << idx;
	EXPECT_NE(idx.find("h1{padding:10px 14px;border-radius:4px;color:#fff"), std::string::npos);
	EXPECT_NE(idx.find("h1.ok{background:#1b7f3b}"), std::string::npos);
	EXPECT_EQ(xsd_problem(d.sub("n/junit.xml")), "");
}

TEST(CiCompare, HyperfineTimingsWithVerdicts)
{
	CmdResult which = run_cmd("command -v hyperfine");
	if (which.status != 0)
		GTEST_SKIP() << "hyperfine is not installed (./ci/setup installs Debian's hyperfine)";
	ScratchDir d;
	CmdResult r = run_cmd(SRC + "/ci/compare --bin " + BIN + " -p flock,none --ops 100 --runs 2 --warmup 0 --out " +
			      d.sub("cc") + " -- -n 2");
	ASSERT_EQ(r.status, 1) << r.out << r.err; /* none is caught in every timed run */
	for (const char *f : { "hyperfine.json", "hyperfine.md", "compare.json", "compare.md", "report-flock.json",
			       "report-none.json" })
		EXPECT_TRUE(exists(d.sub("cc/") + f)) << f;
	json_t *root = load(d.sub("cc/compare.json"));
	ASSERT_TRUE(root);
	json_t *revs = json_object_get(root, "revisions");
	ASSERT_EQ(json_array_size(revs), 2u);
	for (size_t i = 0; i < 2; i++) {
		json_t *v = json_array_get(revs, i);
		std::string proto = json_string_value(json_object_get(v, "protocol"));
		json_t *verdicts = json_object_get(v, "verdicts");
		ASSERT_EQ(json_array_size(verdicts), 2u) << proto;
		for (size_t k = 0; k < 2; k++)
			EXPECT_STREQ(json_string_value(json_array_get(verdicts, k)), proto == "none" ? "fail" : "pass");
		EXPECT_GT(json_number_value(json_object_get(v, "median_s")), 0.0);
		/* hyperfine names each command by its revision, and every timed run keeps its report */
		EXPECT_EQ(json_string_value(json_object_get(v, "command")), proto);
		EXPECT_EQ(entries(d.sub("cc/runs/" + proto)).size(), 2u) << proto;
	}
	json_decref(root);
	std::string md = slurp(d.sub("cc/compare.md"));
	EXPECT_NE(md.find("| none |"), std::string::npos) << md;
	EXPECT_NE(md.find("2 fail"), std::string::npos) << md;
	EXPECT_EQ(run_cmd(SRC + "/ci/compare --bin " + BIN + " -p bogus --runs 2").status, 2);
}

/* ---- confirmed nightlies: a NEW failure is re-run (same command, 3 times) and triaged ---- */

/* A --bin for ci/nightly that is lockstorm, except that its first FAILS cell runs of `-p flock`
 * (a run with -o) run the `none` control instead and relabel its run.json as flock's: the
 * checker fails them, triage cannot reproduce them (no interleaving of flock shows it), and the
 * runs after them are flock's own, which pass.  A counter file, no timing. */
static std::string fails_once_bin(const ScratchDir &d, int fails)
{
	std::string path = d.sub("lockstorm-fails-" + std::to_string(fails));
	write_file(path, "#!/bin/bash\n"
			 "real='" + BIN + "'; state='" + path + ".count'\n"
			 "if [ \"$1\" = run ]; then\n"
			 "  proto= out= prev=\n"
			 "  for a in \"$@\"; do [ \"$prev\" = -p ] && proto=$a; [ \"$prev\" = -o ] && out=$a; prev=$a; done\n"
			 "  if [ \"$proto\" = flock ] && [ -n \"$out\" ]; then\n"
			 "    n=$(( $(cat \"$state\" 2>/dev/null || echo 0) + 1 )); echo $n >\"$state\"\n"
			 "    if [ $n -le " + std::to_string(fails) + " ]; then\n"
			 "      args=(); for a in \"$@\"; do [ \"$a\" = flock ] && a=none; args+=(\"$a\"); done\n"
			 "      \"$real\" \"${args[@]}\"; rc=$?\n"
			 "      /usr/bin/python3 -c 'import json,sys; p=sys.argv[1]+\"/run.json\"; o=json.load(open(p)); "
			 "o[\"protocols\"]=[\"flock\"]; json.dump(o,open(p,\"w\"))' \"$out\"\n"
			 "      exit $rc\n"
			 "    fi\n"
			 "  fi\n"
			 "fi\n"
			 "exec \"$real\" \"$@\"\n");
	chmod(path.c_str(), 0755);
	return path;
}

/* The one cell's confirm object of a shard. */
static json_t *cell_confirm(json_t *shard)
{
	return json_object_get(json_array_get(json_object_get(shard, "cells"), 0), "confirm");
}

static json_t *junit_shape(const std::string &file)
{
	CmdResult shape = run_cmd("/usr/bin/python3 " + SRC + "/tests/junit_shape.py " + file);
	EXPECT_EQ(shape.status, 0) << shape.err;
	json_error_t err;
	return json_loads(shape.out.c_str(), 0, &err);
}

static std::string one_cell_night(const std::string &bin, const std::string &proto, const std::string &base,
				  const std::string &out, const std::string &more = "")
{
	return SRC + "/ci/nightly --bin " + bin + " --budget 200 --protocols " + proto +
	       " --profiles none --seeds 1 --workers 3 --min-cell 0.3 --max-cell 0.3 --html failing --no-explore"
	       " --triage-budget 5 --baseline " + base + " --out " + out + more;
}

TEST(NightlyConfirm, ADeterministicNewFailureIsConfirmedWithItsCounterexample)
{
	ScratchDir d;
	write_file(d.sub("empty.txt"), "");
	/* the triage's budget is a cap, not the time it takes (it stops at its find); 5 s was
	 * too little for a machine starved by other jobs: "repeats", no counterexample */
	CmdResult r = run_cmd(one_cell_night(BIN, "none", d.sub("empty.txt"), d.sub("n"), " --budget 1000 --triage-budget 120"));
	EXPECT_EQ(r.status, 1) << r.out << r.err;
	json_t *shard = load(d.sub("n/shard.json"));
	ASSERT_TRUE(shard);
	json_t *k = cell_confirm(shard);
	ASSERT_TRUE(k) << "the NEW failure was confirmed or not";
	EXPECT_EQ(str(k, "label"), "confirmed");
	EXPECT_EQ(json_integer_value(json_object_get(k, "reruns")), 3);
	ASSERT_GT(json_array_size(json_object_get(k, "cex")), 0u);
	std::string cex = d.sub("n/") + json_string_value(json_array_get(json_object_get(k, "cex"), 0));
	EXPECT_EQ(run_cmd(BIN + " replay -q " + cex).status, 1) << "the counterexample replays the violation";
	EXPECT_EQ(json_array_size(json_object_get(k, "runs")), 3u) << "three re-runs";
	for (int j = 1; j <= 3; j++)
		EXPECT_TRUE(exists(d.sub("n/cells/none__none__s1/rerun-" + std::to_string(j) + "/report.json"))) << j;
	json_decref(shard);
	std::string md = slurp(d.sub("n/summary.md"));
	EXPECT_NE(md.find("FAIL (1 cells with new failures)"), std::string::npos) << md;
	EXPECT_NE(md.find("confirmed (cells/none__none__s1/triage/cex-"), std::string::npos) << md;
	EXPECT_NE(slurp(d.sub("n/index.html")).find("[confirmed (cells/none__none__s1/triage/cex-"), std::string::npos);
	EXPECT_NE(slurp(d.sub("n/junit.xml")).find("message=\"NEW, confirmed (cells/none__none__s1/triage/cex-"),
		  std::string::npos);
	json_t *j = junit_shape(d.sub("n/junit.xml"));
	ASSERT_TRUE(j);
	EXPECT_GT(json_integer_value(json_object_get(j, "failures")), 0);
	json_decref(j);
}

TEST(NightlyConfirm, ANewFailureSeenOnceIsReportedAndKeptAndFailsOnlyWithStrict)
{
	ScratchDir d;
	write_file(d.sub("empty.txt"), "");
	std::string bin = fails_once_bin(d, 1);
	CmdResult r = run_cmd(one_cell_night(bin, "flock", d.sub("empty.txt"), d.sub("n")));
	EXPECT_EQ(r.status, 0) << "seen once does not fail the night: " << r.out << r.err;
	EXPECT_NE(r.err.find("NEW failures seen once"), std::string::npos) << r.err;
	json_t *shard = load(d.sub("n/shard.json"));
	ASSERT_TRUE(shard);
	json_t *k = cell_confirm(shard);
	ASSERT_TRUE(k);
	EXPECT_EQ(str(k, "label"), "seen-once");
	EXPECT_EQ(json_integer_value(json_object_get(k, "repeats")), 0);
	EXPECT_EQ(json_array_size(json_object_get(k, "cex")), 0u);
	EXPECT_NE(str(k, "triage").find("not reproduced"), std::string::npos) << str(k, "triage");
	json_decref(shard);
	/* kept: the failing run's journals stay for `lockstorm check` */
	EXPECT_TRUE(exists(d.sub("n/cells/flock__none__s1/journal")));
	EXPECT_EQ(run_cmd(BIN + " check -q " + d.sub("n/cells/flock__none__s1")).status, 1);
	std::string md = slurp(d.sub("n/summary.md"));
	EXPECT_NE(md.find("PASS (1 cells with new failures seen once, not confirmed)"), std::string::npos) << md;
	EXPECT_NE(md.find("seen once (0/3 re-runs, triage: not reproduced"), std::string::npos) << md;
	EXPECT_NE(slurp(d.sub("n/index.html")).find("New failures seen once"), std::string::npos);
	EXPECT_NE(slurp(d.sub("n/junit.xml")).find("<skipped message=\"NEW, seen once (0/3 re-runs"), std::string::npos);
	json_t *j = junit_shape(d.sub("n/junit.xml"));
	ASSERT_TRUE(j);
	EXPECT_EQ(json_integer_value(json_object_get(j, "failures")), 0);
	json_decref(j);
	/* a merge keeps the label, and --strict fails on it */
	EXPECT_EQ(run_cmd(BIN + " merge -o " + d.sub("m") + " " + d.sub("n")).status, 0);
	EXPECT_EQ(run_cmd(BIN + " merge --strict -o " + d.sub("m2") + " " + d.sub("n")).status, 1);

	/* --strict: the same night fails */
	unlink((bin + ".count").c_str());
	CmdResult s = run_cmd(one_cell_night(bin, "flock", d.sub("empty.txt"), d.sub("s"), " --strict"));
	EXPECT_EQ(s.status, 1) << s.out << s.err;
	shard = load(d.sub("s/shard.json"));
	ASSERT_TRUE(shard);
	EXPECT_EQ(str(cell_confirm(shard), "label"), "seen-once");
	json_decref(shard);
	j = junit_shape(d.sub("s/junit.xml"));
	ASSERT_TRUE(j);
	EXPECT_GT(json_integer_value(json_object_get(j, "failures")), 0);
	json_decref(j);
}

TEST(NightlyConfirm, ANewFailureThatRepeatsFailsTheNight)
{
	ScratchDir d;
	write_file(d.sub("empty.txt"), "");
	/* the cell and its first re-run fail, the two after it pass: repeats 1/3 */
	CmdResult r = run_cmd(one_cell_night(fails_once_bin(d, 2), "flock", d.sub("empty.txt"), d.sub("n")));
	EXPECT_EQ(r.status, 1) << r.out << r.err;
	json_t *shard = load(d.sub("n/shard.json"));
	ASSERT_TRUE(shard);
	json_t *k = cell_confirm(shard);
	ASSERT_TRUE(k);
	EXPECT_EQ(str(k, "label"), "repeats");
	EXPECT_EQ(json_integer_value(json_object_get(k, "repeats")), 1);
	json_decref(shard);
	EXPECT_NE(slurp(d.sub("n/summary.md")).find("| repeats 1/3 |"), std::string::npos) << slurp(d.sub("n/summary.md"));
	EXPECT_NE(slurp(d.sub("n/junit.xml")).find("message=\"NEW, repeats 1/3: "), std::string::npos);
	EXPECT_NE(slurp(d.sub("n/index.html")).find("[repeats 1/3]"), std::string::npos);
}
