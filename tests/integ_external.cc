/*
 * integ_external.cc - external workers end to end: the flock1 adapter passes,
 * an adapter that takes no lock is caught, and adapters that break the worker
 * protocol (tests/adapters/toy.py: garbled line, silent hang, early exit,
 * wrong clock) are reported and never break the driver.
 *
 * No test sleeps or asserts on timing: the no-lock adapter's workers meet
 * inside their first critical section (a rendezvous on marker files), and
 * the watchdog cases assert only on what is reported.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include <unistd.h>

#include "testutil.h"

static const std::string BIN = LOCKSTORM_BIN;
static const std::string TOY = std::string(LS_SOURCE_DIR) + "/tests/adapters/toy.py";

static CmdResult ls(const std::string &args)
{
	return run_cmd(BIN + " " + args);
}

static std::string toy(const std::string &mode)
{
	return "--exec '" + TOY + " " + mode + "'";
}

TEST(External, Flock1Passes)
{
	ScratchDir d;
	CmdResult r = ls("run -p ext:flock1 -n 4 --ops 200 -q -o " + d.sub("out"));
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	EXPECT_NE(r.out.find("verdict: PASS"), std::string::npos) << r.out;
	/* the kept run re-checks to the same verdict, and its journals are the adapter's events */
	CmdResult c = ls("check -q " + d.sub("out"));
	EXPECT_EQ(c.status, 0) << c.out << c.err;
	CmdResult dump = ls("dump " + d.sub("out"));
	EXPECT_NE(dump.out.find("\"type\":\"commit\""), std::string::npos);
	EXPECT_NE(slurp(d.sub("out/final-state.json")).find("\"revision\":200"), std::string::npos)
		<< slurp(d.sub("out/final-state.json"));
}

TEST(External, Flock1HoldWorkload)
{
	CmdResult r = ls("run -p ext:flock1 -w hold --param hold_ms=1 -n 3 --ops 60 -q");
	EXPECT_EQ(r.status, 0) << r.out << r.err;
}

TEST(External, Flock1UnderStandardFaults)
{
	ScratchDir d;
	CmdResult r = ls("run -p ext:flock1 -n 4 -d 2s --faults standard --time-scale 0.01 -q -o " + d.sub("out"));
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	EXPECT_NE(r.out.find("verdict: PASS"), std::string::npos) << r.out;
}

TEST(External, DriverStopsTheHolder)
{
	/* stop at an fs point the driver cannot see acts while the lock is held */
	ScratchDir d;
	CmdResult r = ls("run -p ext:flock1 -n 3 --ops 100 --fault 'stop@fs/rename:p=0.2,for=1stale' "
			 "--param stale_ms=20 -o " + d.sub("out"));
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	CmdResult dump = ls("dump " + d.sub("out"));
	EXPECT_NE(dump.out.find("\"type\":\"fault\""), std::string::npos);
}

TEST(External, NoLockIsCaught)
{
	CmdResult r = ls("run " + toy("nolock") + " -n 4 --ops 100 -q");
	EXPECT_EQ(r.status, 1) << r.out << r.err;
	EXPECT_NE(r.out.find("exclusion"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("serial-updates"), std::string::npos) << r.out;
}

TEST(External, GarbledLineIsExit3)
{
	CmdResult r = ls("run " + toy("garble") + " -n 2 --ops 50 -q");
	EXPECT_EQ(r.status, 3) << r.out << r.err;
	EXPECT_NE(r.err.find("adapter sent a bad line: \"this is not an event\""), std::string::npos) << r.err;
	EXPECT_NE(r.err.find("no verdict"), std::string::npos) << r.err;
	EXPECT_EQ(r.out.find("verdict:"), std::string::npos) << r.out;
}

TEST(External, SilentHangIsKilledAndReported)
{
	CmdResult r = ls("run " + toy("hang") + " -n 2 --ops 50 -q --param wait_ms=100");
	EXPECT_EQ(r.status, 3) << r.out << r.err;
	EXPECT_NE(r.err.find("adapter hung"), std::string::npos) << r.err;
}

TEST(External, LockThatNeverReturnsIsLiveness)
{
	CmdResult r = ls("run " + toy("hang-lock") + " -n 2 --ops 10 -q --param wait_ms=100");
	EXPECT_EQ(r.status, 1) << r.out << r.err;
	EXPECT_NE(r.out.find("liveness"), std::string::npos) << r.out;
}

TEST(External, EarlyExitShowsStatusAndStderr)
{
	CmdResult r = ls("run " + toy("exit") + " -n 2 --ops 50 -q");
	EXPECT_EQ(r.status, 3) << r.out << r.err;
	EXPECT_NE(r.err.find("exited with status 4 before it was told to stop"), std::string::npos) << r.err;
	EXPECT_NE(r.err.find("toy: giving up after one op"), std::string::npos) << r.err;
}

TEST(External, WrongClockIsABadLine)
{
	CmdResult r = ls("run " + toy("badclock") + " -n 1 --ops 5 -q");
	EXPECT_EQ(r.status, 3) << r.out << r.err;
	EXPECT_NE(r.err.find("not CLOCK_MONOTONIC"), std::string::npos) << r.err;
}

TEST(External, CommandNotFoundIsExit2)
{
	CmdResult r = ls("run --exec '/nonexistent/adapter' -n 2 --ops 5 -q");
	EXPECT_EQ(r.status, 2) << r.out << r.err;
	EXPECT_NE(r.err.find("could not be run"), std::string::npos) << r.err;
}

TEST(External, UnknownAdapterListsTheKnownOnes)
{
	CmdResult r = ls("run -p ext:nope -n 2 --ops 5");
	EXPECT_EQ(r.status, 2) << r.err;
	EXPECT_NE(r.err.find("ext:flock1"), std::string::npos) << r.err;
	EXPECT_NE(r.err.find("ext:proper-lockfile"), std::string::npos) << r.err;
}

/* A manifest whose executable is missing (LOCKSTORM_ADAPTERS adds directories
 * to the shipped ones, so a shipped adapter is always found). */
TEST(External, AdapterNotFoundIsOneLine)
{
	ScratchDir d;
	CmdResult m = run_cmd(BIN + " adapter new gone --lang python --dir " + d.path);
	ASSERT_EQ(m.status, 0) << m.err;
	ASSERT_EQ(unlink(d.sub("gone/run").c_str()), 0);
	CmdResult r = run_cmd("LOCKSTORM_ADAPTERS=/nonexistent:" + d.path + " " + BIN + " run -p ext:gone -n 2 --ops 5");
	EXPECT_EQ(r.status, 2) << r.err;
	EXPECT_NE(r.err.find("not found"), std::string::npos) << r.err;
	EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(External, ExecNeedsACommand)
{
	CmdResult r = ls("run -p exec -n 2 --ops 5");
	EXPECT_EQ(r.status, 2) << r.err;
	EXPECT_NE(r.err.find("--exec"), std::string::npos) << r.err;
}

TEST(External, ListedWithParams)
{
	CmdResult r = ls("list protocols");
	EXPECT_EQ(r.status, 0);
	EXPECT_NE(r.out.find("ext:flock1"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("update_ms"), std::string::npos) << r.out;
}

TEST(External, MixedWithTheBuiltinFlockPasses)
{
	/* flock(1) and the built-in flock control take the same kernel lock on <state>.lock */
	CmdResult r = ls("run -p flock,ext:flock1 -n 4 --ops 200 -q");
	EXPECT_EQ(r.status, 0) << r.out << r.err;
}
