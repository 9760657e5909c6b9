/*
 * append.c - the `append` workload: quiver's session journal, appendEvent
 * and getSnapshot in both revisions (PROTOCOLS.md §8).
 *
 *   rev=legacy   journal-legacy, quiver 0.8.0: the per-process cache is keyed
 *                by session id only and never invalidated by other processes
 *                (K-JL-1: duplicate seqs); getSnapshot writes the snapshot on
 *                every read (K-JL-2).
 *   rev=append   journal-append, quiver 1.0.0: the cache is keyed by the
 *                journal's (path, size, mtime); the snapshot carries
 *                __journalBytes/__nextSeq and is trusted only on an exact byte
 *                match; getSnapshot is read-only.
 *   locked=1     appendEvent runs under the run's lock protocol (worker_acquire
 *                .. worker_release).  The origin runs it under no lock at all
 *                (§0.2 item 10): locked=0, the default.
 *   writers=K    workers 0..K-1 only append, the others only call getSnapshot
 *                (read_pct is then not used); 0, the default: every worker
 *                does both, read_pct of its ops being reads.  One writer and
 *                readers is K-JL-2 without K-JL-1: the writer's own cache is
 *                always right, so a wrong snapshot is a reader's.
 *
 * Files, beside each other in the store folder:
 *   <state file>                    the primary journal (JSONL).  The driver
 *                                   copies it to final-state.json, so the
 *                                   checker reads the final journal there.
 *   <state>.snapshot.json           the snapshot (<state> = the state file's
 *                                   name without .json/.jsonl)
 *   legacy/<state file's name>      the legacy journal; seeded with
 *                                   legacy_events lines at setup (0: none), so
 *                                   that the first appenders race on the copy
 *
 * A line: {"seq":n,"id":"session","type":"checkpoint","ts":"<ISO>","event":
 * {"id":..,"type":..,"w":<worker>,"op":<op>}}.  w and op let the checker tell
 * whose line it is.  The derived state ("snapshot") keeps what the seq rules
 * need: {"id","events","lastSeq","diagnostics"} (counts; the origin's phase
 * fields do not change a sequence number), and the snapshot file adds
 * "by":{"w","op","call"} (who wrote it: "appendEvent", "getSnapshot") for the
 * checker, as a line's w and op do; a reader ignores it.
 *
 * Steps (labels as in PROTOCOLS.md §8):
 *
 *   appendEvent, rev=legacy                 appendEvent, rev=append
 *     JL1 exists primary                      JA1 exists primary
 *     JL2 exists legacy                       JA2 exists legacy
 *     JL3 copy legacy -> primary (if only     JA3 copy legacy -> primary (if only
 *         the legacy one exists)                  the legacy one exists); drop the cache
 *     prior := cache, else REBUILD            prior := READ_STATE
 *     JL5 journal-append seq := prior.next    JA4 journal-append seq := prior.next
 *     cache := apply, next+1                  PERSIST(apply, next+1)
 *     JL6 snapshot-write (no meta)
 *
 *   READ_STATE: JR0 readable path; RS1 stat; same (path, size, mtime) as the
 *     cache: the cache | RS2 snapshot-read: exact __journalBytes, integer
 *     __nextSeq, same id: hydrate | RS3 journal-read: REBUILD, keyed by the
 *     PRE-read stat.
 *   PERSIST: JR0; PS1 stat (after our append); PS2 snapshot-write in place
 *     (O_TRUNC, then the bytes: "mid" is between the two).
 *   REBUILD: exists + read the whole journal; split on \n, skip blank lines,
 *     a line that does not parse is a diagnostic; next = max(1, max seq + 1).
 *   getSnapshot: legacy REBUILD + JL7 snapshot-write | append READ_STATE.
 *
 * Journal: every append that returned is an EV_APPEND (a = seq, b = 0: the
 * byte offset of an O_APPEND write is not known, c = where seq came from:
 * 1 cache, 2 snapshot, 3 replay); a failed append or snapshot write is an
 * EV_WRITE_ERROR; a getSnapshot is an EV_READ (a = next - 1, b = source, c =
 * 1 + the bytes of the primary journal it replayed when it wrote that replay
 * to the snapshot file, 0 when it wrote nothing: rev=legacy's JL7, K-JL-2).
 * Locked appends log EV_COMMIT_BEGIN (a = seq) just before the append, so
 * zombie-write sees an append made after the lock was taken over.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../faults/fsx.h"
#include "workload.h"

enum { AP_REV, AP_LOCKED, AP_READ_PCT, AP_LEGACY_EVENTS, AP_WRITERS, AP_DURABLE, AP_NPARAMS };
enum { AP_REV_LEGACY, AP_REV_APPEND };
enum { AP_SRC_CACHE = 1, AP_SRC_SNAPSHOT = 2, AP_SRC_REPLAY = 3 };

static const char *const ap_rev_choices[] = { "legacy", "append", NULL };

static const struct param ap_params[] = {
	[AP_REV] = { "rev", AP_REV_LEGACY, PU_CHOICE, ap_rev_choices,
		     "legacy: journal-legacy (quiver 0.8.0); append: journal-append (quiver 1.0.0)" },
	[AP_LOCKED] = { "locked", 0, PU_COUNT, NULL,
			"1: appendEvent under the run's lock protocol; 0: under no lock (the origin)" },
	[AP_READ_PCT] = { "read_pct", 0, PU_COUNT, NULL,
			  "percent of ops that are getSnapshot instead of appendEvent" },
	[AP_LEGACY_EVENTS] = { "legacy_events", 0, PU_COUNT, NULL,
			       "lines seeded into the legacy journal (the copy race); 0: no legacy journal" },
	[AP_WRITERS] = { "writers", 0, PU_COUNT, NULL,
			 "K > 0: workers 0..K-1 only append, the rest only read (getSnapshot); "
			 "0: every worker does both (read_pct)" },
	[AP_DURABLE] = { "durable", 0, PU_COUNT, NULL,
			 "1: each journal append is fsync'd, and its folder when the append made the journal "
			 "(a control: neither quiver revision does); 0: as the origin (a power loss may drop "
			 "an acknowledged event)" },
	[AP_NPARAMS] = { NULL, 0, PU_COUNT, NULL, NULL },
};

/* Point names are written once, in ap_points[] (order = `lockstorm list points`);
 * a step fires PT(NAME), the table's own entry: the seam keys by address. */
