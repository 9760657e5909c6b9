/*
 * journal.c - per-worker binary event journals: writing, reading, dumping.
 *
 * A record is a fixed 64-byte struct jrec.  The writer fills it completely
 * (sequence, CLOCK_MONOTONIC time, magic, checksum) and hands it to the kernel
 * in ONE write(2) on an O_APPEND descriptor, or (mapped mode, the workers')
 * builds it in place in a MAP_SHARED window of the file, checksum last: a
 * SIGKILL between two records loses nothing already written, and one in the
 * middle of a record leaves at most that record torn.  The reader trusts records while magic, checksum and type are
 * right and stops at the first one that is not: everything from there on is
 * the torn tail, reported in bytes, never guessed at.
 */
#include "journal.h"
#include "vdso.h"
#include "hot.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static_assert(sizeof(struct jrec) == 64, "a journal record is exactly 64 bytes");

static const char *const journal_type_names[EV__COUNT] = {
	[EV_NONE] = "none",
	[EV_ATTEMPT] = "attempt",
	[EV_ACQUIRED] = "acquired",
	[EV_BUSY] = "busy",
	[EV_ACQUIRE_ERROR] = "acquire-error",
	[EV_READ] = "read",
	[EV_COMMIT_BEGIN] = "commit-begin",
	[EV_COMMIT] = "commit",
	[EV_LOST] = "lost",
	[EV_WRITE_ERROR] = "write-error",
	[EV_RELEASE_BEGIN] = "release-begin",
	[EV_RELEASED] = "released",
	[EV_RELEASE_ERROR] = "release-error",
	[EV_FAULT] = "fault",
	[EV_STEP] = "step",
	[EV_APPEND] = "append",
	[EV_WORKER_START] = "worker-start",
	[EV_WORKER_EXIT] = "worker-exit",
	[EV_OBJ_CREATE] = "obj-create",
	[EV_OBJ_REMOVE] = "obj-remove",
	[EV_KILLED] = "killed",
	[EV_LIVENESS] = "liveness",
	[EV_STOP] = "stop",
	[EV_READ_BEGIN] = "read-begin",
	[EV_MUTEX_TAKE] = "mutex-take",
	[EV_MUTEX_DROP] = "mutex-drop",
	[EV_SPIN] = "spin",
	[EV_DELETE_PENDING] = "delete-pending",
};

/* "unknown" for anything outside the enum, so it is always printable. */
const char *journal_type_name(int type)
{
	if (type < 0 || type >= EV__COUNT || !journal_type_names[type])
		return "unknown";
	return journal_type_names[type];
}

/* The event type named NAME, or -1 (EV_NONE's "none" is not a real event). */
int journal_type_from_name(const char *name)
{
	if (!name)
		return -1;
	for (int t = EV_NONE + 1; t < EV__COUNT; t++)
		if (journal_type_names[t] && strcmp(journal_type_names[t], name) == 0)
			return t;
	return -1;
}

/*
 * Default sequence source: a process-local counter starting at 1.  It orders
 * one process's records only; the driver installs the arena's shared counter
 * (a total order across workers) before any worker forks.
 */
static _Atomic uint64_t journal_local_counter = 1;

static uint64_t journal_local_seq(void)
{
	return atomic_fetch_add(&journal_local_counter, 1);
}

LS_HOT_DATA uint64_t (*journal_next_seq)(void) = journal_local_seq;
LS_HOT_DATA _Atomic uint64_t *journal_seq_counter;

uint64_t journal_seq_from_counter(void)
{
	return atomic_fetch_add(journal_seq_counter, 1) + 1;
}
const char *(*journal_point_name)(uint64_t hash);
LS_HOT_DATA uint64_t (*journal_clock_ns)(void);

void journal_open_mem(struct journal *j, struct journal_mem *m, unsigned worker, int32_t pid)
{
	memset(j, 0, sizeof *j);
	j->fd = -1;
	j->worker = (uint16_t)worker;
	j->pid = pid;
	j->mem = m;
}

int journal_open(struct journal *j, const char *path, unsigned worker)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

	j->map = NULL;
	j->mem = NULL;
	j->ring = NULL;
	j->fd = -1;
	j->worker = (uint16_t)worker;
	j->pid = (int32_t)getpid();
	if (fd < 0)
		return -1;
	j->fd = fd;
	return 0;
}

