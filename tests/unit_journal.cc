/* unit_journal.cc - journal records: write, read back, torn tails, merge, dump. */
#include <gtest/gtest.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include <string>
#include <vector>

#include "testutil.h"

extern "C" {
#include "core/arena.h"
#include "core/journal.h"
#include "core/prng.h"
}

namespace {

/* Journal N records of worker W into PATH: op i, a = i, b = -i, c = 7. */
void write_n(const std::string &path, unsigned w, unsigned n)
{
	struct journal j;
	ASSERT_EQ(journal_open(&j, path.c_str(), w), 0) << strerror(errno);
	for (unsigned i = 0; i < n; i++)
		ASSERT_NE(journal_log(&j, EV_ATTEMPT + (int)(i % 12), i, 0, i, -(int64_t)i, 7), 0u);
	journal_close(&j);
}

struct Read {
	std::vector<jrec> recs;
	size_t torn = 0;
	int rc = 0;
};

Read read_file(const std::string &path)
{
	Read out;
	struct jrec *r = nullptr;
	size_t n = 0;
	out.rc = journal_read_file(path.c_str(), &r, &n, &out.torn);
	if (r)
		out.recs.assign(r, r + n);
	free(r);
	return out;
}

void append_bytes(const std::string &path, const void *buf, size_t len)
{
	int fd = open(path.c_str(), O_WRONLY | O_APPEND);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

/* A journal with a fixed seq (journal_write keeps seq/ns as given). */
void write_seqs(const std::string &path, unsigned w, const std::vector<uint64_t> &seqs)
{
	struct journal j;
	ASSERT_EQ(journal_open(&j, path.c_str(), w), 0);
	for (uint64_t s : seqs) {
		struct jrec r;
		memset(&r, 0, sizeof r);
		r.type = EV_STEP;
		r.worker = (uint16_t)w;
		r.seq = s;
		r.ns = s * 1000;
		ASSERT_EQ(journal_write(&j, &r), 0);
	}
	journal_close(&j);
}

} // namespace

TEST(Journal, TypeNamesRoundTrip)
{
	for (int t = EV_NONE + 1; t < EV__COUNT; t++) {
		const char *name = journal_type_name(t);
		ASSERT_STRNE(name, "unknown") << t;
		EXPECT_EQ(journal_type_from_name(name), t) << name;
	}
	EXPECT_STREQ(journal_type_name(EV_ACQUIRED), "acquired");
	EXPECT_STREQ(journal_type_name(EV_ACQUIRE_ERROR), "acquire-error");
	EXPECT_STREQ(journal_type_name(EV_STOP), "stop");
	EXPECT_STREQ(journal_type_name(EV__COUNT), "unknown");
	EXPECT_STREQ(journal_type_name(-1), "unknown");
	EXPECT_EQ(journal_type_from_name("no-such-event"), -1);
	EXPECT_EQ(journal_type_from_name("none"), -1);
	EXPECT_EQ(journal_type_from_name(nullptr), -1);
}

TEST(Journal, RoundTrip)
{
	ScratchDir d;
	std::string path = d.sub("w0003.bin");
	struct journal j;
	ASSERT_EQ(journal_open(&j, path.c_str(), 3), 0);
	uint64_t s1 = journal_log(&j, EV_ATTEMPT, 5, 0, 0, 0, 0);
	uint64_t s2 = journal_log(&j, EV_ACQUIRE_ERROR, 5, ENOENT, 11, -22, 33);
	uint64_t s3 = journal_log(&j, EV_FAULT, 6, 0, 2, INT64_MAX, INT64_MIN);
	journal_close(&j);
	EXPECT_LT(s1, s2);
	EXPECT_LT(s2, s3);

	Read rd = read_file(path);
	ASSERT_EQ(rd.rc, 0);
	ASSERT_EQ(rd.recs.size(), 3u);
	EXPECT_EQ(rd.torn, 0u);
	const jrec &r = rd.recs[1];
	EXPECT_EQ(r.type, EV_ACQUIRE_ERROR);
	EXPECT_EQ(r.worker, 3);
	EXPECT_EQ(r.pid, (int32_t)getpid());
	EXPECT_EQ(r.op, 5u);
	EXPECT_EQ(r.err, ENOENT);
	EXPECT_EQ(r.seq, s2);
	EXPECT_EQ(r.a, 11);
	EXPECT_EQ(r.b, -22);
	EXPECT_EQ(r.c, 33);
	EXPECT_EQ(r.magic, JOURNAL_MAGIC);
	EXPECT_TRUE(journal_valid(&r));
	EXPECT_GT(r.ns, 0u);
	EXPECT_LE(rd.recs[0].ns, rd.recs[1].ns);
	EXPECT_EQ(rd.recs[2].b, INT64_MAX);
	EXPECT_EQ(rd.recs[2].c, INT64_MIN);
}

TEST(Journal, LogPreservesErrno)
{
	ScratchDir d;
	struct journal j;
	ASSERT_EQ(journal_open(&j, d.sub("w.bin").c_str(), 0), 0);
	errno = EXDEV;
	EXPECT_NE(journal_log(&j, EV_WRITE_ERROR, 0, EXDEV, 0, 0, 0), 0u);
	EXPECT_EQ(errno, EXDEV);
	journal_close(&j);
	/* a closed journal writes nothing, says 0, and still leaves errno alone */
	errno = EPERM;
	EXPECT_EQ(journal_log(&j, EV_ATTEMPT, 0, 0, 0, 0, 0), 0u);
	EXPECT_EQ(errno, EPERM);
}

TEST(Journal, OpenFailsWithErrno)
{
	struct journal j;
	errno = 0;
	EXPECT_EQ(journal_open(&j, "/nonexistent-dir/x/w.bin", 0), -1);
	EXPECT_EQ(errno, ENOENT);
	EXPECT_EQ(j.fd, -1);
}

TEST(Journal, SequenceSourceIsReplaceable)
{
	static uint64_t next;
	next = 1000;
	uint64_t (*saved)(void) = journal_next_seq;
	journal_next_seq = [] { return next++; };
	ScratchDir d;
	struct journal j;
	ASSERT_EQ(journal_open(&j, d.sub("w.bin").c_str(), 1), 0);
	EXPECT_EQ(journal_log(&j, EV_ATTEMPT, 0, 0, 0, 0, 0), 1000u);
	EXPECT_EQ(journal_log(&j, EV_BUSY, 0, 0, 0, 0, 0), 1001u);
	journal_close(&j);
	journal_next_seq = saved;
	Read rd = read_file(d.sub("w.bin"));
	ASSERT_EQ(rd.recs.size(), 2u);
	EXPECT_EQ(rd.recs[1].seq, 1001u);
}

TEST(Journal, ManyRecords)
{
	ScratchDir d;
	std::string path = d.sub("w0000.bin");
	write_n(path, 0, 20000);
	Read rd = read_file(path);
	ASSERT_EQ(rd.rc, 0);
	ASSERT_EQ(rd.recs.size(), 20000u);
	EXPECT_EQ(rd.torn, 0u);
	for (size_t i = 0; i < rd.recs.size(); i++) {
		ASSERT_EQ(rd.recs[i].op, i);
		ASSERT_EQ(rd.recs[i].a, (int64_t)i);
		if (i) {
			ASSERT_GT(rd.recs[i].seq, rd.recs[i - 1].seq);
		}
	}
}

TEST(Journal, EmptyFileReadsAsNothing)
{
	ScratchDir d;
	std::string path = d.sub("w.bin");
	write_n(path, 0, 0);
	Read rd = read_file(path);
	EXPECT_EQ(rd.rc, 0);
	EXPECT_EQ(rd.recs.size(), 0u);
	EXPECT_EQ(rd.torn, 0u);
	rd = read_file(d.sub("missing.bin"));
	EXPECT_EQ(rd.rc, -1);
}

TEST(Journal, TruncatedTailIsSkippedAndReported)
{
	ScratchDir d;
	std::string path = d.sub("w.bin");
	write_n(path, 0, 10);
	ASSERT_EQ(truncate(path.c_str(), 10 * 64 - 20), 0);
	Read rd = read_file(path);
	ASSERT_EQ(rd.rc, 0);
	EXPECT_EQ(rd.recs.size(), 9u);
	EXPECT_EQ(rd.torn, 44u);
}

TEST(Journal, GarbageTailIsSkippedAndReported)
{
	ScratchDir d;
	std::string path = d.sub("w.bin");
	write_n(path, 0, 10);
	unsigned char junk[64 + 30];
	for (size_t i = 0; i < sizeof junk; i++)
		junk[i] = (unsigned char)(i * 37 + 5);
	append_bytes(path, junk, 30);
	Read rd = read_file(path);
	EXPECT_EQ(rd.recs.size(), 10u);
	EXPECT_EQ(rd.torn, 30u);
	/* a whole record's worth of junk is not a record either */
	append_bytes(path, junk, 64);
	rd = read_file(path);
	EXPECT_EQ(rd.recs.size(), 10u);
	EXPECT_EQ(rd.torn, 94u);
}

TEST(Journal, CorruptChecksumStopsThere)
{
	ScratchDir d;
	std::string path = d.sub("w.bin");
	write_n(path, 0, 10);
	int fd = open(path.c_str(), O_RDWR);
	ASSERT_GE(fd, 0);
	unsigned char byte;
	off_t at = 5 * 64 + 40; /* inside record 5's payload */
	ASSERT_EQ(pread(fd, &byte, 1, at), 1);
	byte ^= 0x01;
	ASSERT_EQ(pwrite(fd, &byte, 1, at), 1);
	close(fd);
	Read rd = read_file(path);
	ASSERT_EQ(rd.rc, 0);
	EXPECT_EQ(rd.recs.size(), 5u);
	EXPECT_EQ(rd.torn, 5u * 64);
}

TEST(Journal, ValidRejectsBadMagicAndType)
{
	struct jrec r;
	memset(&r, 0, sizeof r);
	r.type = EV_BUSY;
	r.magic = JOURNAL_MAGIC;
	r.check = journal_checksum(&r);
	EXPECT_TRUE(journal_valid(&r));
	r.magic = 0x1234;
	r.check = journal_checksum(&r);
	EXPECT_FALSE(journal_valid(&r));
	r.magic = JOURNAL_MAGIC;
	r.type = EV__COUNT;
	r.check = journal_checksum(&r);
	EXPECT_FALSE(journal_valid(&r));
	r.type = EV_NONE;
	r.check = journal_checksum(&r);
	EXPECT_FALSE(journal_valid(&r));
}

TEST(Journal, ReadDirMergesAndSortsBySeq)
{
	ScratchDir d;
	ASSERT_EQ(mkdir(d.sub("journal").c_str(), 0755), 0);
	write_seqs(d.sub("journal/w0000.bin"), 0, {1, 4, 5, 9, 12});
	write_seqs(d.sub("journal/w0001.bin"), 1, {2, 3, 10, 11});
	write_seqs(d.sub("journal/driver.bin"), JOURNAL_DRIVER, {6, 7, 8, 13});
	write_seqs(d.sub("journal/notes.txt"), 5, {100}); /* not a journal */
	append_bytes(d.sub("journal/w0001.bin"), "torn", 4);

	struct jrec *r = nullptr;
	size_t n = 0, torn = 0;
	unsigned files = 0;
	ASSERT_EQ(journal_read_dir(d.path.c_str(), &r, &n, &torn, &files), 0);
	EXPECT_EQ(files, 3u);
	EXPECT_EQ(torn, 4u);
	ASSERT_EQ(n, 13u);
	for (size_t i = 0; i < n; i++)
		EXPECT_EQ(r[i].seq, i + 1);
	EXPECT_EQ(r[5].worker, JOURNAL_DRIVER);
	EXPECT_EQ(r[1].worker, 1);
	free(r);
}

TEST(Journal, ReadDirIsStableAndSortsUnorderedFiles)
{
	ScratchDir d;
	ASSERT_EQ(mkdir(d.sub("journal").c_str(), 0755), 0);
	/* out of order within a file too (never written so, but sorted anyway);
	 * equal seqs keep file-name order, then file order */
	write_seqs(d.sub("journal/w0000.bin"), 0, {5, 3, 3, 1});
	write_seqs(d.sub("journal/w0001.bin"), 1, {3, 2, 4});
	struct jrec *r = nullptr;
	size_t n = 0, torn = 0;
	ASSERT_EQ(journal_read_dir(d.path.c_str(), &r, &n, &torn, nullptr), 0);
	ASSERT_EQ(n, 7u);
	std::vector<std::pair<uint64_t, int>> got;
	for (size_t i = 0; i < n; i++)
		got.push_back({r[i].seq, r[i].worker});
	std::vector<std::pair<uint64_t, int>> want = {{1, 0}, {2, 1}, {3, 0}, {3, 0},
						      {3, 1}, {4, 1}, {5, 0}};
	EXPECT_EQ(got, want);
	free(r);
}

TEST(Journal, ReadDirLargeInterleave)
{
	ScratchDir d;
	ASSERT_EQ(mkdir(d.sub("journal").c_str(), 0755), 0);
	const unsigned W = 7, per = 3000;
	for (unsigned w = 0; w < W; w++) {
		std::vector<uint64_t> s;
		for (unsigned i = 0; i < per; i++)
			s.push_back((uint64_t)i * W + ((w * 3) % W) + 1);
		char name[64];
		snprintf(name, sizeof name, "journal/w%04u.bin", w);
		write_seqs(d.sub(name), w, s);
	}
	struct jrec *r = nullptr;
	size_t n = 0, torn = 0;
	unsigned files = 0;
	ASSERT_EQ(journal_read_dir(d.path.c_str(), &r, &n, &torn, &files), 0);
	EXPECT_EQ(files, W);
	ASSERT_EQ(n, (size_t)W * per);
	for (size_t i = 0; i < n; i++)
		ASSERT_EQ(r[i].seq, i + 1) << i;
	free(r);
}

TEST(Journal, ReadDirEmpty)
{
	ScratchDir d;
	ASSERT_EQ(mkdir(d.sub("journal").c_str(), 0755), 0);
	write_seqs(d.sub("journal/w0000.bin"), 0, {});
	struct jrec *r = nullptr;
	size_t n = 1, torn = 1;
	unsigned files = 0;
	ASSERT_EQ(journal_read_dir(d.path.c_str(), &r, &n, &torn, &files), 0);
	EXPECT_EQ(n, 0u);
	EXPECT_EQ(torn, 0u);
	EXPECT_EQ(files, 1u);
	free(r);
}

TEST(Journal, ReadDirMissingFails)
{
	ScratchDir d;
	struct jrec *r = nullptr;
	size_t n = 0, torn = 0;
	unsigned files = 0;
	errno = 0;
	EXPECT_EQ(journal_read_dir(d.path.c_str(), &r, &n, &torn, &files), -1);
	EXPECT_EQ(errno, ENOENT);
	EXPECT_EQ(r, nullptr);
}

TEST(Journal, PrintJsonParses)
{
	struct jrec recs[3];
	memset(recs, 0, sizeof recs);
	recs[0].type = EV_ACQUIRED;
	recs[0].worker = 4;
	recs[0].pid = 1234;
	recs[0].op = 9;
	recs[0].seq = 77;
	recs[0].ns = 123456789012ull;
	recs[0].a = 5;
	recs[0].b = -1;
	recs[0].c = 0;
	recs[1] = recs[0];
	recs[1].type = EV_ACQUIRE_ERROR;
	recs[1].err = ENOENT;
	recs[2] = recs[0];
	recs[2].type = EV_KILLED;
	recs[2].worker = JOURNAL_DRIVER;
	recs[2].op = 3;

	char *buf = nullptr;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ASSERT_NE(f, nullptr);
	for (auto &r : recs)
		journal_print_json(f, &r);
	fclose(f);

	std::vector<std::string> lines;
	std::string all(buf, len);
	free(buf);
	size_t pos = 0, nl;
	while ((nl = all.find('\n', pos)) != std::string::npos) {
		lines.push_back(all.substr(pos, nl - pos));
		pos = nl + 1;
	}
	EXPECT_EQ(pos, all.size()) << "every line ends with a newline";
	ASSERT_EQ(lines.size(), 3u);

	json_error_t err;
	json_t *o = json_loads(lines[0].c_str(), 0, &err);
	ASSERT_NE(o, nullptr) << err.text << ": " << lines[0];
	EXPECT_EQ(json_integer_value(json_object_get(o, "seq")), 77);
	EXPECT_EQ(json_integer_value(json_object_get(o, "ns")), 123456789012ll);
	EXPECT_EQ(json_integer_value(json_object_get(o, "worker")), 4);
	EXPECT_EQ(json_integer_value(json_object_get(o, "pid")), 1234);
	EXPECT_EQ(json_integer_value(json_object_get(o, "op")), 9);
	EXPECT_STREQ(json_string_value(json_object_get(o, "type")), "acquired");
	EXPECT_TRUE(json_is_null(json_object_get(o, "err")));
	EXPECT_EQ(json_integer_value(json_object_get(o, "a")), 5);
	EXPECT_EQ(json_integer_value(json_object_get(o, "b")), -1);
	EXPECT_EQ(json_integer_value(json_object_get(o, "c")), 0);
	json_decref(o);

	o = json_loads(lines[1].c_str(), 0, &err);
	ASSERT_NE(o, nullptr) << err.text;
	EXPECT_STREQ(json_string_value(json_object_get(o, "type")), "acquire-error");
	EXPECT_STREQ(json_string_value(json_object_get(o, "err")), "ENOENT");
	json_decref(o);

	o = json_loads(lines[2].c_str(), 0, &err);
	ASSERT_NE(o, nullptr) << err.text;
	EXPECT_STREQ(json_string_value(json_object_get(o, "worker")), "driver");
	EXPECT_STREQ(json_string_value(json_object_get(o, "type")), "killed");
	EXPECT_EQ(json_integer_value(json_object_get(o, "op")), 3);
	json_decref(o);
}

/* ---- mapped journals: the mode workers use ---- */

#include <signal.h>
#include <sys/wait.h>

/* In a child: open mapped, log n records numbered from first, then either
 * close cleanly or die by SIGKILL with the window still mapped. */
static void mapped_child(const std::string &path, unsigned worker, int first, int n, bool die)
{
	fflush(NULL);
	pid_t pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct journal j;
		if (journal_open_mapped(&j, path.c_str(), worker) != 0)
			_exit(3);
		for (int i = 0; i < n; i++)
			journal_log(&j, EV_ATTEMPT, (uint32_t)(first + i), 0, first + i, 0, 0);
		if (die)
			raise(SIGKILL);
		journal_close(&j);
		_exit(0);
	}
	int st;
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	if (die) {
		ASSERT_TRUE(WIFSIGNALED(st));
	} else {
		ASSERT_TRUE(WIFEXITED(st));
		ASSERT_EQ(WEXITSTATUS(st), 0);
	}
}