enum ap_point {
	AP_PT_APPEND_AFTER_ACQUIRE,
	AP_PT_APPEND_AFTER_EXISTS_PRIMARY,
	AP_PT_APPEND_AFTER_EXISTS_LEGACY,
	AP_PT_APPEND_AFTER_LEGACY_COPY,
	AP_PT_APPEND_AFTER_READ_STATE,
	AP_PT_APPEND_AFTER_JOURNAL_APPEND,
	AP_PT_APPEND_MID_SNAPSHOT_WRITE,
	AP_PT_APPEND_AFTER_SNAPSHOT_WRITE,
	AP_PT_APPEND_BEFORE_RELEASE,
	AP_PT_READ_AFTER_READABLE,
	AP_PT_READ_AFTER_STAT,
	AP_PT_READ_AFTER_SNAPSHOT_READ,
	AP_PT_READ_AFTER_JOURNAL_READ,
	AP_PT_PERSIST_AFTER_STAT,
	AP_PT_PERSIST_MID_SNAPSHOT_WRITE,
	AP_PT_PERSIST_AFTER_SNAPSHOT_WRITE,
	AP_PT_GET_MID_SNAPSHOT_WRITE,
	AP_PT_GET_AFTER_SNAPSHOT_WRITE,
	AP_NPOINTS
};

