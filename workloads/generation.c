/*
 * generation.c - the `generation` workload: volter's tree generation
 * (PROTOCOLS.md §6), writers against readers that keep a cache.
 *
 *   rev=generation  tree-generation, volter 3.0.157: every write of a tree
 *                   file is bracketed by one '.' appended to tree.generation
 *                   before and one after.
 *   rev=absent      gen-absent, 3.0.155: the same writes, no bracket.
 *
 * Workers with id < writers write; the others read.  Readers are always the
 * 3.0.157 reader of §6.3 (the only reader the spec gives: 3.0.155's is not
 * shown), so rev=absent is §9.3's mixed case - old writers, new readers -
 * which is bound 2 of §6.5: "a writer not going through a store of this
 * version does not move the generation".  The store folder starts with an
 * empty tree.generation (a folder a 3.0.157 store has written to); without
 * one, readers never keep anything.
 *
 * Files, in the state file's folder:
 *   events.jsonl       the tree file (the parent log): one JSON line per write
 *   tree.generation    only grows
 *   <state file>.lock  the run's lock: writers hold it around a write (the
 *                      origin's "history lock"); readers take no lock
 *
 * A write's version is the number of lines in events.jsonl once its line is
 * in: the writer counts the lines under the lock and writes count + 1.  A
 * reader's version is the number of lines it read.  The file only grows, so
 * a read that starts after a write of version v finished, and reads the file,
 * sees at least v lines under any protocol: only a kept (cached) answer can
 * be older.
 *
 *   writer (op)
 *     acquire (the run's lock)
 *     WV  read-version   count lines of events.jsonl (missing: 0)
 *     G1  gen-byte-1     open(tree.generation, O_APPEND|O_CREAT); write "."; close
 *                        ENOENT, ENOTDIR: ignored | other: raise (no body)
 *     GA1-GA4 body       open(events.jsonl, O_APPEND|O_CREAT); write the line; [GA3] fsync
 *                        when VOLTER_DURABLE (durable=1); close
 *     G2  gen-byte-2     as G1, in the body's finally
 *     commit (EV_COMMIT a = version) when body and G2 returned; release
 *   reader (op)
 *     EV_READ_BEGIN
 *     GR1 gen-lstat      G := "dev:ino:size:mtime" of tree.generation;
 *                        ENOENT, ENOTDIR, not a regular file: null | other: raise
 *     G non-null and equal to the kept G: serve the kept version (EV_READ b = 1,
 *                        2 when a writer kept it after its own write)
 *     RF  files          read events.jsonl, count its lines; keep (G, count) (b = 0)
 *
 * GEN_AFTER_OWN_WRITE (own_keep=1): a writer takes GENERATION before it
 * reads the version (B) and again after its second byte (N), and keeps what it wrote -
 * its version - under N iff N is the same file (dev, ino) grown by exactly
 * its own two bytes: "one write is exactly two bytes".  Writers then read
 * too (writer_reads percent of their ops), through the same kept answer.
 * own_keep=2 keeps it without the size test (a writer that assumes it is
 * alone): the broken control that shows what the test is for, with
 * locked=0 (writers take no history lock, so another writer's bracket can
 * land between B and N).
 *
 *   writer (op), own_keep
 *     B   gen-lstat      after acquire, before WV (null: nothing is kept)
 *     ... WV, G1, body, G2 as above
 *     N   gen-lstat      keep (N, version) iff same dev/ino, size(N) == size(B) + 2
 *
 * target=branch: the small file instead - branch.json, the branch pointer,
 * read with READ_KEPT and written with WRITE or WRITE_ATOMIC (write=), or
 * removed with REMOVE (remove_pct of the writes).  Its versions come from
 * branch.version, a counter beside it (not a tree file) that writers bump
 * under the lock, so a removal is a write too (of the state "absent") and
 * versions only grow.  READ_KEPT keys the file by its own lstat facts, not
 * the generation: the bracket (still made, branch.json is a tree file) does
 * not help it, and its admitted bound - "a rewrite to the same size on the
 * same or a reused inode within one tick of the file system's clock" - is a
 * stale read.
 *
 *   writer (op), target=branch
 *     acquire; BV read branch.version (missing: 0); v := it + 1
 *     G1; body: WRITE (open O_TRUNC, write {"v":v}, close: in place)
 *             | WRITE_ATOMIC (write branch.json.<pid>.<v>.tmp, rename it over; rm -f tmp)
 *             | REMOVE (rm -f branch.json); G2
 *     BW write branch.version := v (in place); commit v; release
 *   reader (op), target=branch: READ_KEPT(branch.json)
 *     RK1 lstat          ENOENT, ENOTDIR: drop, null (EV_READ err ENOENT: not judged)
 *     key "dev:ino:size:mtime:ctime" equal to the kept key: the kept version (b = 1)
 *     RK2 read           ENOENT: drop, null; keep (key, version) - key from BEFORE the read
 *                        (text that is not {"v":N}, a write caught between O_TRUNC and
 *                        its bytes: EV_READ err EBADMSG, not judged; kept all the same)
 *                        kept_key=after takes the key from a second lstat after the
 *                        read instead: the broken control for "never newer than its key".
 *   pad=grow writes v spaces before the newline, so every rewrite has a new
 *   size: outside READ_KEPT's bound on any file system and clock.
 *
 * Not modelled: tab kernel steps; REMOVE of a whole directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../faults/fsx.h"
#include "workload.h"

enum { GN_REV, GN_WRITERS, GN_OWN_KEEP, GN_WRITER_READS, GN_LOCKED, GN_TARGET, GN_WRITE, GN_REMOVE_PCT,
       GN_PAD, GN_KEPT_KEY, GN_DURABLE, GN_NPARAMS };
enum { GN_KEY_BEFORE, GN_KEY_AFTER };
enum { GN_PAD_NONE, GN_PAD_GROW };
enum { GN_TARGET_TREE, GN_TARGET_BRANCH };
enum { GN_WRITE_INPLACE, GN_WRITE_ATOMIC };
enum { GN_OWN_OFF, GN_OWN_CHECKED, GN_OWN_UNCHECKED };
enum { GN_REV_ABSENT, GN_REV_GENERATION };

static const char *const gn_rev_choices[] = { "absent", "generation", NULL };
static const char *const gn_target_choices[] = { "tree", "branch", NULL };
static const char *const gn_write_choices[] = { "inplace", "atomic", NULL };
static const char *const gn_pad_choices[] = { "none", "grow", NULL };
static const char *const gn_key_choices[] = { "before", "after", NULL };

static const struct param gn_params[] = {
	[GN_REV] = { "rev", GN_REV_GENERATION, PU_CHOICE, gn_rev_choices,
		     "writers' revision: generation (3.0.157 brackets each write) | absent (3.0.155)" },
	[GN_WRITERS] = { "writers", 1, PU_COUNT, NULL,
			 "workers 0..writers-1 write, the rest read" },
	[GN_OWN_KEEP] = { "own_keep", GN_OWN_OFF, PU_COUNT, NULL,
			  "1: a writer keeps its own write under GEN_AFTER_OWN_WRITE (generation grew by "
			  "exactly its two bytes); 2: keeps it without that test (broken control); 0: off" },
	[GN_WRITER_READS] = { "writer_reads", 0, PU_COUNT, NULL,
			      "percent of a writer's ops that are reads (through its kept answer)" },
	[GN_LOCKED] = { "locked", 1, PU_COUNT, NULL,
			"1: writers hold the run's lock around a write (the history lock); 0: no lock" },
	[GN_TARGET] = { "target", GN_TARGET_TREE, PU_CHOICE, gn_target_choices,
			"tree: events.jsonl appends, readers keyed by tree.generation; branch: branch.json "
			"rewrites, readers use READ_KEPT" },
	[GN_WRITE] = { "write", GN_WRITE_INPLACE, PU_CHOICE, gn_write_choices,
		       "target=branch: inplace (WRITE, O_TRUNC) | atomic (WRITE_ATOMIC, tmp + rename)" },
	[GN_REMOVE_PCT] = { "remove_pct", 0, PU_COUNT, NULL,
			    "target=branch: percent of writes that REMOVE branch.json instead" },
	[GN_PAD] = { "pad", GN_PAD_NONE, PU_CHOICE, gn_pad_choices,
		     "target=branch: none ({\"v\":N}, the same size for most N) | grow (v spaces "
		     "before the newline: every rewrite has a new size)" },
	[GN_KEPT_KEY] = { "kept_key", GN_KEY_BEFORE, PU_CHOICE, gn_key_choices,
			  "target=branch: before (READ_KEPT: the key is the lstat taken before the read) | "
			  "after (a second lstat after the read is the key: the broken control)" },
	[GN_DURABLE] = { "durable", 0, PU_COUNT, NULL,
			 "VOLTER_DURABLE: 1: a tree append is fsync'd before its close (GA3; the folder is "
			 "not); 0: not (the default)" },
	[GN_NPARAMS] = { NULL, 0, PU_COUNT, NULL, NULL },
};

/* Point names are written once, in gn_points[] (order = `lockstorm list points`);
 * a step fires PT(NAME), the table's own entry: the seam keys by address. */
