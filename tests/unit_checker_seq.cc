/* unit_checker_seq.cc - the checker's journal-seq (append workload) and
 * stale-read (generation workload) invariants on hand-built journals and
 * final journals.  Times are synthetic (ms on a made-up clock): nothing here
 * sleeps or times. */
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


/* A history under construction: records in seq order, times in ms. */
struct Hist : HistBase<Hist> {
	/* W appended SEQ in OP (EV_APPEND, c = 3: from a replay) */
	Hist &append(unsigned w, uint32_t op, double t, int64_t s) { return ev(w, EV_APPEND, op, t, s, 0, 3); }
	/* W's getSnapshot wrote its replay of the journal's first BYTES bytes (0.8.0's JL7) */
	Hist &snapread(unsigned w, uint32_t op, double t, int64_t next, size_t bytes)
	{
		return ev(w, EV_READ, op, t, next - 1, 3, (int64_t)bytes + 1);
	}
	/* a write of version V finished */
	Hist &commit(unsigned w, uint32_t op, double t, int64_t v) { return ev(w, EV_COMMIT, op, t, v); }
	Hist &fault(unsigned w, uint32_t op, double t, int kind)
	{
		return ev(w, EV_FAULT, op, t, kind, 0x1234, 0);
	}
	Hist &read_begin(unsigned w, uint32_t op, double t) { return ev(w, EV_READ_BEGIN, op, t); }
	/* a read returned version V; cached = served from its kept answer */
	Hist &read(unsigned w, uint32_t op, double t, int64_t v, bool cached = false, int err = 0)
	{
		return ev(w, EV_READ, op, t, v, cached ? 1 : 0, 0, err);
	}
};

/* One line of the append workload's journal. */
std::string line(int64_t seq, int w, int64_t op)
{
	return "{\"seq\":" + std::to_string(seq) + ",\"id\":\"session\",\"type\":\"checkpoint\","
	       "\"ts\":\"2025-01-01T00:00:00.000Z\",\"event\":{\"id\":\"session\",\"type\":"
	       "\"checkpoint\",\"w\":" + std::to_string(w) + ",\"op\":" + std::to_string(op) + "}}\n";
}

/* A snapshot file: 0.8.0's (bytes < 0: no meta) or 1.0.0's. */
std::string snapshot(int64_t events, int64_t last, int64_t diag, int w, int64_t op, const char *call,
		     long long bytes = -1, int64_t next = 0)
{
	std::string s = "{\"id\":\"session\",\"events\":" + std::to_string(events) + ",\"lastSeq\":" +
			std::to_string(last) + ",\"diagnostics\":" + std::to_string(diag) +
			",\"by\":{\"w\":" + std::to_string(w) + ",\"op\":" + std::to_string(op) +
			",\"call\":\"" + call + "\"}";
	if (bytes >= 0)
		s += ",\"__journalBytes\":" + std::to_string(bytes) + ",\"__nextSeq\":" + std::to_string(next);
	return s + "}\n";
}

/* A seeded (legacy) line: no worker. */
std::string seeded(int64_t seq)
{
	return "{\"seq\":" + std::to_string(seq) + ",\"id\":\"session\",\"type\":\"seed\"}\n";
}

struct CheckRun {
	unsigned workers = 4;
	int check_seq = 1;
	int check_stale_read = 0;
	int check_state = 0;
	bool has_final = true;
	std::string final_journal;
	bool has_snapshot = false;
	std::string final_snapshot;

	check_result go(const Hist &h)
	{
		std::vector<int64_t> sv(workers, LS_NEVER), bv(workers, 1000);
		check_input in;
		memset(&in, 0, sizeof in);
		in.rec = h.r.data();
		in.n = h.r.size();
		in.workers = workers;
		in.stale_ms = sv.data();
		in.budget_ms = bv.data();
		in.check_state = check_state;
		in.check_seq = check_seq;
		in.check_stale_read = check_stale_read;
		in.final_state = has_final ? final_journal.data() : nullptr;
		in.final_len = has_final ? final_journal.size() : 0;
		in.final_snapshot = has_snapshot ? final_snapshot.data() : nullptr;
		in.final_snapshot_len = has_snapshot ? final_snapshot.size() : 0;
		check_result out;
		EXPECT_EQ(check_run(&in, &out), 0);
		return out;
	}
};

