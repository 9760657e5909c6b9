/*
 * integ_handoff.cc - the explorer's hand-off (core/sched.h: a worker takes
 * the strategy's next decisions itself) changes no schedule: the same
 * searches with it and without it (LOCKSTORM_NO_HANDOFF=1) make the same
 * decisions, so they find the same failures at the same schedules, take the
 * same number of steps and write the same counterexample files, byte for
 * byte.  So does a crash that keeps the worker's process (the modelled file
 * system's, x_kill_one) against one that kills it (LOCKSTORM_FORK_CRASH=1),
 * and a file time stamp kept for later against one made at once
 * (LOCKSTORM_VT_EAGER=1).  Each case stops at a schedule count (never a time budget): the
 * verdicts do not depend on the machine's speed.
 */
#include <dirent.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "testutil.h"

static const std::string BIN = LOCKSTORM_BIN;

/* What a search decided: its summary line without the rate, and every file it wrote. */
struct Search {
	int status;
	std::string summary;
	std::map<std::string, std::string> files;
};

/* JSON without the values of KEY ("elapsed_s": 1.2 -> "elapsed_s": -) */
static std::string without(std::string json, const std::string &key)
{
	for (size_t i = 0; (i = json.find("\"" + key + "\": ", i)) != std::string::npos;) {
		i += key.size() + 4;
		size_t end = json.find_first_of(",}\n", i);
		json.replace(i, end - i, "-");
	}
	return json;
}

static Search search(const std::string &args, const std::string &env)
{
	ScratchDir out;
	Search s;
	CmdResult r = run_cmd("/usr/bin/env " + env + " " + BIN +
			      " explore " + args + " --time-budget 20m -q --json " + out.path + "/x.json -o " +
			      out.path + "/out");
	s.status = r.status;
	/* wall time, and where the files are */
	s.summary = without(without(without(slurp(out.path + "/x.json"), "elapsed_s"), "schedules_per_s"), "file");
	if (DIR *d = opendir((out.path + "/out").c_str())) {
		while (struct dirent *de = readdir(d))
			if (de->d_name[0] != '.')
				s.files[de->d_name] = slurp(out.path + "/out/" + de->d_name);
		closedir(d);
	}
	return s;
}

static void same_both_ways(const std::string &args, int status,
			   const std::string &env_a = "LOCKSTORM_NO_HANDOFF=1", const std::string &env_b = "LOCKSTORM_NO_HANDOFF=0")
{
	Search a = search(args, env_a), b = search(args, env_b);
	EXPECT_EQ(a.status, status) << args;
	EXPECT_EQ(b.status, a.status) << args;
	EXPECT_NE(a.summary.find("\"steps\""), std::string::npos) << args << ": " << a.summary;
	EXPECT_EQ(b.summary, a.summary) << args;
	EXPECT_EQ(b.files.size(), a.files.size()) << args;
	for (const auto &f : a.files) {
		auto g = b.files.find(f.first);
		ASSERT_NE(g, b.files.end()) << args << ": " << f.first << " only with " << env_a;
		EXPECT_EQ(g->second, f.second) << args << ": " << f.first << " differs";
	}
}

TEST(IntegHandoff, RandomMakesTheSameDecisionsWithAndWithoutIt)
{
	same_both_ways("-p flock -n 2 --ops 2 --schedules 600", 0);
	/* every fault kind of the default mix, three workers, failures shrunk (by replay) */
	same_both_ways("-p mkdir-legacy -n 3 --ops 2 --schedules 300 --all", 1);
	same_both_ways("-p mkdir-legacy -n 2 --ops 2 --schedules 200", 1);
}

TEST(IntegHandoff, PctGuidedAndTheRealFileSystemToo)
{
	same_both_ways("-p mkdir-owner -n 3 --ops 2 --strategy pct:d=3 --schedules 800 --all --no-shrink", 0);
	same_both_ways("-p lockfile-recorded -n 2 --ops 2 --strategy guided --schedules 400 --all --no-shrink", 1);
	same_both_ways("-p mkdir-legacy -n 2 --ops 2 --schedules 200 --fs real --all --no-shrink", 1);
	same_both_ways("-p pidlock -w hold -n 2 --ops 3 --schedules 300 --all --no-shrink --fs model:reuse=never", 1);
}

/* Every kind that ends a process: crashes, restarts (the same pid again),
 * power losses (every worker at once); a protocol with process-wide memory
 * (lockfile-recorded's readings), directory listings a crash interrupts
 * (mkdir-owner's), more than X_DEATHS crashes of one slot in a search. */
TEST(IntegHandoff, ACrashThatKeepsTheProcessDecidesAsOneThatKillsIt)
{
	const std::string fork = "LOCKSTORM_FORK_CRASH=1", keep = "LOCKSTORM_FORK_CRASH=0";
	same_both_ways("-p lockfile-recorded -n 3 --ops 2 --max-faults crash=3,restart=2 --schedules 400 --all", 1, fork,
		       keep);
	same_both_ways("-p mkdir-owner -n 2 --ops 2 --max-faults all=2,power-loss=1 --schedules 400 --all --no-shrink", 1,
		       fork, keep);
	same_both_ways("-p mkdir-legacy --param form=try -n 2 --ops 2 --fs model:windows --schedules 300 --all --no-shrink",
		       1, fork, keep);
}

