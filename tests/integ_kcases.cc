/*
 * integ_kcases.cc - the K- cases of PROTOCOLS.md that are violations, each
 * found by a plain `lockstorm explore -p P -w W -n N --ops K` (no --fault, no
 * --invariant: the fault kinds are the explorer's own choices), shrunk, and
 * replayed the same.  Each runs with a fixed seed and a schedule cap, so the
 * same decisions every time; nothing sleeps or asserts on timing.
 * docs/findings.md has the commands and what each story shows.
 */
#include <gtest/gtest.h>
#include <jansson.h>

#include <string>

#include "testutil.h"

static const std::string BIN = LOCKSTORM_BIN;

static CmdResult lockstorm(const std::string &args)
{
	return run_cmd(BIN + " " + args);
}

/* `lockstorm explore ARGS -q -s 1` with its output and scratch in DIR. */
static CmdResult explore_in(const ScratchDir &dir, const std::string &args)
{
	return lockstorm("explore " + args + " -q -s 1 -o " + dir.sub("out") + " --dir " + dir.path);
}

/* (--all with a schedule cap and a time budget it never reaches: the same
 * schedules, so the same failures, on a slow machine as on a fast one.) */
/* Explore; the first saved counterexample whose story contains every one of
 * WORDS (after "violated: INVARIANT") is replayed REPEAT times: the same
 * steps, the same verdict.  With --all the explorer saves every distinct
 * failure; the case is the one whose story tells it. */
static void kcase(const std::string &args, const std::string &invariant, std::initializer_list<const char *> words,
		  int repeat = 2)
{
	ScratchDir dir;
	CmdResult r = explore_in(dir, args);
	ASSERT_EQ(r.status, 1) << r.out << r.err;
	std::string found;
	for (int i = 1; i < 200 && found.empty(); i++) {
		std::string cex = dir.sub("out/cex-" + std::to_string(i) + ".json");
		std::string text = slurp(cex);
		if (text.empty())
			break;
		json_error_t jerr;
		json_t *o = json_loads(text.c_str(), 0, &jerr);
		ASSERT_TRUE(o) << jerr.text;
		bool match = !strcmp(json_string_value(json_object_get(o, "invariant")), invariant.c_str());
		std::string story;
		json_t *lines = json_object_get(o, "story"), *ex = json_object_get(o, "examples");
		for (size_t k = 0; k < json_array_size(lines); k++)
			story += std::string(json_string_value(json_array_get(lines, k))) + "\n";
		for (size_t k = 0; k < json_array_size(ex); k++)
			story += std::string(json_string_value(json_array_get(ex, k))) + "\n";
		for (const char *w : words)
			match = match && story.find(w) != std::string::npos;
		json_decref(o);
		if (match)
			found = cex;
	}
	ASSERT_FALSE(found.empty()) << "no counterexample of " << invariant << " with the case's words:\n" << r.out;
	std::string first;
	for (int i = 0; i < repeat; i++) {
		CmdResult p = lockstorm("replay " + found + " --dir " + dir.path);
		ASSERT_EQ(p.status, 1) << p.out << p.err;
		EXPECT_NE(p.out.find("steps: the same "), std::string::npos) << p.out;
		EXPECT_NE(p.out.find("verdict: FAIL (" + invariant + ")"), std::string::npos) << p.out;
		if (i == 0)
			first = p.out;
		else
			EXPECT_EQ(p.out, first) << "replay " << i + 1 << " differs";
	}
}

/* K-ML-1: two waiters that judged one stale lock both take it; a stalled
 * holder's release removes the next holder's lock. */
TEST(IntegKcases, KML1DoubleHolderOfMkdirLegacy)
{
	kcase("-p mkdir-legacy -n 3 --ops 2 --all --schedules 300 --time-budget 10m", "exclusion", { "removes the lock object" }, 10);
}

/* K-ML-2: the stalled holder is reclaimed and still writes (here: it begins
 * its commit after the reclaimer took the lock). */
TEST(IntegKcases, KML2StalledHolderWritesAfterReclaim)
{
	kcase("-p mkdir-legacy -n 2 --ops 2 --all --schedules 800 --time-budget 10m", "zombie-write", { "began a commit" });
}

/* K-ML-3: the lock's folder swept between `mkdir -p` and the lock mkdir:
 * beta.5 takes the ENOENT for contention and gives up although nobody held
 * (no-escaped-error's busy-without-holder). The sweep is the explorer's own
 * choice, on the modelled file system as on a real one. */
TEST(IntegKcases, KML3SweptFolderGivesUpOnNobody)
{
	kcase("-p mkdir-legacy -n 1 --ops 1 --all --schedules 400 --time-budget 10m", "no-escaped-error",
	      { "a sweeper removes the empty folder store", "mkdir state.json.lock -> ENOENT", "gave up" }, 10);
}