enum gn_point {
	GN_PT_WRITE_AFTER_ACQUIRE,
	GN_PT_WRITE_AFTER_READ_VERSION,
	GN_PT_WRITE_AFTER_GEN_BYTE_1,
	GN_PT_WRITE_AFTER_BODY,
	GN_PT_WRITE_AFTER_GEN_BYTE_2,
	GN_PT_WRITE_AFTER_OWN_GEN_LSTAT,
	GN_PT_WRITE_BEFORE_RELEASE,
	GN_PT_READ_BEFORE_GEN_LSTAT,
	GN_PT_READ_AFTER_GEN_LSTAT,
	GN_PT_READ_AFTER_FILES,
	GN_PT_WRITE_AFTER_BRANCH_VERSION,
	GN_PT_READ_AFTER_KEPT_LSTAT,
	GN_PT_READ_AFTER_KEPT_READ,
	GN_NPOINTS
};

static const char *const gn_points[] = {
	[GN_PT_WRITE_AFTER_ACQUIRE] = "generation/write/after-acquire",
	[GN_PT_WRITE_AFTER_READ_VERSION] = "generation/write/after-read-version",
	[GN_PT_WRITE_AFTER_GEN_BYTE_1] = "generation/write/after-gen-byte-1",
	[GN_PT_WRITE_AFTER_BODY] = "generation/write/after-body",
	[GN_PT_WRITE_AFTER_GEN_BYTE_2] = "generation/write/after-gen-byte-2",
	[GN_PT_WRITE_AFTER_OWN_GEN_LSTAT] = "generation/write/after-own-gen-lstat",
	[GN_PT_WRITE_BEFORE_RELEASE] = "generation/write/before-release",
	[GN_PT_READ_BEFORE_GEN_LSTAT] = "generation/read/before-gen-lstat",
	[GN_PT_READ_AFTER_GEN_LSTAT] = "generation/read/after-gen-lstat",
	[GN_PT_READ_AFTER_FILES] = "generation/read/after-files",
	[GN_PT_WRITE_AFTER_BRANCH_VERSION] = "generation/write/after-branch-version",
	[GN_PT_READ_AFTER_KEPT_LSTAT] = "generation/read/after-kept-lstat",
	[GN_PT_READ_AFTER_KEPT_READ] = "generation/read/after-kept-read",
	[GN_NPOINTS] = NULL,
};
#define PT(name) gn_points[GN_PT_##name]

