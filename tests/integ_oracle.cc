/*
 * integ_oracle.cc - issue 15's false alarms on real runs: each command that
 * used to report a liveness violation against a live or young holder, on a
 * bounded list of seeds, must report none on every one (a false alarm must be
 * impossible, not unlikely); and the real stuck locks (PROTOCOLS.md K-VL-1,
 * K-VL-2) are still caught at --time-scale 0.01 and 0.02.
 */
#include <gtest/gtest.h>

#include <string>

#include "testutil.h"

static const std::string BIN = LOCKSTORM_BIN;

static CmdResult run_in(const ScratchDir &d, const std::string &tag, const std::string &args)
{
	return run_cmd(BIN + " run " + args + " -q --dir " + d.sub("w" + tag) + " --json " +
		       d.sub(tag + ".json"));
}

/* (a) a holder paused inside its release (after its close, before its
 * unlink) still holds: waiters that give up meanwhile waited on it. */
TEST(IntegOracle, HolderPausedInsideItsReleaseIsNoLivenessFailure)
{
	ScratchDir d;
	for (const char *seed : { "1", "2", "3" }) {
		SCOPED_TRACE(seed);
		CmdResult r = run_in(d, seed, std::string("-p lockfile-recorded -w update -n 4 -d 2s "
				     "--time-scale 0.01 --fault "
				     "'stall@lockfile-recorded/release/after-close:p=0.05,for=0.5stale' -s ") +
				     seed);
		Report rep(d.sub(std::string(seed) + ".json"));
		ASSERT_TRUE(rep.root) << r.out << r.err;
		EXPECT_EQ(rep.violations("liveness"), 0) << rep.example("liveness");
		EXPECT_GT(rep.total("stalls"), 0);
		EXPECT_EQ(r.status, 0) << r.out;
	}
}

/* (b) a crashed holder's lock younger than the stale age: mkdir-owner
 * promises only "reclaimed once it is LOCK_STALE_MS old". */
/* mkdir-owner ages L by its mtime, which every entry made or removed inside
 * it moves (LOCK_AGE_BY_DIR): a reclaimer that dies after removing the dead
 * holder's entry leaves L young again (the false alarm seed 1 showed once;
 * unit_checker_oracle.cc keeps its history). */
TEST(IntegOracle, DeadHoldersYoungLockIsNoLivenessFailure)
{
	ScratchDir d;
	for (const char *seed : { "1", "2", "3" }) {
		SCOPED_TRACE(seed);
		CmdResult r = run_in(d, seed, std::string("-p mkdir-owner -w update -n 8 -d 3s "
				     "--time-scale 0.02 --faults crashes --respawn -s ") + seed);
		Report rep(d.sub(std::string(seed) + ".json"));
		ASSERT_TRUE(rep.root) << r.out << r.err;
		EXPECT_EQ(rep.violations("liveness"), 0) << rep.example("liveness");
		EXPECT_GT(rep.total("crashes"), 0);
	}
}

/* (c) explore: a waiter's single try stretched by another worker's stall
 * (the virtual clock jumps for everyone) is no wait on a dead lock. */
TEST(IntegOracle, ExploreClockJumpIsNoWaitersWait)
{
	ScratchDir d;
	CmdResult r = run_cmd(BIN + " explore -p pidlock -w hold -n 3 --ops 2 --invariant liveness "
			      "--schedules 2000 --time-budget 30m --no-shrink -q -o " + d.sub("out") + " --dir " + d.path);
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	EXPECT_EQ(r.out.find("violated: liveness"), std::string::npos) << r.out;
}

/* K-VL-1 and K-VL-2 at both scales: the real stuck lock is still a liveness
 * failure, and the message names the rule.  K-VL-1 on one seed: its crash is a fault decision
 * (the seed's p=0.2 draws at each worker's own takes), and every attempt after it within the
 * stale age (600 ms at 0.01) waits out its budget (100 ms) on the dead taker's empty lock,
 * whatever the machine's speed.  K-VL-2 needs a waiter to meet the .recovery in time: a list of seeds. */