static const char *const ap_points[] = {
	[AP_PT_APPEND_AFTER_ACQUIRE] = "append/append/after-acquire",
	[AP_PT_APPEND_AFTER_EXISTS_PRIMARY] = "append/append/after-exists-primary",
	[AP_PT_APPEND_AFTER_EXISTS_LEGACY] = "append/append/after-exists-legacy",
	[AP_PT_APPEND_AFTER_LEGACY_COPY] = "append/append/after-legacy-copy",
	[AP_PT_APPEND_AFTER_READ_STATE] = "append/append/after-read-state",
	[AP_PT_APPEND_AFTER_JOURNAL_APPEND] = "append/append/after-journal-append",
	[AP_PT_APPEND_MID_SNAPSHOT_WRITE] = "append/append/mid-snapshot-write",
	[AP_PT_APPEND_AFTER_SNAPSHOT_WRITE] = "append/append/after-snapshot-write",
	[AP_PT_APPEND_BEFORE_RELEASE] = "append/append/before-release",
	[AP_PT_READ_AFTER_READABLE] = "append/read/after-readable",
	[AP_PT_READ_AFTER_STAT] = "append/read/after-stat",
	[AP_PT_READ_AFTER_SNAPSHOT_READ] = "append/read/after-snapshot-read",
	[AP_PT_READ_AFTER_JOURNAL_READ] = "append/read/after-journal-read",
	[AP_PT_PERSIST_AFTER_STAT] = "append/persist/after-stat",
	[AP_PT_PERSIST_MID_SNAPSHOT_WRITE] = "append/persist/mid-snapshot-write",
	[AP_PT_PERSIST_AFTER_SNAPSHOT_WRITE] = "append/persist/after-snapshot-write",
	[AP_PT_GET_MID_SNAPSHOT_WRITE] = "append/get/mid-snapshot-write",
	[AP_PT_GET_AFTER_SNAPSHOT_WRITE] = "append/get/after-snapshot-write",
	[AP_NPOINTS] = NULL,
};
#define PT(name) ap_points[AP_PT_##name]

#define AP_SESSION "session"

/* The derived state: what applyEvent keeps that a sequence number depends on. */
struct ap_snap {
	int64_t events;      /* events applied */
	int64_t last_seq;    /* seq of the last one applied, 0 if none */
	int64_t diagnostics; /* journal_parse_failed diagnostics */
};

/*
 * The per-process cache.  The origin keeps it in a module-level Map of each
 * process; a worker is a process, so one static per process is exactly that
 * (it is reset when another worker's op runs in this process: unit tests).
 */
struct ap_cache {
	const struct worker *owner;
	int valid;
	struct ap_snap snap;
	int64_t next_seq;
	/* rev=append's key: (path, size, mtime) */
	int on_legacy;      /* the readable path was the legacy journal */
	int64_t size;       /* -1: no file */
	int64_t mtime_ns;   /* -1: no file */
};
static struct ap_cache ap_cache;

static void ap_reset(void)
{
	memset(&ap_cache, 0, sizeof ap_cache);
}

struct ap_paths {
	char primary[PATH_MAX];
	char legacy[PATH_MAX + 16];
	char snapshot[PATH_MAX + 32];
};

/* ---- files ---- */

static void ap_paths(const char *state_file, struct ap_paths *p)
{
	char dirbuf[PATH_MAX], basebuf[PATH_MAX], stem[PATH_MAX];
	const char *dir, *base;
	size_t n;

	/* dirname/basename may return a pointer into their argument: copies */
	snprintf(p->primary, sizeof p->primary, "%s", state_file);
	snprintf(dirbuf, sizeof dirbuf, "%s", state_file);
	snprintf(basebuf, sizeof basebuf, "%s", state_file);
	dir = dirname(dirbuf);
	base = basename(basebuf);
	snprintf(stem, sizeof stem, "%s", base);
	n = strlen(stem);
	if (n > 6 && strcmp(stem + n - 6, ".jsonl") == 0)
		stem[n - 6] = '\0';
	else if (n > 5 && strcmp(stem + n - 5, ".json") == 0)
		stem[n - 5] = '\0';
	snprintf(p->legacy, sizeof p->legacy, "%s/legacy/%s", dir, base);
	snprintf(p->snapshot, sizeof p->snapshot, "%s/%s.snapshot.json", dir, stem);
}

/* A JSON value as JSON.parse would see it: doubles for numbers. */
static json_t *ap_parse(const char *buf, size_t len)
{
	json_error_t jerr;
	return json_loadb(buf, len, JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL, &jerr);
}

/* An integral JSON number in int64 range into *out. */
static int ap_integer(const json_t *v, int64_t *out)
{
	double d;

	if (!json_is_number(v))
		return 0;
	d = json_number_value(v);
	if (d != floor(d) || d < -9.2e18 || d > 9.2e18)
		return 0;
	*out = (int64_t)d;
	return 1;
}

void append_snapshot_path(const char *state_file, char *out, size_t len)
{
	struct ap_paths p;

	ap_paths(state_file, &p);
	snprintf(out, len, "%s", p.snapshot);
}

