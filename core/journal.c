/*
 * journal.c - per-worker binary event journals: writing, reading, dumping.
 *
 * A record is a fixed 64-byte struct jrec.  The writer fills it completely
 * (sequence, CLOCK_MONOTONIC time, magic, checksum) and hands it to the kernel
 * in ONE write(2) on an O_APPEND descriptor: a SIGKILL between two records
 * loses nothing already written, and a record is never interleaved with
 * another.  The reader trusts records while magic, checksum and type are
 * right and stops at the first one that is not: everything from there on is
 * the torn tail, reported in bytes, never guessed at.
 */
#include "journal.h"

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

uint64_t (*journal_next_seq)(void) = journal_local_seq;
const char *(*journal_point_name)(uint64_t hash);
uint64_t (*journal_clock_ns)(void);

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
	void *m = mmap(NULL, JOURNAL_WINDOW, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, j->fd, (off_t)off);
	if (m == MAP_FAILED)
		return -1;
	j->map = m;
	j->map_off = off;
	j->pos = (size_t)(at - off);
	return 0;
}

int journal_open_mapped(struct journal *j, const char *path, unsigned worker)
{
	j->map = NULL;
	j->mem = NULL;
	j->fd = -1;
	j->worker = (uint16_t)worker;
	j->pid = (int32_t)getpid();
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	j->fd = fd;
	int64_t end = journal_valid_end(fd);
	if (end < 0 || journal_map_window(j, (uint64_t)end) < 0) {
		int saved = errno;
		close(fd);
		j->fd = -1;
		errno = saved;
		return -1;
	}
	return 0;
}

void journal_close(struct journal *j)
{
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

/* A 32-bit checksum of every byte before `check` (magic and pad included). */
uint32_t journal_checksum(const struct jrec *r)
{
	/* FNV-1a style over 8-byte words (the record is written in the hot
	 * path of every worker: a byte loop cost more than the store itself). */
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

int journal_valid(const struct jrec *r)
{
	return r->magic == JOURNAL_MAGIC && r->type > EV_NONE && r->type < EV__COUNT &&
	       r->check == journal_checksum(r);
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
	r->magic = JOURNAL_MAGIC;
	r->pad = 0;
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
		if (j->pos + sizeof *r > JOURNAL_WINDOW && journal_map_window(j, j->map_off + j->pos) < 0)
			return -1;
		memcpy(j->map + j->pos, r, sizeof *r);
		j->pos += sizeof *r;
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

/*
 * Build and append one record.  Returns its seq, or 0 when it could not be
 * written (seq 0 is never handed out).  errno is the caller's on return either
 * way: workloads journal an error right before they inspect errno again.
 */
uint64_t journal_log(struct journal *j, int type, uint32_t op, int err,
		     int64_t a, int64_t b, int64_t c)
{
	int saved = errno;
	struct jrec r;
	struct timespec ts;
	uint64_t seq;

	if (j->fd < 0 && !j->mem)
		return 0;
	memset(&r, 0, sizeof r);
	r.type = (uint16_t)type;
	r.worker = j->worker;
	r.pid = j->pid;
	r.op = op;
	r.err = err;
	r.a = a;
	r.b = b;
	r.c = c;
	/* seq before the clock: seq order then never contradicts time order
	 * by more than the gap between these two calls. */
	seq = journal_next_seq();
	r.seq = seq;
	if (journal_clock_ns) {
		r.ns = journal_clock_ns();
	} else {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		r.ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
	if (journal_write(j, &r) < 0)
		seq = 0;
	errno = saved;
	return seq;
}