TEST(IntegOracle, RealStuckLocksAreStillCaughtAtEveryScale)
{
	ScratchDir d;
	for (const char *scale : { "0.01", "0.02" }) {
		SCOPED_TRACE(scale);
		std::string s(scale);
		CmdResult v1 = run_in(d, "v1-" + s, "-p lockfile-legacy --fault "
				      "'crash@lockfile-legacy/take/after-create:p=0.2' --respawn -w update "
				      "-n 4 --ops 300 -s 1 --time-scale " + s);
		Report r1(d.sub("v1-" + s + ".json"));
		ASSERT_TRUE(r1.root) << v1.out << v1.err;
		EXPECT_EQ(v1.status, 1);
		EXPECT_GT(r1.violations("liveness"), 0);
		EXPECT_NE(r1.example("liveness").find("left when it died"), std::string::npos)
			<< r1.example("liveness");
		EXPECT_NE(r1.example("liveness").find("rule dead-holder"), std::string::npos)
			<< r1.example("liveness");

		/* K-VL-2: the waiter must come to the lock while the dead reclaimer's .recovery blocks
		 * it, which is the machine's timing (IntegVolter.KVL2 alike): a bounded list of seeds
		 * until one shows it, and that one had both crashes (the holder's, the reclaimer's) */
		std::string seen;
		long long crashes = 0;
		int shown = first_seed_showing({ 4, 1, 2, 3, 5, 6 }, [&](int seed, std::string *said) {
			std::string tag = "v2-" + s + "-" + std::to_string(seed);
			CmdResult v2 = run_in(d, tag, "-p lockfile-legacy -w hold -n 2 -d 2s --respawn -s " +
					      std::to_string(seed) +
					      " --fault 'crash@hold/hold/after-acquire:nth=3,workers=0' "
					      "--fault 'crash@lockfile-legacy/reclaim/after-recovery-create:nth=1' "
					      "--time-scale " + s);
			Report r2(d.sub(tag + ".json"));
			*said = v2.out;
			EXPECT_TRUE(r2.root) << v2.out << v2.err;
			crashes = r2.total("crashes");
			return v2.status == 1 && r2.violations("liveness") > 0;
		}, &seen);
		EXPECT_NE(shown, -1) << "no seed of the list showed K-VL-2's stuck lock at scale " << s << ":\n" << seen;
		if (shown != -1) {
			EXPECT_GT(crashes, 1) << seen;
		}
	}
}

/* Scaled constants are kept in us: at 0.01 every mkdir-owner constant is
 * exact (its 50 ms wait is 500 us) and nothing is said; one that would still
 * round (0.5 us at 0.00001) says so on stderr, once; at scale 1 nothing does. */
TEST(IntegOracle, ScaledConstantsAreExactAndARoundedOneSaysSoOnce)
{
	ScratchDir d;
	CmdResult r = run_in(d, "s", "-p mkdir-owner -w hold -n 2 --ops 2 --time-scale 0.01");
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	EXPECT_EQ(r.err.find("scales to"), std::string::npos) << r.err;
	/* (what such a scale does to the run is not this test's business) */
	CmdResult t = run_in(d, "t", "-p mkdir-owner -w hold -n 2 --ops 2 --time-scale 0.00001");
	const std::string line = "wait_ms = 50 ms scales to 0.5000 us, kept as 1 us";
	size_t at = t.err.find(line);
	EXPECT_NE(at, std::string::npos) << t.err;
	EXPECT_EQ(t.err.find(line, at + 1), std::string::npos) << t.err;
	CmdResult one = run_in(d, "one", "-p mkdir-owner -w hold -n 2 --ops 2");
	EXPECT_EQ(one.err.find("scales to"), std::string::npos) << one.err;
}

TEST(IntegOracle, ListInvariantsNamesEveryOneAndItsWorkloads)
{
	CmdResult r = run_cmd(BIN + " list invariants");
	EXPECT_EQ(r.status, 0) << r.err;
	for (const char *inv : { "exclusion", "zombie-write", "no-lost-writes", "serial-updates",
				 "state-intact", "own-release", "liveness", "journal-seq", "stale-read",
				 "no-phantom-result", "no-orphan-lock", "no-escaped-error", "strict-lease" })
		EXPECT_NE(r.out.find(std::string(inv) + "\n  "), std::string::npos) << inv << "\n" << r.out;
	EXPECT_NE(r.out.find("journal-seq\n"), std::string::npos);
	EXPECT_NE(r.out.find("workloads append"), std::string::npos) << r.out;
}