/* Offset just past the last valid record of the file open on fd. */
static int64_t journal_valid_end(int fd)
{
	static struct jrec buf[1024];
	int64_t off = 0;
	for (;;) {
		ssize_t k = pread(fd, buf, sizeof buf, off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		size_t recs = (size_t)k / sizeof buf[0];
		for (size_t i = 0; i < recs; i++) {
			if (!journal_valid(&buf[i]))
				return off + (int64_t)(i * sizeof buf[0]);
		}
		off += (int64_t)(recs * sizeof buf[0]);
		if (recs < sizeof buf / sizeof buf[0])
			return off;
	}
}

/* Pages of the window are faulted in ahead of the writer, a chunk at a time
 * (one madvise instead of a fault every 64 records), each chunk twice the
 * last up to JOURNAL_CHUNK_MAX: a worker that logs little costs little. */
#define JOURNAL_CHUNK_MIN (16u << 10)
#define JOURNAL_CHUNK_MAX (256u << 10)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* Map the window that holds file offset `at`, extending the file to cover it. */
static int journal_map_window(struct journal *j, uint64_t at)
{
	uint64_t off = at - at % JOURNAL_WINDOW;
	struct stat st;
	if (j->map) {
		munmap(j->map, JOURNAL_WINDOW);
		j->map = NULL;
	}
	if (fstat(j->fd, &st) < 0)
		return -1;
	if ((uint64_t)st.st_size < off + JOURNAL_WINDOW && ftruncate(j->fd, (off_t)(off + JOURNAL_WINDOW)) < 0)
		return -1;
	/* not MAP_POPULATE: 2,048 workers would each fault in a whole window
	 * they may never fill; journal_grow populates it a chunk at a time */
	void *m = mmap(NULL, JOURNAL_WINDOW, PROT_READ | PROT_WRITE, MAP_SHARED, j->fd, (off_t)off);
	if (m == MAP_FAILED)
		return -1;
	j->map = m;
	j->map_off = off;
	j->pos = (size_t)(at - off);
	j->ready = j->pos - j->pos % JOURNAL_CHUNK_MIN;
	j->chunk = JOURNAL_CHUNK_MIN;
	return 0;
}

/* Ring mode: the records up to j->pos are whole (stored after their last
 * byte; x86 keeps the order of stores, the release keeps the compiler's). */
static inline void journal_ring_publish(struct journal *j)
{
	if (j->ring)
		__atomic_store_n(&j->ring->head, (uint32_t)j->pos, __ATOMIC_RELEASE);
}

static int journal_ring_flush(struct journal *j);

/* Room for one more record at j->pos: 0, or -1 with errno. */
static int journal_grow(struct journal *j)
{
	if (j->ring)
		return j->pos + sizeof(struct jrec) > j->ready ? journal_ring_flush(j) : 0;
	if (j->pos + sizeof(struct jrec) > JOURNAL_WINDOW &&
	    journal_map_window(j, j->map_off + j->pos) < 0)
		return -1;
	if (j->pos + sizeof(struct jrec) > j->ready) {
		size_t len = j->chunk;
		if (j->ready + len > JOURNAL_WINDOW)
			len = JOURNAL_WINDOW - j->ready;
		/* an old kernel without MADV_POPULATE_WRITE: the stores fault instead */
		(void)madvise(j->map + j->ready, len, MADV_POPULATE_WRITE);
		j->ready += len;
		if (j->chunk < JOURNAL_CHUNK_MAX)
			j->chunk *= 2;
	}
	return 0;
}

/* J reset for WORKER and PATH opened for reading and writing (made if
 * missing), *END just past its last valid record: 0, or -1 with errno (J's
 * fd then -1). */
static int journal_open_end(struct journal *j, const char *path, unsigned worker, int64_t *end)
{
	memset(j, 0, sizeof *j);
	j->fd = -1;
	j->worker = (uint16_t)worker;
	j->pid = (int32_t)getpid();
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	*end = journal_valid_end(fd);
	if (*end < 0) {
		int saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	j->fd = fd;
	return 0;
}

int journal_open_mapped(struct journal *j, const char *path, unsigned worker)
{
	int64_t end;
	if (journal_open_end(j, path, worker, &end) != 0)
		return -1;
	if (journal_map_window(j, (uint64_t)end) < 0) {
		int saved = errno;
		close(j->fd);
		j->fd = -1;
		errno = saved;
		return -1;
	}
	return 0;
}

/* All of BUF (LEN bytes) to file offset OFF: 0, or -1 with errno (a short
 * write that makes no progress is a full disk). */
static int pwrite_all(int fd, const unsigned char *buf, size_t len, uint64_t off)
{
	while (len) {
		ssize_t k = pwrite(fd, buf, len, (off_t)off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0) {
			errno = ENOSPC;
			return -1;
		}
		buf += k;
		len -= (size_t)k;
		off += (uint64_t)k;
	}
	return 0;
}

/* The ring's records to the file, and the ring empty again.  Killed inside,
 * the driver's journal_ring_settle writes the same bytes at the same offset
 * again: head drops to 0 only once they are in the file, and base moves on
 * only after that. */
static int journal_ring_flush(struct journal *j)
{
	struct journal_ring *rg = j->ring;
	if (j->pos && pwrite_all(j->fd, rg->buf, j->pos, rg->base) != 0)
		return -1;
	__atomic_store_n(&rg->head, 0, __ATOMIC_RELEASE);
	rg->base += j->pos;
	j->map_off = rg->base;
	j->pos = 0;
	return 0;
}

int journal_open_ring(struct journal *j, const char *path, unsigned worker, struct journal_ring *ring)
{
	int64_t end;
	if (journal_open_end(j, path, worker, &end) != 0)
		return -1;
	/* after the valid records only: a tail a killed mapped writer left (zeros,
	 * a torn record) would otherwise outlast the records written over it */
	if (ftruncate(j->fd, (off_t)end) != 0) {
		int saved = errno;
		close(j->fd);
		j->fd = -1;
		errno = saved;
		return -1;
	}
	__atomic_store_n(&ring->head, 0, __ATOMIC_RELAXED);
	ring->base = (uint64_t)end;
	j->ring = ring;
	j->map = ring->buf;
	j->map_off = (uint64_t)end;
	j->ready = JOURNAL_RING;
	return 0;
}

int journal_ring_settle(struct journal_ring *ring, const char *path)
{
	uint32_t head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
	if (head == 0)
		return 0;
	if (head > JOURNAL_RING || head % sizeof(struct jrec)) { /* not a writer's: write nothing */
		errno = EINVAL;
		return -1;
	}
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int r = pwrite_all(fd, ring->buf, head, ring->base);
	int saved = errno;
	close(fd);
	if (r == 0) {
		ring->base += head;
		__atomic_store_n(&ring->head, 0, __ATOMIC_RELEASE);
	}
	errno = saved;
	return r;
}

void journal_close(struct journal *j)
{
	if (j->ring) {
		int saved = errno;
		(void)journal_ring_flush(j); /* failed: the driver's settle tries again */
		j->ring = NULL;
		j->map = NULL;
		errno = saved;
	}
	j->mem = NULL;
	if (j->map) {
		int saved = errno;
		uint64_t end = j->map_off + j->pos;
		munmap(j->map, JOURNAL_WINDOW);
		j->map = NULL;
		if (ftruncate(j->fd, (off_t)end) < 0) {
			/* the zero tail stays; readers skip it */
		}
		errno = saved;
	}
	if (j->fd >= 0) {
		int saved = errno;

		close(j->fd);
		errno = saved;
	}
	j->fd = -1;
}

/*
 * The checksum of every byte before `check` (magic and pad included):
 * CRC32C (Castagnoli), with the CPU's crc32 instruction where it has one (7
 * of them for a record) and a table otherwise; the same value either way.
 * Journals of format 1 (magic JOURNAL_MAGIC_V1) used an FNV-1a style hash:
 * they are still read and checked with it.
 */
static uint32_t crc32c_table[256];
LS_HOT_DATA static int crc32c_hw = -1; /* -1: not probed yet */

static void crc32c_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		crc32c_table[i] = c;
	}
#if defined(__x86_64__)
	__builtin_cpu_init();
	crc32c_hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
#else
	crc32c_hw = 0;
#endif
}

