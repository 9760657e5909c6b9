/* unit_checker_oracle.cc - liveness never cries wolf: the false alarms of
 * issue 15 as hand-built histories that must pass, each beside the history
 * that breaks the same rule and must still fail.  Times are synthetic (ms on
 * a made-up clock): nothing here sleeps or times. */
#include <gtest/gtest.h>

#include <string.h>

#include <string>
#include <vector>

extern "C" {
#include "check/checker.h"
#include "core/journal.h"
#include "faults/fault.h"
#include "protocols/lock.h"
}
#include "ck_hist.h"

namespace {

constexpr int64_t INO = 77;

struct Hist : HistBase<Hist> {
	/* W makes its lock object at T and holds from T + 0.5 */
	Hist &take(unsigned w, uint32_t op, double t)
	{
		ev(w, EV_ATTEMPT, op, t);
		ev(w, EV_OBJ_CREATE, op, t + 0.2, INO, 1);
		return ev(w, EV_ACQUIRED, op, t + 0.5, ns(t + 0.2));
	}
	Hist &unlink(unsigned by, unsigned creator, double t) { return ev(by, EV_OBJ_REMOVE, 0, t, INO, creator); }
	Hist &crash(unsigned w, double t) { return ev(w, EV_FAULT, 0, t, FK_CRASH, 0x1234, 0); }
	Hist &stall(unsigned w, double t, int64_t ms) { return ev(w, EV_FAULT, 0, t, FK_STALL, 0x1234, ms); }
	Hist &wait_busy(unsigned w, uint32_t op, double t, double until)
	{
		ev(w, EV_ATTEMPT, op, t);
		return ev(w, EV_BUSY, op, until);
	}
};

struct OracleRun {
	unsigned workers = 2;
	int64_t stale = 1000, budget = 100, jump = 0;
	const char *proto = nullptr;
	int excuse = 0; /* explore: an injected errno is the choice's doing */

	check_result go(const Hist &h)
	{
		std::vector<int64_t> sv(workers, stale), bv(workers, budget);
		std::vector<const char *> pv(workers, proto);
		check_input in;
		memset(&in, 0, sizeof in);
		in.rec = h.r.data();
		in.n = h.r.size();
		in.workers = workers;
		in.stale_ms = sv.data();
		in.budget_ms = bv.data();
		in.proto_of = proto ? pv.data() : nullptr;
		in.clock_jump_ms = jump;
		in.excuse_injected = excuse;
		check_result out;
		EXPECT_EQ(check_run(&in, &out), 0);
		return out;
	}
};

uint64_t live(const check_result &r)
{
	return r.inv[INV_LIVENESS].violations;
}

std::string text(const check_result &r)
{
	return r.inv[INV_LIVENESS].nex ? r.inv[INV_LIVENESS].ex[0].text : "";
}

} // namespace

/* (a) w0 paused inside its release (after release-begin, before its unlink):
 * its lock is still its own, so w1 waited on a live holder. */
TEST(CheckerOracle, HolderPausedInsideItsReleaseStillHolds)
{
	Hist h;
	h.take(0, 0, 0).ev(0, EV_RELEASE_BEGIN, 0, 5);
	h.wait_busy(1, 0, 6, 120); /* its whole 100 ms budget */
	h.unlink(0, 0, 150).ev(0, EV_RELEASED, 0, 151);
	h.take(1, 1, 160).ev(1, EV_RELEASE_BEGIN, 1, 170).unlink(1, 1, 171).ev(1, EV_RELEASED, 1, 172);
	OracleRun run;
	check_result r = run.go(h);
	EXPECT_EQ(live(r), 0u) << text(r);
	EXPECT_EQ(r.pass, 1);
}

/* The same wait after a release that returned with its object still there:
 * nobody occupies the lock, the waiter waited on a leftover (K-VL-3's kind). */
