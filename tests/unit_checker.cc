/* unit_checker.cc - the offline checker on hand-built journals, one
 * invariant at a time: a clean history passes, each kind of violation is
 * found with the right count and the right workers in its example.  Times
 * are synthetic (ms on a made-up clock): nothing here sleeps or times. */
#include <gtest/gtest.h>

#include <errno.h>
#include <string.h>

#include <string>
#include <vector>

extern "C" {
#include "faults/fault.h"
#include "check/checker.h"
#include "core/journal.h"
#include "protocols/lock.h"
#include "workloads/workload.h"
}
#include "ck_hist.h"

namespace {

constexpr unsigned DRV = JOURNAL_DRIVER;

/* A history under construction: records in seq order, times in ms. */
struct Hist : HistBase<Hist> {
	/* The ns a record at AT_MS carries (for EV_ACQUIRED's lock-object time). */

	Hist &attempt(unsigned w, uint32_t op, double t) { return ev(w, EV_ATTEMPT, op, t); }
	Hist &acquired(unsigned w, uint32_t op, double t, double obj_ms = -1)
	{
		return ev(w, EV_ACQUIRED, op, t, obj_ms >= 0 ? ns(obj_ms) : 0);
	}
	Hist &busy(unsigned w, uint32_t op, double t) { return ev(w, EV_BUSY, op, t); }
	Hist &release(unsigned w, uint32_t op, double t)
	{
		ev(w, EV_RELEASE_BEGIN, op, t);
		return ev(w, EV_RELEASED, op, t + 0.1);
	}
	/* attempt at t, acquired at t+wait, released after hold */
	Hist &cycle(unsigned w, uint32_t op, double t, double wait = 1, double hold = 2)
	{
		attempt(w, op, t);
		acquired(w, op, t + wait);
		return release(w, op, t + wait + hold);
	}
	/* inside a hold: read revision rev with own count, commit rev'/count+1 */
	Hist &update(unsigned w, uint32_t op, double t, int64_t read_rev, int64_t own,
		     int64_t write_rev = -100)
	{
		if (write_rev == -100)
			write_rev = (read_rev < 0 ? 0 : read_rev) + 1;
		ev(w, EV_READ, op, t, read_rev, own);
		ev(w, EV_COMMIT_BEGIN, op, t + 0.2, write_rev, own + 1);
		return ev(w, EV_COMMIT, op, t + 0.3, write_rev, own + 1);
	}
	/* a whole update op: attempt, acquire, read, commit, release */
	Hist &update_op(unsigned w, uint32_t op, double t, int64_t read_rev, int64_t own)
	{
		attempt(w, op, t);
		acquired(w, op, t + 1);
		update(w, op, t + 1.5, read_rev, own);
		return release(w, op, t + 3);
	}
	Hist &fault(unsigned w, uint32_t op, double t, int kind, int64_t stall_ms = 0)
	{
		return ev(w, EV_FAULT, op, t, kind, 0x1234, stall_ms);
	}
	Hist &killed(unsigned victim, double t, int64_t sig = 9, int64_t by_watchdog = 0)
	{
		return ev(DRV, EV_KILLED, victim, t, sig, 4242, by_watchdog);
	}
};

/* One checker run's configuration. */
struct CheckRun {
	unsigned workers = 2;
	int64_t stale = 100;   /* ms, every worker */
	int64_t budget = 1000; /* ms, every worker */
	int check_state = 0;
	bool has_final = false;
	std::string final_state;
	std::vector<const char *> protos;
	std::vector<int64_t> stale_v, budget_v;

	check_result go(const Hist &h)
	{
		/* per-worker vectors when given, else every worker alike */
		std::vector<int64_t> sv = stale_v, bv = budget_v;
		if (sv.empty())
			sv.assign(workers, stale);
		if (bv.empty())
			bv.assign(workers, budget);
		check_input in;
		memset(&in, 0, sizeof in);
		in.rec = h.r.data();
		in.n = h.r.size();
		in.workers = workers;
		in.stale_ms = sv.data();
		in.budget_ms = bv.data();
		in.proto_of = protos.empty() ? nullptr : protos.data();
		in.check_state = check_state;
		in.final_state = has_final ? final_state.data() : nullptr;
		in.final_len = has_final ? final_state.size() : 0;
		in.torn_bytes = 17;
		check_result out;
		EXPECT_EQ(check_run(&in, &out), 0);
		return out;
	}
	CheckRun &state(const std::string &s)
	{
		check_state = 1;
		has_final = true;
		final_state = s;
		return *this;
	}
};

uint64_t viol(const check_result &r, inv_id i)
{
	return r.inv[i].violations;
}

/* Every applicable invariant other than ONE held. */
void only(const check_result &r, inv_id one)
{
	for (int i = 0; i < INV__COUNT; i++) {
		if (i == one)
			continue;
		EXPECT_EQ(r.inv[i].violations, 0u) << r.inv[i].name << ": "
						   << (r.inv[i].nex ? r.inv[i].ex[0].text : "");
	}
	EXPECT_EQ(r.pass, r.inv[one].violations == 0 ? 1 : 0);
}

void clean(const check_result &r)
{
	for (int i = 0; i < INV__COUNT; i++) {
		EXPECT_EQ(r.inv[i].violations, 0u) << r.inv[i].name << ": "
						   << (r.inv[i].nex ? r.inv[i].ex[0].text : "");
	}
	EXPECT_EQ(r.pass, 1);
}

const char *STATE_5_3 = "{\"version\":1,\"revision\":5,\"counts\":{\"0\":3,\"1\":2}}";

} // namespace

/* ---- names and shape ---- */

