/* unit_journal_fast.cc - the readers' fast paths give the slow path's answer:
 * journal_valid_run against journal_valid record by record, a file's stream
 * against a reference reader, the cursor's merge (a record or a run at a
 * time) against a reference merge;
 * on varied inputs: both formats and a mix, bad checksums, bad magic and
 * type, torn tails, zero tails, equal seqs across files. */
#include <gtest/gtest.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "testutil.h"

extern "C" {
#include "core/journal.h"
}

namespace {

/* splitmix64: a fixed sequence, so a failure reproduces */
struct Rng {
	uint64_t s;
	uint64_t next()
	{
		uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		return z ^ (z >> 31);
	}
	unsigned below(unsigned n) { return (unsigned)(next() % n); }
};

/* A valid record of format FMT (1 or 2) with random fields. */
jrec make_rec(Rng &g, int fmt, uint64_t seq)
{
	jrec r;
	memset(&r, 0, sizeof r);
	r.type = (uint16_t)(1 + g.below(EV__COUNT - 1));
	r.worker = (uint16_t)g.below(4);
	r.pid = (int32_t)g.next();
	r.op = (uint32_t)g.next();
	r.err = (int32_t)g.below(3);
	r.seq = seq;
	r.ns = g.next();
	r.a = (int64_t)g.next();
	r.b = (int64_t)g.next();
	r.c = (int64_t)g.next();
	r.magic = fmt == 1 ? JOURNAL_MAGIC_V1 : JOURNAL_MAGIC;
	r.pad = 0;
	r.check = journal_checksum(&r);
	return r;
}

/* Damage R one of the ways a reader must catch. */
void spoil(Rng &g, jrec &r)
{
	switch (g.below(6)) {
	case 0: /* a payload bit, checksum left as it was */
		((unsigned char *)&r)[g.below(60)] ^= (unsigned char)(1u << g.below(8));
		break;
	case 1:
		r.check ^= 1u << g.below(32);
		break;
	case 2: /* a bad type, checksum made to match */
		r.type = g.below(2) ? (uint16_t)EV_NONE : (uint16_t)(EV__COUNT + g.below(100));
		r.check = journal_checksum(&r);
		break;
	case 3: /* a foreign magic, checksum made to match */
		r.magic = 0x1234;
		r.check = journal_checksum(&r);
		break;
	case 4: /* the other format's magic over this format's checksum */
		r.magic = r.magic == JOURNAL_MAGIC ? JOURNAL_MAGIC_V1 : JOURNAL_MAGIC;
		break;
	default:
		memset(&r, 0, sizeof r);
		break;
	}
}

size_t slow_run(const jrec *r, size_t n)
{
	size_t i = 0;
	while (i < n && journal_valid(&r[i]))
		i++;
	return i;
}

/* Records of a file whose format is 1, 2 or (0) each record's own. */
std::vector<jrec> make_recs(Rng &g, size_t n, int fmt, uint64_t seq0, unsigned seq_step)
{
	std::vector<jrec> v;
	uint64_t seq = seq0;
	for (size_t i = 0; i < n; i++) {
		v.push_back(make_rec(g, fmt ? fmt : 1 + (int)g.below(2), seq));
		seq += seq_step ? 1 + g.below(seq_step) : 0;
	}
	return v;
}

/* The reference reader: records while journal_valid says so, then the torn
 * tail: bytes up to the last non-zero one (a zero tail is not torn). */
void slow_read(const std::string &bytes, std::vector<jrec> *recs, size_t *torn)
{
	size_t pos = 0;
	recs->clear();
	while (bytes.size() - pos >= sizeof(jrec)) {
		jrec r;
		memcpy(&r, bytes.data() + pos, sizeof r);
		if (!journal_valid(&r))
			break;
		recs->push_back(r);
		pos += sizeof r;
	}
	*torn = 0;
	for (size_t i = pos; i < bytes.size(); i++)
		if (bytes[i])
			*torn = i - pos + 1;
}

/* A file's bytes: N good records, then one of the tails a reader meets. */
std::string make_file(Rng &g, size_t n, uint64_t seq0, unsigned seq_step, int *tail_kind)
{
	int fmt = (int)g.below(3);
	std::vector<jrec> v = make_recs(g, n, fmt, seq0, seq_step);
	std::string b((const char *)v.data(), v.size() * sizeof(jrec));
	uint64_t after = seq0 + n * (seq_step ? seq_step : 1);
	int kind = (int)g.below(7);
	*tail_kind = kind;
	switch (kind) {
	case 0: /* none */
		break;
	case 1: { /* a record cut short */
		jrec r = make_rec(g, fmt ? fmt : 2, after);
		b.append((const char *)&r, 1 + g.below(sizeof r - 1));
		break;
	}
	case 2: { /* a spoiled record, then good ones: damage, more than a tail */
		jrec r = make_rec(g, fmt ? fmt : 1, after);
		spoil(g, r);
		b.append((const char *)&r, sizeof r);
		std::vector<jrec> more = make_recs(g, 1 + g.below(20), fmt, after + 1, 1);
		b.append((const char *)more.data(), more.size() * sizeof(jrec));
		break;
	}
	case 3: /* a mapped journal's zero tail */
		b.append(sizeof(jrec) * (1 + g.below(40)), '\0');
		break;
	case 4: { /* zeros with a torn record in them */
		b.append(sizeof(jrec) * g.below(3), '\0');
		jrec r = make_rec(g, 2, after);
		b.append((const char *)&r, 1 + g.below(sizeof r - 1));
		b.append(g.below(200), '\0');
		break;
	}
	case 5: /* garbage */
		for (unsigned k = 1 + g.below(300); k; k--)
			b.push_back((char)(1 + g.below(255)));
		break;
	default: { /* a spoiled last record */
		jrec r = make_rec(g, fmt ? fmt : 2, after);
		spoil(g, r);
		b.append((const char *)&r, sizeof r);
		break;
	}
	}
	return b;
}

void put_file(const std::string &path, const std::string &bytes)
{
	int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ASSERT_GE(fd, 0) << strerror(errno);
	ASSERT_EQ(write(fd, bytes.data(), bytes.size()), (ssize_t)bytes.size());
	close(fd);
}

bool same(const jrec &a, const jrec &b)
{
	return memcmp(&a, &b, sizeof a) == 0;
}

} // namespace

