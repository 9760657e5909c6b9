/* unit_checker_claims.cc - the invariants that judge a protocol's declared
 * claims (check/claims.c): exclusion on every mutex it declares,
 * no-escaped-error, strict-lease; and the exact scaled constants they and
 * the protocols compare against (protocols/params.c).  Each rule has a
 * hand-built history that breaks it and one that keeps it.  Times are
 * synthetic (ms on a made-up clock): nothing here sleeps or times. */
#include <gtest/gtest.h>

#include <errno.h>
#include <string.h>

#include <string>
#include <vector>

extern "C" {
#include "check/checker.h"
#include "core/journal.h"
#include "core/point.h"
#include "faults/fault.h"
#include "protocols/lock.h"
}
#include "ck_hist.h"

namespace {

constexpr int64_t INO = 91;

struct Hist : HistBase<Hist> {
	Hist &take(unsigned w, uint32_t op, double t, int64_t ino = INO)
	{
		ev(w, EV_ATTEMPT, op, t);
		ev(w, EV_OBJ_CREATE, op, t + 0.2, ino, 1);
		return ev(w, EV_ACQUIRED, op, t + 0.5, ns(t + 0.2));
	}
	Hist &release(unsigned w, uint32_t op, double t, int64_t ino = INO)
	{
		ev(w, EV_RELEASE_BEGIN, op, t);
		ev(w, EV_OBJ_REMOVE, op, t + 0.2, ino, w);
		return ev(w, EV_RELEASED, op, t + 0.4);
	}
	/* the recovery mutex (index 1), stale age STALE_US (-1: never) */
	Hist &rtake(unsigned w, uint32_t op, double t, int64_t stale_us = -1)
	{
		return ev(w, EV_MUTEX_TAKE, op, t, 1, stale_us);
	}
	Hist &rdrop(unsigned w, uint32_t op, double t) { return ev(w, EV_MUTEX_DROP, op, t, 1); }
};

struct ClaimsRun {
	unsigned workers = 2;
	int64_t stale = 1000, budget = 100;
	const char *proto = nullptr;
	int strict = 0;
	int64_t jump = 0; /* explore: the execution's stalls (they move every clock) */

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
		in.strict = strict;
		in.clock_jump_ms = jump;
		check_result out;
		EXPECT_EQ(check_run(&in, &out), 0);
		return out;
	}
};

std::string text(const check_result &r, enum inv_id i)
{
	return r.inv[i].nex ? r.inv[i].ex[0].text : "";
}

} // namespace

/* ---- exclusion on every mutex ---- */

/* Two reclaimers inside lockfile-legacy's .recovery at once (the volter
 * double reclaim): exclusion, and the example names the mutex. */
TEST(CheckerClaims, TwoReclaimersInsideRecoveryAtOnceFail)
{
	Hist h;
	h.rtake(0, 0, 10).rtake(1, 0, 12).rdrop(0, 0, 14).rdrop(1, 0, 15);
	ClaimsRun run;
	run.proto = "lockfile-legacy";
	check_result r = run.go(h);
	EXPECT_EQ(r.inv[INV_EXCLUSION].violations, 1u);
	EXPECT_NE(text(r, INV_EXCLUSION).find("took mutex 'recovery'"), std::string::npos) << text(r, INV_EXCLUSION);
	EXPECT_EQ(r.pass, 0);
}

TEST(CheckerClaims, ReclaimersOneAfterAnotherPass)
{
	Hist h;
	h.rtake(0, 0, 10).rdrop(0, 0, 14).rtake(1, 0, 15).rdrop(1, 0, 16);
	ClaimsRun run;
	run.proto = "lockfile-legacy";
	check_result r = run.go(h);
	EXPECT_EQ(r.inv[INV_EXCLUSION].violations, 0u) << text(r, INV_EXCLUSION);
	EXPECT_EQ(r.pass, 1);
}

/* A reclaimer that died inside .recovery holds it no more. */
TEST(CheckerClaims, ADeadReclaimerHoldsNothing)
{
	Hist h;
	h.rtake(0, 0, 10).ev(0, EV_FAULT, 0, 11, FK_CRASH, 0x1, 0).rtake(1, 0, 12).rdrop(1, 0, 13);
	ClaimsRun run;
	run.proto = "lockfile-recorded";
	EXPECT_EQ(run.go(h).inv[INV_EXCLUSION].violations, 0u);
}