TEST(JournalMapped, CleanCloseTrimsToTheRecords)
{
	ScratchDir d;
	std::string p = d.sub("w0000.bin");
	mapped_child(p, 0, 0, 100, false);
	struct stat st;
	ASSERT_EQ(stat(p.c_str(), &st), 0);
	EXPECT_EQ(st.st_size, 100 * 64);
	struct jrec *r;
	size_t n, torn;
	ASSERT_EQ(journal_read_file(p.c_str(), &r, &n, &torn), 0);
	EXPECT_EQ(n, 100u);
	EXPECT_EQ(torn, 0u);
	for (size_t i = 0; i < n; i++)
		EXPECT_EQ(r[i].a, (int64_t)i);
	free(r);
}

TEST(JournalMapped, SigkillLosesNothingAndTheZeroTailIsNotTorn)
{
	ScratchDir d;
	std::string p = d.sub("w0001.bin");
	/* more than one window, so the growth path is taken too */
	int n1 = (int)(JOURNAL_WINDOW / 64) + 500;
	mapped_child(p, 1, 0, n1, true);
	struct jrec *r;
	size_t n, torn;
	ASSERT_EQ(journal_read_file(p.c_str(), &r, &n, &torn), 0);
	EXPECT_EQ(n, (size_t)n1);
	EXPECT_EQ(torn, 0u);
	free(r);

	/* a respawned writer appends after the last record, then is killed too */
	mapped_child(p, 1, n1, 77, true);
	ASSERT_EQ(journal_read_file(p.c_str(), &r, &n, &torn), 0);
	ASSERT_EQ(n, (size_t)n1 + 77);
	EXPECT_EQ(torn, 0u);
	for (size_t i = 0; i < n; i++)
		ASSERT_EQ(r[i].a, (int64_t)i);
	free(r);
}