TEST(Checker, InvariantNames)
{
	EXPECT_STREQ(check_inv_name(INV_EXCLUSION), "exclusion");
	EXPECT_STREQ(check_inv_name(INV_ZOMBIE_WRITE), "zombie-write");
	EXPECT_STREQ(check_inv_name(INV_NO_LOST_WRITES), "no-lost-writes");
	EXPECT_STREQ(check_inv_name(INV_SERIAL_UPDATES), "serial-updates");
	EXPECT_STREQ(check_inv_name(INV_STATE_INTACT), "state-intact");
	EXPECT_STREQ(check_inv_name(INV_OWN_RELEASE), "own-release");
	EXPECT_STREQ(check_inv_name(INV_LIVENESS), "liveness");
}

TEST(Checker, EmptyJournalPasses)
{
	Hist h;
	CheckRun run;
	check_result r = run.go(h);
	clean(r);
	EXPECT_EQ(r.attempts, 0u);
	EXPECT_EQ(r.elapsed_s, 0);
	EXPECT_EQ(r.ops_per_s, 0);
	EXPECT_EQ(r.torn_bytes, 17u);
}

/* ---- clean histories ---- */

TEST(Checker, CleanHoldHistoryPasses)
{
	Hist h;
	h.ev(0, EV_WORKER_START, 0, 0).ev(1, EV_WORKER_START, 0, 0).ev(2, EV_WORKER_START, 0, 0);
	h.cycle(0, 0, 0, 1, 2)                 /* wait 1, hold 2 */
		.attempt(1, 0, 1).busy(1, 0, 2) /* busy while w0 holds */
		.cycle(1, 1, 4, 2, 2)           /* wait 2 */
		.cycle(2, 0, 9, 3, 2);          /* wait 3 */
	h.ev(0, EV_WORKER_EXIT, 1, 20).ev(1, EV_WORKER_EXIT, 2, 20).ev(2, EV_WORKER_EXIT, 1, 20);
	CheckRun run;
	run.workers = 3;
	check_result r = run.go(h);
	clean(r);
	EXPECT_EQ(r.attempts, 4u);
	EXPECT_EQ(r.acquired, 3u);
	EXPECT_EQ(r.busy, 1u);
	EXPECT_EQ(r.ops, 3u); /* releases, without a state */
	EXPECT_EQ(r.reclaims, 0u);
	EXPECT_DOUBLE_EQ(r.elapsed_s, 0.020);
	EXPECT_NEAR(r.ops_per_s, 150.0, 1e-9);
	EXPECT_EQ(r.wait.n, 3u);
	EXPECT_NEAR(r.wait.p50, 2.0, 1e-6);
	EXPECT_NEAR(r.wait.p99, 3.0, 1e-6);
	EXPECT_NEAR(r.wait.max, 3.0, 1e-6);
	EXPECT_EQ(r.hold.n, 3u);
	EXPECT_NEAR(r.hold.max, 2.0, 1e-6);
	EXPECT_FALSE(r.inv[INV_NO_LOST_WRITES].applicable);
	EXPECT_FALSE(r.inv[INV_SERIAL_UPDATES].applicable);
	EXPECT_FALSE(r.inv[INV_STATE_INTACT].applicable);
	EXPECT_TRUE(r.inv[INV_EXCLUSION].applicable);
	EXPECT_TRUE(r.inv[INV_LIVENESS].applicable);
}

TEST(Checker, CleanUpdateHistoryPasses)
{
	Hist h;
	h.update_op(0, 0, 0, 0, 0)   /* revision 0 -> 1 */
		.update_op(1, 0, 10, 1, 0)
		.update_op(0, 1, 20, 2, 1)
		.update_op(1, 1, 30, 3, 1)
		.update_op(0, 2, 40, 4, 2);
	CheckRun run;
	run.state(STATE_5_3);
	check_result r = run.go(h);
	clean(r);
	EXPECT_EQ(r.committed, 5u);
	EXPECT_EQ(r.ops, 5u);
	EXPECT_EQ(r.final_revision, 5u);
	EXPECT_TRUE(r.inv[INV_NO_LOST_WRITES].applicable);
}

TEST(Checker, MissingStateFileReadsAsRevisionZero)
{
	Hist h;
	h.update_op(0, 0, 0, -1, 0); /* missing: writes revision 1 */
	CheckRun run;
	run.state("{\"version\":1,\"revision\":1,\"counts\":{\"0\":1}}");
	clean(run.go(h));
}

/* ---- exclusion ---- */

TEST(Checker, ExclusionOverlapIsAViolation)
{
	Hist h;
	h.attempt(0, 3, 0).acquired(0, 3, 1);
	h.attempt(1, 7, 5).acquired(1, 7, 13); /* w0 has held 12 ms, stale 100 */
	h.release(1, 7, 14).release(0, 3, 15);
	CheckRun run;
	check_result r = run.go(h);
	only(r, INV_EXCLUSION);
	EXPECT_EQ(viol(r, INV_EXCLUSION), 1u);
	ASSERT_EQ(r.inv[INV_EXCLUSION].nex, 1u);
	const check_example &ex = r.inv[INV_EXCLUSION].ex[0];
	EXPECT_EQ(ex.worker[0], 1);
	EXPECT_EQ(ex.worker[1], 0);
	EXPECT_EQ(ex.op[0], 7u);
	EXPECT_EQ(ex.op[1], 3u);
	EXPECT_EQ(ex.seq[0], h.r[3].seq);
	EXPECT_EQ(ex.seq[1], h.r[1].seq);
	EXPECT_NE(strstr(ex.text, "w1 acquired"), nullptr) << ex.text;
	EXPECT_NE(strstr(ex.text, "w0 held"), nullptr) << ex.text;
	EXPECT_NE(strstr(ex.text, "12.0 ms"), nullptr) << ex.text;
	EXPECT_EQ(r.reclaims, 0u);
}