int append_snapshot_parse(const char *buf, size_t len, struct append_snapshot *out)
{
	json_t *o = ap_parse(buf, len), *by;
	int64_t x;

	memset(out, 0, sizeof *out);
	out->journal_bytes = -1;
	out->next_seq = -1;
	out->worker = -1;
	out->op = -1;
	if (!json_is_object(o)) {
		json_decref(o);
		return -1;
	}
	out->id_ok = json_is_string(json_object_get(o, "id")) &&
		     strcmp(json_string_value(json_object_get(o, "id")), AP_SESSION) == 0;
	/* { ...baseSnapshot(id), ...parsed }: an absent count is the base's 0 */
	if (ap_integer(json_object_get(o, "events"), &x))
		out->events = x;
	if (ap_integer(json_object_get(o, "lastSeq"), &x))
		out->last_seq = x;
	if (ap_integer(json_object_get(o, "diagnostics"), &x))
		out->diagnostics = x;
	out->has_meta = json_object_get(o, "__journalBytes") != NULL;
	if (ap_integer(json_object_get(o, "__journalBytes"), &x))
		out->journal_bytes = x;
	if (ap_integer(json_object_get(o, "__nextSeq"), &x))
		out->next_seq = x;
	by = json_object_get(o, "by");
	if (json_is_object(by)) {
		if (ap_integer(json_object_get(by, "w"), &x) && x >= 0 && x <= INT32_MAX)
			out->worker = (int32_t)x;
		if (ap_integer(json_object_get(by, "op"), &x))
			out->op = x;
		if (json_is_string(json_object_get(by, "call")))
			snprintf(out->call, sizeof out->call, "%s",
				 json_string_value(json_object_get(by, "call")));
	}
	json_decref(o);
	return 0;
}

static int ap_blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n' && s[i] != '\f' &&
		    s[i] != '\v')
			return 0;
	return 1;
}

int append_journal_scan(const char *buf, size_t len, struct append_line **out, size_t *n)
{
	struct append_line *v = NULL;
	size_t cap = 0, cnt = 0, lineno = 0;
	const char *p = buf, *end = buf + len;

	*out = NULL;
	*n = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *stop = nl ? nl : end;
		json_t *e, *ev;
		struct append_line *l;
		int64_t x;

		lineno++;
		if (ap_blank(p, (size_t)(stop - p)))
			goto next;
		if (cnt == cap) {
			size_t nc = cap ? cap * 2 : 256;
			struct append_line *g = realloc(v, nc * sizeof *g);
			if (!g) {
				free(v);
				errno = ENOMEM;
				return -1;
			}
			v = g;
			cap = nc;
		}
		l = &v[cnt++];
		l->parsed = 0;
		l->seq = -1;
		l->worker = -1;
		l->op = -1;
		l->line = lineno;
		e = ap_parse(p, (size_t)(stop - p));
		if (e) {
			l->parsed = 1;
			if (json_is_object(e) && ap_integer(json_object_get(e, "seq"), &x))
				l->seq = x;
			ev = json_is_object(e) ? json_object_get(e, "event") : NULL;
			if (json_is_object(ev) && ap_integer(json_object_get(ev, "w"), &x) && x >= 0 &&
			    x <= INT32_MAX)
				l->worker = (int32_t)x;
			if (json_is_object(ev) && ap_integer(json_object_get(ev, "op"), &x))
				l->op = x;
			json_decref(e);
		}
next:
		p = nl ? nl + 1 : end;
	}
	*out = v;
	*n = cnt;
	return 0;
}

int append_replay(const char *buf, size_t len, struct append_replay *out)
{
	struct append_line *l;
	size_t n;
	int64_t max = 0;

	memset(out, 0, sizeof *out);
	out->next_seq = 1;
	if (append_journal_scan(buf, len, &l, &n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!l[i].parsed) {
			out->diagnostics++;
			continue;
		}
		out->events++;
		if (l[i].seq >= 0) {
			out->last_seq = l[i].seq;
			if (l[i].seq > max)
				max = l[i].seq;
		}
	}
	free(l);
	out->next_seq = max + 1 > 1 ? max + 1 : 1;
	return 0;
}

/* REBUILD(path): replay the whole journal; *bytes gets how many bytes were
 * replayed (0: no journal).  0, or -1 errno (a read error other than a
 * missing journal: the origin throws). */