TEST(JournalMapped, TornRecordInsideTheZeroTailIsReported)
{
	ScratchDir d;
	std::string p = d.sub("w0002.bin");
	mapped_child(p, 2, 0, 10, true);
	/* half a record after the last one, as a kill in the middle of the store leaves */
	int fd = open(p.c_str(), O_WRONLY);
	ASSERT_GE(fd, 0);
	unsigned char half[32];
	memset(half, 0xab, sizeof half);
	ASSERT_EQ(pwrite(fd, half, sizeof half, 10 * 64), (ssize_t)sizeof half);
	close(fd);
	struct jrec *r;
	size_t n, torn;
	ASSERT_EQ(journal_read_file(p.c_str(), &r, &n, &torn), 0);
	EXPECT_EQ(n, 10u);
	EXPECT_EQ(torn, 32u);
	free(r);
	/* the next incarnation writes over the torn slot: nothing torn remains */
	mapped_child(p, 2, 10, 5, false);
	ASSERT_EQ(journal_read_file(p.c_str(), &r, &n, &torn), 0);
	EXPECT_EQ(n, 15u);
	EXPECT_EQ(torn, 0u);
	free(r);
}

/* ---- ring journals: the mode a run's workers use ---- */

#include <sys/mman.h>

/* A ring in memory shared with the children, as the driver makes it. */
static struct journal_ring *shared_ring()
{
	void *m = mmap(NULL, sizeof(struct journal_ring), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	return m == MAP_FAILED ? nullptr : (struct journal_ring *)m;
}

/* In a child: open in ring mode, log n records numbered from first, then
 * either close cleanly or die by SIGKILL with records in the ring. */
static void ring_child(const std::string &path, struct journal_ring *ring, int first, int n, bool die)
{
	fflush(NULL);
	pid_t pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct journal j;
		if (journal_open_ring(&j, path.c_str(), 3, ring) != 0)
			_exit(3);
		for (int i = 0; i < n; i++)
			journal_log(&j, EV_ATTEMPT, (uint32_t)(first + i), 0, first + i, 0, 0);
		if (die)
			raise(SIGKILL);
		journal_close(&j);
		_exit(0);
	}
	int st;
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	ASSERT_EQ(die, WIFSIGNALED(st));
}