uint64_t viol(const check_result &r, inv_id i)
{
	return r.inv[i].violations;
}

std::string ex(const check_result &r, inv_id i, unsigned k = 0)
{
	return k < r.inv[i].nex ? r.inv[i].ex[k].text : "";
}

/* Every invariant other than ONE held; the verdict follows ONE. */
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

} // namespace

/* ---- names and applicability ---- */

TEST(CheckerSeq, NamesAndApplicability)
{
	EXPECT_STREQ(check_inv_name(INV_JOURNAL_SEQ), "journal-seq");
	EXPECT_STREQ(check_inv_name(INV_STALE_READ), "stale-read");
	EXPECT_LT((int)INV_LIVENESS, (int)INV_JOURNAL_SEQ) << "appended: existing indexes stay";
	EXPECT_STREQ(journal_type_name(EV_READ_BEGIN), "read-begin");
	EXPECT_EQ(journal_type_from_name("read-begin"), EV_READ_BEGIN);

	Hist h;
	CheckRun run;
	check_result r = run.go(h);
	EXPECT_TRUE(r.inv[INV_JOURNAL_SEQ].applicable);
	EXPECT_FALSE(r.inv[INV_STALE_READ].applicable);
	EXPECT_FALSE(r.inv[INV_NO_LOST_WRITES].applicable) << "append keeps no update state";
	EXPECT_FALSE(r.inv[INV_SERIAL_UPDATES].applicable);
	EXPECT_FALSE(r.inv[INV_STATE_INTACT].applicable);
	EXPECT_EQ(r.pass, 1);

	run.check_seq = 0;
	run.check_stale_read = 1;
	r = run.go(h);
	EXPECT_FALSE(r.inv[INV_JOURNAL_SEQ].applicable);
	EXPECT_TRUE(r.inv[INV_STALE_READ].applicable);
}

TEST(CheckerSeq, WorkloadFlags)
{
	EXPECT_EQ(append_workload.flags & WL_CHECK_SEQ, WL_CHECK_SEQ);
	EXPECT_EQ(append_workload.flags & (WL_CHECK_STATE | WL_CHECK_STALE_READ), 0u);
	EXPECT_EQ(generation_workload.flags & WL_CHECK_STALE_READ, WL_CHECK_STALE_READ);
	EXPECT_EQ(generation_workload.flags & (WL_CHECK_STATE | WL_CHECK_SEQ), 0u);
	EXPECT_EQ(update_workload.flags & (WL_CHECK_SEQ | WL_CHECK_STALE_READ), 0u);
	EXPECT_EQ(workload_find("append"), &append_workload);
	EXPECT_EQ(workload_find("generation"), &generation_workload);
}

/* ---- journal-seq ---- */

TEST(CheckerSeq, CleanAppendsPass)
{
	Hist h;
	h.append(0, 0, 1, 1).append(1, 0, 2, 2).append(0, 1, 3, 3);
	CheckRun run;
	run.final_journal = line(1, 0, 0) + line(2, 1, 0) + line(3, 0, 1);
	check_result r = run.go(h);
	clean(r);
	EXPECT_EQ(r.ops, 3u) << "ops are appends";
}

TEST(CheckerSeq, DuplicateAppendsNamedInPlainWords)
{
	Hist h;
	h.append(0, 0, 1, 1).append(0, 1, 2, 2).append(0, 2, 3, 3).append(0, 3, 4, 4);
	h.append(1, 7, 5, 5).append(3, 2, 6, 5); /* K-JL-1: both took 5 */
	CheckRun run;
	run.final_journal = line(1, 0, 0) + line(2, 0, 1) + line(3, 0, 2) + line(4, 0, 3) +
			    line(5, 1, 7) + line(5, 3, 2);
	check_result r = run.go(h);
	only(r, INV_JOURNAL_SEQ);
	EXPECT_EQ(viol(r, INV_JOURNAL_SEQ), 1u);
	EXPECT_NE(ex(r, INV_JOURNAL_SEQ).find("w1 and w3 both appended seq 5 (ops 7 and 2"),
		  std::string::npos)
		<< ex(r, INV_JOURNAL_SEQ);
	EXPECT_EQ(r.inv[INV_JOURNAL_SEQ].ex[0].worker[0], 3);
	EXPECT_EQ(r.inv[INV_JOURNAL_SEQ].ex[0].worker[1], 1);
}

