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
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

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

/*
 * Reading.  A journal is read as a stream of records through a small
 * buffer, up to the size the file had when it was opened (a journal still
 * being written is read as of that moment).  The stream ends at the first
 * short or invalid record; what is left of the file from there is its torn
 * tail.  journal_read_dir merges one stream per file straight into the
 * output array: each file is already in seq order (one process takes its
 * numbers one after another), so a k-way merge needs no second copy of ten
 * million records.  Should a file not be in order after all, the merge is
 * thrown away and the files are concatenated in name order and stable-sorted.
 */
#define JSTREAM_BUF (32 * 1024)

struct jstream {
	int fd;
	unsigned idx;         /* file order: breaks ties between equal seqs */
	uint64_t left;        /* bytes of the file not read into buf yet */
	size_t have, pos;     /* bytes in buf; offset of the next record */
	size_t torn;          /* set when the stream ends */
	int unordered;        /* a record came with a smaller seq than the one before */
	uint64_t last_seq;    /* seq of the previous record */
	size_t count;         /* records delivered */
	struct jrec cur;
	unsigned char buf[JSTREAM_BUF];
};

static int jstream_open(struct jstream *s, const char *path, unsigned idx)
{
	struct stat st;

	memset(s, 0, offsetof(struct jstream, buf));
	s->idx = idx;
	s->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s->fd < 0)
		return -1;
	if (fstat(s->fd, &st) < 0) {
		int saved = errno;

		close(s->fd);
		s->fd = -1;
		errno = saved;
		return -1;
	}
	s->left = st.st_size > 0 ? (uint64_t)st.st_size : 0;
	return 0;
}

static void jstream_close(struct jstream *s)
{
	if (s->fd >= 0) {
		int saved = errno;

		close(s->fd);
		errno = saved;
	}
	s->fd = -1;
}

/* The stream ended at s->pos: how many bytes from there to the last
 * non-zero byte of the file.  A mapped journal whose writer was killed ends
 * in zeros (space taken ahead of need): those are not torn. */
static size_t jstream_tail(struct jstream *s)
{
	size_t torn = 0, seen = 0;
	for (size_t i = s->pos; i < s->have; i++) {
		seen++;
		if (s->buf[i])
			torn = seen;
	}
	while (s->left) {
		size_t want = s->left < sizeof s->buf ? (size_t)s->left : sizeof s->buf;
		ssize_t k = read(s->fd, s->buf, want);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		for (ssize_t i = 0; i < k; i++) {
			seen++;
			if (s->buf[i])
				torn = seen;
		}
		s->left -= (uint64_t)k;
	}
	s->have = s->pos = 0;
	return torn;
}

/* Load the next record into s->cur: 1 got one, 0 the stream ended (torn
 * set), -1 read error with errno. */
static int jstream_next(struct jstream *s)
{
	if (s->have - s->pos < sizeof(struct jrec)) {
		memmove(s->buf, s->buf + s->pos, s->have - s->pos);
		s->have -= s->pos;
		s->pos = 0;
		while (s->left && s->have < sizeof s->buf) {
			size_t want = sizeof s->buf - s->have;
			ssize_t k;

			if (want > s->left)
				want = (size_t)s->left;
			k = read(s->fd, s->buf + s->have, want);
			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0)
				return -1;
			if (k == 0) {
				s->left = 0; /* truncated under us: what we have is all */
				break;
			}
			s->have += (size_t)k;
			s->left -= (uint64_t)k;
		}
	}
	if (s->have - s->pos >= sizeof(struct jrec)) {
		memcpy(&s->cur, s->buf + s->pos, sizeof s->cur);
		if (journal_valid(&s->cur)) {
			if (s->count && s->cur.seq < s->last_seq)
				s->unordered = 1;
			s->last_seq = s->cur.seq;
			s->count++;
			s->pos += sizeof(struct jrec);
			return 1;
		}
	}
	s->torn = jstream_tail(s);
	return 0;
}