TEST(CheckerOracle, ReleaseThatReturnedLeavingItsLockIsStillCaught)
{
	Hist h;
	h.take(0, 0, 0).ev(0, EV_RELEASE_BEGIN, 0, 5).ev(0, EV_RELEASED, 0, 5.5);
	h.wait_busy(1, 0, 6, 120);
	OracleRun run;
	check_result r = run.go(h);
	EXPECT_EQ(live(r), 1u);
	EXPECT_NE(text(r).find("rule left-behind"), std::string::npos) << text(r);
}

/* A reclaimer that replaces the releasing holder's object ends its release
 * as far as the lock goes: a later stuck stretch counts from there. */
TEST(CheckerOracle, ReplacingTheObjectEndsTheRelease)
{
	Hist h;
	h.take(0, 0, 0).ev(0, EV_RELEASE_BEGIN, 0, 5);
	h.unlink(1, 0, 6); /* w1 removed it: the lock is free although w0 still releases */
	for (uint32_t op = 0; op < 30; op++) /* w1 tries for 3 s, 100 ms a wait */
		h.wait_busy(1, op, 7 + 100.0 * op, 7 + 100.0 * op + 99);
	OracleRun run;
	run.stale = 100;
	check_result r = run.go(h);
	EXPECT_GE(live(r), 1u);
	EXPECT_NE(text(r).find("nobody held the lock from seq"), std::string::npos) << text(r);
}

/* (b) a dead holder's lock younger than the stale age: a protocol that
 * promises only "reclaimed once it is stale_ms old" may make waiters give up
 * on it. */
TEST(CheckerOracle, DeadHoldersYoungLockIsNoAlarmForAnAgeProtocol)
{
	Hist h;
	h.take(0, 0, 0).crash(0, 1);
	h.wait_busy(1, 0, 2, 110);    /* lock 1.8 ms old when it began */
	h.wait_busy(1, 1, 900, 1010); /* 899.8 ms old: still younger than 1000 + jitter */
	OracleRun run;
	run.proto = "mkdir-owner";
	check_result r = run.go(h);
	EXPECT_EQ(live(r), 0u) << text(r);
}

TEST(CheckerOracle, DeadHoldersLockPastTheStaleAgeIsCaught)
{
	Hist h;
	h.take(0, 0, 0).crash(0, 1);
	h.wait_busy(1, 0, 1100, 1210); /* 1099.8 ms old: past 1000 + 50 */
	OracleRun run;
	run.proto = "mkdir-owner";
	check_result r = run.go(h);
	EXPECT_EQ(live(r), 1u);
	EXPECT_NE(text(r).find("left when it died"), std::string::npos) << text(r);
	EXPECT_NE(text(r).find("rule dead-holder-stale"), std::string::npos) << text(r);
}

/* The false alarm of the disabled integ test (mkdir-owner, seed 1): w0 dies
 * with L (77) and its entry (78) in place; past the stale age w1 reclaims,
 * making its entry (79) and removing w0's, and dies before it holds.  L's
 * mtime, mkdir-owner's age, moved at w1's rmdir: a waiter that gives up
 * within the stale age of that was told what the protocol documents.  A
 * protocol that does not age by its directory still blames it (the same
 * history), and mkdir-owner does once L is stale again. */
namespace {
Hist reclaimer_died(double wait_from)
{
	Hist h;
	h.take(0, 0, 0).ev(0, EV_OBJ_CREATE, 0, 0.3, INO + 1, 1).crash(0, 1);
	h.ev(1, EV_ATTEMPT, 0, 1100).ev(1, EV_OBJ_CREATE, 0, 1100.5, INO + 2, 1);
	h.ev(1, EV_OBJ_REMOVE, 0, 1101, INO + 1, 0).crash(1, 1101.5);
	return h.wait_busy(2, 0, wait_from, wait_from + 110);
}
} // namespace