TEST(Checker, ExclusionCountsEveryOverlappingPair)
{
	Hist h;
	h.acquired(0, 0, 0).acquired(1, 0, 1).acquired(2, 0, 2); /* 1 + 2 pairs */
	h.release(0, 0, 3).release(1, 0, 3).release(2, 0, 3);
	h.acquired(0, 1, 4).release(0, 1, 5);                    /* alone again */
	CheckRun run;
	run.workers = 3;
	check_result r = run.go(h);
	EXPECT_EQ(viol(r, INV_EXCLUSION), 3u);
	EXPECT_EQ(r.inv[INV_EXCLUSION].nex, 3u);
	EXPECT_EQ(r.pass, 0);
}

TEST(Checker, ExclusionExamplesAreCapped)
{
	Hist h;
	h.acquired(0, 0, 0);
	for (uint32_t i = 0; i < 10; i++)
		h.acquired(1, i, 1 + i).release(1, i, 1.5 + i);
	CheckRun run;
	check_result r = run.go(h);
	EXPECT_EQ(viol(r, INV_EXCLUSION), 10u);
	EXPECT_EQ(r.inv[INV_EXCLUSION].nex, (unsigned)CHECK_MAX_EXAMPLES);
}

TEST(Checker, MixedFleetExampleNamesProtocols)
{
	Hist h;
	h.acquired(0, 0, 0).acquired(1, 0, 1);
	CheckRun run;
	run.protos = {"mkdir-legacy", "mkdir-owner"};
	check_result r = run.go(h);
	ASSERT_EQ(viol(r, INV_EXCLUSION), 1u);
	EXPECT_NE(strstr(r.inv[INV_EXCLUSION].ex[0].text, "mkdir-legacy"), nullptr);
	EXPECT_NE(strstr(r.inv[INV_EXCLUSION].ex[0].text, "mkdir-owner"), nullptr);
}

TEST(Checker, ReclaimPastStaleIsLegal)
{
	Hist h;
	h.attempt(0, 0, 0).acquired(0, 0, 1);
	h.attempt(1, 0, 50).acquired(1, 0, 150); /* w0 held 149 ms > 100 */
	h.release(1, 0, 151);
	h.cycle(1, 1, 160); /* w0 still (a zombie) holds: no new violation or reclaim */
	h.release(0, 0, 300);
	CheckRun run;
	check_result r = run.go(h);
	clean(r);
	EXPECT_EQ(r.reclaims, 1u);
}

TEST(Checker, StaleAgeRunsFromLockObjectCreation)
{
	/* w0 noticed it had won at 90, but its lock object dates from 5:
	 * at 120 the object is 115 ms old, past the stale age of 100. */
	Hist h;
	h.attempt(0, 0, 0).acquired(0, 0, 90, 5);
	h.attempt(1, 0, 100).acquired(1, 0, 120);
	CheckRun run;
	check_result r = run.go(h);
	clean(r);
	EXPECT_EQ(r.reclaims, 1u);

	/* the same history with the object's time unknown: 30 ms, an overlap */
	Hist g;
	g.attempt(0, 0, 0).acquired(0, 0, 90);
	g.attempt(1, 0, 100).acquired(1, 0, 120);
	EXPECT_EQ(viol(run.go(g), INV_EXCLUSION), 1u);
}

TEST(Checker, NeverStaleMakesEveryOverlapAViolation)
{
	Hist h;
	h.acquired(0, 0, 0).acquired(1, 0, 1000000); /* held 1000 s */
	CheckRun run;
	run.stale = LS_NEVER;
	check_result r = run.go(h);
	EXPECT_EQ(viol(r, INV_EXCLUSION), 1u);
	EXPECT_EQ(r.reclaims, 0u);
	EXPECT_NE(strstr(r.inv[INV_EXCLUSION].ex[0].text, "no stale age"), nullptr);
}

TEST(Checker, StaleAgeIsTheHoldersOwn)
{
	/* w0 runs a protocol without stale age, w1 one with 100 ms: w1 taking
	 * w0's lock is never legal, w0 taking w1's stale lock is. */
	Hist h;
	h.acquired(0, 0, 0).acquired(1, 0, 500).release(1, 0, 501).release(0, 0, 502);
	h.acquired(1, 1, 600).acquired(0, 1, 800).release(0, 1, 801).release(1, 1, 802);
	CheckRun run;
	run.stale_v = {LS_NEVER, 100};
	check_result r = run.go(h);
	EXPECT_EQ(viol(r, INV_EXCLUSION), 1u);
	EXPECT_EQ(r.inv[INV_EXCLUSION].ex[0].worker[0], 1);
	EXPECT_EQ(r.reclaims, 1u);
}

/* ---- deaths end holds ---- */

TEST(Checker, CrashFaultEndsTheHold)
{
	Hist h;
	h.attempt(0, 0, 0).acquired(0, 0, 1).fault(0, 0, 2, FK_CRASH);
	h.attempt(1, 0, 3).acquired(1, 0, 4).release(1, 0, 5);
	h.killed(0, 6); /* the driver reaps the same death */
	CheckRun run;
	check_result r = run.go(h);
	clean(r);
	EXPECT_EQ(r.crashes, 1u);
	EXPECT_EQ(r.kills, 1u);
	EXPECT_EQ(r.reclaims, 0u);
}