/* The records of PATH are a[i] == i for i < want, nothing torn. */
static void expect_numbered(const std::string &path, size_t want)
{
	struct jrec *r;
	size_t n, torn;
	ASSERT_EQ(journal_read_file(path.c_str(), &r, &n, &torn), 0);
	EXPECT_EQ(n, want);
	EXPECT_EQ(torn, 0u);
	for (size_t i = 0; i < n && i < want; i++)
		ASSERT_EQ(r[i].a, (int64_t)i) << "record " << i;
	free(r);
	struct stat st;
	ASSERT_EQ(stat(path.c_str(), &st), 0);
	EXPECT_EQ((size_t)st.st_size, want * sizeof(struct jrec)); /* no tail of any kind */
}

static const int RING_RECS = (int)(JOURNAL_RING / sizeof(struct jrec));

TEST(JournalRing, CleanCloseWritesEveryRecordOverManyLaps)
{
	ScratchDir d;
	std::string p = d.sub("w0003.bin");
	struct journal_ring *ring = shared_ring();
	ASSERT_NE(ring, nullptr);
	ring_child(p, ring, 0, 3 * RING_RECS + 100, false);
	expect_numbered(p, 3 * RING_RECS + 100);
	EXPECT_EQ(ring->head, 0u);
	EXPECT_EQ(journal_ring_settle(ring, p.c_str()), 0); /* nothing left: writes nothing */
	expect_numbered(p, 3 * RING_RECS + 100);
	munmap(ring, sizeof *ring);
}

