/*
 * integ_append.cc - the append and generation workloads and the pidlock
 * protocol end to end: the real binary against a scratch directory, verdicts
 * read from the JSON report.
 *
 * quiver's journal without a lock must be caught on journal-seq (duplicate
 * sequence numbers), and its 1.0.0 revision under a kernel lock must pass;
 * 0.8.0's cache duplicates even under the lock (K-JL-1).  volter's readers
 * serve stale tree stamps when writers do not move the generation (§9.3,
 * bound 2) and never when they do.  K-JL-2: 0.8.0's getSnapshot writes to disk
 * its replay of a journal whose last line is half written (a split write:
 * short-write with for=), and 1.0.0's readers write nothing.  Nothing here
 * sleeps or asserts on timing: a violation that needs two workers' steps to
 * meet (a window, or one worker's op between two of another's) is shown by a
 * bounded list of seeds (first_seed_showing), one of which must show it.
 */
#include <gtest/gtest.h>
#include <jansson.h>
#include <string.h>

#include <sstream>
#include <string>

#include "testutil.h"

static const std::string BIN = LOCKSTORM_BIN;

namespace {

CmdResult lockstorm(const std::string &args)
{
	return run_cmd(BIN + " " + args);
}

/* Every applicable invariant but journal-seq / stale-read held. */
void others_held(const Report &rep, const char *except)
{
	for (const char *inv : { "exclusion", "zombie-write", "no-lost-writes", "serial-updates",
				 "state-intact", "own-release", "liveness", "journal-seq", "stale-read" }) {
		if (strcmp(inv, except) != 0) {
			EXPECT_TRUE(rep.violations(inv) == 0 || !rep.applicable(inv)) << inv << ": " << rep.example(inv);
		}
	}
}

} // namespace

/* The done-means: no lock, four appenders, duplicate seqs. */
TEST(IntegAppend, WithoutALockDuplicateSeqsAreReported)
{
	ScratchDir d;
	CmdResult r = lockstorm("run -w append -p none -n 4 -d 3s -q --dir " + d.sub("w") + " -o " +
				d.sub("out") + " --json " + d.sub("r.json"));
	EXPECT_EQ(r.status, 1) << r.out << r.err;
	EXPECT_NE(r.out.find("verdict: FAIL (journal-seq)"), std::string::npos) << r.out;
	Report rep(d.sub("r.json"));
	ASSERT_TRUE(rep.root);
	EXPECT_GT(rep.violations("journal-seq"), 0);
	EXPECT_NE(rep.example("journal-seq").find("both appended seq"), std::string::npos)
		<< rep.example("journal-seq");
	EXPECT_EQ(rep.verdict(), "fail");
	/* what append cannot exercise is n/a, not a pass */
	EXPECT_FALSE(rep.applicable("no-lost-writes"));
	EXPECT_FALSE(rep.applicable("serial-updates"));
	EXPECT_FALSE(rep.applicable("state-intact"));
	EXPECT_FALSE(rep.applicable("stale-read"));
	EXPECT_GT(rep.ops(), 0);
	others_held(rep, "journal-seq");

	/* check re-derives it from the kept journals and final journal alone */
	CmdResult c = lockstorm("check -q " + d.sub("out") + " --json " + d.sub("c.json"));
	EXPECT_EQ(c.status, 1) << c.err;
	Report again(d.sub("c.json"));
	ASSERT_TRUE(again.root);
	EXPECT_EQ(again.violations("journal-seq"), rep.violations("journal-seq"));
}

TEST(IntegAppend, NewRevisionUnderFlockPasses)
{
	ScratchDir d;
	CmdResult r = lockstorm("run -w append --param locked=1 --param rev=append -p flock -n 4 --ops 2000 "
				"-q --dir " + d.sub("w") + " --json " + d.sub("r.json"));
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	Report rep(d.sub("r.json"));
	ASSERT_TRUE(rep.root);
	EXPECT_TRUE(rep.applicable("journal-seq"));
	EXPECT_EQ(rep.violations("journal-seq"), 0) << rep.example("journal-seq");
	EXPECT_EQ(rep.total("acquired"), 2000);
	EXPECT_EQ(rep.ops(), 2000) << "every locked op appended once";
	EXPECT_EQ(rep.verdict(), "pass");
}