#define GN_TREE "events.jsonl"
#define GN_GEN "tree.generation"
#define GN_BRANCH "branch.json"
#define GN_BRANCH_VERSION "branch.version"

/* A reader's kept stamp: per process, as the origin's per-instance cache. */
struct gn_kept {
	const struct worker *owner;
	int valid;
	struct fsx_stat g;  /* the generation it was kept under */
	int64_t version;    /* lines read then (own write: the version it wrote) */
	int own;            /* kept by GEN_AFTER_OWN_WRITE, not by a read */
};
static struct gn_kept gn_kept;

static void gn_reset(void)
{
	memset(&gn_kept, 0, sizeof gn_kept);
}

struct gn_paths {
	char tree[PATH_MAX + 16];
	char gen[PATH_MAX + 16];
	char branch[PATH_MAX + 16];
	char branch_version[PATH_MAX + 16];
};

static void gn_paths(const char *state_file, struct gn_paths *p)
{
	char buf[PATH_MAX];
	const char *dir;

	snprintf(buf, sizeof buf, "%s", state_file);
	dir = dirname(buf); /* may point into buf */
	snprintf(p->tree, sizeof p->tree, "%s/" GN_TREE, dir);
	snprintf(p->gen, sizeof p->gen, "%s/" GN_GEN, dir);
	snprintf(p->branch, sizeof p->branch, "%s/" GN_BRANCH, dir);
	snprintf(p->branch_version, sizeof p->branch_version, "%s/" GN_BRANCH_VERSION, dir);
}

