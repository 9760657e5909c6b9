/*
 * integ_respawn.cc - a crashed worker that cannot be forked again (the process
 * limit; here an LD_PRELOAD fixture, tests/forkfail_fixture.c, fails every
 * fork after the first N: root does not meet RLIMIT_NPROC) is reported on
 * stderr and makes the run INCOMPLETE (exit 4), never a silent PASS.  One
 * worker crashes on its 3rd lock (nth=3): deterministic, no timing.
 */
#include <gtest/gtest.h>

#include <string>

#include "testutil.h"

static const std::string BIN = LOCKSTORM_BIN;

static CmdResult run_with_forks(int forks, const ScratchDir &d, const std::string &name)
{
	/* an ASan build would refuse a preloaded library that is not its runtime */
	return run_cmd("ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0\" LD_PRELOAD=" +
		       std::string(FORKFAIL_FIXTURE) + " LS_FORKFAIL_AFTER=" + std::to_string(forks) + " " + BIN +
		       " run -p flock -w update -n 1 --ops 20 --respawn --fault 'crash@flock/acquire/after-flock:nth=3'"
		       " -q -o " + d.sub(name) + " --json " + d.sub(name + ".json"));
}

TEST(IntegRespawn, AWorkerThatCannotBeRespawnedIsReportedAndTheRunIsIncomplete)
{
	ScratchDir d;
	/* the first fork (the worker) works, the respawn fails */
	CmdResult r = run_with_forks(1, d, "o");
	EXPECT_EQ(r.status, 4) << r.out << r.err;
	EXPECT_NE(r.err.find("lockstorm: cannot respawn worker 0: "), std::string::npos) << r.err;
	EXPECT_NE(r.out.find("verdict: INCOMPLETE (1 crashed worker could not be respawned)"), std::string::npos)
		<< r.out;
	EXPECT_EQ(r.out.find("verdict: PASS"), std::string::npos) << r.out;
	std::string js = slurp(d.sub("o.json"));
	EXPECT_NE(js.find("\"complete\": false"), std::string::npos) << js.substr(0, 400);
	EXPECT_NE(js.find("could not be respawned"), std::string::npos);
}

TEST(IntegRespawn, TheSameRunWithTheRespawnForkedPasses)
{
	/* the control: the fixture lets the second fork through, the respawned worker finishes */
	ScratchDir d;
	CmdResult r = run_with_forks(2, d, "o");
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	EXPECT_NE(r.out.find("verdict: PASS"), std::string::npos) << r.out;
	EXPECT_EQ(r.err.find("cannot respawn"), std::string::npos) << r.err;
}