TEST(CheckerOracle, ALockAgedByItsDirectoryIsYoungAgainAfterAnyChangeInsideIt)
{
	OracleRun run;
	run.workers = 3;
	run.proto = "mkdir-owner";
	check_result r = run.go(reclaimer_died(1150));
	EXPECT_EQ(live(r), 0u) << text(r);
	EXPECT_EQ(r.inv[INV_NO_ORPHAN_LOCK].violations, 0u) << r.inv[INV_NO_ORPHAN_LOCK].ex[0].text;

	check_result late = run.go(reclaimer_died(2200)); /* 1099 ms after w1's rmdir: stale again */
	EXPECT_EQ(live(late), 1u);
	EXPECT_NE(text(late).find("rule dead-holder-stale"), std::string::npos) << text(late);

	run.proto = "lockfile-recorded"; /* ages its record, not a directory: the same wait is blamed */
	check_result f = run.go(reclaimer_died(1150));
	EXPECT_EQ(live(f), 1u) << text(f);
	EXPECT_EQ(f.inv[INV_NO_ORPHAN_LOCK].violations, 1u);
}

/* A lock its maker left, then taken by another worker that died holding it:
 * it was held until that death, so it is only as old as that for every
 * protocol (no-orphan-lock counted from the first maker's death). */
TEST(CheckerOracle, ALockHeldSinceItsMakerLeftItIsAsOldAsItsLastHolder)
{
	Hist h;
	h.take(0, 0, 0).crash(0, 1);
	h.ev(1, EV_ATTEMPT, 0, 1100).ev(1, EV_ACQUIRED, 0, 1100.5, Hist::ns(0.2)).crash(1, 1101);
	h.wait_busy(2, 0, 1150, 1260);
	OracleRun run;
	run.workers = 3;
	run.proto = "lockfile-recorded";
	check_result r = run.go(h);
	EXPECT_EQ(r.inv[INV_NO_ORPHAN_LOCK].violations, 0u) << r.inv[INV_NO_ORPHAN_LOCK].ex[0].text;
	EXPECT_EQ(live(r), 0u) << text(r);
	h.wait_busy(2, 1, 2200, 2310); /* stale again: caught */
	check_result k = run.go(h);
	EXPECT_EQ(k.inv[INV_NO_ORPHAN_LOCK].violations, 1u);
}

/* K-VL-1's shape: a protocol that claims to see a dead pid at once is
 * blamed for the young lock too, and the message says so. */
TEST(CheckerOracle, DeadHoldersYoungLockIsCaughtWhenThePidCheckIsClaimed)
{
	Hist h;
	h.take(0, 0, 0).crash(0, 1);
	h.wait_busy(1, 0, 2, 110);
	OracleRun run;
	run.proto = "lockfile-legacy";
	check_result r = run.go(h);
	EXPECT_EQ(live(r), 1u);
	EXPECT_NE(text(r).find("rule dead-holder: the protocol claims"), std::string::npos) << text(r);
}

/* K-VL-2's shape: w1's attempt began while w0 still held (the explorer
 * journals every worker's attempt at its start); w0 dies at 1 ms and its
 * reclaimer dies inside .recovery (not journalled as a hold): w1 then waits
 * its whole budget on nobody and is caught.  Its twins: a holder that dies
 * less than a budget before the give-up met w1 as a live holder, and so did
 * a holder alive to the end. */
TEST(CheckerOracle, AWaiterThatBeganWhileTheHolderLivedIsCaughtAWholeBudgetAfterItDied)
{
	OracleRun run;
	run.proto = "lockfile-legacy";
	Hist h;
	h.ev(1, EV_ATTEMPT, 0, 0);
	h.take(0, 0, 0.1).crash(0, 1);
	h.ev(1, EV_BUSY, 0, 101.5);
	check_result r = run.go(h);
	EXPECT_EQ(live(r), 1u);
	EXPECT_NE(text(r).find("left when it died"), std::string::npos) << text(r);

	Hist soon; /* died 40 ms before the give-up: a live holder for most of the wait */
	soon.ev(1, EV_ATTEMPT, 0, 0);
	soon.take(0, 0, 0.1).crash(0, 61);
	soon.ev(1, EV_BUSY, 0, 101.5);
	EXPECT_EQ(live(run.go(soon)), 0u) << text(run.go(soon));

	Hist stalled; /* the same wait, but a 50 ms stall of w1 inside it: not its own wait */
	stalled.ev(1, EV_ATTEMPT, 0, 0);
	stalled.take(0, 0, 0.1).crash(0, 1).stall(1, 20, 50);
	stalled.ev(1, EV_BUSY, 0, 101.5);
	EXPECT_EQ(live(run.go(stalled)), 0u) << text(run.go(stalled));
}

