/* unit_checker_stream.cc - the checker fed one record at a time
 * (check_input.next) judges exactly as when given the whole array, and
 * throughput runs from the first op, not the first fork. */
#include <gtest/gtest.h>

#include <errno.h>
#include <string.h>

#include <vector>

extern "C" {
#include "check/checker.h"
#include "faults/fault.h"
#include "core/journal.h"
}

namespace {

constexpr uint64_t MS = 1000000;

struct Recs {
	std::vector<jrec> r;
	uint64_t seq = 1;
	Recs &ev(unsigned w, int type, uint32_t op, double at_ms, int64_t a = 0, int err = 0)
	{
		jrec x;
		memset(&x, 0, sizeof x);
		x.type = (uint16_t)type;
		x.worker = (uint16_t)w;
		x.op = op;
		x.err = err;
		x.seq = seq++;
		x.ns = (uint64_t)(at_ms * (double)MS) + 1000 * MS;
		x.a = a;
		r.push_back(x);
		return *this;
	}
};

/* A source that hands out copies from a vector one at a time, through a
 * buffer it overwrites: nothing may keep a record past the next call. */
struct Source {
	const std::vector<jrec> *v;
	size_t i = 0;
	jrec buf;
	bool ended = false;
	size_t torn_at_end = 0;
	check_input *in = nullptr;
};

int next_rec(void *ctx, const struct jrec **r)
{
	Source *s = (Source *)ctx;
	if (s->i == s->v->size()) {
		s->ended = true;
		s->in->torn_bytes = s->torn_at_end; /* set at the end, read after it */
		return 0;
	}
	s->buf = (*s->v)[s->i++];
	*r = &s->buf;
	return 1;
}

/* The same, a run of 1 to 4 records at a time (check_input.next_run),
 * copied into a buffer it overwrites. */
struct RunSource {
	Source s;
	jrec buf[4];
	unsigned step = 0;
};

int next_run(void *ctx, const struct jrec **r, size_t *n)
{
	RunSource *rs = (RunSource *)ctx;
	Source *s = &rs->s;
	if (s->i == s->v->size()) {
		s->ended = true;
		s->in->torn_bytes = s->torn_at_end;
		return 0;
	}
	size_t m = 1 + rs->step++ % 4;
	if (m > s->v->size() - s->i)
		m = s->v->size() - s->i;
	for (size_t k = 0; k < m; k++)
		rs->buf[k] = (*s->v)[s->i++];
	*r = rs->buf;
	*n = m;
	return 1;
}

check_result judge(const Recs &h, bool stream, const char *const *protos = nullptr, bool excuse = false,
		   bool runs = false)
{
	int64_t stale[2] = { 100, 100 }, budget[2] = { 1000, 1000 };
	check_input in;
	memset(&in, 0, sizeof in);
	RunSource rsrc;
	Source &src = rsrc.s;
	src.v = &h.r;
	src.torn_at_end = 5;
	src.in = &in;
	if (stream && runs) {
		in.next_run = next_run;
		in.next_ctx = &rsrc;
	} else if (stream) {
		in.next = next_rec;
		in.next_ctx = &src;
	} else {
		in.rec = h.r.data();
		in.n = h.r.size();
		in.torn_bytes = 5;
	}
	in.workers = 2;
	in.stale_ms = stale;
	in.budget_ms = budget;
	in.proto_of = protos;
	in.excuse_injected = excuse;
	check_result out;
	EXPECT_EQ(check_run(&in, &out), 0);
	if (stream) {
		EXPECT_TRUE(src.ended);
	}
	return out;
}

/* Two workers; w1 acquires while w0 still holds (an exclusion breach), an
 * acquire error, a busy, waits and holds of several lengths. */
Recs history()
{
	Recs h;
	h.ev(0, EV_WORKER_START, 0, 0).ev(1, EV_WORKER_START, 0, 1);
	h.ev(0, EV_ATTEMPT, 0, 10).ev(0, EV_ACQUIRED, 0, 11).ev(1, EV_ATTEMPT, 0, 12).ev(1, EV_ACQUIRED, 0, 14);
	h.ev(0, EV_RELEASE_BEGIN, 0, 15).ev(0, EV_RELEASED, 0, 16).ev(1, EV_RELEASE_BEGIN, 0, 17).ev(1, EV_RELEASED, 0, 18);
	h.ev(0, EV_ATTEMPT, 1, 19).ev(0, EV_ACQUIRE_ERROR, 1, 20, 0, 5);
	h.ev(1, EV_ATTEMPT, 1, 21).ev(1, EV_BUSY, 1, 25);
	h.ev(0, EV_ATTEMPT, 2, 26).ev(0, EV_ACQUIRED, 2, 29).ev(0, EV_RELEASE_BEGIN, 2, 35).ev(0, EV_RELEASED, 2, 36);
	h.ev(0, EV_WORKER_EXIT, 3, 40).ev(1, EV_WORKER_EXIT, 2, 50);
	return h;
}

static void streaming_judges_as_the_array_does(bool runs)
{
	Recs h = history();
	static const char *const protos[] = { "flock", "mkdir-legacy" };
	check_result a = judge(h, false, protos), b = judge(h, true, protos, false, runs);
	EXPECT_EQ(a.pass, b.pass);
	EXPECT_EQ(a.pass, 0) << "the history breaks exclusion";
	for (int i = 0; i < INV__COUNT; i++) {
		EXPECT_EQ(a.inv[i].violations, b.inv[i].violations) << a.inv[i].name;
		EXPECT_EQ(a.inv[i].nex, b.inv[i].nex) << a.inv[i].name;
		for (unsigned k = 0; k < a.inv[i].nex && k < b.inv[i].nex; k++)
			EXPECT_STREQ(a.inv[i].ex[k].text, b.inv[i].ex[k].text);
	}
	EXPECT_GT(a.inv[INV_EXCLUSION].violations, 0u);
	EXPECT_EQ(a.attempts, b.attempts);
	EXPECT_EQ(a.acquired, b.acquired);
	EXPECT_EQ(a.busy, b.busy);
	EXPECT_EQ(a.errors, b.errors);
	EXPECT_EQ(a.ops, b.ops);
	EXPECT_DOUBLE_EQ(a.elapsed_s, b.elapsed_s);
	EXPECT_DOUBLE_EQ(a.wait.p50, b.wait.p50);
	EXPECT_DOUBLE_EQ(a.hold.max, b.hold.max);
	EXPECT_EQ(b.torn_bytes, 5u) << "a source's torn bytes are read after its end";
	ASSERT_EQ(a.nrev, 2u);
	ASSERT_EQ(b.nrev, 2u);
	for (unsigned k = 0; k < 2; k++) {
		EXPECT_STREQ(a.rev[k].name, b.rev[k].name);
		EXPECT_EQ(a.rev[k].attempts, b.rev[k].attempts);
		EXPECT_EQ(a.rev[k].errors, b.rev[k].errors);
		EXPECT_DOUBLE_EQ(a.rev[k].ops_per_s, b.rev[k].ops_per_s);
	}
	EXPECT_EQ(b.rev[0].attempts, 3u);
	EXPECT_EQ(b.rev[1].attempts, 2u);
}

TEST(CheckerStream, StreamingJudgesAsTheArrayDoes)
{
	streaming_judges_as_the_array_does(false);
}

TEST(CheckerStream, RunsJudgeAsTheArrayDoes)
{
	streaming_judges_as_the_array_does(true);
}

TEST(CheckerStream, ThroughputRunsFromTheFirstOpNotTheFirstFork)
{
	/* the workers start at 0 and 1 ms, the first op at 10 ms, the last record at 50 ms */
	check_result r = judge(history(), true);
	EXPECT_DOUBLE_EQ(r.elapsed_s, 0.040);
	EXPECT_NEAR(r.ops_per_s, 3 / 0.040, 1e-9); /* three releases */
}

TEST(CheckerStream, NeverAcquiredNamesTheFirstErrorFromTheStream)
{
	Recs h;
	h.ev(0, EV_WORKER_START, 0, 0).ev(0, EV_ATTEMPT, 0, 1).ev(0, EV_ACQUIRE_ERROR, 0, 2, 0, 2);
	h.ev(1, EV_ATTEMPT, 0, 3).ev(1, EV_ACQUIRE_ERROR, 0, 4, 0, 13);
	check_result r = judge(h, true);
	EXPECT_EQ(r.pass, 0);
	ASSERT_GE(r.inv[INV_LIVENESS].nex, 1u);
	EXPECT_NE(strstr(r.inv[INV_LIVENESS].ex[r.inv[INV_LIVENESS].nex - 1].text, "w0 op 0 raised ENOENT"), nullptr)
		<< r.inv[INV_LIVENESS].ex[0].text;
}

/* In explore, an acquire error that follows a failure the explorer chose (an
 * errno or a torn write, its EV_FAULT in the same op) is the choice's doing:
 * no "no attempt ever took the lock" (whether the protocol should have
 * absorbed it is no-escaped-error's rule); the same error with no fault before
 * it is.  A run's --fault is the user's own question and still counts. */
TEST(CheckerStream, AnErrorTheExplorerInjectedIsNotTheProtocolsNeverAcquired)
{
	Recs h;
	h.ev(0, EV_WORKER_START, 0, 0).ev(0, EV_ATTEMPT, 0, 1).ev(0, EV_FAULT, 0, 2, FK_ERRNO, 1 /* EPERM */);
	h.ev(0, EV_ACQUIRE_ERROR, 0, 3, 0, 1);
	check_result r = judge(h, true, nullptr, true); /* explore's: the choice's doing */
	EXPECT_EQ(r.inv[INV_LIVENESS].violations, 0u) << r.inv[INV_LIVENESS].ex[0].text;
	r = judge(h, true); /* a run's --fault: the user asked whether it escapes (K-ML-4) */
	EXPECT_EQ(r.inv[INV_LIVENESS].violations, 1u);
	h.ev(0, EV_ATTEMPT, 1, 4).ev(0, EV_ACQUIRE_ERROR, 1, 5, 0, 1); /* op 1: nothing injected */
	r = judge(h, true, nullptr, true);
	EXPECT_EQ(r.pass, 0);
	ASSERT_GE(r.inv[INV_LIVENESS].nex, 1u);
	EXPECT_NE(strstr(r.inv[INV_LIVENESS].ex[0].text, "w0 op 1 raised EPERM"), nullptr) << r.inv[INV_LIVENESS].ex[0].text;
}

/* In explore, a sweep that removed the lock's folder makes the ENOENTs that
 * follow its doing (the K-ML-3 false alarm of mkdir-owner: its first attempt's
 * ENOENT absorbed by the folder-race retry, its second ended by a crash); a
 * sweep that found nothing to remove excuses nothing, nor does a run's sweep. */
TEST(CheckerStream, AnEnoentAfterTheExplorersSweepIsNotTheProtocolsNeverAcquired)
{
	for (int removed : { 1, 0 }) {
		Recs h;
		h.ev(0, EV_WORKER_START, 0, 0).ev(JOURNAL_DRIVER, EV_FAULT, 0, 1, FK_SWEEP);
		h.r.back().c = removed;
		h.ev(0, EV_ATTEMPT, 0, 2).ev(0, EV_ACQUIRE_ERROR, 0, 3, 0, ENOENT);
		check_result r = judge(h, true, nullptr, true);
		EXPECT_EQ(r.inv[INV_LIVENESS].violations, removed ? 0u : 1u) << "removed " << removed;
		r = judge(h, true); /* a run's sweep is the user's question */
		EXPECT_EQ(r.inv[INV_LIVENESS].violations, 1u);
	}
}

} // namespace