TEST(JournalRing, SigkillThenSettleLosesNothingAndARespawnAppends)
{
	ScratchDir d;
	std::string p = d.sub("w0003.bin");
	struct journal_ring *ring = shared_ring();
	ASSERT_NE(ring, nullptr);
	int n1 = 2 * RING_RECS + 123;
	ring_child(p, ring, 0, n1, true);
	/* the file has the two laps written; the ring the rest */
	expect_numbered(p, 2 * (size_t)RING_RECS);
	EXPECT_EQ(ring->head, 123u * sizeof(struct jrec));
	ASSERT_EQ(journal_ring_settle(ring, p.c_str()), 0);
	expect_numbered(p, (size_t)n1);
	EXPECT_EQ(ring->head, 0u);
	ring_child(p, ring, n1, 77, true);
	ASSERT_EQ(journal_ring_settle(ring, p.c_str()), 0);
	expect_numbered(p, (size_t)n1 + 77);
	munmap(ring, sizeof *ring);
}

/* A writer killed inside its pwrite(2) left part of a lap in the file: the
 * settle writes the same bytes at the same place, so nothing is doubled. */
TEST(JournalRing, SettleAfterAKillInsideAFlushWritesTheSameBytesAgain)
{
	ScratchDir d;
	std::string p = d.sub("w0004.bin");
	struct journal_ring *ring = shared_ring();
	ASSERT_NE(ring, nullptr);
	struct journal j;
	ASSERT_EQ(journal_open_ring(&j, p.c_str(), 4, ring), 0);
	for (int i = 0; i < RING_RECS + 10; i++) /* one lap written, 10 records in the ring */
		journal_log(&j, EV_ATTEMPT, (uint32_t)i, 0, i, 0, 0);
	for (int i = RING_RECS + 10; i < 2 * RING_RECS; i++) /* the ring full: the next record flushes */
		journal_log(&j, EV_ATTEMPT, (uint32_t)i, 0, i, 0, 0);
	ASSERT_EQ(ring->head, JOURNAL_RING);
	/* the flush the kill cut short: a page of it reached the file */
	ASSERT_EQ(pwrite(j.fd, ring->buf, 4096, (off_t)ring->base), 4096);
	close(j.fd); /* the writer is gone: no journal_close */
	ASSERT_EQ(journal_ring_settle(ring, p.c_str()), 0);
	expect_numbered(p, 2 * (size_t)RING_RECS);
	munmap(ring, sizeof *ring);
}