/* (c) virtual time: w2's 90 s stall moves w1's clock; w1's own wait was a
 * single try (budget 0) or a few ms, so it waited on nobody. */
TEST(CheckerOracle, AnotherWorkersClockJumpIsNoWaitersWait)
{
	Hist h;
	h.take(0, 0, 0).ev(0, EV_RELEASE_BEGIN, 0, 1).ev(0, EV_RELEASED, 0, 1.5); /* left behind */
	h.ev(1, EV_ATTEMPT, 0, 2).stall(2, 2.5, 90000).ev(1, EV_BUSY, 0, 90003);
	OracleRun run;
	run.workers = 3;
	run.jump = 90000;
	run.budget = 0;
	check_result r = run.go(h);
	EXPECT_EQ(live(r), 0u) << text(r);
	run.budget = 10; /* a 10 ms budget: its own elapsed time was 0.5 ms */
	r = run.go(h);
	EXPECT_EQ(live(r), 0u) << text(r);

	/* the same waiter with its own 10 ms elapsed, no jump: caught */
	Hist k;
	k.take(0, 0, 0).ev(0, EV_RELEASE_BEGIN, 0, 1).ev(0, EV_RELEASED, 0, 1.5);
	k.wait_busy(1, 0, 2, 13);
	run.jump = 0;
	r = run.go(k);
	EXPECT_EQ(live(r), 1u);
}

/* ---- no-phantom-result ---- */

namespace {

/* w0: op 0 commits count 1; op 1 begins the commit of count 2 and reports
 * a write error.  FINAL is the state file at the end. */
check_result phantom(const std::string &final, bool later_unknown = false)
{
	Hist h;
	h.take(0, 0, 0).ev(0, EV_READ, 0, 1, -1, 0).ev(0, EV_COMMIT_BEGIN, 0, 2, 1, 1);
	h.ev(0, EV_COMMIT, 0, 3, 1, 1).ev(0, EV_RELEASE_BEGIN, 0, 4).unlink(0, 0, 4.5).ev(0, EV_RELEASED, 0, 5);
	h.take(0, 1, 10).ev(0, EV_READ, 1, 11, 1, 1).ev(0, EV_COMMIT_BEGIN, 1, 12, 2, 2);
	h.ev(0, EV_WRITE_ERROR, 1, 13).ev(0, EV_RELEASE_BEGIN, 1, 14).unlink(0, 0, 14.5).ev(0, EV_RELEASED, 1, 15);
	if (later_unknown) { /* op 2 begins the commit of count 2 again and dies unreported */
		h.take(0, 2, 20).ev(0, EV_READ, 2, 21, 1, 1).ev(0, EV_COMMIT_BEGIN, 2, 22, 2, 2);
		h.crash(0, 23).ev(0, EV_WORKER_START, 3, 24, 1);
	}
	check_input in;
	memset(&in, 0, sizeof in);
	int64_t st = 1000, bu = 100;
	in.rec = h.r.data();
	in.n = h.r.size();
	in.workers = 1;
	in.stale_ms = &st;
	in.budget_ms = &bu;
	in.check_state = 1;
	in.final_state = final.data();
	in.final_len = final.size();
	check_result out;
	EXPECT_EQ(check_run(&in, &out), 0);
	return out;
}

} // namespace

TEST(CheckerOracle, NoPhantomResultFailedWriteThatLandedIsCaught)
{
	check_result r = phantom("{\"version\":1,\"revision\":2,\"counts\":{\"0\":2}}");
	EXPECT_EQ(r.inv[INV_NO_PHANTOM_RESULT].violations, 1u);
	EXPECT_NE(std::string(r.inv[INV_NO_PHANTOM_RESULT].ex[0].text).find("reported a write error (op 1"),
		  std::string::npos) << r.inv[INV_NO_PHANTOM_RESULT].ex[0].text;
	EXPECT_EQ(r.pass, 0);
}

