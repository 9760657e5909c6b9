/* integ_checkdamage - `lockstorm check` refuses what it cannot judge: a run
 * that never ended, a missing worker journal, a journal damaged in the middle
 * or cut short: `verdict: INCOMPLETE (why)`, exit 4 (or exit 2/3 with a
 * reason), never PASS and never a violation built on damaged data.  A torn
 * tail of a killed worker stays legal.  Then copies of one kept run damaged
 * at random (flipped bytes, truncation, a deleted journal, random fill), from
 * a fixed list of seeds: LS_DAMAGE_COPIES of them (default 60; ci/fuzz's
 * nightly asks for 600). */
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "testutil.h"

static const std::string BIN = LOCKSTORM_BIN;
static const size_t REC = 64;

namespace {

/* One kept run, made once for the whole suite: it passes. */
struct KeptRun {
	ScratchDir d;
	std::string out;
	KeptRun()
	{
		out = d.sub("out");
		CmdResult r = run_cmd(BIN + " run -q -p mkdir-owner -n 3 --ops 12 -s 3 -o '" + out + "'");
		EXPECT_EQ(r.status, 0) << r.err;
	}
};

KeptRun &kept()
{
	static KeptRun k;
	return k;
}

/* A fresh copy of the kept run; the whole tree (journal/ included). */
std::string copy_of(const ScratchDir &d)
{
	std::string c = d.sub("copy");
	CmdResult r = run_cmd("cp -a '" + kept().out + "' '" + c + "'");
	EXPECT_EQ(r.status, 0) << r.err;
	return c;
}

/* The bytes of a journal up to its last non-zero byte (mapped journals end in zeros). */
size_t used_len(const std::string &s)
{
	size_t n = s.size();
	while (n && !s[n - 1])
		n--;
	return (n + REC - 1) / REC * REC;
}

CmdResult check(const std::string &dir)
{
	return run_cmd(BIN + " check -q '" + dir + "'");
}

bool incomplete(const CmdResult &r)
{
	return r.status == 4 && r.out.find("verdict: INCOMPLETE (") != std::string::npos;
}

uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

} // namespace

TEST(CheckDamage, TheKeptRunPasses)
{
	CmdResult r = check(kept().out);
	EXPECT_EQ(r.status, 0) << r.out << r.err;
}

TEST(CheckDamage, ARunWithoutItsEndRecordIsIncomplete)
{
	ScratchDir d;
	std::string c = copy_of(d);
	/* the driver's journal as a SIGKILLed driver leaves it: no EV_STOP (nor anything after) */
	put(c + "/journal/driver.bin", "");
	unlink((c + "/final-state.json").c_str());
	CmdResult r = check(c);
	EXPECT_TRUE(incomplete(r)) << r.status << r.out << r.err;
	EXPECT_NE(r.out.find("did not finish"), std::string::npos) << r.out;
}

TEST(CheckDamage, AMissingWorkerJournalIsIncomplete)
{
	ScratchDir d;
	std::string c = copy_of(d);
	ASSERT_EQ(unlink((c + "/journal/w0001.bin").c_str()), 0);
	CmdResult r = check(c);
	EXPECT_TRUE(incomplete(r)) << r.status << r.out << r.err;
	EXPECT_NE(r.out.find("w0001.bin is missing"), std::string::npos) << r.out;
}

TEST(CheckDamage, AChecksumFailureInTheMiddleIsIncomplete)
{
	ScratchDir d;
	std::string c = copy_of(d), p = c + "/journal/w0002.bin", j = slurp(p);
	ASSERT_GE(used_len(j), 4 * REC);
	j[REC + 20] ^= 0x40; /* a payload byte of the second record */
	put(p, j);
	CmdResult r = check(c);
	EXPECT_TRUE(incomplete(r)) << r.status << r.out << r.err;
	EXPECT_NE(r.out.find("w0002.bin is damaged"), std::string::npos) << r.out;
}