/* K-JL-1: 0.8.0's cache trusts its own count, so a lock does not help.  A duplicate needs
 * another worker's append between two of one worker's, which the scheduler decides: a bounded
 * list of seeds until one shows it (scenarios/duplicate-seqs.cex.json shows it exactly); the lock
 * holds on every seed. */
TEST(IntegAppend, LegacyCacheDuplicatesEvenUnderFlock)
{
	ScratchDir d;
	std::string seen;
	int shown = first_seed_showing({ 1, 2, 3, 4, 5, 6 }, [&](int seed, std::string *said) {
		std::string t = std::to_string(seed);
		CmdResult r = lockstorm("run -w append --param locked=1 --param rev=legacy -p flock -n 4 --ops 2000 "
					"-q -s " + t + " --dir " + d.sub("w" + t) + " --json " + d.sub("r" + t + ".json"));
		Report rep(d.sub("r" + t + ".json"));
		*said = "exit " + std::to_string(r.status) + " " + r.out + r.err;
		EXPECT_TRUE(rep.root) << "seed " << seed << ": " << r.err;
		EXPECT_EQ(rep.violations("exclusion"), 0) << "seed " << seed << ": the lock held; the cache is what is wrong";
		return r.status == 1 && rep.violations("journal-seq") > 0;
	}, &seen);
	EXPECT_NE(shown, -1) << "no seed of the list showed a duplicate seq:\n" << seen;
}

/* Readers (read-only in 1.0.0) and a legacy journal copied once under the
 * lock change nothing. */
TEST(IntegAppend, NewRevisionWithReadersAndALegacyJournalPasses)
{
	ScratchDir d;
	CmdResult r = lockstorm("run -w append --param locked=1 --param rev=append --param read_pct=30 "
				"--param legacy_events=5 -p flock -n 4 --ops 2000 -q --dir " + d.sub("w") +
				" --json " + d.sub("r.json"));
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	Report rep(d.sub("r.json"));
	ASSERT_TRUE(rep.root);
	EXPECT_EQ(rep.violations("journal-seq"), 0) << rep.example("journal-seq");
	EXPECT_GT(rep.ops(), 0);
}

/* pidlock (quiver's own source lock) as the append lock: a live holder is
 * never swept, so the 1.0.0 journal stays gap-free and unique. */
TEST(IntegAppend, PidlockKeepsTheNewRevisionCorrect)
{
	ScratchDir d;
	CmdResult r = lockstorm("run -w append --param locked=1 --param rev=append -p pidlock "
				"--param wait_ms=5s -n 4 --ops 1500 -q --dir " + d.sub("w") + " --json " +
				d.sub("r.json"));
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	Report rep(d.sub("r.json"));
	ASSERT_TRUE(rep.root);
	EXPECT_EQ(rep.violations("exclusion"), 0) << rep.example("exclusion");
	EXPECT_EQ(rep.violations("own-release"), 0) << rep.example("own-release");
	EXPECT_EQ(rep.violations("journal-seq"), 0) << rep.example("journal-seq");
	EXPECT_GT(rep.total("acquired"), 0);
}

/* waitMs 0 (the origin's default): one try, busy under contention, never two holders. */
TEST(IntegAppend, PidlockSingleTryIsBusyNotUnsafe)
{
	ScratchDir d;
	CmdResult r = lockstorm("run -w hold -p pidlock -n 4 --ops 2000 -q --dir " + d.sub("w") + " --json " +
				d.sub("r.json"));
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	Report rep(d.sub("r.json"));
	ASSERT_TRUE(rep.root);
	EXPECT_EQ(rep.violations("exclusion"), 0) << rep.example("exclusion");
	EXPECT_GT(rep.total("acquired"), 0);
}