TEST(Checker, DriverKillEndsTheHoldOfTheVictimInOp)
{
	Hist h;
	h.acquired(1, 0, 1).killed(1, 2);
	h.acquired(0, 0, 3).release(0, 0, 4);
	CheckRun run;
	check_result r = run.go(h);
	clean(r);
	EXPECT_EQ(r.kills, 1u);
	EXPECT_EQ(r.crashes, 1u); /* an unannounced death */

	/* a watchdog kill is a kill, not a crash */
	Hist g;
	g.acquired(1, 0, 1).killed(1, 2, 9, 1).acquired(0, 0, 3);
	r = run.go(g);
	EXPECT_EQ(viol(r, INV_EXCLUSION), 0u);
	EXPECT_EQ(r.kills, 1u);
	EXPECT_EQ(r.crashes, 0u);
}

TEST(Checker, NewIncarnationEndsTheOldHold)
{
	Hist h;
	h.acquired(0, 0, 1).ev(0, EV_WORKER_START, 1, 2, 1);
	h.acquired(1, 0, 3).release(1, 0, 4);
	CheckRun run;
	clean(run.go(h));
}

TEST(Checker, RecordsOfUnknownWorkersAreIgnored)
{
	Hist h;
	h.acquired(0, 0, 1).acquired(7, 0, 2).release(7, 0, 3).release(0, 0, 4);
	h.ev(DRV, EV_LIVENESS, 9, 5, 0, 60000, 1000); /* victim 9: not ours */
	CheckRun run;
	check_result r = run.go(h);
	clean(r);
	EXPECT_EQ(r.acquired, 1u);
}

/* ---- zombie-write ---- */

TEST(Checker, ZombieWriteAfterLegalReclaim)
{
	Hist h;
	h.attempt(0, 2, 0).acquired(0, 2, 1);
	h.fault(0, 2, 1.5, FK_STALL, 200);
	h.attempt(1, 5, 10).acquired(1, 5, 150); /* legal reclaim */
	h.update(1, 5, 151, 0, 0).release(1, 5, 152);
	h.update(0, 2, 201, 0, 0);               /* w0 wakes, writes anyway */
	h.release(0, 2, 202);
	CheckRun run;
	run.check_state = 1;
	check_result r = run.go(h);
	EXPECT_EQ(viol(r, INV_EXCLUSION), 0u);
	EXPECT_EQ(r.reclaims, 1u);
	EXPECT_EQ(viol(r, INV_ZOMBIE_WRITE), 1u);
	ASSERT_EQ(r.inv[INV_ZOMBIE_WRITE].nex, 1u);
	const check_example &ex = r.inv[INV_ZOMBIE_WRITE].ex[0];
	EXPECT_EQ(ex.worker[0], 0);
	EXPECT_EQ(ex.worker[1], 1);
	EXPECT_EQ(ex.op[0], 2u);
	EXPECT_EQ(ex.op[1], 5u);
	EXPECT_NE(strstr(ex.text, "legal reclaim"), nullptr) << ex.text;
	EXPECT_EQ(r.stalls, 1u);
	EXPECT_EQ(r.pass, 0);
}

TEST(Checker, NoZombieWriteWhenTheHeldCheckStopsIt)
{
	Hist h;
	h.acquired(0, 0, 1).acquired(1, 0, 150).update(1, 0, 151, 0, 0).release(1, 0, 152);
	h.ev(0, EV_READ, 0, 200, 0, 0).ev(0, EV_LOST, 0, 201).release(0, 0, 202);
	CheckRun run;
	run.state("{\"version\":1,\"revision\":1,\"counts\":{\"1\":1}}");
	check_result r = run.go(h);
	clean(r);
	EXPECT_EQ(r.lost, 1u);
}

/* ---- no-lost-writes ---- */

TEST(Checker, LostWritesCountedFromFinalState)
{
	Hist h;
	h.update_op(0, 0, 0, 0, 0).update_op(1, 0, 10, 1, 0).update_op(0, 1, 20, 2, 1);
	h.update_op(1, 1, 30, 3, 1).update_op(0, 2, 40, 4, 2);
	CheckRun run;
	run.state("{\"version\":1,\"revision\":5,\"counts\":{\"0\":3,\"1\":0}}");
	check_result r = run.go(h);
	only(r, INV_NO_LOST_WRITES);
	EXPECT_EQ(viol(r, INV_NO_LOST_WRITES), 2u);
	ASSERT_EQ(r.inv[INV_NO_LOST_WRITES].nex, 1u);
	EXPECT_EQ(r.inv[INV_NO_LOST_WRITES].ex[0].worker[0], 1);
	EXPECT_STREQ(r.inv[INV_NO_LOST_WRITES].ex[0].text,
		     "w1 committed 2 updates, the final state holds 0");
}

TEST(Checker, MissingFinalStateLosesEveryCommit)
{
	Hist h;
	h.update_op(0, 0, 0, 0, 0).update_op(1, 0, 10, 1, 0).update_op(0, 1, 20, 2, 1);
	CheckRun run;
	run.check_state = 1; /* and no final state */
	check_result r = run.go(h);
	EXPECT_EQ(viol(r, INV_NO_LOST_WRITES), 3u);
	EXPECT_EQ(r.inv[INV_NO_LOST_WRITES].nex, 2u);
	EXPECT_EQ(viol(r, INV_STATE_INTACT), 1u);
	EXPECT_EQ(r.pass, 0);
}

TEST(Checker, MoreInStateThanJournaledIsFine)
{
	/* a worker killed between rename and its commit record */
	Hist h;
	h.update_op(0, 0, 0, 0, 0);
	CheckRun run;
	run.state("{\"version\":1,\"revision\":2,\"counts\":{\"0\":2}}");
	clean(run.go(h));
}

/* ---- serial-updates ---- */