TEST(CheckerOracle, NoPhantomResultFailedWriteThatDidNotLandHolds)
{
	check_result r = phantom("{\"version\":1,\"revision\":1,\"counts\":{\"0\":1}}");
	EXPECT_EQ(r.inv[INV_NO_PHANTOM_RESULT].violations, 0u) << r.inv[INV_NO_PHANTOM_RESULT].ex[0].text;
	EXPECT_EQ(r.pass, 1);
	/* count 2 in the state, but a later commit of count 2 died unreported: it may be that one */
	check_result u = phantom("{\"version\":1,\"revision\":2,\"counts\":{\"0\":2}}", true);
	EXPECT_EQ(u.inv[INV_NO_PHANTOM_RESULT].violations, 0u);
	/* not judged without a state file to judge against */
	EXPECT_STREQ(check_inv_name(INV_NO_PHANTOM_RESULT), "no-phantom-result");
}

/* ---- no-orphan-lock ---- */

/* w0 dies holding; its lock stays.  w1 waits its whole budget on it, long
 * after the stale age: the lock outlived its maker. */
TEST(CheckerOracle, NoOrphanLockADeadMakersLockPastTheStaleAgeIsCaught)
{
	Hist h;
	h.take(0, 0, 0).crash(0, 1);
	h.wait_busy(1, 0, 1200, 1310);
	h.wait_busy(1, 1, 1400, 1510); /* the same object: counted once */
	OracleRun run;
	check_result r = run.go(h);
	EXPECT_EQ(r.inv[INV_NO_ORPHAN_LOCK].violations, 1u);
	EXPECT_NE(std::string(r.inv[INV_NO_ORPHAN_LOCK].ex[0].text).find("its maker died"), std::string::npos)
		<< r.inv[INV_NO_ORPHAN_LOCK].ex[0].text;
	EXPECT_EQ(r.pass, 0);
}

/* The budget hook reports exact microseconds rounded up to whole ms: a
 * 100.3 ms wait under a budget reported as 101 ms was the whole budget, for
 * no-orphan-lock as for liveness (the CI run that missed K-VL-1's orphan).
 * Under 100 ms it is not. */
TEST(CheckerOracle, NoOrphanLockAGiveUpWithinAMillisecondOfTheBudgetIsTheWholeBudget)
{
	Hist h;
	h.take(0, 0, 0).crash(0, 1).wait_busy(1, 0, 1200, 1300.3);
	OracleRun run;
	run.budget = 101;
	EXPECT_EQ(run.go(h).inv[INV_NO_ORPHAN_LOCK].violations, 1u);
	Hist s;
	s.take(0, 0, 0).crash(0, 1).wait_busy(1, 0, 1200, 1299.9);
	EXPECT_EQ(run.go(s).inv[INV_NO_ORPHAN_LOCK].violations, 0u);
}

TEST(CheckerOracle, NoOrphanLockHoldsForAYoungOrReclaimedLockOrAnOccupiedOne)
{
	OracleRun run;
	Hist young; /* given up on before the stale age had passed */
	young.take(0, 0, 0).crash(0, 1).wait_busy(1, 0, 500, 610);
	EXPECT_EQ(run.go(young).inv[INV_NO_ORPHAN_LOCK].violations, 0u);

	Hist reclaimed; /* reclaimed past the stale age: nothing left to wait on */
	reclaimed.take(0, 0, 0).crash(0, 1).unlink(1, 0, 1100).wait_busy(1, 0, 1200, 1310);
	EXPECT_EQ(run.go(reclaimed).inv[INV_NO_ORPHAN_LOCK].violations, 0u);

	Hist paused; /* its maker is inside its release: not left */
	paused.take(0, 0, 0).ev(0, EV_RELEASE_BEGIN, 0, 1).wait_busy(1, 0, 1200, 1310);
	EXPECT_EQ(run.go(paused).inv[INV_NO_ORPHAN_LOCK].violations, 0u);
	EXPECT_STREQ(check_inv_name(INV_NO_ORPHAN_LOCK), "no-orphan-lock");
}