/* CLEAR judges (CS4: the recorded pid is dead) and then unlinks by name
 * (CS5): not atomic.  Holders crash after their record is written; clearers
 * stall between the judgement and the unlink, by which time another clearer
 * has removed the dead lock and taken a new one - which the stalled clearer
 * then removes, and takes the lock beside its holder. */
TEST(IntegAppend, PidlockClearRemovesANewHoldersLock)
{
	/* whether a clearer's stall meets another clearer is the machine's timing: a bounded list of
	 * seeds until one shows both (scenarios/pidlock-clear-race.cex.json shows them exactly) */
	ScratchDir d;
	bool shown = false;
	std::string seen;
	for (int seed : { 1, 2, 3, 4, 5, 6 }) {
		CmdResult r = lockstorm("run -w hold -p pidlock --param wait_ms=1s --param hold_ms=10ms -n 4 --ops 200 "
					"--fault 'crash@pidlock/acquire/after-close:p=0.1' "
					"--fault 'stall@pidlock/clear/after-kill:p=0.5,for=3ms' --respawn -q -s " +
					std::to_string(seed) + " --dir " + d.sub("w") + " --json " + d.sub("r.json"));
		Report rep(d.sub("r.json"));
		ASSERT_TRUE(rep.root) << r.err;
		EXPECT_GT(rep.total("crashes"), 0);
		EXPECT_GT(rep.total("stalls"), 0);
		seen += "seed " + std::to_string(seed) + ": " + r.out;
		/* own-release: the stalled clearer unlinked a live holder's lock */
		if (r.status == 1 && rep.violations("own-release") > 0 && rep.violations("exclusion") > 0) {
			shown = true;
			break;
		}
	}
	EXPECT_TRUE(shown) << seen;
}

/* K-JL-2, one writer and two readers (writers=1: no K-JL-1), under a kernel
 * lock; a fifth of the writer's journal appends are split after 10 bytes and
 * finished 2 ms later.  0.8.0's readers replay in that window and write the
 * replay - one event short, one parse failure over - to the snapshot file. */
static const std::string KJL2 =
	"-w append --param writers=1 --param locked=1 -p flock -n 3 "
	"--fault 'short-write@fs/write:p=0.2,bytes=10,for=2ms,path=*state.json' -q";

/* A reader must replay inside one of the writer's 2 ms windows, which the scheduler decides: a
 * bounded list of seeds until one shows it (the scenario readers-write-snapshot has the same list),
 * and the rest is checked on that seed's run. */
TEST(IntegAppend, KJL2LegacyReadersWriteAReplayOfAHalfWrittenJournal)
{
	ScratchDir d;
	CmdResult r;
	std::string seen, out, json;
	int seed = first_seed_showing({ 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 }, [&](int s, std::string *said) {
		std::string t = std::to_string(s);
		out = d.sub("out" + t);
		json = d.sub("r" + t + ".json");
		r = lockstorm("run --param rev=legacy --ops 600 -s " + t + " " + KJL2 + " --dir " + d.sub("w" + t) +
			      " -o " + out + " --json " + json);
		Report rep(json);
		*said = "exit " + std::to_string(r.status) + " " + r.out + r.err + " " + rep.example("journal-seq");
		/* the half-written journal's story, not another journal-seq (a writer
		 * starved to one append once gave "the final snapshot ... misses 1 event") */
		return r.status == 1 && rep.violations("journal-seq") > 0 &&
		       rep.example("journal-seq").find("wrote the snapshot from a half-written journal") != std::string::npos;
	}, &seen);
	ASSERT_NE(seed, -1) << "no seed of the list showed a reader's replay of a half-written journal:\n" << seen;
	EXPECT_EQ(r.status, 1) << r.out << r.err;
	Report rep(json);
	ASSERT_TRUE(rep.root);
	EXPECT_GT(rep.violations("journal-seq"), 0);
	std::string e = rep.example("journal-seq");
	EXPECT_NE(e.find("'s getSnapshot (op "), std::string::npos) << e;
	EXPECT_NE(e.find("wrote the snapshot from a half-written journal"), std::string::npos) << e;
	EXPECT_NE(e.find(", w0 op "), std::string::npos) << "the half-written line is the writer's: " << e;
	EXPECT_EQ(e.find("w0's getSnapshot"), std::string::npos) << "w0 only appends: " << e;
	others_held(rep, "journal-seq");

	/* check re-derives it from the kept journals, final journal and final snapshot */
	EXPECT_NE(slurp(out + "/final-snapshot.json").find("\"by\""), std::string::npos);
	CmdResult c = lockstorm("check -q " + out + " --json " + d.sub("c.json"));
	EXPECT_EQ(c.status, 1) << c.err;
	Report again(d.sub("c.json"));
	ASSERT_TRUE(again.root);
	EXPECT_EQ(again.violations("journal-seq"), rep.violations("journal-seq"));
}