TEST(Checker, SerialDuplicateRevision)
{
	/* both read revision 2 under an overlap, both write 3 */
	Hist h;
	h.acquired(0, 4, 0).acquired(1, 6, 1);
	h.update(0, 4, 2, 2, 0).update(1, 6, 3, 2, 0);
	h.release(0, 4, 4).release(1, 6, 5);
	CheckRun run;
	run.state("{\"version\":1,\"revision\":3,\"counts\":{\"0\":1,\"1\":1}}");
	check_result r = run.go(h);
	EXPECT_EQ(viol(r, INV_SERIAL_UPDATES), 1u);
	ASSERT_EQ(r.inv[INV_SERIAL_UPDATES].nex, 1u);
	const check_example &ex = r.inv[INV_SERIAL_UPDATES].ex[0];
	EXPECT_EQ(ex.worker[0], 1);
	EXPECT_EQ(ex.worker[1], 0);
	EXPECT_EQ(ex.op[0], 6u);
	EXPECT_EQ(ex.op[1], 4u);
	EXPECT_EQ(viol(r, INV_EXCLUSION), 1u);
}

TEST(Checker, SerialCommitNotReadPlusOne)
{
	Hist h;
	h.attempt(0, 0, 0).acquired(0, 0, 1).update(0, 0, 2, 3, 0, 5).release(0, 0, 3);
	CheckRun run;
	run.state("{\"version\":1,\"revision\":5,\"counts\":{\"0\":1}}");
	check_result r = run.go(h);
	only(r, INV_SERIAL_UPDATES);
	EXPECT_EQ(viol(r, INV_SERIAL_UPDATES), 1u);
	EXPECT_NE(strstr(r.inv[INV_SERIAL_UPDATES].ex[0].text, "expected 4"), nullptr)
		<< r.inv[INV_SERIAL_UPDATES].ex[0].text;
}

TEST(Checker, SerialOffendingCommitCountedOnce)
{
	/* w1's commit both repeats revision 1 and ignores its read of 7 */
	Hist h;
	h.update_op(0, 0, 0, 0, 0);
	h.attempt(1, 0, 10).acquired(1, 0, 11).update(1, 0, 12, 7, 0, 1).release(1, 0, 13);
	CheckRun run;
	run.state("{\"version\":1,\"revision\":1,\"counts\":{\"0\":1,\"1\":1}}");
	check_result r = run.go(h);
	EXPECT_EQ(viol(r, INV_SERIAL_UPDATES), 1u);
}

/* ---- state-intact ---- */

TEST(Checker, StateIntactBadRead)
{
	Hist h;
	h.attempt(0, 0, 0).acquired(0, 0, 1);
	h.ev(0, EV_READ, 0, 2, -1, 0, 0, EBADMSG);
	h.release(0, 0, 3);
	CheckRun run;
	run.state("{\"version\":1,\"revision\":0,\"counts\":{}}");
	check_result r = run.go(h);
	only(r, INV_STATE_INTACT);
	EXPECT_EQ(viol(r, INV_STATE_INTACT), 1u);
	EXPECT_EQ(r.inv[INV_STATE_INTACT].ex[0].worker[0], 0);
}

TEST(Checker, StateIntactUnparseableFinalState)
{
	Hist h;
	h.update_op(0, 0, 0, 0, 0);
	CheckRun run;
	run.state("{\"version\":1,\"revision\":1,\"cou");
	check_result r = run.go(h);
	EXPECT_EQ(viol(r, INV_STATE_INTACT), 1u);
	EXPECT_EQ(viol(r, INV_NO_LOST_WRITES), 1u); /* the commit cannot be found */
	EXPECT_EQ(r.pass, 0);

	/* parses as JSON, wrong shape */
	run.state("{\"version\":1,\"revision\":\"1\",\"counts\":{\"0\":1}}");
	EXPECT_EQ(viol(run.go(h), INV_STATE_INTACT), 1u);
}

TEST(Checker, StateInvariantsNotApplicableWithoutState)
{
	Hist h;
	h.attempt(0, 0, 0).acquired(0, 0, 1);
	h.ev(0, EV_READ, 0, 2, -1, 0, 0, EBADMSG);
	h.release(0, 0, 3);
	CheckRun run; /* check_state 0 */
	check_result r = run.go(h);
	EXPECT_EQ(r.pass, 1);
	EXPECT_FALSE(r.inv[INV_STATE_INTACT].applicable);
}

/* ---- own-release ---- */

TEST(Checker, OwnReleaseOfAFreshHolder)
{
	Hist h;
	h.attempt(5, 9, 0).ev(5, EV_OBJ_CREATE, 9, 0.5, 77, 1).acquired(5, 9, 1);
	h.attempt(2, 4, 5).ev(2, EV_OBJ_REMOVE, 4, 13, 77, 5, 2); /* w5 held 12 ms */
	h.busy(2, 4, 14);
	h.release(5, 9, 20);
	CheckRun run;
	run.workers = 6;
	check_result r = run.go(h);
	only(r, INV_OWN_RELEASE);
	EXPECT_EQ(viol(r, INV_OWN_RELEASE), 1u);
	const check_example &ex = r.inv[INV_OWN_RELEASE].ex[0];
	EXPECT_EQ(ex.worker[0], 2);
	EXPECT_EQ(ex.worker[1], 5);
	EXPECT_EQ(ex.op[0], 4u);
	EXPECT_EQ(ex.op[1], 9u);
	EXPECT_NE(strstr(ex.text, "w2 removed the lock object w5 created and still holds"), nullptr)
		<< ex.text;
	EXPECT_NE(strstr(ex.text, "held 12.0 ms"), nullptr) << ex.text;
}