/* The false-alarm corpus (run by ./ci/test with the integration suite):
 * locks that are correct - the kernel's flock, util-linux flock(1),
 * py-filelock - under every fault profile and two seeds (update, hold), and
 * explore of flock with every choice kind.  Any violation here is a false
 * alarm of the harness.  About a minute and a half on the shared machine. */
TEST(IntegOracle, FalseAlarmCorpusOfCorrectLocks)
{
	ScratchDir d;
	int n = 0;
	for (const char *proto : { "flock", "ext:flock1", "ext:py-filelock" })
		for (const char *prof : { "standard", "stalls", "crashes", "errnos", "windows", "none" })
			for (const char *wl : { "update -s 1", "hold -s 2" }) {
				std::string tag = "c" + std::to_string(n++);
				std::string args = std::string("-p ") + proto + " --faults " + prof + " -w " + wl +
						   " -n 4 -d 600ms --time-scale 0.01";
				SCOPED_TRACE(args);
				CmdResult r = run_in(d, tag, args);
				EXPECT_EQ(r.status, 0) << r.out << r.err;
				Report rep(d.sub(tag + ".json"));
				ASSERT_TRUE(rep.root) << r.out << r.err;
				EXPECT_EQ(rep.verdict(), "pass") << r.out;
			}
	for (const char *ex : { "-w update --pauses --points --max-stalls 2 --max-crashes 1 --schedules 400",
				"-w hold --stall 0.5,1.5 --max-crashes 1 --schedules 400" }) {
		SCOPED_TRACE(ex);
		CmdResult r = run_cmd(BIN + " explore -p flock -n 3 --ops 2 -q --time-budget 30m " + ex + " -o " + d.sub("x") +
				      " --dir " + d.path);
		EXPECT_EQ(r.status, 0) << r.out << r.err;
		EXPECT_NE(r.out.find("nothing found"), std::string::npos) << r.out;
	}
}

/* no-orphan-lock on a real run: K-VL-1 under retainLiveOwner, where the
 * empty lock of a killed taker is never stale, breaks it; flock keeps it
 * (the corpus above judges it on every run). */
TEST(IntegOracle, NoOrphanLockCatchesTheRetainedEmptyLock)
{
	ScratchDir d;
	std::string seen, example;
	int shown = first_seed_showing({ 1, 2, 3, 4 }, [&](int seed, std::string *said) {
		std::string tag = "k" + std::to_string(seed);
		CmdResult r = run_in(d, tag, "-p lockfile-legacy --param retain=1 "
				     "--fault 'crash@lockfile-legacy/take/after-create:p=0.2' --respawn "
				     "--time-scale 0.01 -w update -n 4 --ops 200 -s " + std::to_string(seed));
		Report rep(d.sub(tag + ".json"));
		*said = r.out;
		EXPECT_TRUE(rep.root) << r.out << r.err;
		example = rep.root ? rep.example("no-orphan-lock") : "";
		return rep.root && r.status == 1 && rep.violations("no-orphan-lock") > 0;
	}, &seen);
	EXPECT_NE(shown, -1) << "no seed of 1..4 showed the retained empty lock\n" << seen;
	EXPECT_NE(example.find("its maker died"), std::string::npos) << example;
	CmdResult f = run_in(d, "f", "-p flock --faults crashes -w update -n 4 -d 1s --time-scale 0.01");
	Report fr(d.sub("f.json"));
	ASSERT_TRUE(fr.root) << f.out << f.err;
	EXPECT_EQ(fr.violations("no-orphan-lock"), 0);
}

/* no-phantom-result on a real run: the in-place write (write=inplace) lands
 * and then its close fails (EIO), so the op reports a write error for a
 * count the final state holds; tmp + rename under the same fault never
 * renames a tmp whose close failed.  One worker: the fault decisions alone
 * decide (a bounded list of seeds all the same, as the rule asks). */