/* Grow *arr to hold at least want records. */
static int journal_reserve(struct jrec **arr, size_t *cap, size_t want)
{
	struct jrec *na;

	if (want <= *cap)
		return 0;
	na = realloc(*arr, want * sizeof *na);
	if (!na) {
		errno = ENOMEM;
		return -1;
	}
	*arr = na;
	*cap = want;
	return 0;
}

int journal_read_file(const char *path, struct jrec **out, size_t *n, size_t *torn)
{
	struct jstream *s = malloc(sizeof *s);
	struct jrec *arr = NULL;
	size_t cnt = 0, cap = 0;
	int rc, saved;

	*out = NULL;
	*n = 0;
	*torn = 0;
	if (!s)
		return -1;
	if (jstream_open(s, path, 0) < 0)
		goto out_free_stream;
	if (journal_reserve(&arr, &cap, (size_t)(s->left / sizeof(struct jrec)) + 1) < 0)
		goto out_close;
	while ((rc = jstream_next(s)) == 1) {
		if (cnt == cap && journal_reserve(&arr, &cap, cap * 2) < 0)
			goto out_close;
		arr[cnt++] = s->cur;
	}
	if (rc < 0)
		goto out_close;
	jstream_close(s);
	if (cnt == 0) {
		free(arr);
		arr = NULL;
	}
	*out = arr;
	*n = cnt;
	*torn = s->torn;
	free(s);
	return 0;

out_close:
	jstream_close(s);
out_free_stream:
	saved = errno;
	free(arr);
	free(s);
	errno = saved;
	return -1;
}

static int journal_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int journal_is_bin(const char *name)
{
	size_t l = strlen(name);

	return name[0] != '.' && l > 4 && strcmp(name + l - 4, ".bin") == 0;
}

/*
 * Stable sort by seq, the fallback when a file was not in seq order: a
 * natural merge sort -- find the ascending runs, merge neighbours until one
 * is left.  O(n log runs); needs a second array of n records.
 */
static int journal_sort(struct jrec *r, size_t n)
{
	size_t *run, nrun = 0, cap = 16;
	struct jrec *tmp;

	if (n < 2)
		return 0;
	run = malloc(cap * sizeof *run);
	tmp = malloc(n * sizeof *tmp);
	if (!run || !tmp)
		goto out_nomem;
	/* run[k] is the start of run k; run[nrun] = n closes the last one. */
	run[nrun++] = 0;
	for (size_t i = 1; i < n; i++) {
		if (r[i].seq >= r[i - 1].seq)
			continue;
		if (nrun + 1 >= cap) {
			size_t *nr = realloc(run, cap * 2 * sizeof *run);

			if (!nr)
				goto out_nomem;
			run = nr;
			cap *= 2;
		}
		run[nrun++] = i;
	}
	run[nrun] = n;

	while (nrun > 1) {
		size_t out = 0;

		for (size_t k = 0; k < nrun; k += 2) {
			size_t lo = run[k], mid = run[k + 1], hi;

			if (k + 1 >= nrun) {
				/* odd run out: carried over unchanged */
				run[out++] = lo;
				continue;
			}
			hi = run[k + 2];
			if (r[mid - 1].seq > r[mid].seq) {
				size_t i = lo, j = mid, o = lo;

				/* ties take the left run first: stable */
				while (i < mid && j < hi)
					tmp[o++] = r[j].seq < r[i].seq ? r[j++] : r[i++];
				while (i < mid)
					tmp[o++] = r[i++];
				while (j < hi)
					tmp[o++] = r[j++];
				memcpy(r + lo, tmp + lo, (hi - lo) * sizeof *r);
			}
			run[out++] = lo;
		}
		run[out] = n;
		nrun = out;
	}
	free(tmp);
	free(run);
	return 0;

out_nomem:
	free(tmp);
	free(run);
	errno = ENOMEM;
	return -1;
}

/* Heap order of live streams: by current seq, then file order. */
static int jstream_before(const struct jstream *a, const struct jstream *b)
{
	if (a->cur.seq != b->cur.seq)
		return a->cur.seq < b->cur.seq;
	return a->idx < b->idx;
}

