/*
 * integ_adapters.cc - one short run of every shipped library adapter
 * (adapters/README.md) through `lockstorm run -p ext:NAME`.
 *
 * Without faults each library must keep every invariant: a failure here is
 * an adapter or driver bug, not a finding.  Under the stalls, crashes and
 * errnos profiles each must reach a verdict (exit 0 or 1, a report): which
 * one is the library's business (docs/findings.md, scripts/findings).  A test skips only when the
 * library itself is not installed (./ci/setup installs them all, so CI never
 * skips); the skip message says what is missing.
 */
#include <gtest/gtest.h>
#include <jansson.h>
#include <string.h>
#include <unistd.h>

#include <string>

#include "testutil.h"

static const std::string BIN = LOCKSTORM_BIN;
static const std::string SRC = LS_SOURCE_DIR;

static std::string build_dir()
{
	return BIN.substr(0, BIN.rfind('/'));
}

/* "" when the adapter's library is there, else what is missing. */
static std::string missing(const std::string &adapter)
{
	if (adapter == "proper-lockfile" || adapter == "npm-lockfile") {
		const char *pkg = adapter == "proper-lockfile" ? "proper-lockfile" : "lockfile";
		if (run_cmd("node --version").status != 0)
			return "node";
		if (access((SRC + "/adapters/node/node_modules/" + pkg + "/package.json").c_str(), R_OK) != 0)
			return std::string("npm package ") + pkg + " (npm ci --prefix adapters/node)";
	} else if (adapter == "py-filelock") {
		if (run_cmd("/usr/bin/python3 -c 'import filelock'").status != 0)
			return "python3-filelock";
	} else if (adapter == "liblockfile") {
		if (access((build_dir() + "/adapters/ls_adapter_liblockfile").c_str(), X_OK) != 0)
			return "ls_adapter_liblockfile (liblockfile-dev)";
	}
	return "";
}

struct AdapterRun {
	const char *adapter;
	const char *args; /* parameters and time scale */
};

/* how ctest names the parameter ("ext:liblockfile --param pid=0 ...", not its bytes) */
static void PrintTo(const AdapterRun &a, std::ostream *os)
{
	*os << "ext:" << a.adapter << " " << a.args;
}

class IntegAdapters : public ::testing::TestWithParam<AdapterRun> {};

TEST_P(IntegAdapters, ShortRunWithoutFaultsPasses)
{
	const AdapterRun &a = GetParam();
	std::string why = missing(a.adapter);
	if (!why.empty())
		GTEST_SKIP() << why << " is not installed: run ./ci/setup";
	ScratchDir d;
	CmdResult r = run_cmd("LOCKSTORM_BUILD='" + build_dir() + "' " + BIN + " run -p ext:" + a.adapter +
			      " -w update -n 3 --ops 30 " + a.args + " --dir " + d.sub("w") + " --json " +
			      d.sub("r.json"));
	ASSERT_EQ(r.status, 0) << r.out << r.err;
	json_error_t err;
	json_t *rep = json_load_file(d.sub("r.json").c_str(), 0, &err);
	ASSERT_TRUE(rep) << err.text;
	EXPECT_STREQ(json_string_value(json_object_get(rep, "verdict")), "pass") << r.out;
	json_t *totals = json_object_get(rep, "totals");
	EXPECT_GT(json_integer_value(json_object_get(totals, "committed")), 0) << r.out;
	EXPECT_EQ(json_integer_value(json_object_get(totals, "errors")), 0) << r.out;
	json_decref(rep);
}

TEST_P(IntegAdapters, EveryFaultProfileReachesAVerdict)
{
	const AdapterRun &a = GetParam();
	std::string why = missing(a.adapter);
	if (!why.empty())
		GTEST_SKIP() << why << " is not installed: run ./ci/setup";
	for (const char *profile : { "stalls", "crashes", "errnos" }) {
		ScratchDir d;
		CmdResult r = run_cmd("LOCKSTORM_BUILD='" + build_dir() + "' " + BIN + " run -p ext:" + a.adapter +
				      " -w update -n 3 -d 2s --respawn --faults " + profile + " " + a.args + " --dir " +
				      d.sub("w") + " --json " + d.sub("r.json") + " -q");
		EXPECT_TRUE(r.status == 0 || r.status == 1) << profile << ": exit " << r.status << "\n" << r.out << r.err;
		json_error_t err;
		json_t *rep = json_load_file(d.sub("r.json").c_str(), 0, &err);
		EXPECT_TRUE(rep) << profile << ": no report: " << err.text;
		json_decref(rep);
	}
}