/* lockfile-recorded sets a .recovery aside after its grace: a takeover past
 * the stale age the take recorded is legal; before it, a violation. */
TEST(CheckerClaims, RecoveryTakenOverPastItsGraceIsLegal)
{
	Hist legal, early;
	legal.rtake(0, 0, 10, 50000).rtake(1, 0, 80, 50000).rdrop(1, 0, 81);
	early.rtake(0, 0, 10, 50000).rtake(1, 0, 30, 50000).rdrop(1, 0, 31);
	ClaimsRun run;
	run.proto = "lockfile-recorded";
	check_result a = run.go(legal), b = run.go(early);
	EXPECT_EQ(a.inv[INV_EXCLUSION].violations, 0u) << text(a, INV_EXCLUSION);
	EXPECT_EQ(a.reclaims, 1u);
	EXPECT_EQ(b.inv[INV_EXCLUSION].violations, 1u);
	EXPECT_NE(text(b, INV_EXCLUSION).find("stale age 50 ms"), std::string::npos) << text(b, INV_EXCLUSION);
}

/* The lock itself is judged as before, and its example names it too; flock
 * declares only that mutex and passes a clean history. */
TEST(CheckerClaims, TheLockItselfIsNamedAndFlockPasses)
{
	Hist dbl, clean;
	dbl.take(0, 0, 0).take(1, 0, 5, INO + 1);
	clean.take(0, 0, 0).release(0, 0, 5).take(1, 0, 6).release(1, 0, 9);
	ClaimsRun run;
	run.proto = "flock";
	check_result a = run.go(dbl), b = run.go(clean);
	EXPECT_EQ(a.inv[INV_EXCLUSION].violations, 1u);
	EXPECT_NE(text(a, INV_EXCLUSION).find("acquired 'lock'"), std::string::npos) << text(a, INV_EXCLUSION);
	EXPECT_EQ(b.pass, 1);
}

TEST(CheckerClaims, ProtocolsDeclareTheirMutexes)
{
	unsigned n = 0;
	const lock_mutex *m = lock_mutexes(&lockfile_legacy_ops, &n);
	ASSERT_EQ(n, 2u);
	EXPECT_STREQ(m[0].name, "lock");
	EXPECT_STREQ(m[1].name, "recovery");
	lock_mutexes(&lockfile_recorded_ops, &n);
	EXPECT_EQ(n, 2u);
	m = lock_mutexes(&flock_ops, &n);
	EXPECT_EQ(n, 1u);
	EXPECT_STREQ(m[0].name, "lock");
}

/* ---- no-escaped-error ---- */

/* The worker marks an error the protocol claims to absorb (b = 1). */
TEST(CheckerClaims, AnAbsorbedErrnoThatReachesTheCallerFails)
{
	Hist bad, ok;
	bad.ev(0, EV_ATTEMPT, 0, 0).ev(0, EV_ACQUIRE_ERROR, 0, 2, FSX_RENAME + 1, 1, 0, ENOENT);
	ok.ev(0, EV_ATTEMPT, 0, 0).ev(0, EV_ACQUIRE_ERROR, 0, 2, FSX_OPEN + 1, 0, 0, EACCES);
	ok.take(0, 1, 3);
	bad.take(0, 1, 3);
	ClaimsRun run;
	run.proto = "lockfile-legacy";
	check_result a = run.go(bad), b = run.go(ok);
	EXPECT_EQ(a.inv[INV_NO_ESCAPED_ERROR].violations, 1u);
	EXPECT_NE(text(a, INV_NO_ESCAPED_ERROR).find("raised ENOENT from rename"), std::string::npos)
		<< text(a, INV_NO_ESCAPED_ERROR);
	EXPECT_EQ(b.inv[INV_NO_ESCAPED_ERROR].violations, 0u);
}

/* K-ML-3: mkdir-legacy gives up "another writer holds" although nobody held
 * and no lock object was made during its whole attempt. */