TEST(IntegOracle, NoPhantomResultCatchesALandedWriteReportedFailed)
{
	ScratchDir d;
	const std::string f = " -w update -n 1 --ops 20 --time-scale 0.01 --fault 'errno@fs/close:p=0.3,err=EIO' -s ";
	std::string seen, example;
	int shown = first_seed_showing({ 1, 2, 3, 4 }, [&](int seed, std::string *said) {
		std::string tag = "i" + std::to_string(seed);
		CmdResult r = run_in(d, tag, "-p flock --param write=inplace" + f + std::to_string(seed));
		Report rep(d.sub(tag + ".json"));
		*said = r.out;
		EXPECT_TRUE(rep.root) << r.out << r.err;
		example = rep.root ? rep.example("no-phantom-result") : "";
		return rep.root && r.status == 1 && rep.violations("no-phantom-result") > 0;
	}, &seen);
	EXPECT_NE(shown, -1) << "no seed of 1..4 reported a landed in-place write as failed\n" << seen;
	EXPECT_NE(example.find("reported a write error"), std::string::npos) << example;
	for (const char *seed : { "1", "2" }) {
		std::string tag = std::string("r") + seed;
		CmdResult r = run_in(d, tag, "-p flock" + f + seed);
		Report rep(d.sub(tag + ".json"));
		ASSERT_TRUE(rep.root) << r.out << r.err;
		EXPECT_TRUE(rep.applicable("no-phantom-result"));
		EXPECT_EQ(rep.violations("no-phantom-result"), 0) << rep.example("no-phantom-result");
		EXPECT_GT(rep.total("errors"), 0) << r.out;
	}
}

/* no-livelock on a real run: `none --param spin=N` stats the lock N times
 * inside acquire without a sleep (a retry loop that lost its wait); the seam
 * journals a spin at 10000 calls, nothing else changes: caught.  Below the
 * limit it holds, and flock (the corpus above) keeps it on every run.  The
 * calls are counted, not timed: the same verdict on any machine. */
TEST(IntegOracle, NoLivelockCatchesASpinOnARealRun)
{
	ScratchDir d;
	CmdResult r = run_in(d, "s", "-p none --param spin=20000 -w update -n 1 --ops 3 --time-scale 0.01");
	Report rep(d.sub("s.json"));
	ASSERT_TRUE(rep.root) << r.out << r.err;
	EXPECT_EQ(r.status, 1) << r.out;
	EXPECT_EQ(rep.violations("no-livelock"), 3) << r.out;
	EXPECT_NE(rep.example("no-livelock").find("without a sleep"), std::string::npos) << rep.example("no-livelock");
	CmdResult k = run_in(d, "k", "-p none --param spin=5000 -w update -n 1 --ops 3 --time-scale 0.01");
	Report kr(d.sub("k.json"));
	ASSERT_TRUE(kr.root) << k.out << k.err;
	EXPECT_TRUE(kr.applicable("no-livelock"));
	EXPECT_EQ(kr.violations("no-livelock"), 0);
	EXPECT_EQ(k.status, 0) << k.out;
}

/* Every mutex is judged: lockfile-legacy journals its .recovery (K-VL-2's
 * crash inside it on a real run), the run's exclusion covers it and holds
 * (3.0.155 never takes a .recovery over), and `list protocols` declares it. */
TEST(IntegOracle, TheRecoveryMutexIsJournaledAndJudged)
{
	ScratchDir d;
	std::string out = d.sub("v2");
	CmdResult r = run_cmd(BIN + " run -p lockfile-legacy -w hold -n 2 -d 1s --respawn -s 4 -q "
			      "--fault 'crash@hold/hold/after-acquire:nth=3,workers=0' "
			      "--fault 'crash@lockfile-legacy/reclaim/after-recovery-create:nth=1' "
			      "--time-scale 0.01 --dir " + d.sub("w") + " -o " + out + " --json " + d.sub("v2.json"));
	Report rep(d.sub("v2.json"));
	ASSERT_TRUE(rep.root) << r.out << r.err;
	EXPECT_EQ(rep.violations("exclusion"), 0) << rep.example("exclusion");
	CmdResult dump = run_cmd(BIN + " dump " + out);
	EXPECT_EQ(dump.status, 0) << dump.err;
	EXPECT_NE(dump.out.find("\"mutex-take\""), std::string::npos);
	CmdResult l = run_cmd(BIN + " list protocols -p lockfile-recorded");
	EXPECT_NE(l.out.find("mutexes  lock ("), std::string::npos) << l.out;
	EXPECT_NE(l.out.find("; recovery ("), std::string::npos) << l.out;
	EXPECT_NE(l.out.find("absorbs acquire: ENOENT at rename"), std::string::npos) << l.out;
}