/* ---- no-livelock on a real run (EV_SPIN from the seam) ---- */

/* w0 journals a spin (10000 calls inside op 0, the half-way call at 10 ms):
 * with no lock object made or removed since, it spun; a lock object w1 made
 * after the half-way call is a change it may have been watching. */
TEST(CheckerOracle, NoLivelockASpinWithNothingChangingIsCaught)
{
	OracleRun run;
	run.proto = "mkdir-legacy";
	Hist spin;
	spin.take(1, 0, 0).ev(0, EV_ATTEMPT, 0, 1).ev(0, EV_SPIN, 0, 20, Hist::ns(10), 10000);
	check_result r = run.go(spin);
	EXPECT_TRUE(r.inv[INV_NO_LIVELOCK].applicable);
	ASSERT_EQ(r.inv[INV_NO_LIVELOCK].violations, 1u);
	EXPECT_NE(std::string(r.inv[INV_NO_LIVELOCK].ex[0].text).find("w0 made 10000 file-system calls inside op 0"),
		  std::string::npos) << r.inv[INV_NO_LIVELOCK].ex[0].text;
	EXPECT_EQ(r.pass, 0);

	Hist watched;
	watched.ev(0, EV_ATTEMPT, 0, 1).take(1, 0, 12).ev(0, EV_SPIN, 0, 20, Hist::ns(10), 10000);
	EXPECT_EQ(run.go(watched).inv[INV_NO_LIVELOCK].violations, 0u);

	run.proto = nullptr; /* no protocol known: the seam's count is not this history's */
	EXPECT_FALSE(run.go(Hist().ev(0, EV_ATTEMPT, 0, 1)).inv[INV_NO_LIVELOCK].applicable);
}

/* two-reclaimers 2.0.0 under load (a false alarm seen in CI): w0 holds L (77)
 * with its entry (78); w1, reclaiming, makes its entry (79) in L and stalls;
 * w0's release removes its own entry, and its rmdir(L) fails ENOTEMPTY ("a
 * waiting process's entry is in it; that process holds next").  w2 gives up
 * meanwhile: the lock was being taken by a live worker, not left to nobody.
 * The same history with w1 dead is a lock left behind. */
namespace {
Hist taker_inside(bool taker_dies, double wait_from = 7)
{
	Hist h;
	h.take(0, 0, 0).ev(0, EV_OBJ_CREATE, 0, 0.3, INO + 1, 1);
	h.ev(1, EV_ATTEMPT, 0, 1).ev(1, EV_OBJ_CREATE, 0, 2, INO + 2, 1);
	if (taker_dies)
		h.crash(1, 3);
	h.ev(0, EV_RELEASE_BEGIN, 0, 4).ev(0, EV_OBJ_REMOVE, 0, 5, INO + 1, 0).ev(0, EV_RELEASED, 0, 6);
	return h.wait_busy(2, 0, wait_from, wait_from + 113);
}
} // namespace

TEST(CheckerOracle, ALiveTakersEntryInsideTheLockIsContentionNotALeftLock)
{
	OracleRun run;
	run.workers = 3;
	run.proto = "mkdir-owner";
	check_result r = run.go(taker_inside(false));
	EXPECT_EQ(live(r), 0u) << text(r);
	/* past the stale age too, a live taker inside is contention */
	EXPECT_EQ(live(run.go(taker_inside(false, 1100))), 0u);
	/* its twin with the taker dead: L is left to nobody, and past its stale age (a
	 * young one is what a lock aged by its mtime promises) the waiter is right */
	EXPECT_EQ(live(run.go(taker_inside(true))), 0u);
	check_result k = run.go(taker_inside(true, 1100));
	EXPECT_EQ(live(k), 1u);
}