TEST(JournalFast, ValidRunCountsWhatJournalValidCounts)
{
	Rng g{ 1 };
	for (int trial = 0; trial < 3000; trial++) {
		size_t n = g.below(trial < 100 ? 20 : 90);
		std::vector<jrec> v = make_recs(g, n, (int)g.below(3), 1, 3);
		/* none, one or a few spoiled records anywhere */
		for (unsigned k = g.below(4); k && n; k--)
			spoil(g, v[g.below((unsigned)n)]);
		for (size_t from = 0; from <= n; from += 1 + g.below(9)) {
			size_t want = slow_run(v.data() + from, n - from);
			EXPECT_EQ(journal_valid_run(v.data() + from, n - from), want)
				<< "trial " << trial << " from " << from << " of " << n;
		}
	}
}

TEST(JournalFast, ValidRunFindsEveryPositionOfOneBadRecord)
{
	Rng g{ 2 };
	for (int fmt = 0; fmt <= 2; fmt++) {
		std::vector<jrec> v = make_recs(g, 41, fmt, 100, 1);
		EXPECT_EQ(journal_valid_run(v.data(), v.size()), v.size());
		for (size_t bad = 0; bad < v.size(); bad++) {
			jrec keep = v[bad];
			spoil(g, v[bad]);
			EXPECT_EQ(journal_valid_run(v.data(), v.size()), slow_run(v.data(), v.size()))
				<< "format " << fmt << " bad at " << bad;
			v[bad] = keep;
		}
	}
}