static int ap_rebuild(const char *path, struct ap_snap *s, int64_t *next, size_t *bytes)
{
	struct append_replay r;
	size_t len;
	char *buf;

	memset(s, 0, sizeof *s);
	*next = 1;
	*bytes = 0;
	if (!fsx_exists(path))
		return 0;
	if (fsx_read_file(path, &buf, &len) != 0)
		return -1;
	if (append_replay(buf, len, &r) != 0) {
		free(buf);
		return -1;
	}
	free(buf);
	s->events = r.events;
	s->last_seq = r.last_seq;
	s->diagnostics = r.diagnostics;
	*next = r.next_seq;
	*bytes = len;
	return 0;
}

/* JR0 getReadableJournalPath: 1 when it is the legacy journal. */
static int ap_readable_is_legacy(const struct ap_paths *p)
{
	int legacy = !fsx_exists(p->primary) && fsx_exists(p->legacy);
	fsx_point(PT(READ_AFTER_READABLE));
	return legacy;
}

/* copyFileSync(legacy, primary): not exclusive, not atomic. */
static int ap_copy(const char *from, const char *to)
{
	char *buf;
	size_t len;
	int r, err;

	if (fsx_read_file(from, &buf, &len) != 0)
		return -1;
	r = fsx_write_file(to, O_TRUNC, buf, len);
	err = errno;
	free(buf);
	errno = err;
	return r;
}

