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
 * they were taken (an object may be in the list twice, by path and by
 * descriptor: the later one lands last, as it did).  A step makes the
 * stamps of one read-merge-write three utimensat calls instead of seven.
 *
 * They go out (fsx_vt_flush) before anyone else could look: before this
 * worker waits for a grant (sched_leaving: another worker, the controller or
 * a kill may come next), before a stat of this worker's, before it sets
 * times itself, and before a rename, unlink or rmdir that could move or
 * remove an object it stamped by path (fsx_vt_flush_touching: all but
 * folders above the path and other entries of its folder, by plain absolute
 * paths).  The descriptors' go out before it closes one it stamped.  A
 * folder's own stamp goes with it when an rmdir of it succeeds: no other
 * name sees it (the seam keeps no folder open).  What is stamped is what was, at the same
 * virtual times; only a read's access time may be the real one for a while
 * (nothing reads that: explore's stat has no atime).  The model (a backend)
 * is stamped at once: it costs no call there; so is everything with
 * LOCKSTORM_VT_EAGER=1.
 */
#define VT_PENDING 8
static struct vt_pending {
	int fd;              /* -1: by path */
	struct timespec ts[2];
	char path[PATH_MAX];
} vt_pend[VT_PENDING];
static unsigned vt_npend;
static unsigned char vt_order[VT_PENDING]; /* the slots, the latest stamp last */

static void vt_apply(const struct vt_pending *p)
{
	if (p->fd >= 0)
		futimens(p->fd, p->ts);
	else
		utimensat(AT_FDCWD, p->path, p->ts, AT_SYMLINK_NOFOLLOW);
}

/* Takes the stamps out of the list that are descriptors' (FDS) or PATH's:
 * made (APPLY) or dropped.  The others keep their order; the slots taken
 * are free again (vt_pend_one takes the lowest free one). */
static void vt_take(int fds, const char *path, int apply)
{
	int saved = errno;
	unsigned keep = 0;
	for (unsigned k = 0; k < vt_npend; k++) {
		const struct vt_pending *q = &vt_pend[vt_order[k]];
		if (fds ? q->fd >= 0 : q->fd < 0 && strcmp(q->path, path) == 0) {
			if (apply)
				vt_apply(q);
		} else {
			vt_order[keep++] = vt_order[k];
		}
	}
	vt_npend = keep;
	errno = saved;
}

void fsx_vt_flush(void)
{
	if (!vt_npend)
		return;
	int saved = errno;
	for (unsigned k = 0; k < vt_npend; k++)
		vt_apply(&vt_pend[vt_order[k]]);
	vt_npend = 0;
	errno = saved;
}

/* Keep FD's (or PATH's) stamp for later, in place of the one it had. */
static void vt_pend_one(int fd, const char *path)
{
	struct vt_pending *p = NULL;
	size_t len = path ? strlen(path) : 0;
	if (len >= PATH_MAX)
		return;
	for (unsigned k = 0; k < vt_npend; k++) {
		struct vt_pending *q = &vt_pend[vt_order[k]];
		if (fd >= 0 ? q->fd == fd : q->fd < 0 && strcmp(q->path, path) == 0) {
			/* its slot goes to the end of the order: the latest */
			unsigned char slot = vt_order[k];
			memmove(&vt_order[k], &vt_order[k + 1], vt_npend - k - 1);
			vt_order[vt_npend - 1] = slot;
			p = q;
			break;
		}
	}
	if (!p) {
		if (vt_npend == VT_PENDING)
			fsx_vt_flush();
		unsigned used = 0, slot = 0;
		for (unsigned k = 0; k < vt_npend; k++)
			used |= 1u << vt_order[k];
		while (used >> slot & 1u)
			slot++;
		vt_order[vt_npend++] = (unsigned char)slot;
		p = &vt_pend[slot];
		p->fd = fd;
		if (fd < 0)
			memcpy(p->path, path, len + 1);
	}
	fsx_vt_times(p->ts);
}

void fsx_vt_flush_fd(int fd)
{
	for (unsigned k = 0; k < vt_npend; k++)
		if (vt_pend[vt_order[k]].fd == fd) {
			/* the descriptors' alone, in their order; the paths' stay.  A
			 * descriptor's stamp is a file's (a write, a truncate, a
			 * create), a path's a folder's (one made, the one an entry was
			 * made in or removed from): the two never name one object, so
			 * their order against each other does not matter */
			vt_take(1, NULL, 1);
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

/* An absolute path without an empty, "." or ".." part: two such paths with
 * one folder part name entries of one folder. */
static int vt_plain(const char *p)
{
	if (p[0] != '/')
		return 0;
	for (const char *c = p; c;) {
		const char *part = c + 1, *next = strchr(part, '/');
		size_t n = next ? (size_t)(next - part) : strlen(part);
		if (n == 0 || (part[0] == '.' && (n == 1 || (n == 2 && part[1] == '.'))))
			return 0;
		c = next;
	}
	return 1;
}

/* And when PATH is another entry of P's folder: a rename, unlink or rmdir
 * acts on its own entry (a symlink there is not followed).  The names
 * differ also without case (a folder that folds case has one entry for both). */
static int vt_sibling(const char *path, const char *p)
{
	const char *a = strrchr(path, '/'), *b = strrchr(p, '/');
	return a && b && a - path == b - p && strncmp(path, p, (size_t)(a - path)) == 0 &&
	       strcasecmp(a + 1, b + 1) != 0 && vt_plain(path) && vt_plain(p);
}

/* Stamps by path that a call on A (and B) may move or remove (one at A
 * itself too, unless KEEP_SELF): they all go out first. */
static void vt_touching(const char *a, const char *b, int keep_self)
{
	for (unsigned k = 0; k < vt_npend; k++) {
		const struct vt_pending *q = &vt_pend[vt_order[k]];
		const char *path = q->path;
		if (q->fd >= 0)
			continue;
		int safe_a = vt_above(path, a) || vt_sibling(path, a) || (keep_self && strcmp(path, a) == 0);
		if (!safe_a || (b && !vt_above(path, b) && !vt_sibling(path, b))) {
			fsx_vt_flush();
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
	vt_take(0, path, 0);
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
	if (vt_later()) {
		vt_pend_one(-1, path);
		return;
	}
	struct timespec ts[2];
	fsx_vt_times(ts);
	utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW);
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
		vt_pend_one(fd, NULL);
		return;
	}
	struct timespec ts[2];
	fsx_vt_times(ts);
	futimens(fd, ts);
}