TEST(CheckerClaims, BusyWhileNobodyHeldFailsForAProtocolThatClaimsAHolder)
{
	Hist h;
	h.ev(0, EV_ATTEMPT, 0, 0).ev(0, EV_BUSY, 0, 60);
	ClaimsRun run;
	run.workers = 1;
	run.proto = "mkdir-legacy";
	check_result r = run.go(h);
	EXPECT_EQ(r.inv[INV_NO_ESCAPED_ERROR].violations, 1u);
	EXPECT_NE(text(r, INV_NO_ESCAPED_ERROR).find("rule busy-without-holder"), std::string::npos);
	run.proto = "none"; /* claims nothing */
	EXPECT_EQ(run.go(h).inv[INV_NO_ESCAPED_ERROR].violations, 0u);
}

/* A busy while another holds, while a lock object is there, or after one
 * was made during the attempt is what the claim allows. */
TEST(CheckerClaims, BusyWhileSomebodyHeldOrALockWasThereKeepsTheClaim)
{
	Hist held, obj, made;
	held.take(1, 0, 0).ev(0, EV_ATTEMPT, 0, 1).ev(0, EV_BUSY, 0, 60).release(1, 0, 70);
	obj.take(1, 0, 0).release(1, 0, 0.8).ev(1, EV_OBJ_CREATE, 1, 0.9, INO + 5, 1);
	obj.ev(0, EV_ATTEMPT, 0, 1).ev(0, EV_BUSY, 0, 60);
	made.ev(0, EV_ATTEMPT, 0, 1).ev(1, EV_OBJ_CREATE, 0, 2, INO + 6, 1).ev(1, EV_OBJ_REMOVE, 0, 3, INO + 6, 1);
	made.ev(0, EV_BUSY, 0, 60);
	for (const char *p : { "mkdir-legacy", "flock" }) {
		ClaimsRun run;
		run.proto = p;
		EXPECT_EQ(run.go(held).inv[INV_NO_ESCAPED_ERROR].violations, 0u) << p;
		EXPECT_EQ(run.go(obj).inv[INV_NO_ESCAPED_ERROR].violations, 0u) << p;
		EXPECT_EQ(run.go(made).inv[INV_NO_ESCAPED_ERROR].violations, 0u) << p;
	}
}

/* mkdir-legacy's acquireLock waits by the wall clock (5 s, budget 5050 ms).
 * An errno the explorer injects at MA1 is contention to it: it sleeps 50 ms;
 * the explorer then stalls it 0.5 x stale (5 s) and it wakes past its
 * deadline and gives up, while nobody held: its budget went on being frozen,
 * not on waiting for anybody (`explore -p mkdir-legacy -n 2 --ops 2`, a false
 * alarm; tests/cex/mkdir-legacy-stall-ate-budget.cex.json).  Twins still
 * caught: the same give-up with no stall, with a stall that left it its whole
 * budget of waiting, and a try (no budget: a stall cannot eat it). */
TEST(CheckerClaims, BusyAfterAStallAteTheWaitBudgetIsNoClaimBroken)
{
	const int64_t STALL = FK_STALL;
	Hist stalled, bare, short_stall, jumped;
	stalled.ev(0, EV_ATTEMPT, 0, 0).ev(0, EV_FAULT, 0, 1, STALL, 0, 5000).ev(0, EV_BUSY, 0, 5050);
	bare.ev(0, EV_ATTEMPT, 0, 0).ev(0, EV_BUSY, 0, 5050);
	short_stall.ev(0, EV_ATTEMPT, 0, 0).ev(0, EV_FAULT, 0, 1, STALL, 0, 10).ev(0, EV_BUSY, 0, 5060);
	/* another worker's stall moved w0's clock (virtual time) */
	jumped.ev(0, EV_ATTEMPT, 0, 0).ev(1, EV_FAULT, 0, 1, STALL, 0, 5000).ev(0, EV_BUSY, 0, 5050);
	ClaimsRun run;
	run.proto = "mkdir-legacy";
	run.budget = 5050;
	check_result a = run.go(stalled), b = run.go(bare), c = run.go(short_stall);
	EXPECT_EQ(a.inv[INV_NO_ESCAPED_ERROR].violations, 0u) << text(a, INV_NO_ESCAPED_ERROR);
	EXPECT_EQ(b.inv[INV_NO_ESCAPED_ERROR].violations, 1u) << "no stall: K-ML-3's give-up";
	EXPECT_NE(text(b, INV_NO_ESCAPED_ERROR).find("rule busy-without-holder"), std::string::npos);
	EXPECT_EQ(c.inv[INV_NO_ESCAPED_ERROR].violations, 1u) << "it still waited its whole budget";
	run.jump = 5000;
	check_result d = run.go(jumped);
	EXPECT_EQ(d.inv[INV_NO_ESCAPED_ERROR].violations, 0u) << text(d, INV_NO_ESCAPED_ERROR);
	run.jump = 0;
	EXPECT_EQ(run.go(jumped).inv[INV_NO_ESCAPED_ERROR].violations, 1u) << "a run: no clock jumps";
	run.budget = 0; /* form=try never waits */
	EXPECT_EQ(run.go(stalled).inv[INV_NO_ESCAPED_ERROR].violations, 1u) << "a try has no budget to eat";
}