#if defined(__x86_64__)
LS_HOT __attribute__((target("sse4.2"))) static uint32_t crc32c_rec_hw(const unsigned char *p)
{
	uint64_t w0, w1, w2, w3, w4, w5, w6;
	uint32_t t;
	memcpy(&w0, p, 8);
	memcpy(&w1, p + 8, 8);
	memcpy(&w2, p + 16, 8);
	memcpy(&w3, p + 24, 8);
	memcpy(&w4, p + 32, 8);
	memcpy(&w5, p + 40, 8);
	memcpy(&w6, p + 48, 8);
	memcpy(&t, p + 56, 4);
	uint64_t c = 0xffffffffu;
	c = __builtin_ia32_crc32di(c, w0);
	c = __builtin_ia32_crc32di(c, w1);
	c = __builtin_ia32_crc32di(c, w2);
	c = __builtin_ia32_crc32di(c, w3);
	c = __builtin_ia32_crc32di(c, w4);
	c = __builtin_ia32_crc32di(c, w5);
	c = __builtin_ia32_crc32di(c, w6);
	return ~__builtin_ia32_crc32si((uint32_t)c, t);
}
#endif

static uint32_t crc32c_rec_sw(const unsigned char *p)
{
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < 60; i++)
		c = crc32c_table[(c ^ p[i]) & 0xff] ^ (c >> 8);
	return ~c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static inline uint32_t crc32c_rec_hw_p(const struct jrec *r)
{
	return crc32c_rec_hw((const unsigned char *)r);
}
#endif