/* ... and 2.0.0 remakes the folder: the same search finds nothing in it. */
TEST(IntegKcases, KML3OwnerRemakesTheSweptFolder)
{
	ScratchDir dir;
	CmdResult r = explore_in(dir, "-p mkdir-owner -n 1 --ops 1 --max-faults all=0,sweep=1,stall=1,crash=1 "
				      "--schedules 400 --time-budget 10m");
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	EXPECT_NE(r.out.find("verdict: PASS"), std::string::npos) << r.out;
}

/* K-ML-4: on Windows (the model's windows personality: a stat keeps the
 * folder open for a step, so a removal meanwhile is delete pending) beta.5's
 * tryAcquireLock raises the EPERM of a mkdir that met the folder a release
 * just removed, while nobody holds the lock.  No fault at all is needed. */
TEST(IntegKcases, KML4TryRaisesTheEpermOfAFolderBeingDeleted)
{
	kcase("-p mkdir-legacy --param form=try -n 2 --ops 2 --fs model:windows --schedules 100 --time-budget 10m",
	      "no-escaped-error", { "-> EPERM: the folder was removed but", "rule error-on-contention" }, 10);
}

/* ... and the revisions that take it for contention: beta.5's acquireLock
 * (any mkdir errno) and 2.0.0 with platform=win32, both forms; 2.0.0 on
 * posix raises it as beta.5's try does.  The same fault-free search. */
TEST(IntegKcases, KML4ContentionOnWindowsTeeth)
{
	const std::string f = " -n 2 --ops 2 --fs model:windows --max-faults all=0 --schedules 3000 --time-budget 30m";
	for (const char *p : { "-p mkdir-legacy --param form=acquire", "-p mkdir-owner --param platform=win32",
			       "-p mkdir-owner --param platform=win32 --param form=try" }) {
		ScratchDir dir;
		CmdResult r = explore_in(dir, p + f);
		EXPECT_EQ(r.status, 0) << p << "\n" << r.out << r.err;
		EXPECT_NE(r.out.find("verdict: PASS"), std::string::npos) << p << "\n" << r.out;
	}
	for (const char *p : { "-p mkdir-legacy --param form=try", "-p mkdir-legacy --param form=bounded",
			       "-p mkdir-owner" }) {
		ScratchDir dir;
		CmdResult r = explore_in(dir, p + f);
		EXPECT_EQ(r.status, 1) << p << "\n" << r.out << r.err;
		EXPECT_NE(r.out.find("verdict: FAIL (no-escaped-error)"), std::string::npos) << p << "\n" << r.out;
	}
}

/* K-VL-1: a taker killed between its create and its record leaves an empty
 * lock; under retainLiveOwner every waiter times out on it until the 60 s
 * age (found at schedule 35 of seed 1). */
TEST(IntegKcases, KVL1EmptyLockOfAKilledTaker)
{
	kcase("-p lockfile-legacy --param retain=1 -n 2 --ops 8 --all --schedules 200 --time-budget 10m", "liveness",
	      { "is killed (SIGKILL) before its write state.json.lock", "left when it died" });
}

/* K-VL-2: the holder dies, its reclaimer dies between creating .recovery and
 * writing it, and the third worker times out on the dead holder's lock
 * (3.0.155 never removes a leftover .recovery).  Two deaths: the default
 * budget allows two crashes, and the focused plans give two crashes (the
 * second soon after the first, of a worker that just acted) their turn
 * every 32 schedules; the plain command finds it at schedule 155 of seed 1.
 * 3.0.157 reclaims a .recovery whose maker is dead. */
TEST(IntegKcases, KVL2LeftoverRecoveryBlocksEveryReclaim)
{
	kcase("-p lockfile-legacy -n 3 --ops 1 --all --schedules 200 --time-budget 10m", "liveness",
	      { "is killed (SIGKILL) before its write state.json.lock.recovery", "left when it died" });
	ScratchDir dir;
	CmdResult r = explore_in(dir, "-p lockfile-recorded -n 3 --ops 1 --max-faults all=0,crash=2 --schedules 3000 "
				      "--time-budget 10m");
	EXPECT_EQ(r.status, 0) << r.out << r.err;
}

/* K-VL-4: a process killed with the lock and started again with the same
 * pid (a container's or a tab's numbering: the explorer's restart choice)
 * finds a lock recorded with its own pid, which 3.0.155 takes for a live
 * holder's and waits on; 3.0.157's own-pid rule reclaims it at once.  The
 * plain command finds it first; the exhaustive restart-only search shows the
 * case proper (the record written, the restart before the release). */