/* Lines in the tree file: its "\n" count.  Missing: 0.  -1 errno. */
static int64_t gn_count(const char *tree)
{
	char *buf;
	size_t len;
	int64_t n = 0;

	if (fsx_read_file(tree, &buf, &len) != 0)
		return errno == ENOENT ? 0 : -1;
	for (const char *p = buf; (p = memchr(p, '\n', len - (size_t)(p - buf))); p++)
		n++;
	free(buf);
	return n;
}

/* MOVED(path) [G1/G2 gen-byte]: "a directory that is not there has no
 * reader to tell".  0, or -1 errno. */
static int gn_moved(const struct gn_paths *p)
{
	if (fsx_write_file(p->gen, O_APPEND, ".", 1) != 0 && errno != ENOENT && errno != ENOTDIR)
		return -1;
	return 0;
}

/* GENERATION(dir) [GR1 gen-lstat]: 1 with *g, 0 null, -1 raise (errno). */
static int gn_generation(const struct gn_paths *p, struct fsx_stat *g)
{
	if (fsx_lstat(p->gen, g) != 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
	return S_ISREG(g->mode) ? 1 : 0;
}

/* "dev:ino:size:mtimeMs" equal (ctime: fsx does not report it). */
static int gn_same(const struct fsx_stat *a, const struct fsx_stat *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns;
}

/* This process's kept answer (the worker it runs owns it). */
static struct gn_kept *gn_kept_for(const struct worker *w)
{
	if (gn_kept.owner != w) {
		memset(&gn_kept, 0, sizeof gn_kept);
		gn_kept.owner = w;
	}
	return &gn_kept;
}

/* GEN_AFTER_OWN_WRITE(dir, before): after a writer's own bracket, keep its
 * version under the generation now iff that is BEFORE grown by exactly two
 * bytes (own_keep=2: whatever it is).  Errors keep nothing. */
static void gn_keep_own(struct worker *w, const struct gn_paths *p, int have_before,
			const struct fsx_stat *before, int64_t version)
{
	struct gn_kept *k = gn_kept_for(w);
	struct fsx_stat now;
	int have;

	k->valid = 0; /* drop kept[...]: this write changed the tree */
	have = gn_generation(p, &now);
	fsx_point(PT(WRITE_AFTER_OWN_GEN_LSTAT));
	if (have <= 0 || !have_before)
		return;
	if (w->wparam[GN_OWN_KEEP] == GN_OWN_CHECKED &&
	    !(now.dev == before->dev && now.ino == before->ino && now.size == before->size + 2))
		return;
	k->valid = 1;
	k->g = now;
	k->version = version;
	k->own = 1;
}

static int gn_write(struct worker *w, const struct gn_paths *p)
{
	int bracket = w->wparam[GN_REV] == GN_REV_GENERATION;
	int locked = w->wparam[GN_LOCKED] != 0;
	int own = bracket && w->wparam[GN_OWN_KEEP] != GN_OWN_OFF;
	struct fsx_stat before;
	int have_before = 0;
	int64_t version;
	char line[128];
	int len, body, err;

	if (locked) {
		if (worker_acquire(w, 0) != 0)
			return 0;
		fsx_point(PT(WRITE_AFTER_ACQUIRE));
	}

	/* GEN_AFTER_OWN_WRITE's `before`, FIRST, as a reader takes G before it
	 * reads: a write that lands after it moves the generation past +2 */
	if (own)
		have_before = gn_generation(p, &before) > 0;

	/* [WV read-version] */
	version = gn_count(p->tree);
	if (version < 0) {
		worker_log(w, EV_WRITE_ERROR, errno, 0, 0, 0);
		goto out_release;
	}
	version++;
	fsx_point(PT(WRITE_AFTER_READ_VERSION));
	worker_log(w, EV_COMMIT_BEGIN, 0, version, 0, 0);

	/* [G1 gen-byte-1] raises before the body */
	if (bracket) {
		if (gn_moved(p) != 0) {
			worker_log(w, EV_WRITE_ERROR, errno, version, 0, 0);
			goto out_release;
		}
		fsx_point(PT(WRITE_AFTER_GEN_BYTE_1));
	}

	/* [GA1-GA4 body] */
	len = snprintf(line, sizeof line, "{\"v\":%lld,\"w\":%u,\"op\":%u}\n", (long long)version,
		       w->id, (unsigned)w->op);
	body = w->wparam[GN_DURABLE] ? fsx_append_synced(p->tree, line, (size_t)len, 0) /* [GA3] */
				     : fsx_write_file(p->tree, O_APPEND, line, (size_t)len);
	err = errno;
	if (body == 0)
		fsx_point(PT(WRITE_AFTER_BODY));

	/* [G2 gen-byte-2] in the finally: after a failed body too */
	if (bracket) {
		if (gn_moved(p) != 0) {
			if (body == 0)
				err = errno;
			body = -1;
		} else {
			fsx_point(PT(WRITE_AFTER_GEN_BYTE_2));
		}
	}
	if (body == 0)
		worker_log(w, EV_COMMIT, 0, version, 0, 0);
	else
		worker_log(w, EV_WRITE_ERROR, err, version, 0, 0);
	if (own) {
		if (body == 0)
			gn_keep_own(w, p, have_before, &before, version);
		else
			gn_kept_for(w)->valid = 0;
	}

out_release:
	if (locked) {
		fsx_point(PT(WRITE_BEFORE_RELEASE));
		worker_release(w);
	}
	return 0;
}

static int gn_read(struct worker *w, const struct gn_paths *p)
{
	struct fsx_stat g;
	int64_t version;
	int have;

	gn_kept_for(w);
	worker_log(w, EV_READ_BEGIN, 0, 0, 0, 0);

	/* [GR1 gen-lstat] FIRST */
	fsx_point(PT(READ_BEFORE_GEN_LSTAT));
	have = gn_generation(p, &g);
	if (have < 0) {
		worker_log(w, EV_READ, errno, -1, 0, 0);
		return 0;
	}
	fsx_point(PT(READ_AFTER_GEN_LSTAT));
	if (have && gn_kept.valid && gn_same(&g, &gn_kept.g)) {
		worker_log(w, EV_READ, 0, gn_kept.version, gn_kept.own ? 2 : 1, 0);
		return 0;
	}

	/* [RF files] */
	version = gn_count(p->tree);
	if (version < 0) {
		worker_log(w, EV_READ, errno, -1, 0, 0);
		return 0;
	}
	fsx_point(PT(READ_AFTER_FILES));
	/* kept under the generation read FIRST; a null one is never matched */
	gn_kept.valid = have;
	if (have)
		gn_kept.g = g;
	gn_kept.version = version;
	gn_kept.own = 0;
	worker_log(w, EV_READ, 0, version, 0, 0);
	return 0;
}


/* ---- target=branch: READ_KEPT, WRITE, WRITE_ATOMIC, REMOVE ---- */

/* A reader's kept small file (READ_KEPT's kept[path]): per process. */
struct gn_small {
	const struct worker *owner;
	int valid;
	struct fsx_stat key;  /* lstat facts from BEFORE its read */
	int64_t version;      /* -1: its text was not {"v":N} */
};
static struct gn_small gn_small;

/* "dev:ino:size:mtimeMs:ctimeMs" equal. */
static int gn_same_key(const struct fsx_stat *a, const struct fsx_stat *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}

/* {"v":N}, spaces, "\n" -> N; -1 for anything else. */
static int64_t gn_parse_v(const char *buf, size_t len)
{
	long long v;
	char text[64];
	int end = -1;

	if (len == 0 || buf[len - 1] != '\n')
		return -1;
	while (len > 1 && buf[len - 2] == ' ')
		len--;
	if (len >= sizeof text)
		return -1;
	memcpy(text, buf, len);
	text[len] = '\0';
	if (sscanf(text, "{\"v\":%lld}\n%n", &v, &end) != 1 || end != (int)len || v < 0)
		return -1;
	return v;
}

/* branch.version: 0 when missing, -1 errno. */
static int64_t gn_branch_version(const struct gn_paths *p)
{
	char *buf;
	size_t len;
	int64_t v;

	if (fsx_read_file(p->branch_version, &buf, &len) != 0)
		return errno == ENOENT ? 0 : -1;
	v = gn_parse_v(buf, len);
	free(buf);
	if (v < 0) {
		errno = EBADMSG;
		return -1;
	}
	return v;
}

/* The body on branch.json: WRITE, WRITE_ATOMIC or REMOVE.  0, or -1 errno. */
static int gn_branch_body(struct worker *w, const struct gn_paths *p, int64_t version, int remove)
{
	char head[64], tmp[PATH_MAX + 64], *text;
	int n = snprintf(head, sizeof head, "{\"v\":%lld}", (long long)version);
	size_t len, pad = w->wparam[GN_PAD] == GN_PAD_GROW ? (size_t)version : 0;
	int r, err;

	if (remove) /* REMOVE: rm -f */
		return fsx_unlink(p->branch) != 0 && errno != ENOENT ? -1 : 0;
	len = (size_t)n + pad + 1;
	text = malloc(len);
	if (!text) {
		errno = ENOMEM;
		return -1;
	}
	memcpy(text, head, (size_t)n);
	memset(text + n, ' ', pad);
	text[len - 1] = '\n';
	if (w->wparam[GN_WRITE] == GN_WRITE_INPLACE) { /* WRITE: O_TRUNC, in place */
		r = fsx_write_file(p->branch, O_TRUNC, text, len);
		err = errno;
		free(text);
		errno = err;
		return r;
	}
	/* WRITE_ATOMIC: tmp, rename over, finally rm -f tmp */
	snprintf(tmp, sizeof tmp, "%s.%ld.%lld.tmp", p->branch, (long)fsx_getpid(), (long long)version);
	r = fsx_write_file(tmp, O_TRUNC, text, len);
	free(text);
	if (r == 0)
		r = fsx_rename(tmp, p->branch);
	err = errno;
	if (r != 0)
		fsx_unlink(tmp);
	errno = err;
	return r;
}

static int gn_branch_write(struct worker *w, const struct gn_paths *p)
{
	int bracket = w->wparam[GN_REV] == GN_REV_GENERATION;
	int locked = w->wparam[GN_LOCKED] != 0;
	int remove = w->wparam[GN_REMOVE_PCT] > 0 &&
		     (int64_t)prng_below(&w->rng, 100) < w->wparam[GN_REMOVE_PCT];
	char text[64];
	int64_t version;
	int len, body, err;

	if (locked) {
		if (worker_acquire(w, 0) != 0)
			return 0;
		fsx_point(PT(WRITE_AFTER_ACQUIRE));
	}
	/* [BV] */
	version = gn_branch_version(p);
	if (version < 0) {
		worker_log(w, EV_WRITE_ERROR, errno, 0, 0, 0);
		goto out_release;
	}
	version++;
	fsx_point(PT(WRITE_AFTER_READ_VERSION));
	worker_log(w, EV_COMMIT_BEGIN, 0, version, 0, 0);
	/* kept entries of this path are dropped: the writer's own (it reads too) */
	if (gn_small.owner == w)
		gn_small.valid = 0;

	if (bracket) {
		if (gn_moved(p) != 0) {
			worker_log(w, EV_WRITE_ERROR, errno, version, 0, 0);
			goto out_release;
		}
		fsx_point(PT(WRITE_AFTER_GEN_BYTE_1));
	}
	body = gn_branch_body(w, p, version, remove);
	err = errno;
	if (body == 0)
		fsx_point(PT(WRITE_AFTER_BODY));
	if (bracket) {
		if (gn_moved(p) != 0) {
			if (body == 0)
				err = errno;
			body = -1;
		} else {
			fsx_point(PT(WRITE_AFTER_GEN_BYTE_2));
		}
	}
	/* [BW] the counter, after the body: a failed body is not counted */
	if (body == 0) {
		len = snprintf(text, sizeof text, "{\"v\":%lld}\n", (long long)version);
		body = fsx_write_file(p->branch_version, O_TRUNC, text, (size_t)len);
		err = errno;
		if (body == 0)
			fsx_point(PT(WRITE_AFTER_BRANCH_VERSION));
	}
	if (body == 0)
		worker_log(w, EV_COMMIT, 0, version, remove, 0);
	else
		worker_log(w, EV_WRITE_ERROR, err, version, 0, 0);

out_release:
	if (locked) {
		fsx_point(PT(WRITE_BEFORE_RELEASE));
		worker_release(w);
	}
	return 0;
}

/* READ_KEPT(branch.json). */
static int gn_branch_read(struct worker *w, const struct gn_paths *p)
{
	struct fsx_stat key;
	char *buf;
	size_t len;
	int64_t v;

	if (gn_small.owner != w) {
		memset(&gn_small, 0, sizeof gn_small);
		gn_small.owner = w;
	}
	worker_log(w, EV_READ_BEGIN, 0, 0, 0, 0);
	/* [RK1 lstat] */
	if (fsx_lstat(p->branch, &key) != 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			gn_small.valid = 0;
		worker_log(w, EV_READ, errno, -1, 0, 0);
		return 0;
	}
	fsx_point(PT(READ_AFTER_KEPT_LSTAT));
	if (!S_ISREG(key.mode)) { /* a symlink: a plain read, not kept */
		worker_log(w, EV_READ, EBADMSG, -1, 0, 0);
		return 0;
	}
	if (gn_small.valid && gn_same_key(&key, &gn_small.key)) {
		worker_log(w, EV_READ, gn_small.version < 0 ? EBADMSG : 0, gn_small.version, 1, 0);
		return 0;
	}
	/* [RK2 read] */
	if (fsx_read_file(p->branch, &buf, &len) != 0) {
		if (errno == ENOENT)
			gn_small.valid = 0;
		worker_log(w, EV_READ, errno, -1, 0, 0);
		return 0;
	}
	fsx_point(PT(READ_AFTER_KEPT_READ));
	v = gn_parse_v(buf, len);
	free(buf);
	/* kept_key=after: keyed by what the file is after the read (wrong) */
	if (w->wparam[GN_KEPT_KEY] == GN_KEY_AFTER && fsx_lstat(p->branch, &key) != 0) {
		gn_small.valid = 0;
		worker_log(w, EV_READ, v < 0 ? EBADMSG : 0, v, 0, 0);
		return 0;
	}
	/* "what is kept is never newer than its key" */
	gn_small.valid = 1;
	gn_small.key = key;
	gn_small.version = v;
	worker_log(w, EV_READ, v < 0 ? EBADMSG : 0, v, 0, 0);
	return 0;
}

/* The store folder and an empty tree.generation in it. */
static int gn_setup(const int64_t *wparam, const char *state_file)
{
	struct gn_paths p;
	char dir[PATH_MAX];
	int fd;

	(void)wparam;
	snprintf(dir, sizeof dir, "%s", state_file);
	if (fsx_mkdir_p(dirname(dir)) != 0)
		return -1;
	gn_paths(state_file, &p);
	fd = fsx_open(p.gen, O_WRONLY | O_CREAT, 0666);
	if (fd < 0)
		return -1;
	return fsx_close(fd);
}

static int gn_op(struct worker *w)
{
	struct gn_paths p;

	int branch;

	gn_paths(w->state_file, &p);
	branch = w->wparam[GN_TARGET] == GN_TARGET_BRANCH;
	if ((int64_t)w->id >= w->wparam[GN_WRITERS] ||
	    (w->wparam[GN_WRITER_READS] > 0 &&
	     (int64_t)prng_below(&w->rng, 100) < w->wparam[GN_WRITER_READS]))
		return branch ? gn_branch_read(w, &p) : gn_read(w, &p);
	return branch ? gn_branch_write(w, &p) : gn_write(w, &p);
}

const struct workload_ops generation_workload = {
	.name = "generation",
	.summary = "volter tree generation: writers bracket each tree-file append with a byte "
		   "in tree.generation (rev=generation) or not (rev=absent); readers keep a cache "
		   "keyed by it",
	.params = gn_params,
	.points = gn_points,
	.flags = WL_CHECK_STALE_READ,
	.setup = gn_setup,
	.op = gn_op,
	.reset = gn_reset,
};