static inline uint32_t crc32c_rec_sw_p(const struct jrec *r)
{
	return crc32c_rec_sw((const unsigned char *)r);
}

/* format 1's hash, kept for reading old journals */
static uint32_t journal_checksum_v1(const struct jrec *r)
{
	uint64_t w[8];
	uint64_t h = 0xcbf29ce484222325ULL;

	memcpy(w, r, sizeof w);
	w[7] &= 0xffffffffULL; /* magic and pad; `check` itself is left out */
	for (size_t i = 0; i < 8; i++) {
		h ^= w[i];
		h *= 0x100000001b3ULL;
		h ^= h >> 29;
	}
	return (uint32_t)(h ^ (h >> 32));
}

static inline uint32_t crc32c_rec(const void *r)
{
	if (__builtin_expect(crc32c_hw < 0, 0))
		crc32c_init();
#if defined(__x86_64__)
	if (__builtin_expect(crc32c_hw, 1))
		return crc32c_rec_hw(r);
#endif
	return crc32c_rec_sw(r);
}

uint32_t journal_checksum_portable(const struct jrec *r)
{
	if (__builtin_expect(crc32c_hw < 0, 0))
		crc32c_init();
	return crc32c_rec_sw((const unsigned char *)r);
}

uint32_t journal_checksum(const struct jrec *r)
{
	if (r->magic == JOURNAL_MAGIC_V1)
		return journal_checksum_v1(r);
	return crc32c_rec(r);
}

int journal_valid(const struct jrec *r)
{
	return (r->magic == JOURNAL_MAGIC || r->magic == JOURNAL_MAGIC_V1) && r->type > EV_NONE &&
	       r->type < EV__COUNT && r->check == journal_checksum(r);
}

/*
 * journal_valid over a run of records, for readers.  Each record's checksum
 * is a chain of dependent steps (8 multiplies for format 1, 8 crc32
 * instructions for format 2), but records do not depend on each other: a
 * block of JV_BLOCK of them is judged without a branch between them, so the
 * CPU runs their chains side by side instead of one after another.  The
 * verdict of every record is journal_valid's (a unit test holds them equal);
 * only the first failing one is looked at again, one at a time.
 */
#define JV_BLOCK 8

static inline unsigned jv_head_ok(const struct jrec *r)
{
	return (unsigned)(r->magic == JOURNAL_MAGIC || r->magic == JOURNAL_MAGIC_V1) &
	       (unsigned)(r->type > EV_NONE) & (unsigned)(r->type < EV__COUNT);
}

static inline uint64_t jv_v1_step(uint64_t h, const unsigned char *p, uint64_t mask)
{
	uint64_t w;
	memcpy(&w, p, 8);
	h ^= w & mask;
	h *= 0x100000001b3ULL;
	return h ^ (h >> 29);
}

/* Format 1's hash of the 4 records from R into SUM: journal_checksum_v1's
 * steps and values, four chains side by side in registers. */