/* The same writes under 1.0.0: its readers replay the half-written journal
 * too (the size moved, so the snapshot does not match), keep it in memory
 * only, and write nothing; the writer's PERSIST describes the whole line.
 * Reads are cheap here (a stat when nothing moved), so the run is longer for
 * the writer to get its share. */
TEST(IntegAppend, KJL2NewReadersWriteNothing)
{
	/* What must hold on every seed: no journal-seq violation, no reader
	 * writes a snapshot.  Whether a reader happened to replay inside one of
	 * the writer's 2 ms splits is the machine's timing (and so is how many
	 * appends the writer makes before the readers' ops run out): a bounded
	 * list of seeds, until one shows it. */
	ScratchDir d;
	std::string seen;
	int shown = first_seed_showing({ 1, 2, 3, 4, 5, 6, 7, 8 }, [&](int seed, std::string *said) {
		std::string tag = "s" + std::to_string(seed);
		CmdResult r = lockstorm("run --param rev=append --ops 20000 -s " + std::to_string(seed) + " " + KJL2 +
					" --dir " + d.sub(tag + "w") + " -o " + d.sub(tag + "out") + " --json " +
					d.sub(tag + "r.json"));
		EXPECT_EQ(r.status, 0) << "seed " << seed << ": " << r.out << r.err;
		Report rep(d.sub(tag + "r.json"));
		if (!rep.root) {
			ADD_FAILURE() << "seed " << seed << ": no report";
			return false;
		}
		EXPECT_EQ(rep.violations("journal-seq"), 0) << rep.example("journal-seq");

		/* the readers replayed while a line was half written: between a split
		 * (w0's short-write fault) and w0's append record */
		CmdResult dump = lockstorm("dump " + d.sub(tag + "out"));
		EXPECT_EQ(dump.status, 0) << dump.err;
		std::istringstream in(dump.out);
		std::string l;
		bool split = false;
		int splits = 0, replays_in_split = 0, wrote = 0;
		while (std::getline(in, l)) {
			bool w0 = l.find("\"worker\":0,") != std::string::npos;
			if (w0 && l.find("\"type\":\"fault\"") != std::string::npos) {
				split = true;
				splits++;
			} else if (w0 && l.find("\"type\":\"append\"") != std::string::npos) {
				split = false;
			} else if (!w0 && l.find("\"type\":\"read\"") != std::string::npos) {
				replays_in_split += split && l.find("\"b\":3,") != std::string::npos;
				wrote += l.find("\"c\":0}") == std::string::npos;
			}
		}
		EXPECT_EQ(wrote, 0) << "seed " << seed << ": 1.0.0's getSnapshot writes no snapshot";
		*said = std::to_string(rep.ops()) + " ops, " + std::to_string(splits) + " splits, " +
			std::to_string(replays_in_split) + " replays inside one";
		return rep.ops() > 0 && splits > 0 && replays_in_split > 0;
	}, &seen);
	EXPECT_NE(shown, -1) << "no seed showed a reader replaying a half-written journal:\n" << seen;
}