/* no-escaped-error on a real run: K-ML-3, the folder swept between mkdir -p
 * and the lock mkdir - mkdir-legacy takes the ENOENT for contention and gives
 * up "another writer holds" though nobody does; mkdir-owner and flock keep
 * the claim. */
TEST(IntegOracle, NoEscapedErrorCatchesTheSweptFolder)
{
	ScratchDir d;
	const std::string f = " -w update -n 1 --ops 20 --time-scale 0.01 --fault 'sweep:every=1ms' "
			      "--fault 'stall@update/folder/after-folder-mkdir:nth=1,for=30ms'";
	CmdResult l = run_in(d, "l", "-p mkdir-legacy" + f);
	Report lr(d.sub("l.json"));
	ASSERT_TRUE(lr.root) << l.out << l.err;
	EXPECT_EQ(l.status, 1);
	EXPECT_EQ(lr.violations("no-escaped-error"), 1) << l.out;
	EXPECT_NE(lr.example("no-escaped-error").find("rule busy-without-holder"), std::string::npos)
		<< lr.example("no-escaped-error");
	for (const char *p : { "mkdir-owner", "flock" }) {
		CmdResult k = run_in(d, p, std::string("-p ") + p + f);
		Report kr(d.sub(std::string(p) + ".json"));
		ASSERT_TRUE(kr.root) << k.out << k.err;
		EXPECT_EQ(kr.violations("no-escaped-error"), 0) << p << ": " << kr.example("no-escaped-error");
	}
}

/* strict-lease on a real run: mkdir-legacy's holders stalled past the stale
 * age are reclaimed while alive (legal by the age rule, so exclusion counts
 * them as reclaims); --strict calls each a violation, without it the
 * invariant is n/a; flock under the same stalls keeps it. */
TEST(IntegOracle, StrictLeaseCatchesALiveHolderReclaimed)
{
	ScratchDir d;
	const std::string f = " -w update -n 4 -d 1s --time-scale 0.01 --fault 'stall@update/*:p=0.1,for=1.5stale' -s ";
	bool caught = false;
	for (const char *seed : { "1", "2", "3" }) { /* a bounded list of seeds: one must show it */
		std::string tag = std::string("s") + seed;
		CmdResult s = run_in(d, tag, "-p mkdir-legacy --strict" + f + seed);
		Report sr(d.sub(tag + ".json"));
		ASSERT_TRUE(sr.root) << s.out << s.err;
		EXPECT_TRUE(sr.applicable("strict-lease"));
		if (sr.violations("strict-lease") > 0 && s.status == 1) {
			EXPECT_GT(sr.total("reclaims"), 0);
			EXPECT_NE(sr.example("strict-lease").find("no heartbeat or held() check"), std::string::npos)
				<< sr.example("strict-lease");
			caught = true;
			break;
		}
	}
	EXPECT_TRUE(caught) << "no seed of 1..3 reclaimed a live mkdir-legacy holder";
	CmdResult o = run_in(d, "o", "-p mkdir-legacy" + f + "1");
	Report orr(d.sub("o.json"));
	ASSERT_TRUE(orr.root) << o.out << o.err;
	EXPECT_FALSE(orr.applicable("strict-lease"));
	CmdResult k = run_in(d, "k", "-p flock --strict" + f + "1");
	Report kr(d.sub("k.json"));
	ASSERT_TRUE(kr.root) << k.out << k.err;
	EXPECT_TRUE(kr.applicable("strict-lease"));
	EXPECT_EQ(kr.violations("strict-lease"), 0);
	EXPECT_EQ(k.status, 0) << k.out;
}