static inline void jv_v1_four(const struct jrec *r, uint32_t *sum)
{
	const unsigned char *p = (const unsigned char *)r;
	uint64_t h0 = 0xcbf29ce484222325ULL, h1 = h0, h2 = h0, h3 = h0;

	for (size_t i = 0; i < 56; i += 8) {
		h0 = jv_v1_step(h0, p + i, ~0ULL);
		h1 = jv_v1_step(h1, p + 64 + i, ~0ULL);
		h2 = jv_v1_step(h2, p + 128 + i, ~0ULL);
		h3 = jv_v1_step(h3, p + 192 + i, ~0ULL);
	}
	/* the last word: magic and pad; `check` itself is left out */
	h0 = jv_v1_step(h0, p + 56, 0xffffffffULL);
	h1 = jv_v1_step(h1, p + 64 + 56, 0xffffffffULL);
	h2 = jv_v1_step(h2, p + 128 + 56, 0xffffffffULL);
	h3 = jv_v1_step(h3, p + 192 + 56, 0xffffffffULL);
	sum[0] = (uint32_t)(h0 ^ (h0 >> 32));
	sum[1] = (uint32_t)(h1 ^ (h1 >> 32));
	sum[2] = (uint32_t)(h2 ^ (h2 >> 32));
	sum[3] = (uint32_t)(h3 ^ (h3 >> 32));
}

/* Leading valid records of r[0, n), block by block; the tail under a block
 * and a block with a failure go record by record (journal_valid).  CRC is
 * the format-2 checksum the caller's target has: inlined, not called. */