/* DeadHoldersYoungLock under stress-ng (a false alarm): mkdir-owner's w1
 * makes L (77) and its entry (78), and its publish check, late on a loaded
 * machine, withdraws the entry and leaves L "as found"; its next attempt
 * gives up on that empty L.  L is younger than the stale age, the only
 * promise a lock aged by its mtime makes: no alarm.  Past the stale age it
 * is one (waits-on-itself); lockfile-legacy, which judges its own pid's
 * record, is blamed at once (K-VL-3). */
namespace {
Hist withdrawn(double wait_from)
{
	Hist h;
	h.ev(1, EV_ATTEMPT, 0, 0).ev(1, EV_OBJ_CREATE, 0, 0.2, INO, 1).ev(1, EV_OBJ_CREATE, 0, 0.3, INO + 1, 1);
	h.ev(1, EV_OBJ_REMOVE, 0, 31, INO + 1, 1).ev(1, EV_BUSY, 0, 31.5);
	return h.wait_busy(1, 1, wait_from, wait_from + 110);
}
} // namespace

TEST(CheckerOracle, AnEmptyLockLeftByAPublishCheckIsYoungUntilItsStaleAge)
{
	OracleRun run;
	run.proto = "mkdir-owner";
	check_result r = run.go(withdrawn(32));
	EXPECT_EQ(live(r), 0u) << text(r);
	check_result late = run.go(withdrawn(1100)); /* 1069 ms after the withdraw: stale */
	EXPECT_EQ(live(late), 1u);
	EXPECT_NE(text(late).find("rule waits-on-itself"), std::string::npos) << text(late);
	run.proto = "lockfile-legacy";
	EXPECT_EQ(live(run.go(withdrawn(32))), 1u);
}

/* The same for an adapter whose library reclaims by age alone (a false
 * alarm of the external explorer's errno choice): npm's lockfile swallows a
 * failed unlink at release, the lock file stays, and the holder's next
 * attempt gives up on it at its wait budget, 10 s, just as it turns 10 s
 * stale.  Until then it is what the library promises; past it the waiter is
 * blamed.  A library that never reclaims (py-filelock) is blamed at once. */
TEST(CheckerOracle, ALockAnAdapterLeftIsYoungUntilItsStaleAge)
{
	OracleRun run;
	for (const char *p : { "ext:npm-lockfile", "ext:proper-lockfile", "ext:liblockfile" }) {
		run.proto = p;
		EXPECT_EQ(live(run.go(withdrawn(32))), 0u) << p;
		EXPECT_EQ(live(run.go(withdrawn(1100))), 1u) << p;
	}
	run.proto = "ext:py-filelock";
	EXPECT_EQ(live(run.go(withdrawn(32))), 1u);
}

/* mkdir-legacy (beta.5) ages its lock by the directory's mtime alone and
 * breaks any lock that old, a live maker's too (ML4/MA2): a release whose
 * rmdir failed ("released is released": EACCES, EBUSY ignored) leaves L, and
 * the same worker's next bounded acquire (15 ms) gives up on it while it is
 * young.  What the protocol documents, as npm's lockfile (issue 18): no
 * alarm (`explore -p mkdir-legacy --param form=bounded -n 2 --ops 2`, a false
 * waits-on-itself; tests/cex/mkdir-legacy-release-left-young-lock.cex.json).
 * Past the stale age it is one. */
TEST(CheckerOracle, ALockMkdirLegacysReleaseLeftIsYoungUntilItsStaleAge)
{
	Hist young, old;
	for (Hist *h : { &young, &old }) {
		h->take(0, 0, 0);
		h->ev(0, EV_RELEASE_BEGIN, 0, 5).ev(0, EV_RELEASED, 0, 5.1); /* its rmdir failed: L stays */
	}
	young.wait_busy(0, 1, 6, 120);
	old.wait_busy(0, 1, 1100, 1210);
	OracleRun run;
	run.proto = "mkdir-legacy";
	check_result a = run.go(young), b = run.go(old);
	EXPECT_EQ(live(a), 0u) << text(a);
	ASSERT_EQ(live(b), 1u);
	EXPECT_NE(text(b).find("rule waits-on-itself"), std::string::npos) << text(b);
}