/* Opening cuts what a killed mapped writer left after its records (zeros
 * and a torn record): ring mode appends, so nothing may follow its records. */
TEST(JournalRing, OpenCutsATornOrZeroTailBeforeAppending)
{
	ScratchDir d;
	std::string p = d.sub("w0002.bin");
	mapped_child(p, 2, 0, 10, true);
	int fd = open(p.c_str(), O_WRONLY);
	ASSERT_GE(fd, 0);
	unsigned char half[32];
	memset(half, 0xab, sizeof half);
	ASSERT_EQ(pwrite(fd, half, sizeof half, 10 * 64), (ssize_t)sizeof half);
	close(fd);
	struct journal_ring *ring = shared_ring();
	ASSERT_NE(ring, nullptr);
	ring_child(p, ring, 10, 5, false);
	expect_numbered(p, 15);
	munmap(ring, sizeof *ring);
}

/* A ring whose head no writer could have left (past the buffer, or not a
 * whole number of records) is refused, and nothing is written. */
TEST(JournalRing, SettleRefusesAHeadNoWriterLeaves)
{
	ScratchDir d;
	std::string p = d.sub("w0005.bin");
	struct journal_ring *ring = shared_ring();
	ASSERT_NE(ring, nullptr);
	ring_child(p, ring, 0, 20, false);
	for (uint32_t bad : { JOURNAL_RING + 64u, 100u }) {
		ring->head = bad;
		errno = 0;
		EXPECT_EQ(journal_ring_settle(ring, p.c_str()), -1);
		EXPECT_EQ(errno, EINVAL);
		expect_numbered(p, 20);
	}
	munmap(ring, sizeof *ring);
}

/* ---- format 2: CRC32C checksums; format 1 still read ---- */

TEST(JournalFormat, ChecksumIsCrc32cOfTheSixtyBytesBeforeIt)
{
	struct jrec r;
	memset(&r, 0, sizeof r);
	r.type = EV_ACQUIRED;
	r.worker = 3;
	r.pid = 1234;
	r.op = 9;
	r.seq = 77;
	r.ns = 123456789012ull;
	r.a = 5;
	r.b = -1;
	r.magic = JOURNAL_MAGIC;
	/* the value any CRC32C (Castagnoli) gives these 60 bytes (computed
	 * independently); the same whether the CPU instruction or the table ran */
	EXPECT_EQ(journal_checksum(&r), 0x3346899cu);
	r.check = journal_checksum(&r);
	EXPECT_TRUE(journal_valid(&r));
	r.a = 6;
	EXPECT_FALSE(journal_valid(&r));
}