TEST(IntegKcases, KVL4AnEarlierProcessNumberedAsThisOne)
{
	kcase("-p lockfile-legacy -w hold -n 1 --ops 2 --all --schedules 300 --time-budget 10m", "liveness",
	      { "starts again at once as a new process with the same pid", "it left when it died (it was killed and started again" }, 10);
	kcase("-p lockfile-legacy -w hold -n 1 --ops 2 --max-faults all=0,restart=1 --strategy dfs:preempt=0 --all "
	      "--no-shrink --time-budget 10m", "liveness",
	      { "w0 holds the lock", "is killed (SIGKILL) before its unlink state.json.lock, and starts again",
		"it left when it died (it was killed and started again" });
	ScratchDir dir;
	CmdResult r = explore_in(dir, "-p lockfile-recorded -w hold -n 1 --ops 2 --max-faults all=0,restart=1 "
				      "--strategy dfs:preempt=0 --time-budget 10m");
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	EXPECT_NE(r.out.find("bounded space exhausted"), std::string::npos) << r.out;
}

/* K-VL-6: a 3.0.155 taker whose record write fails (ENOSPC) holds the empty
 * lock anyway; a 3.0.157 process reclaims an empty lock past its 5 s grace
 * while that holder lives (here: stalled 30 s).  An errno and a stall in one
 * schedule, in a mixed fleet: guided search finds it (schedule 3322 of seed
 * 1; the plain command does not within 4000 schedules).  3.0.157 alone never holds an unrecorded
 * take. */
TEST(IntegKcases, KVL6RecordWrittenBestEffortIsReclaimedWhileLive)
{
	/* the plain search: a focused plan "errno at a write, then a stall" takes
	 * the stall below the stale age and keeps its worker out while the other
	 * goes on (first at schedule 940 of seed 1) */
	kcase("-p lockfile-legacy,lockfile-recorded -n 2 --ops 1 --all --schedules 1000 --time-budget 30m", "exclusion",
	      { "w0 write state.json.lock -> ENOSPC (injected", "w0 holds the lock", "removes the lock object w0 made" },
	      10);
	ScratchDir dir;
	CmdResult r = explore_in(dir, "-p lockfile-recorded -n 2 --ops 1 --strategy guided "
				      "--max-faults all=0,errno=1,stall=1 --all --schedules 1000 --time-budget 10m");
	EXPECT_NE(r.status, 2) << r.out << r.err;
	EXPECT_NE(r.out.find("explored 1000 schedules"), std::string::npos) << r.out;
	for (const char *e : { "ENOSPC (injected: the call fails without acting): w0 holds the lock",
			       "ENOSPC (injected: the call fails without acting): w1 holds the lock" })
		EXPECT_EQ(r.out.find(e), std::string::npos) << r.out;
}

/* K-VL-3: on a file system whose fstat and lstat disagree (the model's tab
 * personality: split=yes) 3.0.155's release by inode never unlinks, and the
 * same process then waits on its own lock; 3.0.157 releases by token. */
TEST(IntegKcases, KVL3ReleaseByInodeWaitsOnItselfOnASplitIdentityFs)
{
	kcase("-p lockfile-legacy -w hold -n 1 --ops 2 --fs model:tab --schedules 400 --time-budget 10m", "liveness",
	      { "waiting on itself" }, 10);
	ScratchDir dir;
	CmdResult r = explore_in(dir, "-p lockfile-recorded -w hold -n 1 --ops 2 --fs model:tab --schedules 2000 "
				      "--time-budget 10m");
	EXPECT_EQ(r.status, 0) << r.out << r.err;
}

/* K-VL-5: a lock carried over a restore (an empty lock file from before the
 * boot): 3.0.155 leaves a "freshly created" empty lock alone and gives up on
 * it, though nobody holds it; found in the very first schedule. */
TEST(IntegKcases, KVL5CarriedEmptyLockIsWaitedOn)
{
	kcase("-p lockfile-legacy -n 1 --ops 1 --param carried=empty --max-faults all=0 --max-stalls 0 --max-crashes 0 "
	      "--schedules 20 --time-budget 10m", "no-escaped-error",
	      { "w0 open state.json.lock -> EEXIST", "gives up (busy)", "no lock object was made" }, 10);
}

/* K-JL-1: 0.8.0's per-process cache trusts its own count: a seq twice, even
 * under a real lock. */
TEST(IntegKcases, KJL1LegacyJournalDuplicateSeq)
{
	kcase("-p flock -w append --param locked=1 --param rev=legacy -n 2 --ops 2 --all --schedules 10 --time-budget 10m", "journal-seq",
	      { "both appended seq" });
}

/* K-JL-2: a reader's getSnapshot lands its replay of a half-written journal
 * (a split write: its first bytes, a pause, the rest) on disk. */
TEST(IntegKcases, KJL2ReaderWritesAHalfWrittenJournalsReplay)
{
	kcase("-p flock -w append --param writers=1 --param locked=1 -n 2 --ops 2 --all --schedules 400 --time-budget 10m", "journal-seq",
	      { "half-written journal", "before the rest" });
}