TEST(Checker, OwnReleaseNotWhenStaleOrNotHeld)
{
	Hist h;
	h.acquired(0, 0, 0);
	h.ev(1, EV_OBJ_REMOVE, 0, 150, 77, 0, 1); /* past stale: a reclaim */
	h.acquired(1, 0, 151).release(1, 0, 152);
	h.release(0, 0, 160);
	h.ev(1, EV_OBJ_REMOVE, 1, 170, 77, 0, 1);  /* w0 holds nothing */
	h.ev(1, EV_OBJ_REMOVE, 1, 171, 78, -1, 0); /* creator unknown */
	h.acquired(0, 1, 180).ev(0, EV_OBJ_REMOVE, 1, 181, 79, 0, 1); /* its own */
	CheckRun run;
	check_result r = run.go(h);
	clean(r);
	EXPECT_EQ(r.reclaims, 1u);

	/* without a stale age every removal under a holder is wrong */
	run.stale_v = {LS_NEVER, LS_NEVER};
	EXPECT_EQ(viol(run.go(h), INV_OWN_RELEASE), 1u);
}

/* ---- liveness ---- */

TEST(Checker, LivenessWatchdogRecord)
{
	Hist h;
	h.attempt(3, 8, 0);
	h.ev(DRV, EV_LIVENESS, 3, 5000, 0xabcd, 12000, 5000);
	h.killed(3, 5001, 9, 1);
	CheckRun run;
	run.workers = 4;
	check_result r = run.go(h);
	only(r, INV_LIVENESS);
	EXPECT_EQ(viol(r, INV_LIVENESS), 1u);
	EXPECT_EQ(r.inv[INV_LIVENESS].ex[0].worker[0], 3);
	EXPECT_NE(strstr(r.inv[INV_LIVENESS].ex[0].text, "12000 ms"), nullptr);
	EXPECT_EQ(r.kills, 1u);
}

TEST(Checker, LivenessOverlongAttempt)
{
	/* budget 1000 ms: bound 1000 + max(2000, 1000) = 3000 ms */
	Hist h;
	h.attempt(0, 0, 0).busy(0, 0, 2999);
	h.attempt(1, 0, 3000).busy(1, 0, 6500);
	h.attempt(0, 1, 7000).acquired(0, 1, 10500).release(0, 1, 10501);
	CheckRun run;
	run.stale = LS_NEVER; /* keep the stuck-lock check out of this one */
	check_result r = run.go(h);
	only(r, INV_LIVENESS);
	EXPECT_EQ(viol(r, INV_LIVENESS), 2u);
	EXPECT_EQ(r.inv[INV_LIVENESS].ex[0].worker[0], 1);
	EXPECT_EQ(r.inv[INV_LIVENESS].ex[1].worker[0], 0);
	EXPECT_EQ(r.inv[INV_LIVENESS].ex[1].op[0], 1u);
}

TEST(Checker, LivenessBoundGrowsWithBudget)
{
	/* budget 5000: bound 10000 */
	Hist h;
	h.attempt(0, 0, 0).busy(0, 0, 9999).attempt(0, 1, 10000).busy(0, 1, 20001);
	CheckRun run;
	run.budget = 5000;
	run.stale = LS_NEVER;
	EXPECT_EQ(viol(run.go(h), INV_LIVENESS), 1u);
}

TEST(Checker, LivenessExcludesTheWorkersOwnStalls)
{
	Hist h;
	h.attempt(0, 0, 0).fault(0, 0, 10, FK_STALL, 1000).busy(0, 0, 3500);
	CheckRun run;
	run.stale = LS_NEVER;
	check_result r = run.go(h);
	clean(r);
	EXPECT_EQ(r.stalls, 1u);
}

TEST(Checker, LivenessNeverBudgetHasNoAttemptBound)
{
	Hist h;
	h.attempt(0, 0, 0).acquired(0, 0, 100000).release(0, 0, 100001);
	CheckRun run;
	run.budget = LS_NEVER;
	run.stale = LS_NEVER;
	clean(run.go(h));
}

TEST(Checker, LivenessWatchdogAndOverlongAttemptCountOnce)
{
	Hist h;
	h.attempt(0, 0, 0);
	h.ev(DRV, EV_LIVENESS, 0, 4000, 0x1, 4000, 1000);
	h.busy(0, 0, 9000);
	CheckRun run;
	run.stale = LS_NEVER;
	EXPECT_EQ(viol(run.go(h), INV_LIVENESS), 1u);
}

TEST(Checker, LivenessAttemptOpenAtTheEnd)
{
	Hist h;
	h.attempt(0, 0, 0).cycle(1, 0, 1).cycle(1, 1, 5000);
	CheckRun run;
	run.stale = LS_NEVER;
	check_result r = run.go(h);
	EXPECT_EQ(viol(r, INV_LIVENESS), 1u);
	EXPECT_EQ(r.inv[INV_LIVENESS].ex[0].worker[0], 0);
}

TEST(Checker, LivenessStuckLockStretch)
{
	/* stale 100 + budget 100 + 2000 = bound 2200 ms.  w0 crashes holding;
	 * its lock is left behind and w1's tries end busy for 3 s. */
	Hist h;
	h.attempt(0, 0, 0).acquired(0, 0, 1).fault(0, 0, 10, FK_CRASH);
	for (int i = 0; i < 30; i++)
		h.attempt(1, (uint32_t)i, 20 + 100.0 * i).busy(1, (uint32_t)i, 30 + 100.0 * i);
	h.attempt(1, 30, 3100).acquired(1, 30, 3110).release(1, 30, 3120);
	/* a second, short stretch: fine */
	h.attempt(0, 1, 3200).busy(0, 1, 3210).attempt(0, 2, 3300).acquired(0, 2, 3310);
	h.release(0, 2, 3320);
	CheckRun run;
	run.budget = 100;
	check_result r = run.go(h);
	only(r, INV_LIVENESS);
	EXPECT_EQ(viol(r, INV_LIVENESS), 1u);
	const check_example &ex = r.inv[INV_LIVENESS].ex[0];
	EXPECT_EQ(ex.worker[0], 1);  /* the last busy */
	EXPECT_EQ(ex.worker[1], 0);  /* whose hold ended the holding */
	EXPECT_EQ(ex.op[0], 29u);
	EXPECT_NE(strstr(ex.text, "30 attempts ended busy"), nullptr) << ex.text;
	EXPECT_EQ(r.crashes, 1u);

	/* without any stale age there is no bound for a left-behind lock */
	run.stale = LS_NEVER;
	EXPECT_EQ(viol(run.go(h), INV_LIVENESS), 0u);
}