TEST(CheckerClaims, ClaimsMatchTheirCallErrnoAndParams)
{
	const fsx_path any = FSX_PATH_OTHER; /* lockfile's claims name no path: every one matches */
	lock lk;
	lock_setup(&lk, &lockfile_legacy_ops, "/x/state.json", nullptr, 0, nullptr);
	EXPECT_EQ(lock_absorbs(&lk, LOCK_OP_ACQUIRE, FSX_RENAME, any, ENOENT), 1);
	EXPECT_EQ(lock_absorbs(&lk, LOCK_OP_ACQUIRE, FSX_RENAME, FSX_PATH_UNKNOWN, ENOENT), 1);
	EXPECT_EQ(lock_absorbs(&lk, LOCK_OP_ACQUIRE, FSX_RENAME, any, EACCES), 0);
	EXPECT_EQ(lock_absorbs(&lk, LOCK_OP_ACQUIRE, -1, any, ENOENT), 0) << "the failing call not known";
	EXPECT_EQ(lock_absorbs(&lk, LOCK_OP_RELEASE, FSX_UNLINK, any, EBUSY), 1);
	/* VL15's lstat error is absorbed ("already reclaimed"); VL13's fstat
	 * error is raised, as the origin does: not an escaped error (a false
	 * alarm the explorer's EIO at the fstat once made) */
	EXPECT_EQ(lock_absorbs(&lk, LOCK_OP_RELEASE, FSX_STAT, any, EIO), 1);
	EXPECT_EQ(lock_absorbs(&lk, LOCK_OP_RELEASE, FSX_CALL_FSTAT, any, EIO), 0);
	lock_setup(&lk, &mkdir_owner_ops, "/x/state.json", nullptr, 0, nullptr);
	EXPECT_EQ(lock_absorbs(&lk, LOCK_OP_ACQUIRE, FSX_MKDIR, FSX_PATH_LOCK, EPERM), 0) << "posix: raised";
	int pi = param_index(mkdir_owner_ops.params, "platform");
	ASSERT_GE(pi, 0);
	lock_param_set(&lk, pi, 1); /* win32 */
	EXPECT_EQ(lock_absorbs(&lk, LOCK_OP_ACQUIRE, FSX_MKDIR, FSX_PATH_LOCK, EPERM), 1);
	lock_setup(&lk, &none_ops, "/x/state.json", nullptr, 0, nullptr);
	EXPECT_EQ(lock_absorbs(&lk, LOCK_OP_ACQUIRE, FSX_MKDIR, FSX_PATH_LOCK, EPERM), 0);
}

/* mkdir-owner on win32 absorbs EPERM/EACCES from mkdir(L) (AT2: "a lock
 * folder another process is deleting") and raises them from mkdir(L/entry)
 * (AT3: "→ *: raise", PROTOCOLS.md §2.4).  One call, two steps: the claim is
 * keyed by the path the call named.  Keyed by the call alone, AT2's claim
 * covered AT3 and an injected EACCES at AT3 failed absorbed-errno (`explore
 * -p mkdir-owner --param platform=win32 --param form=try -n 2 --ops 2`, a
 * false alarm; tests/cex/mkdir-owner-win32-entry-eacces.cex.json). */