/* ---- no-escaped-error, rule error-on-contention (K-ML-4) ----
 * w1 takes and releases; w0's mkdir then meets the folder w1 removed, still
 * delete pending (w1 has it open: the modelled windows file system's
 * EV_DELETE_PENDING), and its acquire raises that errno on a free lock. */
namespace {
Hist pending_history(int err_raised, bool released, bool injected, bool noted)
{
	Hist h;
	h.take(1, 0, 0);
	if (released)
		h.ev(1, EV_RELEASE_BEGIN, 0, 1).unlink(1, 1, 1.1).ev(1, EV_RELEASED, 0, 1.2);
	h.ev(0, EV_ATTEMPT, 0, 2);
	if (injected)
		h.ev(0, EV_FAULT, 0, 2.1, FK_ERRNO, 0x1234, 0, EPERM);
	if (noted)
		h.ev(0, EV_DELETE_PENDING, 0, 2.1, FSX_MKDIR, 1, 0, EPERM);
	return h.ev(0, EV_ACQUIRE_ERROR, 0, 2.2, FSX_MKDIR + 1, 0, 0, err_raised);
}
uint64_t escaped(const check_result &r)
{
	return r.inv[INV_NO_ESCAPED_ERROR].violations;
}
} // namespace

TEST(CheckerOracle, AnErrnoOfADeletePendingFolderRaisedOnAFreeLockIsErrorOnContention)
{
	OracleRun run;
	run.proto = "mkdir-legacy";
	run.excuse = 1;
	check_result r = run.go(pending_history(EPERM, true, false, true));
	ASSERT_EQ(escaped(r), 1u);
	EXPECT_NE(std::string(r.inv[INV_NO_ESCAPED_ERROR].ex[0].text).find("rule error-on-contention"), std::string::npos)
		<< r.inv[INV_NO_ESCAPED_ERROR].ex[0].text;
	EXPECT_NE(std::string(r.inv[INV_NO_ESCAPED_ERROR].ex[0].text).find("(w1 had it open)"), std::string::npos);
}

/* Its twins: an errno the explorer injected is the choice's doing; another
 * errno than the file system's answer, or a lock someone still holds, is no
 * release in progress met on a free lock. */
TEST(CheckerOracle, AnInjectedOrUnrelatedErrnoIsNoErrorOnContention)
{
	OracleRun run;
	run.proto = "mkdir-legacy";
	run.excuse = 1;
	EXPECT_EQ(escaped(run.go(pending_history(EPERM, true, true, false))), 0u);  /* injected, no note */
	EXPECT_EQ(escaped(run.go(pending_history(EPERM, true, true, true))), 0u);   /* injected in this op */
	EXPECT_EQ(escaped(run.go(pending_history(EACCES, true, false, true))), 0u); /* not the answer noted */
	EXPECT_EQ(escaped(run.go(pending_history(EPERM, false, false, true))), 0u); /* w1 still holds */
}

/* A false alarm kept: 2.0.0 with platform=win32 takes the delete-pending
 * answer for contention and says busy (TRY_ACQUIRE's null): the folder still
 * stood, so busy-without-holder does not apply; without the note the same
 * busy on a lock nobody held, occupied or made is still caught. */
TEST(CheckerOracle, BusyAfterADeletePendingAnswerIsContention)
{
	for (bool noted : { true, false }) {
		OracleRun run;
		run.proto = "mkdir-owner";
		run.excuse = 1;
		Hist h;
		h.take(1, 0, 0).ev(1, EV_RELEASE_BEGIN, 0, 1).unlink(1, 1, 1.1).ev(1, EV_RELEASED, 0, 1.2);
		h.ev(0, EV_ATTEMPT, 0, 2);
		if (noted)
			h.ev(0, EV_DELETE_PENDING, 0, 2.1, FSX_MKDIR, 1, 0, EPERM);
		h.ev(0, EV_BUSY, 0, 2.2);
		EXPECT_EQ(escaped(run.go(h)), noted ? 0u : 1u) << "noted " << noted;
	}
}