TEST(CheckDamage, AJournalCutShortOfItsExitIsIncomplete)
{
	ScratchDir d;
	std::string c = copy_of(d), p = c + "/journal/w0000.bin", j = slurp(p);
	put(p, j.substr(0, used_len(j) - 2 * REC)); /* two whole records gone: no torn bytes at all */
	CmdResult r = check(c);
	EXPECT_TRUE(incomplete(r)) << r.status << r.out << r.err;
	EXPECT_NE(r.out.find("before its worker exited"), std::string::npos) << r.out;
}

/* A SIGKILLed worker's torn tail is no damage: the run is still judged. */
TEST(CheckDamage, ATornTailOfAKilledWorkerStaysLegal)
{
	ScratchDir d;
	std::string out = d.sub("out");
	CmdResult r = run_cmd(BIN + " run -q -p mkdir-owner -n 2 --ops 6 --fault 'crash@fs/rename:nth=2,workers=1' -o '" +
			      out + "'");
	ASSERT_EQ(r.status, 0) << r.err;
	std::string p = out + "/journal/w0001.bin", j = slurp(p);
	size_t used = used_len(j);
	ASSERT_GE(used, 2 * REC);
	put(p, j.substr(0, used) + std::string(REC / 2, '\x5a')); /* half a record after the last one */
	r = check(out);
	EXPECT_EQ(r.status, 0) << r.out << r.err;
}

/* Copies of the kept run, damaged at random: never a PASS of a damaged
 * journal that lost something, never a violation (the run has none). */
TEST(CheckDamage, RandomDamageIsNeverPassedNorBlamed)
{
	const char *env = getenv("LS_DAMAGE_COPIES");
	unsigned copies = env ? (unsigned)strtoul(env, nullptr, 10) : 60;
	const char *names[] = { "w0000.bin", "w0001.bin", "w0002.bin", "driver.bin" };
	unsigned by_status[8] = { 0 };
	for (unsigned seed = 1; seed <= copies; seed++) {
		uint64_t s = seed * 7919u;
		ScratchDir d;
		std::string c = copy_of(d);
		std::string name = names[splitmix(&s) % 4], p = c + "/journal/" + name, j = slurp(p), orig = j;
		size_t used = used_len(j);
		unsigned how = (unsigned)(splitmix(&s) % 4);
		std::string what;
		switch (how) {
		case 0: { /* flip 1-4 bytes among the records */
			unsigned k = 1 + (unsigned)(splitmix(&s) % 4);
			for (unsigned i = 0; i < k && used; i++)
				j[splitmix(&s) % used] ^= (char)(1u << (splitmix(&s) % 8));
			put(p, j);
			what = "flipped " + std::to_string(k);
			break;
		}
		case 1: /* truncate somewhere inside the records */
			put(p, j.substr(0, used ? splitmix(&s) % used : 0));
			what = "truncated";
			break;
		case 2:
			unlink(p.c_str());
			what = "deleted";
			break;
		default: { /* random bytes, of its size or of a random one */
			size_t len = splitmix(&s) % 2 ? j.size() : splitmix(&s) % 8192;
			std::string f(len, 0);
			for (size_t i = 0; i < len; i++)
				f[i] = (char)splitmix(&s);
			put(p, f);
			what = "filled";
			break;
		}
		}
		CmdResult r = check(c);
		SCOPED_TRACE("seed " + std::to_string(seed) + ": " + name + " " + what);
		EXPECT_NE(r.status, 1) << r.out << r.err; /* the undamaged run has no violation */
		EXPECT_TRUE(r.status == 0 || r.status == 2 || r.status == 3 || r.status == 4) << r.status << r.err;
		if (r.status == 0) { /* a pass only where the damage undid itself (two flips of one bit) */
			EXPECT_TRUE(how == 0 && slurp(p) == orig) << r.out;
		}
		EXPECT_EQ(r.err.find("Sanitizer"), std::string::npos) << r.err;
		by_status[r.status < 8 ? r.status : 7]++;
	}
	printf("damaged copies: %u; exit 0: %u, 2: %u, 3: %u, 4: %u\n", copies, by_status[0], by_status[2],
	       by_status[3], by_status[4]);
}
