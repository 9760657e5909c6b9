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