TEST(JournalFormat, FormatOneRecordsAreStillRead)
{
	ScratchDir d;
	std::string p = d.sub("w0000.bin");
	/* a format-1 record: the old magic, the old FNV-style hash */
	struct jrec r;
	memset(&r, 0, sizeof r);
	r.type = EV_ATTEMPT;
	r.seq = 5;
	r.magic = JOURNAL_MAGIC_V1;
	uint64_t w[8], h = 0xcbf29ce484222325ULL;
	memcpy(w, &r, sizeof w);
	w[7] &= 0xffffffffULL;
	for (int i = 0; i < 8; i++) {
		h ^= w[i];
		h *= 0x100000001b3ULL;
		h ^= h >> 29;
	}
	r.check = (uint32_t)(h ^ (h >> 32));
	EXPECT_TRUE(journal_valid(&r));
	int fd = open(p.c_str(), O_WRONLY | O_CREAT, 0644);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, &r, sizeof r), (ssize_t)sizeof r);
	close(fd);
	Read got = read_file(p);
	ASSERT_EQ(got.recs.size(), 1u);
	EXPECT_EQ(got.torn, 0u);
	/* an old-format hash under the new magic does not pass */
	r.magic = JOURNAL_MAGIC;
	EXPECT_FALSE(journal_valid(&r));
}

/* ---- the cursor: a directory merged in seq order, one record at a time ---- */

TEST(JournalCursor, MergesFilesInSeqOrderAndReportsTheTornTail)
{
	ScratchDir d;
	ASSERT_EQ(mkdir(d.sub("journal").c_str(), 0755), 0);
	write_n(d.sub("journal/w0000.bin"), 0, 50);
	write_n(d.sub("journal/w0001.bin"), 1, 70);
	unsigned char junk[20];
	memset(junk, 0x5a, sizeof junk);
	append_bytes(d.sub("journal/w0001.bin"), junk, sizeof junk);
	struct journal_cursor *c;
	unsigned files = 0;
	ASSERT_EQ(journal_cursor_open(d.path.c_str(), &c, &files), 0);
	EXPECT_EQ(files, 2u);
	const struct jrec *r;
	uint64_t last = 0;
	size_t n = 0;
	int rc;
	while ((rc = journal_cursor_next(c, &r)) == 1) {
		EXPECT_GT(r->seq, last);
		last = r->seq;
		n++;
	}
	EXPECT_EQ(rc, 0);
	EXPECT_EQ(n, 120u);
	size_t torn = 0;
	char damaged[200];
	EXPECT_EQ(journal_cursor_finish(c, &torn, damaged, sizeof damaged), 1);
	EXPECT_EQ(torn, sizeof junk);
	EXPECT_STREQ(damaged, "");
	journal_cursor_close(c);
}

TEST(JournalCursor, SaysWhenAFileIsNotInSeqOrder)
{
	ScratchDir d;
	ASSERT_EQ(mkdir(d.sub("journal").c_str(), 0755), 0);
	struct journal j;
	ASSERT_EQ(journal_open(&j, d.sub("journal/w0000.bin").c_str(), 0), 0);
	struct jrec r;
	memset(&r, 0, sizeof r);
	r.type = EV_ATTEMPT;
	r.seq = 9;
	ASSERT_EQ(journal_write(&j, &r), 0);
	r.seq = 4;
	ASSERT_EQ(journal_write(&j, &r), 0);
	journal_close(&j);
	struct journal_cursor *c;
	ASSERT_EQ(journal_cursor_open(d.path.c_str(), &c, nullptr), 0);
	const struct jrec *got;
	while (journal_cursor_next(c, &got) == 1)
		;
	EXPECT_EQ(journal_cursor_finish(c, nullptr, nullptr, 0), 0);
	journal_cursor_close(c);
	/* journal_read_dir sorts such a folder */
	struct jrec *all;
	size_t n, torn;
	ASSERT_EQ(journal_read_dir(d.path.c_str(), &all, &n, &torn, nullptr), 0);
	ASSERT_EQ(n, 2u);
	EXPECT_EQ(all[0].seq, 4u);
	EXPECT_EQ(all[1].seq, 9u);
	free(all);
}

/* The hand-made JSON line is byte for byte what jansson's compact dump gives. */
static const char *fake_point_name(uint64_t h)
{
	return h == 0x1234 ? "flock/acquire/before-\"quoted\"\\" : nullptr;
}