TEST(CheckerSeq, EveryExtraAppendOfASeqCounts)
{
	Hist h;
	h.append(0, 0, 1, 1).append(1, 0, 2, 1).append(2, 0, 3, 1).append(3, 0, 4, 2);
	CheckRun run;
	run.final_journal = line(1, 0, 0) + line(1, 1, 0) + line(1, 2, 0) + line(2, 3, 0);
	check_result r = run.go(h);
	EXPECT_EQ(viol(r, INV_JOURNAL_SEQ), 2u) << "three appends of seq 1: two too many";
	EXPECT_NE(ex(r, INV_JOURNAL_SEQ).find("3 appends of it in all"), std::string::npos);
	EXPECT_EQ(r.pass, 0);
}

TEST(CheckerSeq, GapsCountEveryMissingSeq)
{
	Hist h;
	h.append(0, 0, 1, 1).append(0, 1, 2, 2).append(1, 0, 3, 6);
	CheckRun run;
	run.final_journal = line(1, 0, 0) + line(2, 0, 1) + line(6, 1, 0);
	check_result r = run.go(h);
	only(r, INV_JOURNAL_SEQ);
	EXPECT_EQ(viol(r, INV_JOURNAL_SEQ), 3u) << "3, 4 and 5";
	EXPECT_NE(ex(r, INV_JOURNAL_SEQ).find("seqs 3..5"), std::string::npos) << ex(r, INV_JOURNAL_SEQ);

	Hist one;
	one.append(0, 0, 1, 2);
	run.final_journal = line(2, 0, 0);
	r = run.go(one);
	EXPECT_EQ(viol(r, INV_JOURNAL_SEQ), 1u) << "the sequence starts at 1";
	EXPECT_NE(ex(r, INV_JOURNAL_SEQ).find("seq 1 "), std::string::npos) << ex(r, INV_JOURNAL_SEQ);
}

/* A writer killed between its append and its EV_APPEND record: the line is
 * there, the record is not.  That is no gap. */
TEST(CheckerSeq, LineWithoutRecordFillsTheGap)
{
	Hist h;
	h.append(0, 0, 1, 1).append(0, 2, 3, 3);
	CheckRun run;
	run.final_journal = line(1, 0, 0) + line(2, 1, 0) + line(3, 0, 2);
	check_result r = run.go(h);
	EXPECT_EQ(viol(r, INV_JOURNAL_SEQ), 0u) << ex(r, INV_JOURNAL_SEQ);
	EXPECT_EQ(r.pass, 1);
}

/* Seeded legacy lines (no worker) then appends continuing after them. */
TEST(CheckerSeq, SeededLinesAreFine)
{
	Hist h;
	h.append(2, 0, 1, 4).append(1, 0, 2, 5);
	CheckRun run;
	run.final_journal = seeded(1) + seeded(2) + seeded(3) + line(4, 2, 0) + line(5, 1, 0);
	check_result r = run.go(h);
	EXPECT_EQ(r.pass, 1) << ex(r, INV_JOURNAL_SEQ);
}

/* The legacy copy overwrote the primary: an append that returned is gone. */
TEST(CheckerSeq, AppendMissingFromTheFinalJournalIsLost)
{
	Hist h;
	h.append(0, 0, 1, 1).append(1, 4, 2, 2).append(0, 1, 3, 3);
	CheckRun run;
	run.final_journal = line(1, 0, 0) + line(3, 0, 1);
	check_result r = run.go(h);
	only(r, INV_JOURNAL_SEQ);
	EXPECT_EQ(viol(r, INV_JOURNAL_SEQ), 1u);
	EXPECT_NE(ex(r, INV_JOURNAL_SEQ).find("w1's append of seq 2 (op 4"), std::string::npos)
		<< ex(r, INV_JOURNAL_SEQ);
	EXPECT_NE(ex(r, INV_JOURNAL_SEQ).find("not in the final journal"), std::string::npos);
}