TEST(CheckerClaims, MkdirOwnersWin32ClaimIsTheLocksMkdirNotItsEntrys)
{
	lock lk;
	lock_setup(&lk, &mkdir_owner_ops, "/x/state.json", nullptr, 0, nullptr);
	int pi = param_index(mkdir_owner_ops.params, "platform");
	ASSERT_GE(pi, 0);
	lock_param_set(&lk, pi, 1); /* win32 */
	for (int err : { EPERM, EACCES }) {
		EXPECT_EQ(lock_absorbs(&lk, LOCK_OP_ACQUIRE, FSX_MKDIR, FSX_PATH_LOCK, err), 1) << "AT2";
		EXPECT_EQ(lock_absorbs(&lk, LOCK_OP_ACQUIRE, FSX_MKDIR, FSX_PATH_ENTRY, err), 0) << "AT3 raises";
		EXPECT_EQ(lock_absorbs(&lk, LOCK_OP_ACQUIRE, FSX_MKDIR, FSX_PATH_OTHER, err), 0);
		EXPECT_EQ(lock_absorbs(&lk, LOCK_OP_ACQUIRE, FSX_MKDIR, FSX_PATH_UNKNOWN, err), 0)
			<< "a path not known is not the lock's";
	}
	EXPECT_EQ(lock_absorbs(&lk, LOCK_OP_RELEASE, FSX_RMDIR, FSX_PATH_ENTRY, EACCES), 1) << "release: every errno";

	/* what the checker then says: the worker journals b = 0 for AT3's
	 * EACCES (no violation), b = 1 only where a claim matched, and the
	 * example names the path */
	Hist at3, claimed;
	at3.ev(0, EV_ATTEMPT, 0, 0).ev(0, EV_ACQUIRE_ERROR, 0, 2, FSX_MKDIR + 1, 0, FSX_PATH_ENTRY, EACCES);
	claimed.ev(0, EV_ATTEMPT, 0, 0).ev(0, EV_ACQUIRE_ERROR, 0, 2, FSX_MKDIR + 1, 1, FSX_PATH_LOCK, EACCES);
	ClaimsRun run;
	run.workers = 1;
	run.proto = "mkdir-owner";
	check_result a = run.go(at3), b = run.go(claimed);
	EXPECT_EQ(a.inv[INV_NO_ESCAPED_ERROR].violations, 0u) << text(a, INV_NO_ESCAPED_ERROR);
	EXPECT_EQ(b.inv[INV_NO_ESCAPED_ERROR].violations, 1u);
	EXPECT_NE(text(b, INV_NO_ESCAPED_ERROR).find("raised EACCES from mkdir of the lock,"), std::string::npos)
		<< text(b, INV_NO_ESCAPED_ERROR);
}

/* ---- strict-lease ---- */

/* w1 takes over w0's live hold past the stale age: a legal reclaim, which
 * strict-lease (on with --strict) calls a violation for a protocol without
 * a held() check. */
TEST(CheckerClaims, StrictLeaseFailsALiveHolderReclaimed)
{
	Hist h;
	h.take(0, 0, 0).ev(1, EV_OBJ_REMOVE, 0, 1200, INO, 0).take(1, 0, 1201, INO + 1);
	ClaimsRun run;
	run.proto = "mkdir-legacy";
	check_result off = run.go(h);
	EXPECT_EQ(off.inv[INV_EXCLUSION].violations, 0u);
	EXPECT_EQ(off.inv[INV_STRICT_LEASE].applicable, 0) << "off by default";
	EXPECT_EQ(off.reclaims, 1u);
	run.strict = 1;
	check_result on = run.go(h);
	EXPECT_EQ(on.inv[INV_STRICT_LEASE].applicable, 1);
	EXPECT_EQ(on.inv[INV_STRICT_LEASE].violations, 1u);
	EXPECT_EQ(on.pass, 0);
	run.proto = "mkdir-owner"; /* held() tells the reclaimed holder */
	EXPECT_EQ(run.go(h).inv[INV_STRICT_LEASE].violations, 0u);
}