INSTANTIATE_TEST_SUITE_P(
	EveryLibrary, IntegAdapters,
	::testing::Values(AdapterRun{ "proper-lockfile", "--time-scale 0.2" },
			  AdapterRun{ "npm-lockfile", "--time-scale 0.05" },
			  AdapterRun{ "py-filelock", "--param kind=filelock --time-scale 0.05" },
			  AdapterRun{ "py-filelock", "--param kind=softfilelock --time-scale 0.05" },
			  AdapterRun{ "liblockfile", "--param pid=1 --time-scale 0.01" },
			  AdapterRun{ "liblockfile", "--param pid=0 --time-scale 0.01" }),
	[](const ::testing::TestParamInfo<AdapterRun> &info) {
		std::string n = std::string(info.param.adapter) + "_" + std::to_string(info.index);
		for (char &c : n)
			if (c == '-')
				c = '_';
		return n;
	});

/* A user's adapter: `lockstorm adapter new` in a folder outside the project,
 * that folder on LOCKSTORM_ADAPTERS, and it is -p ext:NAME everywhere. */
TEST(UserAdapter, NewSkeletonRunsAtOnce)
{
	ScratchDir d;
	std::string env = "LOCKSTORM_ADAPTERS=" + d.path + " ";
	CmdResult np = run_cmd(BIN + " adapter new my-py --lang python --dir " + d.path);
	ASSERT_EQ(np.status, 0) << np.out << np.err;
	CmdResult again = run_cmd(BIN + " adapter new my-py --lang python --dir " + d.path);
	EXPECT_EQ(again.status, 2) << again.out << again.err; /* nothing is overwritten */
	EXPECT_EQ(run_cmd(BIN + " adapter new My_Bad --lang python --dir " + d.path).status, 2);
	EXPECT_EQ(run_cmd(BIN + " adapter new x --lang cobol --dir " + d.path).status, 2);

	CmdResult r = run_cmd(env + BIN + " run -p ext:my-py -n 3 --ops 60 -q --param wait_ms=5s --json " + d.sub("r.json"));
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	EXPECT_NE(r.out.find("verdict: PASS"), std::string::npos) << r.out;
	Report rep(d.sub("r.json"));
	EXPECT_EQ(rep.total("committed"), 60);
	CmdResult l = run_cmd(env + BIN + " list protocols");
	EXPECT_NE(l.out.find("ext:my-py\n"), std::string::npos) << l.out;
	CmdResult c = run_cmd(env + BIN + " compare -p ext:my-py,flock -n 2 --ops 20 -q");
	EXPECT_EQ(c.status, 0) << c.out << c.err;
	CmdResult bad = run_cmd(env + BIN + " run -p ext:my-py -n 1 --ops 1 -q --param nosuch=1");
	EXPECT_EQ(bad.status, 2) << bad.out << bad.err;
	CmdResult opt = run_cmd(BIN + " run -p ext:my-py -n 2 --ops 10 -q --adapters " + d.path);
	EXPECT_EQ(opt.status, 0) << opt.out << opt.err; /* --adapters DIR: the same as the variable */
	EXPECT_EQ(run_cmd(BIN + " run -p ext:my-py -n 2 --ops 10 -q --adapters").status, 2);
	CmdResult unknown = run_cmd(env + BIN + " run -p ext:my-nothing -n 1 --ops 1 -q");
	EXPECT_EQ(unknown.status, 2);
	EXPECT_NE(unknown.err.find("ext:my-py"), std::string::npos) << unknown.err;

	/* a kept run of it becomes a scenario that runs again, and a nightly cell */
	CmdResult kept = run_cmd(env + BIN + " run -p ext:my-py -n 2 --ops 20 -q -o " + d.sub("kept"));
	ASSERT_EQ(kept.status, 0) << kept.out << kept.err;
	CmdResult sn = run_cmd(env + BIN + " scenario new mine --from-run " + d.sub("kept") + " -o " + d.sub("mine.scenario"));
	ASSERT_EQ(sn.status, 0) << sn.out << sn.err;
	CmdResult sr = run_cmd(env + BIN + " scenario run " + d.sub("mine.scenario"));
	EXPECT_EQ(sr.status, 0) << sr.out << sr.err;
	EXPECT_NE(sr.out.find("every revision as expected"), std::string::npos) << sr.out;
	CmdResult nt = run_cmd(env + SRC + "/ci/nightly --bin " + BIN + " --protocols ext:my-py --profiles none --seeds 1 "
			       "--budget 12 --no-explore --out " + d.sub("night"));
	EXPECT_EQ(nt.status, 0) << nt.out << nt.err;
	EXPECT_NE(nt.err.find("ext:my-py none seed 1"), std::string::npos) << nt.err;

	ASSERT_EQ(run_cmd(BIN + " adapter new my-c --lang c --dir " + d.path).status, 0);
	CmdResult cr = run_cmd(env + BIN + " run -p ext:my-c -n 3 --ops 60 -q");
	EXPECT_EQ(cr.status, 0) << cr.out << cr.err;
	if (run_cmd("node --version").status == 0) {
		ASSERT_EQ(run_cmd(BIN + " adapter new my-js --lang node --dir " + d.path).status, 0);
		CmdResult j = run_cmd(env + BIN + " run -p ext:my-js -n 3 --ops 60 -q");
		EXPECT_EQ(j.status, 0) << j.out << j.err;
	}
}
