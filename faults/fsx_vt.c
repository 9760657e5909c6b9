/*
 * fsx_vt.c - explore mode's virtual file times (see fsx_seam.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../core/sched.h"
#include "fsx_seam.h"
#define FSX_BACKEND_REDIRECT /* the system calls below go to fsx_backend when set */
#include "fsx_backend.h"

/* ---- explore: virtual file times ----
 * Every object a step creates or changes, and the directory it sits in, is
 * stamped with the virtual clock, so a protocol's stat() sees virtual ages. */

void fsx_vt_times(struct timespec ts[2])
{
	int64_t ms = sched_now_ms();
	int64_t sub = sched_now_ns() % 1000000; /* keep the clock's ns: ages order steps */
	ts[0].tv_sec = ts[1].tv_sec = ms / 1000;
	ts[0].tv_nsec = ts[1].tv_nsec = (ms % 1000) * 1000000L + sub;
}

/*
 * On the real file system a stamp waits until something could see it: each
 * object keeps only its latest stamp, and the stamps go out in the order
 * they were taken.  A descriptor's stamp is a file's (a write, a truncate, a
 * create), a path's a folder's (one made, the one an entry was made in or
 * removed from): the two never name one object, so they wait in two lists
 * and their order against each other does not matter.
 *
 * The folders' wait in the explorer's shared mapping (struct sched_vt), also
 * while other workers take their steps: every step that could see or move
 * one, whoever's it is, sends them out first.  That is a stat (every stamp
 * goes out), a call that sets times itself (every stamp), and a rename,
 * unlink or rmdir that could move or remove a folder stamped by path
 * (fsx_vt_flush_touching: all but folders above the path and other entries
 * of its folder, by plain absolute paths); a sweep of the explorer's sends
 * them out before it removes folders (fsx_vt_flush_shared).  A folder's own
 * stamp goes with it when an rmdir of it succeeds: no other name sees it
 * (the seam keeps no folder open).  A new execution drops them with the
 * store they were for (sched_reset).
 *
 * The descriptors' are this process's: they go out before it closes one it
 * stamped, before it waits for a grant (sched_leaving: another worker, the
 * controller or a kill may come next) and before any stat of its own.
 *
 * What is stamped is what was, at the same virtual times; only a read's
 * access time may be the real one for a while (nothing reads that:
 * explore's stat has no atime).  A search of mkdir-legacy (2 workers x 2
 * ops) makes about 7 utimensat calls an execution (4 of them the temporary
 * files' descriptors'): 16 with every stamp made at once, 9.5 when each
 * worker sent its folders' before it waited.  The model (a backend) is
 * stamped at once: it costs no call there; so is everything with
 * LOCKSTORM_VT_EAGER=1.
 */
static struct sched_vt vt_fds; /* this process's descriptors' stamps (their paths unused) */

static void vt_apply(const struct sched_vt_stamp *p)
{
	if (p->fd >= 0)
		futimens(p->fd, p->ts);
	else
		utimensat(AT_FDCWD, p->path, p->ts, AT_SYMLINK_NOFOLLOW);
}

/* Sends L's stamps out, in their order. */
static void vt_send(struct sched_vt *l)
{
	if (!l->n)
		return;
	int saved = errno;
	for (unsigned k = 0; k < l->n; k++)
		vt_apply(&l->e[l->order[k]]);
	l->n = 0;
	errno = saved;
}

/* Drops PATH's stamp from the folders' list; the others keep their order. */
static void vt_drop(struct sched_vt *l, const char *path)
{
	unsigned keep = 0;
	for (unsigned k = 0; k < l->n; k++)
		if (strcmp(l->e[l->order[k]].path, path) != 0)
			l->order[keep++] = l->order[k];
	l->n = keep;
}

void fsx_vt_flush_fds(void)
{
	vt_send(&vt_fds);
}

void fsx_vt_flush(void)
{
	vt_send(&vt_fds);
	vt_send(sched_vt_shared());
}

void fsx_vt_flush_shared(struct sched *s)
{
	vt_send(&s->vt);
}

/* Keep FD's (or PATH's) stamp TS in L for later, in place of the one it had. */
static void vt_pend_one(struct sched_vt *l, int fd, const char *path, size_t len, const struct timespec ts[2])
{
	struct sched_vt_stamp *p = NULL;
	for (unsigned k = 0; k < l->n; k++) {
		struct sched_vt_stamp *q = &l->e[l->order[k]];
		if (fd >= 0 ? q->fd == fd : strcmp(q->path, path) == 0) {
			/* its slot goes to the end of the order: the latest */
			unsigned char slot = l->order[k];
			memmove(&l->order[k], &l->order[k + 1], l->n - k - 1);
			l->order[l->n - 1] = slot;
			p = q;
			break;
		}
	}
	if (!p) {
		if (l->n == SCHED_VT_PENDING)
			vt_send(l);
		unsigned used = 0, slot = 0;
		for (unsigned k = 0; k < l->n; k++)
			used |= 1u << l->order[k];
		while (used >> slot & 1u)
			slot++;
		l->order[l->n++] = (unsigned char)slot;
		p = &l->e[slot];
		p->fd = fd;
		if (fd < 0)
			memcpy(p->path, path, len + 1);
	}
	p->ts[0] = ts[0];
	p->ts[1] = ts[1];
}