/* The line for seq: JSON + "\n", malloc'd. */
static char *ap_line(struct worker *w, int64_t seq, size_t *len)
{
	char ts[40];
	struct tm tm;
	int64_t now = fsx_now_ms();
	time_t secs = (time_t)(now / 1000);
	json_t *e;
	char *text, *line;
	size_t n;

	gmtime_r(&secs, &tm);
	snprintf(ts, sizeof ts, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(now % 1000));
	e = json_pack("{s:I, s:s, s:s, s:s, s:{s:s, s:s, s:I, s:I}}", "seq", (json_int_t)seq, "id",
		      AP_SESSION, "type", "checkpoint", "ts", ts, "event", "id", AP_SESSION, "type",
		      "checkpoint", "w", (json_int_t)w->id, "op", (json_int_t)w->op);
	text = e ? json_dumps(e, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	json_decref(e);
	if (!text)
		goto out_nomem;
	n = strlen(text);
	line = realloc(text, n + 2);
	if (!line) {
		free(text);
		goto out_nomem;
	}
	line[n] = '\n';
	line[n + 1] = '\0';
	*len = n + 1;
	return line;
out_nomem:
	errno = ENOMEM;
	return NULL;
}

/* writeFileSync(snapshot, text): in place, O_TRUNC first, then the bytes.
 * MID is the point between the two (a reader sees an empty file there). */
static int ap_write_snapshot(const struct worker *w, const char *call, const char *path,
			     const struct ap_snap *s, int meta, int64_t bytes, int64_t next,
			     const char *mid, const char *after)
{
	json_t *o;
	char *text;
	int fd, r, err;

	o = json_pack("{s:s, s:I, s:I, s:I, s:{s:I, s:I, s:s}}", "id", AP_SESSION, "events",
		      (json_int_t)s->events, "lastSeq", (json_int_t)s->last_seq, "diagnostics",
		      (json_int_t)s->diagnostics, "by", "w", (json_int_t)w->id, "op",
		      (json_int_t)w->op, "call", call);
	if (o && meta &&
	    (json_object_set_new(o, "__journalBytes", json_integer(bytes)) < 0 ||
	     json_object_set_new(o, "__nextSeq", json_integer(next)) < 0)) {
		json_decref(o);
		o = NULL;
	}
	text = o ? json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(o);
	if (!text) {
		errno = ENOMEM;
		return -1;
	}
	fd = fsx_open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	if (fd < 0) {
		err = errno;
		free(text);
		errno = err;
		return -1;
	}
	fsx_point(mid);
	r = fsx_write_all(fd, text, strlen(text));
	if (r == 0)
		r = fsx_write_all(fd, "\n", 1);
	err = errno;
	if (fsx_close(fd) != 0 && r == 0) {
		r = -1;
		err = errno;
	}
	free(text);
	if (r == 0)
		fsx_point(after);
	errno = err;
	return r;
}

/* readSnapshotFile: a hit only when it provably describes the journal of
 * SIZE bytes.  1 hit (*s, *next filled), 0 miss. */
static int ap_read_snapshot(const char *path, int64_t size, struct ap_snap *s, int64_t *next)
{
	json_t *o, *id;
	char *buf;
	size_t len;
	int64_t bytes, x;
	int hit = 0;

	if (fsx_read_file(path, &buf, &len) != 0)
		return 0;
	o = ap_parse(buf, len);
	free(buf);
	if (!json_is_object(o))
		goto out;
	/* `parsed.__journalBytes !== journalBytes`: numbers, exactly equal */
	if (!ap_integer(json_object_get(o, "__journalBytes"), &bytes) || bytes != size)
		goto out;
	if (!ap_integer(json_object_get(o, "__nextSeq"), next))
		goto out;
	id = json_object_get(o, "id");
	if (!json_is_string(id) || strcmp(json_string_value(id), AP_SESSION) != 0)
		goto out;
	/* { ...baseSnapshot(id), ...parsed } */
	memset(s, 0, sizeof *s);
	if (ap_integer(json_object_get(o, "events"), &x))
		s->events = x;
	if (ap_integer(json_object_get(o, "lastSeq"), &x))
		s->last_seq = x;
	if (ap_integer(json_object_get(o, "diagnostics"), &x))
		s->diagnostics = x;
	hit = 1;
out:
	json_decref(o);
	return hit;
}

/* The cache belongs to the worker this process runs. */
static struct ap_cache *ap_cache_for(const struct worker *w)
{
	if (ap_cache.owner != w) {
		memset(&ap_cache, 0, sizeof ap_cache);
		ap_cache.owner = w;
	}
	return &ap_cache;
}

/* ---- journal-append (1.0.0) ---- */

/* READ_STATE: fills the cache; *src says where it came from.  0, or -1 errno. */
static int ap_read_state(struct worker *w, const struct ap_paths *p, int allow_snapshot, int *src)
{
	struct ap_cache *c = ap_cache_for(w);
	struct fsx_stat st;
	struct ap_snap s;
	int legacy, have;
	int64_t size, mt, next;

	legacy = ap_readable_is_legacy(p);
	/* [RS1 stat] */
	have = fsx_stat(legacy ? p->legacy : p->primary, &st) == 0;
	size = have ? st.size : -1;
	mt = have ? st.mtime_ns : -1;
	fsx_point(PT(READ_AFTER_STAT));
	if (c->valid && c->on_legacy == legacy && c->size == size && c->mtime_ns == mt) {
		*src = AP_SRC_CACHE;
		return 0;
	}
	/* [RS2 snapshot-read] */
	if (allow_snapshot && have) {
		int hit = ap_read_snapshot(p->snapshot, size, &s, &next);
		fsx_point(PT(READ_AFTER_SNAPSHOT_READ));
		if (hit) {
			*c = (struct ap_cache){ w, 1, s, next, legacy, size, mt };
			*src = AP_SRC_SNAPSHOT;
			return 0;
		}
	}
	/* [RS3 journal-read] may include bytes appended after RS1: keyed by
	 * the pre-read stat, which is conservative */
	size_t bytes;

	if (ap_rebuild(legacy ? p->legacy : p->primary, &s, &next, &bytes) != 0)
		return -1;
	fsx_point(PT(READ_AFTER_JOURNAL_READ));
	*c = (struct ap_cache){ w, 1, s, next, legacy, size, mt };
	*src = AP_SRC_REPLAY;
	return 0;
}

/* PERSIST(snap, next).  0, or -1 errno (the cache is then left as it was). */
static int ap_persist(struct worker *w, const struct ap_paths *p, const struct ap_snap *s,
		      int64_t next)
{
	struct ap_cache *c = ap_cache_for(w);
	struct fsx_stat st;
	int legacy, have;

	legacy = ap_readable_is_legacy(p);
	/* [PS1 stat] measured now, after our append */
	have = fsx_stat(legacy ? p->legacy : p->primary, &st) == 0;
	fsx_point(PT(PERSIST_AFTER_STAT));
	/* [PS2 snapshot-write] */
	if (ap_write_snapshot(w, "appendEvent", p->snapshot, s, 1, have ? st.size : -1, next,
			      PT(PERSIST_MID_SNAPSHOT_WRITE),
			      PT(PERSIST_AFTER_SNAPSHOT_WRITE)) != 0)
		return -1;
	*c = (struct ap_cache){ w, 1, *s, next, legacy, have ? st.size : -1, have ? st.mtime_ns : -1 };
	return 0;
}

/* ---- the two appendEvents ---- */

/* The copy race (JL1-JL3, JA1-JA3).  0, or -1 errno. */
static int ap_legacy_copy(struct worker *w, const struct ap_paths *p, int drop)
{
	int primary, legacy;

	/* `!existsSync(primary) && existsSync(legacy)`: JL2/JA2 only when JL1/JA1 says no */
	primary = fsx_exists(p->primary);
	fsx_point(PT(APPEND_AFTER_EXISTS_PRIMARY));
	if (primary)
		return 0;
	legacy = fsx_exists(p->legacy);
	fsx_point(PT(APPEND_AFTER_EXISTS_LEGACY));
	if (!legacy)
		return 0;
	if (ap_copy(p->legacy, p->primary) != 0)
		return -1;
	if (drop)
		ap_cache_for(w)->valid = 0; /* derived.delete(id) */
	fsx_point(PT(APPEND_AFTER_LEGACY_COPY));
	return 0;
}

/* Append seq: journal it, and the commit-begin a locked append announces. */
static int ap_journal_append(struct worker *w, const struct ap_paths *p, int64_t seq, int src)
{
	size_t len;
	char *line = ap_line(w, seq, &len);
	int r, err;

	if (!line)
		return -1;
	if (w->wparam[AP_LOCKED])
		worker_log(w, EV_COMMIT_BEGIN, 0, seq, 0, 0);
	/* [JL5/JA4 journal-append] appendFileSync(primary, line): O_APPEND|O_CREAT */
	r = w->wparam[AP_DURABLE] ? fsx_append_synced(p->primary, line, len, 1)
				  : fsx_write_file(p->primary, O_APPEND, line, len);
	err = errno;
	free(line);
	if (r != 0) {
		errno = err;
		return -1;
	}
	worker_log(w, EV_APPEND, 0, seq, 0, src);
	fsx_point(PT(APPEND_AFTER_JOURNAL_APPEND));
	return 0;
}

static void ap_apply(struct ap_snap *s, int64_t seq)
{
	s->events++;
	s->last_seq = seq;
}

/* journal-legacy appendEvent.  0, or -1 errno (the origin throws). */
static int ap_append_legacy(struct worker *w, const struct ap_paths *p)
{
	struct ap_cache *c = ap_cache_for(w);
	struct ap_snap next;
	int64_t seq;
	int src = AP_SRC_CACHE;

	if (ap_legacy_copy(w, p, 0) != 0)
		return -1;
	/* prior := cache[id] or REBUILD(readable path) */
	if (!c->valid) {
		int legacy = ap_readable_is_legacy(p);
		struct ap_snap s;
		int64_t n;
		size_t bytes;

		if (ap_rebuild(legacy ? p->legacy : p->primary, &s, &n, &bytes) != 0)
			return -1;
		fsx_point(PT(READ_AFTER_JOURNAL_READ));
		c->valid = 1;
		c->snap = s;
		c->next_seq = n;
		src = AP_SRC_REPLAY;
	}
	fsx_point(PT(APPEND_AFTER_READ_STATE));
	seq = c->next_seq;
	/* [JL5 journal-append] */
	if (ap_journal_append(w, p, seq, src) != 0)
		return -1;
	next = c->snap;
	ap_apply(&next, seq);
	c->snap = next;
	c->next_seq = seq + 1;
	/* [JL6 snapshot-write] in place, no meta */
	return ap_write_snapshot(w, "appendEvent", p->snapshot, &next, 0, 0, 0,
				 PT(APPEND_MID_SNAPSHOT_WRITE), PT(APPEND_AFTER_SNAPSHOT_WRITE));
}

/* journal-append appendEvent.  0, or -1 errno. */
static int ap_append_new(struct worker *w, const struct ap_paths *p)
{
	struct ap_cache *c = ap_cache_for(w);
	struct ap_snap next;
	int64_t seq;
	int src;

	if (ap_legacy_copy(w, p, 1) != 0)
		return -1;
	if (ap_read_state(w, p, 1, &src) != 0)
		return -1;
	fsx_point(PT(APPEND_AFTER_READ_STATE));
	seq = c->next_seq;
	/* [JA4 journal-append] no lock of any kind in the origin */
	if (ap_journal_append(w, p, seq, src) != 0)
		return -1;
	next = c->snap;
	ap_apply(&next, seq);
	return ap_persist(w, p, &next, seq + 1);
}

/* getSnapshot.  0, or -1 errno. */
static int ap_get_snapshot(struct worker *w, const struct ap_paths *p)
{
	struct ap_cache *c = ap_cache_for(w);
	int src = AP_SRC_REPLAY;
	int64_t wrote = 0;

	if (w->wparam[AP_REV] == AP_REV_APPEND) {
		if (ap_read_state(w, p, 1, &src) != 0)
			goto out_err;
	} else {
		int legacy = ap_readable_is_legacy(p);
		struct ap_snap s;
		int64_t n;
		size_t bytes;

		if (ap_rebuild(legacy ? p->legacy : p->primary, &s, &n, &bytes) != 0)
			goto out_err;
		fsx_point(PT(READ_AFTER_JOURNAL_READ));
		c->valid = 1;
		c->snap = s;
		c->next_seq = n;
		/* [JL7 snapshot-write] every read writes (K-JL-2) */
		if (ap_write_snapshot(w, "getSnapshot", p->snapshot, &s, 0, 0, 0,
				      PT(GET_MID_SNAPSHOT_WRITE),
				      PT(GET_AFTER_SNAPSHOT_WRITE)) != 0)
			goto out_err;
		/* what landed on disk: a replay of the primary's first `bytes` bytes */
		if (!legacy)
			wrote = (int64_t)bytes + 1;
	}
	worker_log(w, EV_READ, 0, c->next_seq - 1, src, wrote);
	return 0;
out_err:
	worker_log(w, EV_READ, errno, -1, 0, 0);
	return 0;
}

/* ---- the workload ---- */

/* The store folder (and, with legacy_events, the legacy journal's). */
static int ap_setup(const int64_t *wparam, const char *state_file)
{
	struct ap_paths p;
	char dir[PATH_MAX + 16];
	int64_t n = wparam[AP_LEGACY_EVENTS];

	ap_paths(state_file, &p);
	snprintf(dir, sizeof dir, "%s", state_file);
	if (fsx_mkdir_p(dirname(dir)) != 0)
		return -1;
	if (n <= 0)
		return 0;
	snprintf(dir, sizeof dir, "%s", p.legacy);
	if (fsx_mkdir_p(dirname(dir)) != 0)
		return -1;
	int fd = fsx_open(p.legacy, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	if (fd < 0)
		return -1;
	for (int64_t s = 1; s <= n; s++) {
		char line[160];
		int len = snprintf(line, sizeof line,
				   "{\"seq\":%lld,\"id\":\"" AP_SESSION "\",\"type\":\"seed\",\"ts\":"
				   "\"1970-01-01T00:00:00.000Z\",\"event\":{\"type\":\"seed\"}}\n",
				   (long long)s);
		if (fsx_write_all(fd, line, (size_t)len) != 0) {
			int err = errno;
			fsx_close(fd);
			errno = err;
			return -1;
		}
	}
	return fsx_close(fd);
}

static int ap_op(struct worker *w)
{
	struct ap_paths p;
	int r;

	ap_paths(w->state_file, &p);
	if (w->wparam[AP_WRITERS] > 0) {
		if ((int64_t)w->id >= w->wparam[AP_WRITERS])
			return ap_get_snapshot(w, &p);
	} else if (w->wparam[AP_READ_PCT] > 0 &&
		   (int64_t)prng_below(&w->rng, 100) < w->wparam[AP_READ_PCT]) {
		return ap_get_snapshot(w, &p);
	}

	if (w->wparam[AP_LOCKED]) {
		if (worker_acquire(w, 0) != 0)
			return 0;
		fsx_point(PT(APPEND_AFTER_ACQUIRE));
	}
	if (w->wparam[AP_REV] == AP_REV_APPEND)
		r = ap_append_new(w, &p);
	else
		r = ap_append_legacy(w, &p);
	if (r != 0)
		worker_log(w, EV_WRITE_ERROR, errno, 0, 0, 0);
	if (w->wparam[AP_LOCKED]) {
		fsx_point(PT(APPEND_BEFORE_RELEASE));
		worker_release(w);
	}
	return 0;
}

const struct workload_ops append_workload = {
	.name = "append",
	.summary = "quiver appendEvent: JSONL journal + snapshot, per-process cache (rev=legacy 0.8.0 "
		   "| append 1.0.0), under the run's lock with locked=1",
	.params = ap_params,
	.points = ap_points,
	.flags = WL_CHECK_SEQ,
	.setup = ap_setup,
	.op = ap_op,
	.reset = ap_reset,
};
