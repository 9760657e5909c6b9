/*
 * journal_read.c - reading journals (see journal.h): one file as a stream of
 * records, a directory merged in seq order, and a record as a JSON line.
 * Moved out of journal.c, which writes them.
 */
#include "journal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
#define JSTREAM_BUF (128 * 1024)
/* With many files, smaller buffers: the buffers of a directory's streams
 * together stay near JSTREAM_ALL (2,048 journals: 4 KiB each). */
#define JSTREAM_ALL (8u << 20)
#define JSTREAM_MIN (4 * 1024)
/* Records checked together (journal_valid_run), 4 KiB of them. */
#define JSTREAM_CHECK 64

static size_t jstream_bufsize(size_t nfiles)
{
	size_t b = nfiles ? JSTREAM_ALL / nfiles : JSTREAM_BUF;
	if (b > JSTREAM_BUF)
		b = JSTREAM_BUF;
	if (b < JSTREAM_MIN)
		b = JSTREAM_MIN;
	return b - b % sizeof(struct jrec);
}

struct jstream {
	int fd;
	unsigned idx;         /* file order: breaks ties between equal seqs */
	uint64_t left;        /* bytes of the file not read into buf yet */
	size_t have, pos;     /* bytes in buf; offset of the next record */
	size_t vend;          /* buf[pos, vend) is whole records already found valid */
	size_t torn;          /* set when the stream ends */
	int unordered;        /* a record came with a smaller seq than the one before */
	uint64_t last_seq;    /* seq of the previous record */
	size_t count;         /* records delivered */
	const struct jrec *cur; /* the current record, in buf (valid until the next jstream_next) */
	unsigned char *buf;   /* bufsize bytes, the caller's */
	size_t bufsize;
};