TEST(JournalFast, FileStreamReadsWhatTheReferenceReaderReads)
{
	Rng g{ 3 };
	ScratchDir d;
	std::string path = d.sub("w0000.bin");
	for (int trial = 0; trial < 120; trial++) {
		/* sizes around the 32 KiB read buffer (512 records) and its multiples */
		static const size_t sizes[] = { 0, 1, 7, 8, 9, 511, 512, 513, 1023, 1024, 1500 };
		size_t n = trial < 44 ? sizes[trial % 11] : g.below(2000);
		int kind;
		std::string bytes = make_file(g, n, 1 + g.below(5), 2, &kind);
		put_file(path, bytes);
		std::vector<jrec> want;
		size_t want_torn;
		slow_read(bytes, &want, &want_torn);

		struct jrec *got = nullptr;
		size_t k = 0, torn = 0;
		ASSERT_EQ(journal_read_file(path.c_str(), &got, &k, &torn), 0);
		ASSERT_EQ(k, want.size()) << "trial " << trial << " tail " << kind;
		for (size_t i = 0; i < k; i++)
			ASSERT_TRUE(same(got[i], want[i])) << "trial " << trial << " record " << i;
		EXPECT_EQ(torn, want_torn) << "trial " << trial << " tail " << kind;
		free(got);
	}
}

TEST(JournalFast, CursorMergesAsTheReferenceMergeDoes)
{
	Rng g{ 4 };
	for (int trial = 0; trial < 60; trial++) {
		ScratchDir d;
		ASSERT_EQ(mkdir(d.sub("journal").c_str(), 0755), 0);
		unsigned nfiles = 1 + g.below(5);
		/* (seq, file, index in file): the order the merge must give, ties by file */
		struct Key {
			uint64_t seq;
			unsigned file;
			size_t i;
		};
		std::vector<Key> keys;
		std::vector<std::vector<jrec>> per(nfiles);
		size_t want_torn = 0;
		std::string want_damaged;
		for (unsigned f = 0; f < nfiles; f++) {
			int kind;
			/* small seq steps: runs of one file interleave with the others,
			 * and equal seqs across files happen */
			std::string bytes = make_file(g, g.below(trial < 30 ? 60 : 1600), 1, 1 + g.below(6), &kind);
			char name[32];
			snprintf(name, sizeof name, "journal/w%04u.bin", f);
			put_file(d.sub(name), bytes);
			size_t t;
			slow_read(bytes, &per[f], &t);
			want_torn += t;
			if (want_damaged.empty() && t > sizeof(jrec))
				want_damaged = std::string(name) + " is damaged";
			for (size_t i = 0; i < per[f].size(); i++)
				keys.push_back({ per[f][i].seq, f, i });
		}
		std::stable_sort(keys.begin(), keys.end(), [](const Key &a, const Key &b) {
			return a.seq != b.seq ? a.seq < b.seq : a.file < b.file;
		});

		struct journal_cursor *c;
		unsigned files = 0;
		ASSERT_EQ(journal_cursor_open(d.path.c_str(), &c, &files), 0);
		EXPECT_EQ(files, nfiles);
		const struct jrec *r;
		size_t at = 0, n;
		int rc;
		/* one record at a time, runs, or the two mixed */
		int how = trial % 3;
		while ((rc = how == 0 || (how == 2 && g.below(2)) ? (n = 1, journal_cursor_next(c, &r))
								 : journal_cursor_run(c, &r, &n)) == 1) {
			ASSERT_GE(n, 1u);
			for (size_t i = 0; i < n; i++) {
				ASSERT_LT(at, keys.size()) << "trial " << trial;
				const Key &k = keys[at++];
				ASSERT_TRUE(same(r[i], per[k.file][k.i])) << "trial " << trial << " record " << at - 1;
			}
		}
		EXPECT_EQ(rc, 0);
		EXPECT_EQ(at, keys.size()) << "trial " << trial;
		size_t torn = 0;
		char damaged[200];
		EXPECT_EQ(journal_cursor_finish(c, &torn, damaged, sizeof damaged), 1);
		EXPECT_EQ(torn, want_torn) << "trial " << trial;
		EXPECT_EQ(std::string(damaged).substr(0, want_damaged.size()), want_damaged) << "trial " << trial;
		EXPECT_EQ(damaged[0] != 0, !want_damaged.empty()) << "trial " << trial;
		journal_cursor_close(c);
	}
}