/* K-JL-3 (performance only, so no verdict and no timing): 0.8.0's
 * getSnapshot replays the whole journal on every read, so what one read
 * costs grows with the session; 1.0.0 replays once and then serves its cache
 * keyed by the journal's (path, size, mtime).  Counted from the journal
 * records: each read's source (EV_READ b: 1 cache, 2 snapshot, 3 replay) and,
 * for 0.8.0's reads that wrote their replay, the bytes replayed (c - 1).  One
 * worker, half reads: no other invariant is in play.  bench/journal-replay
 * has the ops/s. */
TEST(IntegAppend, KJL3LegacyReplaysTheWholeJournalOnEveryRead)
{
	for (const char *rev : { "legacy", "append" }) {
		ScratchDir d;
		CmdResult r = lockstorm(std::string("run -w append --param rev=") + rev +
					" --param read_pct=50 -p flock -n 1 --ops 1000 -s 1 -q --dir " + d.sub("w") +
					" -o " + d.sub("out"));
		EXPECT_EQ(r.status, 0) << rev << r.out << r.err;
		CmdResult dump = lockstorm("dump " + d.sub("out"));
		ASSERT_EQ(dump.status, 0) << dump.err;
		std::istringstream in(dump.out);
		std::string l;
		long reads = 0, replays = 0, first_bytes = -1, last_bytes = -1;
		while (std::getline(in, l)) {
			if (l.find("\"type\":\"read\",\"err\":null") == std::string::npos)
				continue;
			reads++;
			replays += l.find("\"b\":3,") != std::string::npos;
			size_t c = l.find("\"c\":");
			long bytes = c == std::string::npos ? 0 : std::stol(l.substr(c + 4)) - 1;
			if (bytes > 0) {
				if (first_bytes < 0)
					first_bytes = bytes;
				last_bytes = bytes;
			}
		}
		ASSERT_GT(reads, 100) << rev;
		if (!strcmp(rev, "legacy")) {
			EXPECT_EQ(replays, reads) << "every 0.8.0 read replays";
			EXPECT_GT(last_bytes, 100 * first_bytes) << "and the last replays the whole, long journal";
		} else {
			EXPECT_LE(replays, 1) << "1.0.0 replays once, then serves its cache";
			EXPECT_EQ(last_bytes, -1) << "and writes no snapshot when it reads";
		}
	}
}

/* A torn append (short-write with ENOSPC: the tear stays) glues the next
 * append's line onto it, and that line no longer parses.  Neither revision
 * repairs the tail (journal-seq: the append is not in the final journal),
 * and both count the lost event in the snapshot they write: 0.8.0 from its
 * cache, 1.0.0 from READ_STATE + apply, under __journalBytes = the journal's
 * exact size - so every 1.0.0 reader hydrates a snapshot with an event the
 * journal does not hold, against the comment "used only when it provably
 * describes the journal as it stands".  One worker, the tear on its 3rd
 * journal write: deterministic. */
TEST(IntegAppend, TornTailCountedInTheSnapshotByBothRevisions)
{
	for (const char *rev : { "legacy", "append" }) {
		ScratchDir d;
		CmdResult r = lockstorm(std::string("run -w append --param rev=") + rev +
					" --param locked=1 -p flock -n 1 --ops 20 -s 1 "
					"--fault 'short-write@fs/write:nth=3,bytes=10,path=*state.json' -q --dir " +
					d.sub("w") + " --json " + d.sub("r.json"));
		EXPECT_EQ(r.status, 1) << rev << r.out << r.err;
		Report rep(d.sub("r.json"));
		ASSERT_TRUE(rep.root);
		EXPECT_EQ(rep.violations("journal-seq"), 2) << rev;
		std::string all;
		size_t i;
		json_t *v;
		json_array_foreach(json_object_get(rep.inv("journal-seq"), "examples"), i, v)
			all += std::string(json_string_value(json_object_get(v, "text"))) + "\n";
		EXPECT_NE(all.find("w0's append of seq 3 (op 3"), std::string::npos) << rev << ": " << all;
		EXPECT_NE(all.find("it counts 1 event no parsed line of the journal holds"), std::string::npos)
			<< rev << ": " << all;
		EXPECT_NE(all.find(strcmp(rev, "append") ? "no __journalBytes" : "bytes (__journalBytes)"),
			  std::string::npos)
			<< rev << ": " << all;
	}
}