static inline __attribute__((always_inline)) size_t
jv_run(const struct jrec *r, size_t n, uint32_t (*crc)(const struct jrec *))
{
	size_t i = 0;
	for (; i + JV_BLOCK <= n; i += JV_BLOCK) {
		const struct jrec *b = &r[i];
		uint32_t sum[JV_BLOCK];
		unsigned v1 = 0, ok = 1;

		for (size_t k = 0; k < JV_BLOCK; k++)
			v1 += b[k].magic == JOURNAL_MAGIC_V1;
		if (v1 == JV_BLOCK)
			for (size_t k = 0; k < JV_BLOCK; k += 4)
				jv_v1_four(b + k, sum + k);
		else if (v1 == 0)
			for (size_t k = 0; k < JV_BLOCK; k++)
				sum[k] = crc(&b[k]);
		else
			for (size_t k = 0; k < JV_BLOCK; k++)
				sum[k] = journal_checksum(&b[k]);
		for (size_t k = 0; k < JV_BLOCK; k++)
			ok &= jv_head_ok(&b[k]) & (unsigned)(sum[k] == b[k].check);
		if (!ok)
			break;
	}
	while (i < n && journal_valid(&r[i]))
		i++;
	return i;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static size_t journal_valid_run_hw(const struct jrec *r, size_t n)
{
	return jv_run(r, n, crc32c_rec_hw_p);
}
#endif

static size_t journal_valid_run_sw(const struct jrec *r, size_t n)
{
	return jv_run(r, n, crc32c_rec_sw_p);
}

size_t journal_valid_run(const struct jrec *r, size_t n)
{
	if (__builtin_expect(crc32c_hw < 0, 0))
		crc32c_init();
#if defined(__x86_64__)
	if (crc32c_hw)
		return journal_valid_run_hw(r, n);
#endif
	return journal_valid_run_sw(r, n);
}

/* R's magic and pad, as one store of an immediate (left as two, GCC merges
 * them into a load from .rodata: one more page an op touches). */
static inline void journal_seal_head(struct jrec *r)
{
	const struct { uint16_t magic, pad; } head = { JOURNAL_MAGIC, 0 };
	static_assert(offsetof(struct jrec, pad) == offsetof(struct jrec, magic) + 2, "magic, then pad");
	memcpy(&r->magic, &head, sizeof head);
}

/*
 * Seal R (magic, pad, checksum) and append it with a single write(2).
 * 0, or -1 with errno.  A short write (a full disk) is reported as ENOSPC:
 * retrying the remainder would make a record of two writes, which is exactly
 * what a reader must never see half of.
 */
int journal_write(struct journal *j, struct jrec *r)
{
	ssize_t k;

	if (j->fd < 0 && !j->mem) {
		errno = EBADF;
		return -1;
	}
	journal_seal_head(r);
	r->check = journal_checksum(r);
	if (j->mem) {
		if (j->mem->n >= j->mem->cap) {
			j->mem->dropped++;
			errno = ENOSPC;
			return -1;
		}
		j->mem->rec[j->mem->n++] = *r;
		return 0;
	}
	if (j->map) {
		if (j->pos + sizeof *r > j->ready && journal_grow(j) < 0)
			return -1;
		memcpy(j->map + j->pos, r, sizeof *r);
		j->pos += sizeof *r;
		journal_ring_publish(j);
		return 0;
	}
	do
		k = write(j->fd, r, sizeof *r);
	while (k < 0 && errno == EINTR);
	if (k < 0)
		return -1;
	if ((size_t)k != sizeof *r) {
		errno = ENOSPC;
		return -1;
	}
	return 0;
}

/* An installed clock (explore's virtual one) is someone else's code: it may
 * touch errno.  Out of line, so the fast path keeps its registers. */
static __attribute__((noinline)) uint64_t journal_clock_other(void)
{
	int saved = errno;
	uint64_t ns = journal_clock_ns();
	errno = saved;
	return ns;
}

/* Fill R's fields (all but magic, pad and check); returns its seq. */
static inline uint64_t journal_fill(const struct journal *j, struct jrec *r, int type, uint32_t op,
				    int err, int64_t a, int64_t b, int64_t c)
{
	uint64_t seq;

	r->type = (uint16_t)type;
	r->worker = j->worker;
	r->pid = j->pid;
	r->op = op;
	r->err = err;
	r->a = a;
	r->b = b;
	r->c = c;
	/* seq before the clock: seq order then never contradicts time order
	 * by more than the gap between these two calls. */
	if (journal_next_seq == journal_seq_from_counter)
		seq = atomic_fetch_add_explicit(journal_seq_counter, 1, memory_order_seq_cst) + 1;
	else
		seq = journal_next_seq();
	r->seq = seq;
	if (journal_clock_ns) {
		r->ns = journal_clock_other();
	} else {
		/* CLOCK_MONOTONIC cannot fail: errno stays as it was */
		struct timespec ts;
		vdso_clock_gettime(CLOCK_MONOTONIC, &ts);
		r->ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
	return seq;
}

/* journal_log's way when the record cannot go straight into the window:
 * memory mode, a plain descriptor, or a window that must grow first. */
static __attribute__((noinline)) uint64_t journal_log_slow(struct journal *j, int type, uint32_t op,
							    int err, int64_t a, int64_t b, int64_t c)
{
	int saved = errno;
	struct jrec local;
	uint64_t seq = 0;

	if (j->map) {
		if (journal_grow(j) == 0) {
			struct jrec *r = (struct jrec *)(void *)(j->map + j->pos);
			seq = journal_fill(j, r, type, op, err, a, b, c);
			journal_seal_head(r);
			r->check = crc32c_rec(r);
			j->pos += sizeof *r;
			journal_ring_publish(j);
		}
	} else if (j->fd >= 0 || j->mem) {
		seq = journal_fill(j, &local, type, op, err, a, b, c);
		if (journal_write(j, &local) < 0)
			seq = 0;
	}
	errno = saved;
	return seq;
}

/*
 * Build and append one record.  Returns its seq, or 0 when it could not be
 * written (seq 0 is never handed out).  errno is the caller's on return either
 * way: workloads journal an error right before they inspect errno again.
 *
 * The way every record of a real run's worker takes: mapped mode with room
 * in the window, the record built in place, checksum last.  Nothing on it
 * touches errno (the sequence is an atomic add, CLOCK_MONOTONIC cannot fail),
 * so it is neither saved nor restored here.
 */
LS_HOT uint64_t journal_log(struct journal *j, int type, uint32_t op, int err,
		     int64_t a, int64_t b, int64_t c)
{
	if (__builtin_expect(!j->map || j->pos + sizeof(struct jrec) > j->ready, 0))
		return journal_log_slow(j, type, op, err, a, b, c);
	struct jrec *r = (struct jrec *)(void *)(j->map + j->pos);
	uint64_t seq = journal_fill(j, r, type, op, err, a, b, c);
	journal_seal_head(r);
	r->check = crc32c_rec(r);
	j->pos += sizeof *r;
	journal_ring_publish(j);
	return seq;
}