/* On the real file system too: the kept process closes every descriptor it
 * opened through the seam, as its exit would, so a flock it held goes with
 * it (flock's crashes land while it holds one), and so do the lock files and
 * readings of lockfile-recorded across crashes and restarts. */
TEST(IntegHandoff, ACrashThatKeepsTheProcessDecidesAsOneThatKillsItOnTheRealFileSystemToo)
{
	const std::string fork = "LOCKSTORM_FORK_CRASH=1", keep = "LOCKSTORM_FORK_CRASH=0";
	same_both_ways("-p flock -n 2 --ops 2 --max-faults crash=2 --schedules 300 --fs real --all --no-shrink", 0, fork,
		       keep);
	same_both_ways("-p flock -w append --param rev=legacy,append --param locked=1 -n 2 --ops 2 --max-faults crash=1 --schedules 200 --fs real --all --no-shrink",
		       1, fork, keep);
	same_both_ways("-p lockfile-recorded -n 2 --ops 2 --max-faults crash=2,restart=1 --schedules 300 --fs real --all --no-shrink",
		       1, fork, keep);
	same_both_ways("-p mkdir-owner -n 2 --ops 2 --max-faults all=1,crash=2 --schedules 300 --fs real --all --no-shrink", 0,
		       fork, keep);
}

/* On the real file system a file time stamp waits until something could
 * see it (faults/fsx_vt.c): the ages a stale check reads, and so every
 * decision, are those of stamps made at once (LOCKSTORM_VT_EAGER=1).
 * Stale reclaims by age (stalls), crashes that kill the process, a lock
 * file's recorded holder, appends through a descriptor. */
TEST(IntegHandoff, AStampKeptForLaterDecidesAsOneMadeAtOnce)
{
	const std::string eager = "LOCKSTORM_VT_EAGER=1", later = "LOCKSTORM_VT_EAGER=0";
	same_both_ways("-p mkdir-legacy -n 2 --ops 2 --schedules 300 --fs real --all", 1, eager, later);
	same_both_ways("-p mkdir-owner -n 2 --ops 2 --max-faults all=1,crash=2 --schedules 300 --fs real --all --no-shrink",
		       0, eager, later);
	same_both_ways("-p lockfile-recorded -n 2 --ops 2 --max-faults crash=2,restart=1 --schedules 300 --fs real --all",
		       1, "LOCKSTORM_FORK_CRASH=1 " + eager, later);
	same_both_ways("-p flock -w append --param rev=legacy,append --param locked=1 -n 2 --ops 2 --schedules 200 --fs real --all --no-shrink",
		       1, eager, later);
}

/* What a workload's setup made (here a carried-over lock file) is as old
 * as the virtual clock's start on the real file system, as in the model:
 * the explorer lists the store to stamp it only after a setup that made
 * something (fsx_anchor_changes), and must not skip one that did. */
TEST(IntegHandoff, ASetupsFilesAreAsOldAsTheClockOnTheRealFileSystemToo)
{
	const std::string args = "-p lockfile-legacy --param carried=empty -n 2 --ops 1 --schedules 60 --all --no-shrink";
	Search model = search(args + " --fs model", ""), real = search(args + " --fs real", "");
	EXPECT_EQ(model.status, 1);
	EXPECT_EQ(real.status, model.status);
	EXPECT_NE(model.summary.find("\"steps\""), std::string::npos) << model.summary;
	EXPECT_EQ(real.summary, model.summary);
}

/* On the real file system a removal asks the identity table (struct
 * sched_ids, faults/fsx_obj.c) before the kernel: every search decides as
 * one that asks the kernel every time (LOCKSTORM_ID_LOOK=1), which also
 * aborts the worker, a harness failure, where the table says otherwise.
 * Lock folders and the entries in them, lock files made by O_EXCL, by
 * link(2) and moved aside by rename, crashes, restarts and the default
 * fault mix (sweeps among them). */
TEST(IntegHandoff, AnIdentityTheTableKnowsIsTheOneTheKernelReports)
{
	const std::string look = "LOCKSTORM_ID_LOOK=1", table = "LOCKSTORM_ID_LOOK=0";
	same_both_ways("-p mkdir-legacy -n 2 --ops 2 --max-faults all=2 --schedules 300 --fs real --all --no-shrink", 1,
		       look, table);
	same_both_ways("-p mkdir-owner -n 2 --ops 2 --max-faults all=1,crash=2 --schedules 300 --fs real --all --no-shrink",
		       0, look, table);
	same_both_ways("-p lockfile-legacy -n 2 --ops 2 --max-faults all=1,crash=2 --schedules 300 --fs real --all --no-shrink",
		       1, look, table);
	same_both_ways("-p lockfile-recorded -n 2 --ops 2 --max-faults crash=2,restart=1 --schedules 300 --fs real --all --no-shrink",
		       1, "LOCKSTORM_FORK_CRASH=1 " + look, table);
}