static void jheap_down(struct jstream **h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct jstream *t;

		if (l < n && jstream_before(h[l], h[m]))
			m = l;
		if (r < n && jstream_before(h[r], h[m]))
			m = r;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* Merge the streams into arr (room for every record they can hold). */
static int journal_merge(struct jstream *s, size_t ns, struct jrec *arr, size_t *n)
{
	struct jstream **h = malloc((ns ? ns : 1) * sizeof *h);
	size_t nh = 0, cnt = 0;
	int rc;

	if (!h)
		return -1;
	for (size_t i = 0; i < ns; i++) {
		rc = jstream_next(&s[i]);
		if (rc < 0)
			goto out_free_heap;
		if (rc == 1)
			h[nh++] = &s[i];
	}
	for (size_t i = nh / 2; i-- > 0;)
		jheap_down(h, nh, i);
	while (nh) {
		struct jstream *top = h[0];

		arr[cnt++] = top->cur;
		rc = jstream_next(top);
		if (rc < 0)
			goto out_free_heap;
		if (rc == 0)
			h[0] = h[--nh];
		jheap_down(h, nh, 0);
	}
	free(h);
	*n = cnt;
	return 0;

out_free_heap:
	free(h);
	return -1;
}

/*
 * The slow path for a file out of seq order: read the files again, one after
 * another in name order, into *all, and stable-sort the whole.
 */
static int journal_concat_sort(const char *dirpath, char *const *names, size_t nnames,
			       struct jrec **all, size_t *n, size_t *torn)
{
	char path[4096 + 256];
	size_t cnt = 0, cap = *n, torn_total = 0;

	for (size_t i = 0; i < nnames; i++) {
		struct jrec *recs;
		size_t k, t;

		snprintf(path, sizeof path, "%s/%s", dirpath, names[i]);
		if (journal_read_file(path, &recs, &k, &t) < 0)
			return -1;
		if (journal_reserve(all, &cap, cnt + k) < 0) {
			free(recs);
			return -1;
		}
		if (k)
			memcpy(*all + cnt, recs, k * sizeof *recs);
		free(recs);
		cnt += k;
		torn_total += t;
	}
	if (journal_sort(*all, cnt) < 0)
		return -1;
	*n = cnt;
	*torn = torn_total;
	return 0;
}

int journal_read_dir(const char *outdir, struct jrec **out, size_t *n, size_t *torn,
		     unsigned *files)
{
	return journal_read_dir_checked(outdir, out, n, torn, files, NULL, 0);
}

/*
 * A torn tail is what a SIGKILL leaves: at most one record's worth of bytes
 * after the last valid record (a short write(2), or a mapped store cut
 * short, then zeros).  More than that is damage: a record whose checksum
 * fails with more of the file after it, or bytes that were never records.
 */
int journal_read_dir_checked(const char *outdir, struct jrec **out, size_t *n, size_t *torn,
			     unsigned *files, char *damaged, size_t dlen)
{
	char dirpath[4096], path[4096 + 256];
	char **names = NULL;
	size_t nnames = 0, capnames = 0, total = 0, cnt = 0, opened = 0, torn_total = 0;
	struct jstream *s = NULL;
	struct jrec *all = NULL;
	struct dirent *de;
	DIR *d;
	int saved, unordered = 0;

	*out = NULL;
	*n = 0;
	*torn = 0;
	if (files)
		*files = 0;
	snprintf(dirpath, sizeof dirpath, "%s/journal", outdir);
	d = opendir(dirpath);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (!journal_is_bin(de->d_name))
			continue;
		if (nnames == capnames) {
			size_t nc = capnames ? capnames * 2 : 64;
			char **nn = realloc(names, nc * sizeof *nn);

			if (!nn)
				goto out_nomem;
			names = nn;
			capnames = nc;
		}
		names[nnames] = strdup(de->d_name);
		if (!names[nnames])
			goto out_nomem;
		nnames++;
	}
	closedir(d);
	d = NULL;
	/* name order: equal seqs (never expected) then fall in a fixed order */
	if (nnames)
		qsort(names, nnames, sizeof *names, journal_name_cmp);

	s = malloc((nnames ? nnames : 1) * sizeof *s);
	if (!s)
		goto out_nomem;
	for (; opened < nnames; opened++) {
		snprintf(path, sizeof path, "%s/%s", dirpath, names[opened]);
		if (jstream_open(&s[opened], path, (unsigned)opened) < 0)
			goto out_err;
		total += (size_t)(s[opened].left / sizeof(struct jrec));
	}
	/* one array, sized once: every whole record the files can hold */
	all = malloc((total ? total : 1) * sizeof *all);
	if (!all)
		goto out_nomem;
	if (journal_merge(s, nnames, all, &cnt) < 0)
		goto out_err;
	if (damaged && dlen)
		damaged[0] = 0;
	for (size_t i = 0; i < nnames; i++) {
		unordered |= s[i].unordered;
		torn_total += s[i].torn;
		if (damaged && dlen && !damaged[0] && s[i].torn > sizeof(struct jrec))
			snprintf(damaged, dlen, "journal/%s is damaged: %zu bytes after its first %zu records are not valid records",
				 names[i], s[i].torn, s[i].count);
		jstream_close(&s[i]);
	}
	if (unordered && journal_concat_sort(dirpath, names, nnames, &all, &cnt, &torn_total) < 0)
		goto out_err;
	if (cnt == 0) {
		free(all);
		all = NULL;
	}
	for (size_t i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	free(s);
	*out = all;
	*n = cnt;
	*torn = torn_total;
	if (files)
		*files = (unsigned)nnames;
	return 0;

out_nomem:
	errno = ENOMEM;
out_err:
	saved = errno;
	if (d)
		closedir(d);
	for (size_t i = 0; i < opened; i++)
		jstream_close(&s[i]);
	for (size_t i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	free(s);
	free(all);
	errno = saved;
	return -1;
}

/*
 * One JSON line per record:
 * {"seq":..,"ns":..,"worker":3|"driver","pid":..,"op":..,"type":"acquired",
 *  "err":"ENOENT"|null,"a":..,"b":..,"c":..}
 */
void journal_print_json(FILE *f, const struct jrec *r)
{
	json_t *o = json_object();
	char *s;

	if (!o)
		return;
	json_object_set_new(o, "seq", json_integer((json_int_t)r->seq));
	json_object_set_new(o, "ns", json_integer((json_int_t)r->ns));
	if (r->worker == JOURNAL_DRIVER)
		json_object_set_new(o, "worker", json_string("driver"));
	else
		json_object_set_new(o, "worker", json_integer(r->worker));
	json_object_set_new(o, "pid", json_integer(r->pid));
	json_object_set_new(o, "op", json_integer(r->op));
	json_object_set_new(o, "type", json_string(journal_type_name(r->type)));
	if (r->err == 0) {
		json_object_set_new(o, "err", json_null());
	} else {
		const char *en = strerrorname_np(r->err);

		/* an errno this libc has no name for stays a number */
		json_object_set_new(o, "err", en ? json_string(en) : json_integer(r->err));
	}
	json_object_set_new(o, "a", json_integer(r->a));
	json_object_set_new(o, "b", json_integer(r->b));
	json_object_set_new(o, "c", json_integer(r->c));
	if (journal_point_name) {
		/* the records that carry a point hash: name it */
		int64_t h = r->type == EV_FAULT ? r->b : (r->type == EV_STEP || r->type == EV_LIVENESS) ? r->a : 0;
		const char *name = h ? journal_point_name((uint64_t)h) : NULL;
		if (name)
			json_object_set_new(o, "point", json_string(name));
		if (r->type == EV_FAULT && r->a == 1)
			json_object_set_new(o, "fault", json_string("stall"));
		else if (r->type == EV_FAULT && r->a == 2)
			json_object_set_new(o, "fault", json_string("crash"));
	}
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (s) {
		fputs(s, f);
		fputc('\n', f);
		free(s);
	}
	json_decref(o);
}