/* Both appends of a duplicate must each have their own line. */
TEST(CheckerSeq, DuplicateWithOneLineIsAlsoLost)
{
	Hist h;
	h.append(0, 0, 1, 1).append(1, 0, 2, 1);
	CheckRun run;
	run.final_journal = line(1, 1, 0);
	check_result r = run.go(h);
	EXPECT_EQ(viol(r, INV_JOURNAL_SEQ), 2u) << "one duplicate, one lost";
}

TEST(CheckerSeq, DuplicateLinesInTheFinalJournal)
{
	Hist h;
	h.append(0, 0, 1, 3);
	CheckRun run;
	/* two copies of the seeded journal landed (the copy race) */
	run.final_journal = seeded(1) + seeded(2) + seeded(1) + seeded(2) + line(3, 0, 0);
	check_result r = run.go(h);
	only(r, INV_JOURNAL_SEQ);
	EXPECT_EQ(viol(r, INV_JOURNAL_SEQ), 2u);
	EXPECT_NE(ex(r, INV_JOURNAL_SEQ).find("the final journal holds seq 1 2 times (lines 1 and 3)"),
		  std::string::npos)
		<< ex(r, INV_JOURNAL_SEQ);
}

TEST(CheckerSeq, TornAndBlankLinesAreSkipped)
{
	Hist h;
	h.append(0, 0, 1, 1).append(1, 0, 2, 2);
	CheckRun run;
	run.final_journal = line(1, 0, 0) + "{\"seq\":2,\"id\":\"sess\n\n  \n" + line(2, 1, 0) +
			    "{\"seq\":3,\"i";
	check_result r = run.go(h);
	EXPECT_EQ(r.pass, 1) << ex(r, INV_JOURNAL_SEQ);
}

TEST(CheckerSeq, MissingFinalJournalLosesEveryAppend)
{
	Hist h;
	h.append(0, 0, 1, 1).append(1, 0, 2, 2).append(0, 1, 3, 3);
	CheckRun run;
	run.has_final = false;
	check_result r = run.go(h);
	EXPECT_EQ(viol(r, INV_JOURNAL_SEQ), 3u);
	EXPECT_NE(ex(r, INV_JOURNAL_SEQ).find("missing after 3 appends"), std::string::npos);

	Hist none;
	r = run.go(none);
	EXPECT_EQ(r.pass, 1) << "no appends, no journal: nothing to say";
}

TEST(CheckerSeq, SeqZeroIsAViolation)
{
	Hist h;
	h.append(2, 5, 1, 0).append(0, 0, 2, 1);
	CheckRun run;
	run.final_journal = line(0, 2, 5) + line(1, 0, 0);
	check_result r = run.go(h);
	EXPECT_EQ(viol(r, INV_JOURNAL_SEQ), 1u);
	EXPECT_NE(ex(r, INV_JOURNAL_SEQ).find("w2 appended seq 0 (op 5"), std::string::npos);
}

TEST(CheckerSeq, NotCheckedUnlessTheWorkloadSaysSo)
{
	Hist h;
	h.append(0, 0, 1, 1).append(1, 0, 2, 1);
	CheckRun run;
	run.check_seq = 0;
	run.has_final = false;
	check_result r = run.go(h);
	EXPECT_EQ(viol(r, INV_JOURNAL_SEQ), 0u);
	EXPECT_FALSE(r.inv[INV_JOURNAL_SEQ].applicable);
	EXPECT_EQ(r.pass, 1);
}

/* ---- journal-seq: a trusted snapshot matches the journal ---- */

/* K-JL-2: a reader replayed while w0's line for seq 3 was half written, and
 * wrote that replay to disk; the line is whole in the final journal. */