TEST(CheckerClaims, StrictLeaseKeptWhenTheHolderHadDiedOrLetGo)
{
	Hist dead, gone;
	dead.take(0, 0, 0).ev(0, EV_FAULT, 0, 10, FK_CRASH, 0x1, 0).take(1, 0, 1201, INO + 1);
	gone.take(0, 0, 0).release(0, 0, 10).take(1, 0, 1201);
	ClaimsRun run;
	run.proto = "mkdir-legacy";
	run.strict = 1;
	EXPECT_EQ(run.go(dead).inv[INV_STRICT_LEASE].violations, 0u);
	EXPECT_EQ(run.go(gone).inv[INV_STRICT_LEASE].violations, 0u);
}

TEST(CheckerClaims, NewInvariantsAreNamed)
{
	EXPECT_STREQ(check_inv_name(INV_NO_ESCAPED_ERROR), "no-escaped-error");
	EXPECT_STREQ(check_inv_name(INV_STRICT_LEASE), "strict-lease");
	EXPECT_STRNE(check_inv_means(INV_STRICT_LEASE), "");
}

/* ---- exact scaled time ---- */

/* At 0.01 mkdir-owner's 50 ms wait is 500 us, not 1 ms: its ratio to the
 * 10 s stale age stays 1:200 and the wait budget (retries x wait) half the
 * stale age, as the origin's. */
TEST(CheckerClaims, ScaledConstantsKeepTheOriginsRatios)
{
	int64_t ms[LS_MAX_PARAMS], us[LS_MAX_PARAMS];
	char why[256];
	const param *p = mkdir_owner_ops.params;
	ASSERT_EQ(param_resolve(p, ms, nullptr, 0, 0.01, nullptr, why, sizeof why), 0) << why;
	ASSERT_EQ(param_resolve_us(p, us, nullptr, 0, 0.01, why, sizeof why), 0) << why;
	int st = param_index(p, "stale_ms"), wt = param_index(p, "wait_ms"), re = param_index(p, "retries");
	ASSERT_GE(st, 0);
	ASSERT_GE(wt, 0);
	ASSERT_GE(re, 0);
	EXPECT_EQ(us[st], 100000);
	EXPECT_EQ(us[wt], 500);
	EXPECT_EQ(us[re], ms[re]) << "counts are not scaled";
	EXPECT_EQ(us[st] / us[wt], p[st].def / p[wt].def);
	lock lk;
	lock_setup(&lk, &mkdir_owner_ops, "/x/state.json", ms, 0, nullptr);
	EXPECT_EQ(lk.us[wt], 1000) << "without the exact values: the whole-ms ones";
	lock_setup_exact(&lk, us);
	EXPECT_EQ(lk.us[wt], 500);
	EXPECT_EQ(mkdir_owner_ops.stale_ms(&lk), 100);
	/* retries x wait + wait = 100 x 0.5 + 0.5 ms: 50.5, reported as 51 */
	EXPECT_EQ(mkdir_owner_ops.wait_budget_ms(&lk), 51);
	EXPECT_LT(mkdir_owner_ops.wait_budget_ms(&lk), mkdir_owner_ops.stale_ms(&lk));
}

TEST(CheckerClaims, ScaledConstantsRoundToWholeMicroseconds)
{
	int64_t us[LS_MAX_PARAMS];
	char why[256];
	const param *p = lockfile_legacy_ops.params;
	ASSERT_EQ(param_resolve_us(p, us, nullptr, 0, 0.001, why, sizeof why), 0) << why;
	int po = param_index(p, "poll_ms"), st = param_index(p, "stale_ms");
	EXPECT_EQ(us[po], 25) << "25 ms x 0.001";
	EXPECT_EQ(us[st], 60000);
	ASSERT_EQ(param_resolve_us(p, us, nullptr, 0, 1e-6, why, sizeof why), 0) << why;
	EXPECT_EQ(us[po], 1) << "a positive constant never scales to 0";
	EXPECT_EQ(param_us_to_ms(LS_NEVER), LS_NEVER);
	EXPECT_EQ(param_us_to_ms(1), 1);
	EXPECT_EQ(param_us_to_ms(1000), 1);
	EXPECT_EQ(param_us_to_ms(1001), 2);
}