void fsx_vt_flush_fd(int fd)
{
	for (unsigned k = 0; k < vt_fds.n; k++)
		if (vt_fds.e[vt_fds.order[k]].fd == fd) {
			vt_send(&vt_fds); /* in their order (the folders' stay) */
			return;
		}
}

/* Does a rename, unlink or rmdir of P leave the object stamped at PATH where
 * it is?  When PATH is a folder above P (the store, for its lock). */
static int vt_above(const char *path, const char *p)
{
	size_t len = strlen(path);
	return strncmp(path, p, len) == 0 && p[len] == '/';
}

/* And when PATH is another entry of P's folder (both plain paths, whose
 * folder parts then name one folder): a rename, unlink or rmdir acts on its
 * own entry (a symlink there is not followed).  The names
 * differ also without case (a folder that folds case has one entry for both). */
static int vt_sibling(const char *path, const char *p)
{
	const char *a = strrchr(path, '/'), *b = strrchr(p, '/');
	return a && b && a - path == b - p && strncmp(path, p, (size_t)(a - path)) == 0 &&
	       strcasecmp(a + 1, b + 1) != 0 && fsx_path_plain(path) && fsx_path_plain(p);
}

/* Stamps by path that a call on A (and B) may move or remove (one at A
 * itself too, unless KEEP_SELF): they all go out first. */
static void vt_touching(const char *a, const char *b, int keep_self)
{
	struct sched_vt *l = sched_vt_shared();
	for (unsigned k = 0; k < l->n; k++) {
		const char *path = l->e[l->order[k]].path;
		int safe_a = vt_above(path, a) || vt_sibling(path, a) || (keep_self && strcmp(path, a) == 0);
		if (!safe_a || (b && !vt_above(path, b) && !vt_sibling(path, b))) {
			vt_send(l);
			return;
		}
	}
}

void fsx_vt_flush_touching(const char *a, const char *b)
{
	vt_touching(a, b, 0);
}

/* Before an rmdir of PATH: its own stamp may wait, for it goes with the
 * folder when the rmdir succeeds (fsx_vt_rmdir_done); a folder has no other
 * name to see it by. */
void fsx_vt_flush_before_rmdir(const char *path)
{
	vt_touching(path, NULL, 1);
}

void fsx_vt_rmdir_done(const char *path)
{
	vt_drop(sched_vt_shared(), path);
	fsx_vt_stamp_parent(path);
}

/* LOCKSTORM_VT_EAGER=1: every stamp at once, as before (tests hold the two
 * the same) */
static int vt_later(void)
{
	static int later = -1;
	if (later < 0) {
		const char *e = getenv("LOCKSTORM_VT_EAGER");
		later = !(e && strcmp(e, "1") == 0);
	}
	return later && !fsx_modelled();
}

void fsx_vt_stamp(const char *path)
{
	size_t len = strlen(path);
	if (vt_later()) {
		if (len < SCHED_VT_PATH) {
			struct timespec ts[2];
			fsx_vt_times(ts);
			vt_pend_one(sched_vt_shared(), -1, path, len, ts);
			return;
		}
		vt_send(sched_vt_shared()); /* a long path's at once: after those taken before it */
	}
	struct timespec ts[2];
	fsx_vt_times(ts);
	utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW);
}

int fsx_vt_stamp_shared(struct sched *s, const char *path)
{
	size_t len = strlen(path);
	if (!vt_later() || len >= SCHED_VT_PATH)
		return -1;
	const struct timespec start[2] = { { SCHED_EPOCH_MS / 1000, 0 }, { SCHED_EPOCH_MS / 1000, 0 } };
	vt_pend_one(&s->vt, -1, path, len, start); /* (the controller has no clock of its own: it is 0 now) */
	return 0;
}

/* The folder PATH's entry sits in, into DIR (DIR_LEN bytes); 0, or -1 when
 * the path is too long to tell. */
static int parent_of(const char *path, char *dir, size_t dir_len)
{
	size_t len = strlen(path);
	if (len >= dir_len)
		return -1;
	memcpy(dir, path, len + 1);
	char *slash = strrchr(dir, '/');
	if (!slash)
		memcpy(dir, ".", 2);
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	return 0;
}

void fsx_vt_stamp_parent(const char *path)
{
	char dir[4096];
	if (parent_of(path, dir, sizeof dir) == 0)
		fsx_vt_stamp(dir);
}

void fsx_vt_stamp_parents(const char *from, const char *to)
{
	char a[4096], b[4096];
	a[0] = '\0';
	if (parent_of(from, a, sizeof a) == 0)
		fsx_vt_stamp(a);
	if (parent_of(to, b, sizeof b) == 0 && strcmp(a, b) != 0) /* a rename inside one folder: once */
		fsx_vt_stamp(b);
}

void fsx_vt_stamp_fd(int fd)
{
	if (vt_later()) {
		struct timespec ts[2];
		fsx_vt_times(ts);
		vt_pend_one(&vt_fds, fd, NULL, 0, ts);
		return;
	}
	struct timespec ts[2];
	fsx_vt_times(ts);
	futimens(fd, ts);
}