TEST(CheckerSnapshot, ReaderWroteAReplayOfAHalfWrittenJournal)
{
	std::string j = line(1, 0, 0) + line(2, 0, 1) + line(3, 0, 2);
	size_t cut = line(1, 0, 0).size() + line(2, 0, 1).size() + 10; /* 10 bytes of seq 3's line */
	Hist h;
	h.append(0, 0, 1, 1).append(0, 1, 2, 2).snapread(2, 7, 3, 3, cut).append(0, 2, 4, 3);
	CheckRun run;
	run.final_journal = j;
	check_result r = run.go(h);
	only(r, INV_JOURNAL_SEQ);
	EXPECT_EQ(viol(r, INV_JOURNAL_SEQ), 1u);
	EXPECT_NE(ex(r, INV_JOURNAL_SEQ).find("w2's getSnapshot (op 7, seq 3) wrote the snapshot from a "
					      "half-written journal"), std::string::npos)
		<< ex(r, INV_JOURNAL_SEQ);
	EXPECT_NE(ex(r, INV_JOURNAL_SEQ).find("end inside line 3 (seq 3, w0 op 2)"), std::string::npos)
		<< ex(r, INV_JOURNAL_SEQ);
	EXPECT_EQ(r.inv[INV_JOURNAL_SEQ].ex[0].worker[0], 2);
	EXPECT_EQ(r.inv[INV_JOURNAL_SEQ].ex[0].worker[1], 0);
}

TEST(CheckerSnapshot, ReplaysOfWholeLinesOrOfATearAreFine)
{
	std::string a = line(1, 0, 0), b = line(2, 0, 1);
	Hist h;
	h.append(0, 0, 1, 1).append(0, 1, 2, 2);
	h.snapread(2, 1, 3, 2, a.size());         /* ends on a "\n" */
	h.snapread(2, 2, 4, 2, a.size() + b.size() - 1); /* all but the "\n": the text is whole */
	h.snapread(2, 3, 5, 3, a.size() + b.size()); /* the whole journal */
	h.snapread(2, 4, 6, 3, 0);                /* no journal yet */
	CheckRun run;
	run.final_journal = a + b;
	clean(run.go(h));

	/* a torn line stays torn: the replay told the truth about it */
	Hist t;
	t.append(0, 0, 1, 1).snapread(2, 1, 2, 2, a.size() + 5);
	run.final_journal = a + b.substr(0, 12) + line(3, 0, 2); /* seq 2's tear, seq 3 glued on */
	check_result r = run.go(t);
	EXPECT_EQ(viol(r, INV_JOURNAL_SEQ), 0u) << ex(r, INV_JOURNAL_SEQ);
}

/* 0.8.0's snapshot has no meta: it stands for the journal as it is. */
TEST(CheckerSnapshot, LegacySnapshotBehindTheJournalNamesItsWriterAndWhatItMisses)
{
	Hist h;
	h.append(0, 0, 1, 1).append(1, 0, 2, 2).append(0, 1, 3, 3);
	CheckRun run;
	run.final_journal = line(1, 0, 0) + line(2, 1, 0) + line(3, 0, 1);
	run.has_snapshot = true;
	run.final_snapshot = snapshot(3, 3, 0, 0, 1, "appendEvent");
	clean(run.go(h));

	run.final_snapshot = snapshot(2, 2, 0, 2, 9, "getSnapshot");
	check_result r = run.go(h);
	only(r, INV_JOURNAL_SEQ);
	EXPECT_EQ(viol(r, INV_JOURNAL_SEQ), 1u);
	std::string e = ex(r, INV_JOURNAL_SEQ);
	EXPECT_NE(e.find("the final snapshot (written by w2's getSnapshot, op 9)"), std::string::npos) << e;
	EXPECT_NE(e.find("it misses 1 event, from seq 3 (w0 op 1, line 3)"), std::string::npos) << e;
	EXPECT_EQ(r.inv[INV_JOURNAL_SEQ].ex[0].worker[0], 2);
	EXPECT_EQ(r.inv[INV_JOURNAL_SEQ].ex[0].worker[1], 0);

	/* parse failures count too: a snapshot that saw none of the journal's tear */
	run.final_journal = line(1, 0, 0) + "{\"seq\":2,\"i" + line(2, 1, 0);
	run.final_snapshot = snapshot(1, 1, 0, 1, 4, "appendEvent");
	r = run.go(h);
	EXPECT_NE(ex(r, INV_JOURNAL_SEQ, r.inv[INV_JOURNAL_SEQ].nex - 1).find("parse failures are not"),
		  std::string::npos);
}