static int jstream_open(struct jstream *s, const char *path, unsigned idx, unsigned char *buf,
			size_t bufsize)
{
	struct stat st;

	memset(s, 0, sizeof *s);
	s->buf = buf;
	s->bufsize = bufsize;
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
	/* read once, front to back: a disk file system may read ahead further */
	(void)posix_fadvise(s->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
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
		size_t want = s->left < s->bufsize ? (size_t)s->left : s->bufsize;
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

/* Make the record at s->pos, already found valid, the current one. */
static inline void jstream_take(struct jstream *s)
{
	const struct jrec *p = (const struct jrec *)(const void *)(s->buf + s->pos);
	s->cur = p;
	if (s->count && p->seq < s->last_seq)
		s->unordered = 1;
	s->last_seq = p->seq;
	s->count++;
	s->pos += sizeof(struct jrec);
}

/* Load the next record into s->cur: 1 got one, 0 the stream ended (torn
 * set), -1 read error with errno.  The records of a buffer are checked
 * together when it is filled (journal_valid_run): the common call only
 * steps over one already found valid. */
static int jstream_next(struct jstream *s)
{
	if (__builtin_expect(s->pos >= s->vend, 0)) {
		if (s->have - s->pos < sizeof(struct jrec)) {
			memmove(s->buf, s->buf + s->pos, s->have - s->pos);
			s->have -= s->pos;
			s->pos = 0;
			while (s->left && s->have < s->bufsize) {
				size_t want = s->bufsize - s->have;
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
		/* read in place: pos is a multiple of the record size from an
		 * 8-byte aligned buffer; checked JSTREAM_CHECK records at a
		 * time, so they are still in the first-level cache when the
		 * caller reads them */
		size_t whole = (s->have - s->pos) / sizeof(struct jrec);
		s->vend = s->pos + sizeof(struct jrec) *
			  journal_valid_run((const struct jrec *)(const void *)(s->buf + s->pos),
					    whole < JSTREAM_CHECK ? whole : JSTREAM_CHECK);
		if (s->vend == s->pos) {
			s->torn = jstream_tail(s);
			s->vend = 0;
			return 0;
		}
	}
	jstream_take(s);
	return 1;
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
	struct jstream *s = malloc(sizeof *s + JSTREAM_BUF);
	struct jrec *arr = NULL;
	size_t cnt = 0, cap = 0;
	int rc, saved;

	*out = NULL;
	*n = 0;
	*torn = 0;
	if (!s)
		return -1;
	if (jstream_open(s, path, 0, (unsigned char *)(s + 1), JSTREAM_BUF) < 0)
		goto out_free_stream;
	if (journal_reserve(&arr, &cap, (size_t)(s->left / sizeof(struct jrec)) + 1) < 0)
		goto out_close;
	while ((rc = jstream_next(s)) == 1) {
		if (cnt == cap && journal_reserve(&arr, &cap, cap * 2) < 0)
			goto out_close;
		arr[cnt++] = *s->cur;
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
	if (a->cur->seq != b->cur->seq)
		return a->cur->seq < b->cur->seq;
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
 * The cursor: the k-way merge of a directory's streams, one record at a
 * time, in memory bounded by the number of files (a heap and a small buffer
 * per file), never by the history.
 */
struct journal_cursor {
	char dirpath[4096];
	char **names;
	size_t nnames, opened;
	struct jstream *s;
	struct jstream **h;   /* heap of live streams */
	size_t nh;
	unsigned char *bufs;
	size_t total;         /* whole records the files held when opened */
	int primed, ended;
	struct jstream *last; /* the stream the last record came from: advanced on the next call */
	uint64_t bound_seq;   /* with last: the key (seq, file) of the first of the other */
	unsigned bound_idx;   /* streams; while last's next record comes before it, it is next */
};

static int journal_list(const char *dirpath, char ***names_out, size_t *n_out)
{
	char **names = NULL;
	size_t nnames = 0, capnames = 0;
	struct dirent *de;
	DIR *d = opendir(dirpath);

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
	/* name order: equal seqs (never expected) then fall in a fixed order */
	if (nnames)
		qsort(names, nnames, sizeof *names, journal_name_cmp);
	*names_out = names;
	*n_out = nnames;
	return 0;

out_nomem:
	closedir(d);
	for (size_t i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	errno = ENOMEM;
	return -1;
}

void journal_cursor_close(struct journal_cursor *c)
{
	if (!c)
		return;
	int saved = errno;
	for (size_t i = 0; i < c->opened; i++)
		jstream_close(&c->s[i]);
	for (size_t i = 0; i < c->nnames; i++)
		free(c->names[i]);
	free(c->names);
	free(c->s);
	free(c->h);
	free(c->bufs);
	free(c);
	errno = saved;
}

int journal_cursor_open(const char *outdir, struct journal_cursor **out, unsigned *files)
{
	char path[4096 + 256];
	struct journal_cursor *c = calloc(1, sizeof *c);

	*out = NULL;
	if (files)
		*files = 0;
	if (!c)
		return -1;
	snprintf(c->dirpath, sizeof c->dirpath, "%s/journal", outdir);
	if (journal_list(c->dirpath, &c->names, &c->nnames) < 0) {
		free(c);
		return -1;
	}
	size_t bsz = jstream_bufsize(c->nnames), k = c->nnames ? c->nnames : 1;
	c->s = malloc(k * sizeof *c->s);
	c->h = malloc(k * sizeof *c->h);
	c->bufs = malloc(k * bsz);
	if (!c->s || !c->h || !c->bufs) {
		journal_cursor_close(c);
		errno = ENOMEM;
		return -1;
	}
	for (; c->opened < c->nnames; c->opened++) {
		snprintf(path, sizeof path, "%s/%s", c->dirpath, c->names[c->opened]);
		if (jstream_open(&c->s[c->opened], path, (unsigned)c->opened, c->bufs + c->opened * bsz, bsz) < 0) {
			journal_cursor_close(c);
			return -1;
		}
		c->total += (size_t)(c->s[c->opened].left / sizeof(struct jrec));
	}
	if (files)
		*files = (unsigned)c->nnames;
	*out = c;
	return 0;
}

int journal_cursor_next(struct journal_cursor *c, const struct jrec **r)
{
	int rc;

	if (!c->primed) {
		c->primed = 1;
		for (size_t i = 0; i < c->nnames; i++) {
			rc = jstream_next(&c->s[i]);
			if (rc < 0)
				return -1;
			if (rc == 1)
				c->h[c->nh++] = &c->s[i];
		}
		for (size_t i = c->nh / 2; i-- > 0;)
			jheap_down(c->h, c->nh, i);
	}
	if (c->last) {
		/* the record handed out last time is done with: move its stream on */
		struct jstream *top = c->last;
		/* the common case: its next record is already in its buffer, found
		 * valid, and still before every other stream's (what jheap_down
		 * would find: the top stays where it is) */
		if (top->pos < top->vend) {
			const struct jrec *p = (const struct jrec *)(const void *)(top->buf + top->pos);
			if (p->seq < c->bound_seq || (p->seq == c->bound_seq && top->idx < c->bound_idx)) {
				jstream_take(top);
				*r = p;
				return 1;
			}
		}
		c->last = NULL;
		rc = jstream_next(top);
		if (rc < 0)
			return -1;
		if (rc == 0)
			c->h[0] = c->h[--c->nh];
		if (c->nh > 1)
			jheap_down(c->h, c->nh, 0);
	}
	if (!c->nh) {
		c->ended = 1;
		return 0;
	}
	c->last = c->h[0];
	*r = c->h[0]->cur;
	/* the first of the others is one of the top's children */
	c->bound_seq = UINT64_MAX;
	c->bound_idx = UINT_MAX;
	for (size_t i = 1; i < 3 && i < c->nh; i++) {
		const struct jstream *o = c->h[i];
		if (o->cur->seq < c->bound_seq || (o->cur->seq == c->bound_seq && o->idx < c->bound_idx)) {
			c->bound_seq = o->cur->seq;
			c->bound_idx = o->idx;
		}
	}
	return 1;
}

/* The next record, and after it every record of the same stream that is
 * already in its buffer, found valid, and still before the other streams'
 * first: the records journal_cursor_next would hand out one by one. */
int journal_cursor_run(struct journal_cursor *c, const struct jrec **r, size_t *n)
{
	int rc = journal_cursor_next(c, r);
	if (rc != 1)
		return rc;
	struct jstream *top = c->last;
	size_t m = 1;
	while (top->pos < top->vend) {
		const struct jrec *p = (const struct jrec *)(const void *)(top->buf + top->pos);
		if (!(p->seq < c->bound_seq || (p->seq == c->bound_seq && top->idx < c->bound_idx)))
			break;
		jstream_take(top);
		m++;
	}
	*n = m;
	return 1;
}

size_t journal_cursor_total(const struct journal_cursor *c)
{
	return c->total;
}

int journal_cursor_finish(struct journal_cursor *c, size_t *torn, char *damaged, size_t dlen)
{
	size_t torn_total = 0;
	int unordered = 0;

	if (damaged && dlen)
		damaged[0] = 0;
	for (size_t i = 0; i < c->nnames; i++) {
		unordered |= c->s[i].unordered;
		torn_total += c->s[i].torn;
		if (damaged && dlen && !damaged[0] && c->s[i].torn > sizeof(struct jrec))
			snprintf(damaged, dlen, "journal/%s is damaged: %zu bytes after its first %zu records are not valid records",
				 c->names[i], c->s[i].torn, c->s[i].count);
	}
	if (torn)
		*torn = torn_total;
	return unordered ? 0 : 1;
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
	struct journal_cursor *c;
	struct jrec *all = NULL;
	const struct jrec *r;
	size_t cnt = 0, torn_total = 0;
	int rc;

	*out = NULL;
	*n = 0;
	*torn = 0;
	if (journal_cursor_open(outdir, &c, files) < 0)
		return -1;
	/* one array, sized once: every whole record the files can hold */
	all = malloc((c->total ? c->total : 1) * sizeof *all);
	if (!all) {
		journal_cursor_close(c);
		errno = ENOMEM;
		return -1;
	}
	while ((rc = journal_cursor_next(c, &r)) == 1 && cnt < c->total)
		all[cnt++] = *r;
	if (rc < 0)
		goto out_err;
	if (!journal_cursor_finish(c, &torn_total, damaged, dlen) &&
	    journal_concat_sort(c->dirpath, c->names, c->nnames, &all, &cnt, &torn_total) < 0)
		goto out_err;
	journal_cursor_close(c);
	if (cnt == 0) {
		free(all);
		all = NULL;
	}
	*out = all;
	*n = cnt;
	*torn = torn_total;
	return 0;

out_err:
	free(all);
	journal_cursor_close(c);
	return -1;
}

/*
 * One JSON line per record:
 * {"seq":..,"ns":..,"worker":3|"driver","pid":..,"op":..,"type":"acquired",
 *  "err":"ENOENT"|null,"a":..,"b":..,"c":..}
 * formatted by hand into a buffer (the same bytes jansson's compact,
 * order-preserving dump gave): `lockstorm dump` prints millions of them.
 */
static char *fmt_u64(char *p, uint64_t v)
{
	char tmp[24];
	int n = 0;
	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *fmt_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return fmt_u64(p, (uint64_t)0 - (uint64_t)v);
	}
	return fmt_u64(p, (uint64_t)v);
}

static char *fmt_lit(char *p, const char *s)
{
	size_t n = strlen(s);
	memcpy(p, s, n);
	return p + n;
}

/* A JSON string, escaped as jansson escapes it; at most 6 bytes per input byte + 2. */
static char *fmt_str(char *p, const char *s, size_t max)
{
	static const char hex[] = "0123456789abcdef";
	*p++ = '"';
	for (size_t i = 0; s[i] && i < max; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '"' || ch == '\\') {
			*p++ = '\\';
			*p++ = (char)ch;
		} else if (ch < 0x20) {
			*p++ = '\\';
			switch (ch) {
			case '\b': *p++ = 'b'; break;
			case '\f': *p++ = 'f'; break;
			case '\n': *p++ = 'n'; break;
			case '\r': *p++ = 'r'; break;
			case '\t': *p++ = 't'; break;
			default:
				p = fmt_lit(p, "u00");
				*p++ = hex[ch >> 4];
				*p++ = hex[ch & 15];
			}
		} else {
			*p++ = (char)ch;
		}
	}
	*p++ = '"';
	return p;
}

#define POINT_NAME_MAX 200

size_t journal_format_json(char *buf, const struct jrec *r)
{
	char *p = buf;
	p = fmt_lit(p, "{\"seq\":");
	p = fmt_i64(p, (int64_t)r->seq);
	p = fmt_lit(p, ",\"ns\":");
	p = fmt_i64(p, (int64_t)r->ns);
	p = fmt_lit(p, ",\"worker\":");
	if (r->worker == JOURNAL_DRIVER)
		p = fmt_lit(p, "\"driver\"");
	else
		p = fmt_u64(p, r->worker);
	p = fmt_lit(p, ",\"pid\":");
	p = fmt_i64(p, r->pid);
	p = fmt_lit(p, ",\"op\":");
	p = fmt_u64(p, r->op);
	p = fmt_lit(p, ",\"type\":\"");
	p = fmt_lit(p, journal_type_name(r->type));
	p = fmt_lit(p, "\",\"err\":");
	if (r->err == 0) {
		p = fmt_lit(p, "null");
	} else {
		const char *en = strerrorname_np(r->err);
		/* an errno this libc has no name for stays a number */
		if (en)
			p = fmt_str(p, en, 64);
		else
			p = fmt_i64(p, r->err);
	}
	p = fmt_lit(p, ",\"a\":");
	p = fmt_i64(p, r->a);
	p = fmt_lit(p, ",\"b\":");
	p = fmt_i64(p, r->b);
	p = fmt_lit(p, ",\"c\":");
	p = fmt_i64(p, r->c);
	if (journal_point_name) {
		/* the records that carry a point hash: name it */
		int64_t h = r->type == EV_FAULT ? r->b : (r->type == EV_STEP || r->type == EV_LIVENESS) ? r->a : 0;
		const char *name = h ? journal_point_name((uint64_t)h) : NULL;
		if (name) {
			p = fmt_lit(p, ",\"point\":");
			p = fmt_str(p, name, POINT_NAME_MAX);
		}
		if (r->type == EV_FAULT && r->a == 1)
			p = fmt_lit(p, ",\"fault\":\"stall\"");
		else if (r->type == EV_FAULT && r->a == 2)
			p = fmt_lit(p, ",\"fault\":\"crash\"");
	}
	*p++ = '}';
	*p++ = '\n';
	*p = '\0';
	return (size_t)(p - buf);
}

void journal_print_json(FILE *f, const struct jrec *r)
{
	char buf[JOURNAL_JSON_MAX];
	size_t n = journal_format_json(buf, r);
	fwrite(buf, 1, n, f);
}