/* §9.3: 3.0.155 writers do not move tree.generation, so 3.0.157 readers keep
 * serving what they kept before the write.  A stale read needs a write between a reader's keep
 * and its next read, which the scheduler decides: a bounded list of seeds until one shows it
 * (scenarios/tree-generation-absent.cex.json shows it exactly). */
TEST(IntegGeneration, AbsentGenerationServesStaleReads)
{
	ScratchDir d;
	CmdResult r;
	std::string seen, json;
	int seed = first_seed_showing({ 1, 2, 3, 4, 5, 6 }, [&](int s, std::string *said) {
		std::string t = std::to_string(s);
		json = d.sub("r" + t + ".json");
		r = lockstorm("run -w generation --param rev=absent -p flock -n 3 --ops 20000 -q -s " + t + " --dir " +
			      d.sub("w" + t) + " --json " + json);
		Report rep(json);
		*said = "exit " + std::to_string(r.status) + " " + r.out + r.err;
		return r.status == 1 && rep.violations("stale-read") > 0;
	}, &seen);
	ASSERT_NE(seed, -1) << "no seed of the list showed a stale read:\n" << seen;
	EXPECT_EQ(r.status, 1) << r.out << r.err;
	Report rep(json);
	ASSERT_TRUE(rep.root);
	EXPECT_GT(rep.violations("stale-read"), 0);
	EXPECT_NE(rep.example("stale-read").find("from its cache"), std::string::npos)
		<< rep.example("stale-read");
	EXPECT_FALSE(rep.applicable("journal-seq"));
	others_held(rep, "stale-read");
}

TEST(IntegGeneration, GenerationBracketNeverServesStale)
{
	ScratchDir d;
	CmdResult r = lockstorm("run -w generation --param rev=generation -p flock -n 3 --ops 20000 -q --dir " +
				d.sub("w") + " --json " + d.sub("r.json"));
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	Report rep(d.sub("r.json"));
	ASSERT_TRUE(rep.root);
	EXPECT_TRUE(rep.applicable("stale-read"));
	EXPECT_EQ(rep.violations("stale-read"), 0) << rep.example("stale-read");
	EXPECT_GT(rep.total("committed"), 0);
}

/* GEN_AFTER_OWN_WRITE (§6.3): a writer keeps what it wrote under the
 * generation after its write only when that grew by exactly its own two
 * bytes.  Three writers that also read, without the history lock (locked=0),
 * so another writer's bracket can land inside one's write: with the size
 * test no read is stale, and writers do serve their own kept writes (b 2);
 * without it (own_keep=2, the broken control) they serve stale ones. */
static const std::string GEN_OWN =
	"-w generation --param rev=generation --param writers=3 --param writer_reads=50 --param locked=0 "
	"-p flock -n 3 --ops 20000 -q";

TEST(IntegGeneration, GenAfterOwnWriteKeepsOnlyAWriteThatIsItsOwnTwoBytes)
{
	ScratchDir d;
	CmdResult r = lockstorm("run --param own_keep=1 -s 1 " + GEN_OWN + " --dir " + d.sub("w") + " -o " + d.sub("out") +
				" --json " + d.sub("r.json"));
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	Report rep(d.sub("r.json"));
	ASSERT_TRUE(rep.root);
	EXPECT_EQ(rep.violations("stale-read"), 0) << rep.example("stale-read");
	CmdResult dump = lockstorm("dump " + d.sub("out"));
	ASSERT_EQ(dump.status, 0) << dump.err;
	size_t own = 0;
	for (size_t at = 0; (at = dump.out.find("\"type\":\"read\",\"err\":null", at)) != std::string::npos; at++) {
		size_t eol = dump.out.find('\n', at);
		own += dump.out.substr(at, eol - at).find("\"b\":2,") != std::string::npos;
	}
	EXPECT_GT(own, 0u) << "writers served their own kept writes";
}