/* 1.0.0: trusted only on an exact byte match; trusted, it must be the replay. */
TEST(CheckerSnapshot, NewSnapshotIsJudgedOnlyWhenItsByteCountMatches)
{
	std::string j = line(1, 0, 0) + line(2, 1, 0);
	Hist h;
	h.append(0, 0, 1, 1).append(1, 0, 2, 2);
	CheckRun run;
	run.final_journal = j;
	run.has_snapshot = true;
	long long n = (long long)j.size();

	run.final_snapshot = snapshot(2, 2, 0, 1, 0, "appendEvent", n, 3);
	clean(run.go(h));
	/* behind, but says so: readers replay */
	run.final_snapshot = snapshot(1, 1, 0, 0, 0, "appendEvent", n - 5, 2);
	clean(run.go(h));
	/* wrong id, or no integer __nextSeq: not trusted either */
	run.final_snapshot = snapshot(1, 1, 0, 0, 0, "appendEvent", n, 2);
	run.final_snapshot.replace(run.final_snapshot.find("session"), 7, "other!!");
	clean(run.go(h));
	/* unparseable (torn mid-write): claims nothing */
	run.final_snapshot = "{\"id\":\"sess";
	clean(run.go(h));

	/* the torn-tail case: an event the journal lost, counted, under the exact byte count */
	run.final_snapshot = snapshot(3, 3, 0, 1, 5, "appendEvent", n, 4);
	check_result r = run.go(h);
	only(r, INV_JOURNAL_SEQ);
	std::string e = ex(r, INV_JOURNAL_SEQ);
	EXPECT_NE(e.find("claims the journal's " + std::to_string(n) + " bytes"), std::string::npos) << e;
	EXPECT_NE(e.find("it counts 1 event no parsed line of the journal holds"), std::string::npos) << e;

	/* the same counts but a next seq a replay would not give */
	run.final_snapshot = snapshot(2, 2, 0, 1, 5, "appendEvent", n, 9);
	r = run.go(h);
	EXPECT_NE(ex(r, INV_JOURNAL_SEQ).find("takes next seq 9, a replay 3"), std::string::npos)
		<< ex(r, INV_JOURNAL_SEQ);
}

TEST(CheckerSnapshot, ReplayAndSnapshotParse)
{
	std::string j = line(4, 3, 9) + "not json\n" + seeded(2) + "{\"seq\":7,\"i";
	struct append_replay rp;
	ASSERT_EQ(append_replay(j.data(), j.size(), &rp), 0);
	EXPECT_EQ(rp.events, 2);
	EXPECT_EQ(rp.last_seq, 2) << "the last parsed line's seq, not the largest";
	EXPECT_EQ(rp.diagnostics, 2);
	EXPECT_EQ(rp.next_seq, 5);

	struct append_snapshot sn;
	std::string s = snapshot(3, 4, 1, 2, 7, "getSnapshot");
	ASSERT_EQ(append_snapshot_parse(s.data(), s.size(), &sn), 0);
	EXPECT_EQ(sn.events, 3);
	EXPECT_EQ(sn.has_meta, 0);
	EXPECT_EQ(sn.worker, 2);
	EXPECT_EQ(sn.op, 7);
	EXPECT_STREQ(sn.call, "getSnapshot");
	s = snapshot(3, 4, 1, 2, 7, "appendEvent", 120, 5);
	ASSERT_EQ(append_snapshot_parse(s.data(), s.size(), &sn), 0);
	EXPECT_EQ(sn.has_meta, 1);
	EXPECT_EQ(sn.journal_bytes, 120);
	EXPECT_EQ(sn.next_seq, 5);
	EXPECT_EQ(sn.id_ok, 1);
	EXPECT_EQ(append_snapshot_parse("[1]", 3, &sn), -1);
	EXPECT_EQ(append_snapshot_parse("", 0, &sn), -1);
}

/* ---- journal scan ---- */