TEST(Checker, LivenessStuckLockOpenAtTheEnd)
{
	Hist h;
	h.acquired(0, 0, 0).fault(0, 0, 1, FK_CRASH);
	h.attempt(1, 0, 2).busy(1, 0, 3).attempt(1, 1, 4000).busy(1, 1, 4001);
	CheckRun run;
	run.budget = 100;
	EXPECT_EQ(viol(run.go(h), INV_LIVENESS), 1u);
}

TEST(Checker, NoStuckLockWhileSomebodyHolds)
{
	/* a long hold makes others busy for long: that is the holder's
	 * business (a stall past stale age shows up as reclaim or overlap) */
	Hist h;
	h.acquired(0, 0, 0);
	for (int i = 0; i < 40; i++)
		h.attempt(1, (uint32_t)i, 1 + 100.0 * i).busy(1, (uint32_t)i, 2 + 100.0 * i);
	h.release(0, 0, 4100);
	CheckRun run; /* stale 100: the stuck-lock check is on */
	check_result r = run.go(h);
	clean(r);
	EXPECT_EQ(r.busy, 40u);
}

/* ---- totals ---- */

TEST(Checker, ErrorTotals)
{
	Hist h;
	h.attempt(0, 0, 0).ev(0, EV_ACQUIRE_ERROR, 0, 1, 0, 0, 0, ENOENT);
	h.attempt(0, 1, 2).acquired(0, 1, 3).ev(0, EV_READ, 1, 4, 0, 0);
	h.ev(0, EV_WRITE_ERROR, 1, 5, 0, 0, 0, ENOSPC);
	h.ev(0, EV_RELEASE_BEGIN, 1, 6).ev(0, EV_RELEASE_ERROR, 1, 7, 0, 0, 0, EPERM);
	CheckRun run;
	run.state("{\"version\":1,\"revision\":0,\"counts\":{}}");
	check_result r = run.go(h);
	clean(r);
	EXPECT_EQ(r.errors, 3u);
	EXPECT_EQ(r.write_errors, 1u);
	EXPECT_EQ(r.attempts, 2u);
	EXPECT_EQ(r.acquired, 1u);
	EXPECT_EQ(r.final_revision, 0u);
	EXPECT_EQ(r.wait.n, 1u);
}

TEST(Checker, ManyRecordsScale)
{
	/* 4 workers taking turns 250k times: linear walk, one sort */
	Hist h;
	h.r.reserve(1000000);
	for (uint32_t i = 0; i < 250000; i++)
		h.cycle(i % 4, i / 4, i * 10.0, 1 + (i % 7), 2);
	CheckRun run;
	run.workers = 4;
	check_result r = run.go(h);
	clean(r);
	EXPECT_EQ(r.acquired, 250000u);
	EXPECT_EQ(r.wait.n, 250000u);
	EXPECT_NEAR(r.wait.max, 7.0, 1e-6);
	EXPECT_NEAR(r.wait.p50, 4.0, 1e-6);
}

/* ---- the update workload's state file ---- */

TEST(UpdateState, ParseAndFormatRoundTrip)
{
	int64_t counts[4] = {3, 0, 0, 7};
	update_state st = {12, counts, 4};
	size_t len = 0;
	char *s = update_state_format(&st, &len);
	ASSERT_NE(s, nullptr);
	EXPECT_EQ(strlen(s), len);
	EXPECT_STREQ(s, "{\"version\":1,\"revision\":12,\"counts\":{\"0\":3,\"3\":7}}\n");

	update_state back;
	memset(&back, 0, sizeof back);
	back.nworkers = 4;
	ASSERT_EQ(update_state_parse(s, len, &back), 0);
	EXPECT_EQ(back.revision, 12);
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(back.counts[i], counts[i]) << i;
	update_state_free(&back);
	update_state_free(&back); /* twice is fine */
	free(s);
}

TEST(UpdateState, ParseIgnoresOtherWorkersAndMembers)
{
	const char *j = "{\"version\":1,\"revision\":4,\"items\":[1,2],"
			"\"counts\":{\"1\":2,\"9\":5}}";
	update_state st;
	memset(&st, 0, sizeof st);
	st.nworkers = 2;
	ASSERT_EQ(update_state_parse(j, strlen(j), &st), 0);
	EXPECT_EQ(st.revision, 4);
	EXPECT_EQ(st.counts[0], 0);
	EXPECT_EQ(st.counts[1], 2);
	update_state_free(&st);
}

TEST(UpdateState, ParseRejectsWrongShapes)
{
	const char *bad[] = {
		"",
		"not json",
		"[1,2]",
		"{\"version\":1,\"counts\":{}}",
		"{\"version\":1,\"revision\":-1,\"counts\":{}}",
		"{\"version\":1,\"revision\":1.5,\"counts\":{}}",
		"{\"version\":1,\"revision\":1}",
		"{\"version\":1,\"revision\":1,\"counts\":[]}",
		"{\"version\":1,\"revision\":1,\"counts\":{\"x\":1}}",
		"{\"version\":1,\"revision\":1,\"counts\":{\"-1\":1}}",
		"{\"version\":1,\"revision\":1,\"counts\":{\"0\":\"1\"}}",
		"{\"version\":1,\"revision\":1,\"counts\":{\"0\":-3}}",
		"{\"version\":\"1\",\"revision\":1,\"counts\":{}}",
		"{\"revision\":1,\"revision\":2,\"counts\":{}}",
		"{\"version\":1,\"revision\":1,\"counts\":{}",
	};
	for (const char *b : bad) {
		update_state st;
		memset(&st, 0, sizeof st);
		st.nworkers = 2;
		errno = 0;
		EXPECT_EQ(update_state_parse(b, strlen(b), &st), -1) << b;
		EXPECT_EQ(errno, EBADMSG) << b;
		EXPECT_EQ(st.counts, nullptr) << b;
	}
}