/* Another writer's bracket must land inside one's write, which the scheduler decides: a bounded
 * list of seeds until one shows the stale read. */
TEST(IntegGeneration, KeepingOwnWriteWithoutTheSizeTestServesStale)
{
	ScratchDir d;
	CmdResult r;
	std::string seen, json;
	int seed = first_seed_showing({ 1, 2, 3, 4, 5, 6 }, [&](int s, std::string *said) {
		std::string t = std::to_string(s);
		json = d.sub("r" + t + ".json");
		r = lockstorm("run --param own_keep=2 -s " + t + " " + GEN_OWN + " --dir " + d.sub("w" + t) + " --json " +
			      json);
		Report rep(json);
		*said = "exit " + std::to_string(r.status) + " " + r.out + r.err;
		return r.status == 1 && rep.violations("stale-read") > 0;
	}, &seen);
	ASSERT_NE(seed, -1) << "no seed of the list showed a stale read:\n" << seen;
	EXPECT_EQ(r.status, 1) << r.out << r.err;
	Report rep(json);
	ASSERT_TRUE(rep.root);
	EXPECT_GT(rep.violations("stale-read"), 0);
	EXPECT_NE(rep.example("stale-read").find("from its cache"), std::string::npos) << rep.example("stale-read");
	others_held(rep, "stale-read");
}

/* The claim as the spec states it: writers holding the history lock. */
TEST(IntegGeneration, GenAfterOwnWriteUnderTheHistoryLockNeverServesStale)
{
	ScratchDir d;
	CmdResult r = lockstorm("run -w generation --param rev=generation --param own_keep=1 --param writers=2 "
				"--param writer_reads=50 -p flock -n 3 --ops 20000 -s 1 -q --dir " + d.sub("w") +
				" --json " + d.sub("r.json"));
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	Report rep(d.sub("r.json"));
	ASSERT_TRUE(rep.root);
	EXPECT_EQ(rep.violations("stale-read"), 0) << rep.example("stale-read");
	EXPECT_GT(rep.total("committed"), 0);
}

/* READ_KEPT (§6.3) on the branch pointer: a small file kept by its own lstat
 * facts, not the generation.  Its admitted bound is "a rewrite to the same
 * size on the same or a reused inode within one tick of the file system's
 * clock": in-place rewrites of {"v":N} (the same size for most N) on a file
 * system with 1 s times (coarse-mtime, as FAT or SMB report) are served
 * stale.  One writer, two readers. */
static const std::string KEPT =
	"-w generation --param target=branch --param writers=1 -p flock -n 3 --ops 20000 -q";

static size_t dump_count(const std::string &dump, const std::string &needle)
{
	size_t n = 0;
	for (size_t at = 0; (at = dump.find(needle, at)) != std::string::npos; at++)
		n++;
	return n;
}

/* A same-size rewrite must come between a reader's two reads within one tick, which the scheduler
 * decides: a bounded list of seeds until one shows the stale read. */
TEST(IntegGeneration, KeptSmallFileServesStaleOnASameSizeRewriteWithinOneTick)
{
	ScratchDir d;
	CmdResult r;
	std::string seen, json;
	int seed = first_seed_showing({ 1, 2, 3, 4, 5, 6 }, [&](int s, std::string *said) {
		std::string t = std::to_string(s);
		json = d.sub("r" + t + ".json");
		r = lockstorm("run " + KEPT + " -s " + t + " --param write=inplace --param pad=none "
			      "--fault coarse-mtime:res=1s --dir " + d.sub("w" + t) + " --json " + json);
		Report rep(json);
		*said = "exit " + std::to_string(r.status) + " " + r.out + r.err;
		return r.status == 1 && rep.violations("stale-read") > 0;
	}, &seen);
	ASSERT_NE(seed, -1) << "no seed of the list showed a stale read:\n" << seen;
	EXPECT_EQ(r.status, 1) << r.out << r.err;
	Report rep(json);
	ASSERT_TRUE(rep.root);
	EXPECT_GT(rep.violations("stale-read"), 0);
	EXPECT_NE(rep.example("stale-read").find("from its cache"), std::string::npos) << rep.example("stale-read");
	others_held(rep, "stale-read");
}