TEST(JournalJson, FormatEqualsJansson)
{
	struct jrec recs[4];
	memset(recs, 0, sizeof recs);
	recs[0].type = EV_ACQUIRED;
	recs[0].worker = 4;
	recs[0].pid = -7;
	recs[0].op = 4294967295u;
	recs[0].seq = 18446744073709551615ull; /* printed as jansson does: a signed integer */
	recs[0].ns = 1;
	recs[0].a = INT64_MIN;
	recs[0].b = INT64_MAX;
	recs[1].type = EV_FAULT;
	recs[1].worker = 2;
	recs[1].err = ENOSPC;
	recs[1].a = 1;
	recs[1].b = 0x1234;
	recs[2].type = EV_FAULT;
	recs[2].a = 2;
	recs[2].err = 4095; /* no name: a number */
	recs[3].type = EV_KILLED;
	recs[3].worker = JOURNAL_DRIVER;
	const char *(*saved)(uint64_t) = journal_point_name;
	journal_point_name = fake_point_name;
	for (auto &r : recs) {
		json_t *o = json_object();
		json_object_set_new(o, "seq", json_integer((json_int_t)r.seq));
		json_object_set_new(o, "ns", json_integer((json_int_t)r.ns));
		json_object_set_new(o, "worker", r.worker == JOURNAL_DRIVER ? json_string("driver") : json_integer(r.worker));
		json_object_set_new(o, "pid", json_integer(r.pid));
		json_object_set_new(o, "op", json_integer(r.op));
		json_object_set_new(o, "type", json_string(journal_type_name(r.type)));
		const char *en = r.err ? strerrorname_np(r.err) : nullptr;
		json_object_set_new(o, "err", !r.err ? json_null() : en ? json_string(en) : json_integer(r.err));
		json_object_set_new(o, "a", json_integer(r.a));
		json_object_set_new(o, "b", json_integer(r.b));
		json_object_set_new(o, "c", json_integer(r.c));
		if (r.type == EV_FAULT && r.b == 0x1234)
			json_object_set_new(o, "point", json_string(fake_point_name(0x1234)));
		if (r.type == EV_FAULT && r.a == 1)
			json_object_set_new(o, "fault", json_string("stall"));
		if (r.type == EV_FAULT && r.a == 2)
			json_object_set_new(o, "fault", json_string("crash"));
		char *want = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
		json_decref(o);
		char got[JOURNAL_JSON_MAX];
		size_t n = journal_format_json(got, &r);
		EXPECT_EQ(std::string(got, n), std::string(want) + "\n");
		EXPECT_EQ(strlen(got), n);
		free(want);
	}
	journal_point_name = saved;
}

/* ---- the fast ways equal the slow ones ---- */

TEST(JournalFormat, CpuChecksumEqualsThePortableOneOnRandomRecords)
{
	struct prng rng;
	prng_seed(&rng, 20, 0, 0);
	for (int i = 0; i < 20000; i++) {
		struct jrec r;
		uint64_t w[8];
		for (auto &x : w)
			x = prng_next(&rng);
		memcpy(&r, w, sizeof r);
		r.magic = JOURNAL_MAGIC; /* else journal_checksum may take format 1's hash */
		ASSERT_EQ(journal_checksum(&r), journal_checksum_portable(&r)) << "record " << i;
	}
}

/* Records built in place in the mapped window (journal_log's fast way) are
 * byte for byte the ones the one-write(2) way writes, the window's growth
 * included; errno is left alone either way. */
TEST(JournalMapped, InPlaceRecordsEqualWrittenOnes)
{
	static uint64_t next, clock;
	uint64_t (*saved_seq)(void) = journal_next_seq;
	uint64_t (*saved_clock)(void) = journal_clock_ns;
	journal_clock_ns = [] { return clock += 17; };
	ScratchDir d;
	std::string files[2] = { d.sub("mapped.bin"), d.sub("written.bin") };
	int n = (int)(JOURNAL_WINDOW / 64) + 300; /* past one window */
	for (int k = 0; k < 2; k++) {
		next = 5;
		clock = 1000;
		journal_next_seq = [] { return next++; };
		struct journal j;
		ASSERT_EQ(k == 0 ? journal_open_mapped(&j, files[k].c_str(), 7) : journal_open(&j, files[k].c_str(), 7), 0);
		for (int i = 0; i < n; i++) {
			errno = EXDEV;
			ASSERT_EQ(journal_log(&j, EV_ATTEMPT + i % 5, (uint32_t)i, i % 3, i, -i, (int64_t)i << 33),
				  5u + (uint64_t)i);
			ASSERT_EQ(errno, EXDEV);
		}
		journal_close(&j);
	}
	journal_next_seq = saved_seq;
	journal_clock_ns = saved_clock;
	std::string bytes[2];
	for (int k = 0; k < 2; k++) {
		FILE *f = fopen(files[k].c_str(), "rb");
		ASSERT_NE(f, nullptr);
		char buf[65536];
		size_t got;
		while ((got = fread(buf, 1, sizeof buf, f)) > 0)
			bytes[k].append(buf, got);
		fclose(f);
	}
	EXPECT_EQ(bytes[0].size(), (size_t)n * 64);
	EXPECT_TRUE(bytes[0] == bytes[1]);
}

/* The shared counter as the sequence source (what the arena installs):
 * journal_log adds to it in line; the values are the counter's next ones. */
TEST(Journal, SequenceFromTheArenaCounter)
{
	struct arena *a = arena_create(1);
	ASSERT_NE(a, nullptr);
	EXPECT_TRUE(journal_next_seq == journal_seq_from_counter);
	ScratchDir d;
	struct journal j;
	ASSERT_EQ(journal_open_mapped(&j, d.sub("w.bin").c_str(), 0), 0);
	EXPECT_EQ(journal_log(&j, EV_ATTEMPT, 0, 0, 0, 0, 0), 1u);
	EXPECT_EQ(arena_next_seq(a), 2u);
	EXPECT_EQ(journal_log(&j, EV_BUSY, 0, 0, 0, 0, 0), 3u);
	journal_close(&j);
	arena_destroy(a);
	EXPECT_FALSE(journal_next_seq == journal_seq_from_counter);
}