TEST(Checker, LivenessWhenNoAttemptEverTookTheLock)
{
	/* every attempt raised ENOENT: nothing was exercised, so it must not pass */
	Hist h;
	h.attempt(0, 0, 0).ev(0, EV_ACQUIRE_ERROR, 0, 1, 0, 0, 0, ENOENT);
	h.attempt(1, 0, 2).ev(1, EV_ACQUIRE_ERROR, 0, 3, 0, 0, 0, ENOENT);
	CheckRun run;
	check_result r = run.go(h);
	only(r, INV_LIVENESS);
	EXPECT_EQ(viol(r, INV_LIVENESS), 1u);
	EXPECT_NE(strstr(r.inv[INV_LIVENESS].ex[0].text, "ENOENT"), nullptr);
	EXPECT_FALSE(r.pass);

	/* one success among the errors: errors alone are the protocol's business */
	h.attempt(0, 1, 4).acquired(0, 1, 5).release(0, 1, 6);
	check_result ok = run.go(h);
	EXPECT_EQ(viol(ok, INV_LIVENESS), 0u);
}

TEST(Checker, LivenessWaitingOnADeadWorkersLockUntilGivingUp)
{
	/* w0 made the lock object and was killed before it ever held; w1 then
	 * waited on it and gave up: nobody alive held the lock meanwhile, and
	 * the protocol claims to see a dead holder at once */
	Hist h;
	h.attempt(0, 0, 0).ev(0, EV_OBJ_CREATE, 0, 0.5, 77, 1);
	h.fault(0, 0, 1, 2 /* FK_CRASH */);
	h.attempt(1, 0, 2).busy(1, 0, 1100); /* waited its whole 1000 ms budget */
	CheckRun run;
	run.stale = 1000;
	run.protos = { "lockfile-legacy", "lockfile-legacy" };
	check_result r = run.go(h);
	only(r, INV_LIVENESS);
	EXPECT_EQ(viol(r, INV_LIVENESS), 1u);
	EXPECT_EQ(r.inv[INV_LIVENESS].ex[0].worker[0], 1);
	EXPECT_EQ(r.inv[INV_LIVENESS].ex[0].worker[1], 0);
	EXPECT_NE(strstr(r.inv[INV_LIVENESS].ex[0].text, "left when it died"), nullptr);

	/* the object removed (reclaimed) before the next wait: nothing to blame */
	Hist ok;
	ok.attempt(0, 0, 0).ev(0, EV_OBJ_CREATE, 0, 0.5, 77, 1);
	ok.fault(0, 0, 1, 2);
	ok.ev(1, EV_OBJ_REMOVE, 0, 1.5, 77, 0, 0);
	ok.attempt(1, 0, 2).busy(1, 0, 1100);
	EXPECT_EQ(viol(run.go(ok), INV_LIVENESS), 0u);

	/* a try that gives up at once says nothing about who holds */
	Hist quick;
	quick.attempt(0, 0, 0).ev(0, EV_OBJ_CREATE, 0, 0.5, 77, 1);
	quick.fault(0, 0, 1, 2);
	quick.attempt(1, 0, 2).busy(1, 0, 3);
	EXPECT_EQ(viol(run.go(quick), INV_LIVENESS), 0u);
}

TEST(Checker, LivenessWaitingOnItsOwnLeftoverLock)
{
	/* K-VL-3: w0 held and released, but its release removed nothing; its
	 * next attempt waits on the lock it left and gives up */
	Hist h;
	h.attempt(0, 0, 0).ev(0, EV_OBJ_CREATE, 0, 0.5, 77, 1).acquired(0, 0, 1, 0.5).release(0, 0, 2);
	h.attempt(0, 1, 3).busy(0, 1, 1100);
	CheckRun run;
	run.stale = 60000;
	check_result r = run.go(h);
	only(r, INV_LIVENESS);
	EXPECT_EQ(viol(r, INV_LIVENESS), 1u);
	EXPECT_NE(strstr(r.inv[INV_LIVENESS].ex[0].text, "waiting on itself"), nullptr);
}

TEST(Checker, LivenessGivingUpOnALiveHolderIsNotADeadWait)
{
	Hist h;
	h.attempt(0, 0, 0).ev(0, EV_OBJ_CREATE, 0, 0.5, 77, 1).acquired(0, 0, 1, 0.5);
	h.attempt(1, 0, 2).busy(1, 0, 1100);
	h.release(0, 0, 1160);
	CheckRun run;
	run.stale = 1000;
	EXPECT_EQ(viol(run.go(h), INV_LIVENESS), 0u);

	/* a holder that dies during the wait was a live holder for part of it */
	Hist d;
	d.attempt(0, 0, 0).ev(0, EV_OBJ_CREATE, 0, 0.5, 77, 1).acquired(0, 0, 1, 0.5);
	d.attempt(1, 0, 2);
	d.fault(0, 0, 10, 2);
	d.busy(1, 0, 1100);
	EXPECT_EQ(viol(run.go(d), INV_LIVENESS), 0u);
}