/* Runs (check_input.next_run) judge every history above as one record at a
 * time does, with and without explore's excuses. */
TEST(CheckerStream, RunsJudgeEveryHistoryAsOneAtATime)
{
	std::vector<Recs> hs;
	hs.push_back(history());
	Recs h;
	h.ev(0, EV_WORKER_START, 0, 0).ev(0, EV_ATTEMPT, 0, 1).ev(0, EV_ACQUIRE_ERROR, 0, 2, 0, 2);
	h.ev(1, EV_ATTEMPT, 0, 3).ev(1, EV_ACQUIRE_ERROR, 0, 4, 0, 13);
	hs.push_back(h);
	h = Recs();
	h.ev(0, EV_WORKER_START, 0, 0).ev(0, EV_ATTEMPT, 0, 1).ev(0, EV_FAULT, 0, 2, FK_ERRNO, 1);
	h.ev(0, EV_ACQUIRE_ERROR, 0, 3, 0, 1).ev(0, EV_ATTEMPT, 1, 4).ev(0, EV_ACQUIRE_ERROR, 1, 5, 0, 1);
	hs.push_back(h);
	for (int removed : { 1, 0 }) {
		h = Recs();
		h.ev(0, EV_WORKER_START, 0, 0).ev(JOURNAL_DRIVER, EV_FAULT, 0, 1, FK_SWEEP);
		h.r.back().c = removed;
		h.ev(0, EV_ATTEMPT, 0, 2).ev(0, EV_ACQUIRE_ERROR, 0, 3, 0, ENOENT);
		hs.push_back(h);
	}
	for (size_t k = 0; k < hs.size(); k++)
		for (bool excuse : { false, true }) {
			check_result a = judge(hs[k], true, nullptr, excuse, false);
			check_result b = judge(hs[k], true, nullptr, excuse, true);
			EXPECT_EQ(a.pass, b.pass) << "history " << k;
			for (int i = 0; i < INV__COUNT; i++) {
				EXPECT_EQ(a.inv[i].violations, b.inv[i].violations) << "history " << k << " " << a.inv[i].name;
				ASSERT_EQ(a.inv[i].nex, b.inv[i].nex) << "history " << k << " " << a.inv[i].name;
				for (unsigned e = 0; e < a.inv[i].nex; e++)
					EXPECT_STREQ(a.inv[i].ex[e].text, b.inv[i].ex[e].text);
			}
			EXPECT_DOUBLE_EQ(a.elapsed_s, b.elapsed_s);
			EXPECT_EQ(a.attempts, b.attempts);
			EXPECT_EQ(a.errors, b.errors);
		}
}