/* Outside the bound READ_KEPT is exact: every rewrite a new size (pad=grow),
 * in place or tmp + rename, a fifth of the writes REMOVEs, the same 1 s
 * times.  Readers serve kept answers (b 1). */
TEST(IntegGeneration, KeptSmallFileIsExactWhenEveryRewriteHasANewSize)
{
	for (const char *write : { "inplace", "atomic" }) {
		/* on every seed: no stale read, and writes committed; that the readers
		 * read at all and served kept answers meanwhile is the scheduler's
		 * (a machine starved by other jobs once gave them no read): seeds
		 * until one shows it */
		ScratchDir d;
		std::string seen;
		int shown = first_seed_showing({ 1, 2, 3, 4, 5, 6 }, [&](int seed, std::string *said) {
			std::string t = std::to_string(seed);
			CmdResult r = lockstorm("run " + KEPT + " -s " + t + " --param write=" + write +
						" --param pad=grow --param remove_pct=20 --fault coarse-mtime:res=1s --dir " +
						d.sub("w" + t) + " -o " + d.sub("out" + t) + " --json " + d.sub("r" + t + ".json"));
			EXPECT_EQ(r.status, 0) << write << r.out << r.err;
			Report rep(d.sub("r" + t + ".json"));
			if (!rep.root) {
				ADD_FAILURE() << write << " seed " << seed << ": no report";
				return false;
			}
			EXPECT_EQ(rep.violations("stale-read"), 0) << write << ": " << rep.example("stale-read");
			EXPECT_GT(rep.total("committed"), 0) << write;
			CmdResult dump = lockstorm("dump " + d.sub("out" + t));
			EXPECT_EQ(dump.status, 0) << dump.err;
			size_t reads = dump_count(dump.out, "\"type\":\"read\",\"err\":null,\"a\":");
			size_t kept = dump_count(dump.out, ",\"b\":1,\"c\":0}");
			*said = std::to_string(reads) + " reads, " + std::to_string(kept) + " kept answers";
			return reads > 0 && kept > 0;
		}, &seen);
		EXPECT_NE(shown, -1) << write << ": no seed had its readers serve kept answers:\n" << seen;
		/* whether a reader happens to look while the file is removed depends on the
		 * scheduler, so it is not asserted (a clean CI run once saw none) */
	}
}

/* "What is kept is never newer than its key": keyed by a second lstat after
 * the read (kept_key=after, the broken control), a rewrite inside the read
 * is kept under its own key and served stale; keyed before, never.  A stall
 * after the read widens the window for both alike.  Whether a rewrite lands
 * in that window is the scheduler's doing: the broken control tries a
 * bounded list of seeds until one shows it. */
TEST(IntegGeneration, KeptSmallFileKeyedAfterItsReadServesStale)
{
	const std::string opts = KEPT + " --param pad=grow --fault 'stall@generation/read/after-kept-read:p=0.2,for=1ms'";
	{
		ScratchDir d;
		std::string seen;
		int seed = first_seed_showing({ 1, 2, 3, 4, 5, 6 }, [&](int s, std::string *said) {
			std::string t = std::to_string(s);
			CmdResult r = lockstorm("run " + opts + " -s " + t + " --param kept_key=after --dir " + d.sub("w" + t) +
						" --json " + d.sub("r" + t + ".json"));
			Report rep(d.sub("r" + t + ".json"));
			*said = "exit " + std::to_string(r.status) + " " + r.out + r.err;
			return r.status == 1 && rep.violations("stale-read") > 0;
		}, &seen);
		EXPECT_NE(seed, -1) << "no seed of the list showed a stale read:\n" << seen;
	}
	{
		ScratchDir d;
		CmdResult r = lockstorm("run " + opts + " -s 1 --param kept_key=before --dir " + d.sub("w") + " --json " +
					d.sub("r.json"));
		EXPECT_EQ(r.status, 0) << r.out << r.err;
	}
}