TEST(CheckerSeq, JournalScan)
{
	std::string j = line(4, 3, 9) + "\n" + seeded(1) + "not json\n" + "{\"seq\":2.5}\n" +
			"{\"seq\":7,\"event\":{\"w\":-1}}";
	struct append_line *l = nullptr;
	size_t n = 0;
	ASSERT_EQ(append_journal_scan(j.data(), j.size(), &l, &n), 0);
	ASSERT_EQ(n, 5u) << "blank lines skipped, the unterminated tail kept";
	EXPECT_EQ(l[0].seq, 4);
	EXPECT_EQ(l[0].worker, 3);
	EXPECT_EQ(l[0].op, 9);
	EXPECT_EQ(l[0].line, 1u);
	EXPECT_EQ(l[1].seq, 1);
	EXPECT_EQ(l[1].worker, -1);
	EXPECT_EQ(l[1].line, 3u);
	EXPECT_EQ(l[2].parsed, 0);
	EXPECT_EQ(l[2].seq, -1);
	EXPECT_EQ(l[3].parsed, 1);
	EXPECT_EQ(l[3].seq, -1) << "not an integer";
	EXPECT_EQ(l[4].seq, 7);
	EXPECT_EQ(l[4].worker, -1);
	free(l);
}

/* ---- stale-read ---- */

TEST(CheckerStale, FreshReadsPass)
{
	Hist h;
	h.commit(0, 0, 1, 1);
	h.read_begin(1, 0, 2).read(1, 0, 3, 1);
	h.read_begin(2, 0, 4).commit(0, 1, 5, 2).read(2, 0, 6, 1); /* began before the write finished */
	h.read_begin(1, 1, 7).read(1, 1, 8, 2, true);
	CheckRun run;
	run.check_seq = 0;
	run.check_stale_read = 1;
	check_result r = run.go(h);
	clean(r);
	EXPECT_EQ(r.ops, 5u) << "two commits, three reads";
}

TEST(CheckerStale, CachedOlderVersionAfterAFinishedWrite)
{
	Hist h;
	h.commit(0, 0, 1, 1);
	h.read_begin(2, 0, 2).read(2, 0, 3, 1);
	h.commit(0, 6, 4, 2);
	h.read_begin(2, 9, 5).read(2, 9, 6, 1, true);
	CheckRun run;
	run.check_seq = 0;
	run.check_stale_read = 1;
	check_result r = run.go(h);
	only(r, INV_STALE_READ);
	EXPECT_EQ(viol(r, INV_STALE_READ), 1u);
	EXPECT_NE(ex(r, INV_STALE_READ).find("w2's read (op 9, begun at seq 5) returned version 1 from "
					     "its cache, but w0 had finished writing version 2 (op 6, seq 4)"),
		  std::string::npos)
		<< ex(r, INV_STALE_READ);
	EXPECT_EQ(r.inv[INV_STALE_READ].ex[0].worker[0], 2);
	EXPECT_EQ(r.inv[INV_STALE_READ].ex[0].worker[1], 0);
}

TEST(CheckerStale, FailedReadsAndDeathsAreNotJudged)
{
	Hist h;
	h.commit(0, 0, 1, 3);
	h.read_begin(1, 0, 2).read(1, 0, 3, -1, false, EIO);
	h.read_begin(2, 0, 4).fault(2, 0, 5, FK_CRASH);
	h.ev(2, EV_WORKER_START, 0, 6, 1).read(2, 1, 7, 0); /* no begin in this incarnation */
	h.read(1, 1, 8, 0);                                  /* no begin at all */
	CheckRun run;
	run.check_seq = 0;
	run.check_stale_read = 1;
	check_result r = run.go(h);
	EXPECT_EQ(viol(r, INV_STALE_READ), 0u) << ex(r, INV_STALE_READ);
}

TEST(CheckerStale, NotCheckedUnlessTheWorkloadSaysSo)
{
	Hist h;
	h.commit(0, 0, 1, 2).read_begin(1, 0, 2).read(1, 0, 3, 1, true);
	CheckRun run;
	run.check_seq = 0;
	check_result r = run.go(h);
	EXPECT_FALSE(r.inv[INV_STALE_READ].applicable);
	EXPECT_EQ(r.pass, 1);
}
