/*
 * mfs_core.c - the modelled file system: namespace, inodes, open file
 * descriptions, the calls (see mfs.h, mfs_int.h).
 */
#include "mfs_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/journal.h"
#include "../core/point.h"
#include "../core/sched.h"
#include "../faults/fsx_seam.h"

struct mfs_shm *mfs_m;

static int yields; /* this process is a worker under the scheduler: a listing may take several steps */

void mfs_attach_yield(int on)
{
	yields = on;
}

int mfs_yields(void)
{
	return yields;
}
int mfs_slot = MFS_SLOTS - 1;
int mfs_wrong_rule;

/* ---- names ---- */

uint32_t mfs_hash(const char *name)
{
	uint32_t h = 2166136261u;
	for (; *name; name++)
		h = (h ^ (uint8_t)(mfs_m->p.nocase ? tolower((unsigned char)*name) : *name)) * 16777619u;
	return h;
}

static int name_eq(const char *a, const char *b)
{
	return mfs_m->p.nocase ? strcasecmp(a, b) == 0 : strcmp(a, b) == 0;
}

int mfs_lookup(int dir, const char *name)
{
	uint32_t h = mfs_hash(name);
	for (int i = 0; i < mfs_m->ndent; i++) {
		struct mfs_dent *d = &mfs_m->dent[i];
		if (d->live && d->dir == dir && d->hash == h && name_eq(d->name, name))
			return i;
	}
	return -1;
}

/* The entry record for NAME in DIR, live or a durable ghost: -1 none. */
static int dent_find(int dir, const char *name)
{
	uint32_t h = mfs_hash(name);
	for (int i = 0; i < mfs_m->ndent; i++) {
		struct mfs_dent *d = &mfs_m->dent[i];
		if ((d->live || d->durable) && d->dir == dir && d->hash == h && name_eq(d->name, name))
			return i;
	}
	return -1;
}

void mfs_dent_free(int i)
{
	struct mfs_dent *d = &mfs_m->dent[i];
	d->live = d->durable = 0;
	while (mfs_m->ndent && !mfs_m->dent[mfs_m->ndent - 1].live && !mfs_m->dent[mfs_m->ndent - 1].durable)
		mfs_m->ndent--;
}

static int dent_add(int dir, const char *name, int node)
{
	int i = dent_find(dir, name);
	if (i < 0) {
		for (i = 0; i < mfs_m->ndent && (mfs_m->dent[i].live || mfs_m->dent[i].durable); i++)
			;
		if (i == MFS_DENTS)
			return -ENOSPC;
		if (i == mfs_m->ndent)
			mfs_m->ndent++;
		struct mfs_dent *d = &mfs_m->dent[i];
		memset(d, 0, sizeof *d);
		d->dir = (uint16_t)dir;
		d->hash = mfs_hash(name);
		snprintf(d->name, sizeof d->name, "%s", name);
	}
	struct mfs_dent *d = &mfs_m->dent[i];
	d->live = 1;
	d->node = (uint16_t)node;
	return i;
}

/* ---- inodes ---- */

int64_t mfs_now(void)
{
	if (mfs_m->clock)
		return SCHED_EPOCH_MS * 1000000LL + atomic_load(&mfs_m->clock->now_ns);
	return mfs_m->now_ns;
}

/* Inode K gets a number: the next one (reuse=never), or the lowest free one. */
void mfs_ino_take(int k)
{
	struct mfs_inode *n = &mfs_m->node[k];
	if (mfs_m->p.reuse == MFS_REUSE_NEVER) {
		n->ino = mfs_m->next_ino++;
		return;
	}
	int i;
	for (i = 1; i < MFS_INODES && mfs_m->ino_used[i]; i++)
		;
	mfs_m->ino_used[i] = 1;
	n->ino = MFS_INO_BASE + (uint64_t)i;
}

static void ino_give_back(struct mfs_inode *n)
{
	if (mfs_m->p.reuse != MFS_REUSE_NEVER && n->ino > MFS_INO_BASE && n->ino < MFS_INO_BASE + MFS_INODES)
		mfs_m->ino_used[n->ino - MFS_INO_BASE] = 0;
}

static int inode_alloc(int type)
{
	int k;
	for (k = 1; k < MFS_INODES && mfs_m->node[k].type; k++)
		;
	if (k == MFS_INODES)
		return -ENOSPC;
	struct mfs_inode *n = &mfs_m->node[k];
	memset(n, 0, sizeof *n);
	n->type = (uint8_t)type;
	mfs_ino_take(k);
	n->atime = n->mtime = n->ctime = n->btime = mfs_now();
	n->dmtime = n->mtime;
	n->dctime = n->ctime;
	n->mode = type == MFS_DIR ? 0755 : 0644;
	mfs_m->nused++;
	return k;
}

/* Free inode K when nothing names it or has it open; its number is free
 * then.  While an entry on disk still names it (a removal not yet fsync'd)
 * it lingers as a zombie a power loss brings back. */
void mfs_inode_maybe_free(int k)
{
	struct mfs_inode *n = &mfs_m->node[k];
	if (!n->type || n->zombie || k == MFS_ROOT || n->nlink || n->nopen)
		return;
	ino_give_back(n);
	for (int i = 0; i < mfs_m->ndent; i++)
		if (mfs_m->dent[i].durable && mfs_m->dent[i].dnode == k) {
			n->zombie = 1;
			return;
		}
	n->type = 0;
	mfs_m->nused--;
}

static void touch(int k)
{
	struct mfs_inode *n = &mfs_m->node[k];
	n->mtime = n->ctime = mfs_now();
}

/* Remove the live entry I (the name only). */
static void unname(int i)
{
	struct mfs_dent *d = &mfs_m->dent[i];
	int k = d->node;
	d->live = 0;
	if (!d->durable)
		mfs_dent_free(i);
	struct mfs_inode *n = &mfs_m->node[k];
	if (n->nlink)
		n->nlink--;
	n->ctime = mfs_now();
	if (n->type == MFS_DIR)
		n->nlink = 0;
}

/* ---- paths ---- */

/* PATH relative to the mount: *rel set, 0; 1: PATH is not under the mount
 * (the real file system serves it: output folders, the mount's ancestors). */
static int strip_mount(const char *path, const char **rel)
{
	size_t ml = strlen(mfs_m->mount);
	if (!strncmp(path, mfs_m->mount, ml) && (path[ml] == '\0' || path[ml] == '/')) {
		*rel = path + ml;
		return 0;
	}
	return 1;
}

/* Resolve PATH: 0 with w filled, or -errno for a missing or non-directory
 * component on the way (the last name may be missing: w->node -1). */
int mfs_walk(const char *path, struct walk *w)
{
	memset(w, 0, sizeof *w);
	w->dir = -1;
	w->node = w->dent = -1;
	if (!path || !*path)
		return -ENOENT;
	const char *rel;
	if (strip_mount(path, &rel)) {
		w->outside = 1;
		return 0;
	}
	int cur = MFS_ROOT, parent = MFS_ROOT, dent = -1;
	const char *p = rel;
	char name[MFS_NAME] = "";
	for (;;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n >= MFS_NAME)
			return -ENAMETOOLONG;
		if (cur < 0)
			return -ENOENT;
		if (mfs_m->node[cur].type != MFS_DIR)
			return -ENOTDIR;
		memcpy(name, p, n);
		name[n] = '\0';
		p += n;
		if (!strcmp(name, ".")) {
			parent = cur;
			continue;
		}
		if (!strcmp(name, "..")) {
			if (cur != MFS_ROOT)
				cur = mfs_m->node[cur].parent;
			parent = cur;
			continue;
		}
		parent = cur;
		dent = mfs_lookup(cur, name);
		cur = dent < 0 ? -1 : mfs_m->dent[dent].node;
		w->trail = *p == '/';
		if (cur >= 0 && mfs_m->node[cur].gone && *p) /* delete pending: nothing inside can be reached */
			return mfs_m->p.windows ? -EACCES : -ENOENT;
	}
	w->dir = cur == MFS_ROOT && dent < 0 ? -1 : parent;
	w->node = cur;
	w->dent = dent;
	snprintf(w->leaf, sizeof w->leaf, "%s", name);
	if (cur >= 0 && w->trail && mfs_m->node[cur].type != MFS_DIR)
		return -ENOTDIR;
	return 0;
}

static int fail(int neg)
{
	errno = -neg;
	return -1;
}

/* delete pending (windows): the name is there, the directory is not */
static int pending(const struct walk *w)
{
	return w->node >= 0 && mfs_m->node[w->node].gone;
}

/* A worker's descriptor table that holds directory K open, other than this
 * process's: -1 when none (or only ours). */
static int opener_of(int k)
{
	for (int slot = 0; slot < MFS_SLOTS - 1; slot++) {
		if (slot == mfs_slot)
			continue;
		for (int i = 0; i < MFS_FDS; i++) {
			int o = mfs_m->fdt[slot][i] - 1;
			if (o >= 0 && mfs_m->ofd[o].refs && mfs_m->ofd[o].node == k)
				return slot;
		}
	}
	return -1;
}

/* W's path names a delete-pending directory: the call FSOP fails NEG.  In a
 * worker under the explorer this is journaled (EV_DELETE_PENDING), so the
 * checker can tell the file system's answer to another's removal from an
 * errno anyone injected (no-escaped-error, rule error-on-contention). */
static int pending_fail(const struct walk *w, int fsop, int neg)
{
	if (mfs_yields() && fsx_bound)
		fsx_log_event(EV_DELETE_PENDING, -neg, fsop, opener_of(w->node), 0);
	return fail(neg);
}

/* ---- the calls ---- */

int mfs_op_mkdir(const char *path, mode_t mode)
{
	struct walk w;
	int r = mfs_walk(path, &w);
	if (r)
		return fail(r);
	if (w.outside)
		return mkdir(path, mode);
	if (w.dir < 0)
		return fail(-EEXIST);
	if (pending(&w))
		return pending_fail(&w, FSX_MKDIR, -EPERM);
	if (w.node >= 0)
		return fail(-EEXIST);
	int k = inode_alloc(MFS_DIR);
	if (k < 0)
		return fail(k);
	int d = dent_add(w.dir, w.leaf, k);
	if (d < 0) {
		mfs_inode_maybe_free(k);
		return fail(d);
	}
	mfs_m->node[k].nlink = 1;
	mfs_m->node[k].parent = (uint16_t)w.dir;
	mfs_m->node[k].mode = (uint16_t)(mode & 0777 & ~022);
	touch(w.dir);
	return 0;
}

/* The explorer's store: a folder under the mount, numbered 2 as a mount's
 * root is, so the numbers a workload sees are those of a store that is the
 * mount itself; unlike the mount it can be removed (a sweep) and made again. */
int mfs_make_store(const char *path)
{
	if (mfs_op_mkdir(path, 0755) != 0)
		return -1;
	struct walk w;
	if (mfs_walk(path, &w) != 0 || w.node < 0)
		return -1;
	struct mfs_inode *n = &mfs_m->node[w.node];
	if (mfs_m->p.reuse == MFS_REUSE_NEVER)
		mfs_m->next_ino--;
	else
		ino_give_back(n);
	n->ino = 2;
	n->mode = 0755;
	return 0;
}

static int dir_empty(int k)
{
	for (int i = 0; i < mfs_m->ndent; i++)
		if (mfs_m->dent[i].live && mfs_m->dent[i].dir == k)
			return 0;
	return 1;
}

/* The entry of a removed directory goes; windows: not while it is open. */
static void remove_dir_entry(int dent, int k)
{
	struct mfs_inode *n = &mfs_m->node[k];
	if (mfs_m->p.windows && n->nopen) {
		n->gone = 1; /* its name stays until the last handle closes (mfs_release) */
		return;
	}
	unname(dent);
	n->gone = 1;
	mfs_inode_maybe_free(k);
}

int mfs_op_rmdir(const char *path)
{
	struct walk w;
	int r = mfs_walk(path, &w);
	if (r)
		return fail(r);
	if (w.outside)
		return rmdir(path);
	if (w.dir < 0)
		return fail(-EBUSY);
	if (w.node < 0)
		return fail(-ENOENT);
	if (pending(&w))
		return pending_fail(&w, FSX_RMDIR, -EPERM);
	if (!strcmp(w.leaf, "."))
		return fail(-EINVAL);
	if (mfs_m->node[w.node].type != MFS_DIR)
		return fail(-ENOTDIR);
	if (!dir_empty(w.node))
		return fail(-ENOTEMPTY);
	touch(w.dir);
	remove_dir_entry(w.dent, w.node);
	return 0;
}

int mfs_fd_alloc(int ofd)
{
	for (int i = 0; i < MFS_FDS; i++)
		if (!mfs_m->fdt[mfs_slot][i]) {
			mfs_m->fdt[mfs_slot][i] = (int16_t)(ofd + 1);
			return MFS_FD_BASE + i;
		}
	return -EMFILE;
}

/* The open file description behind FD: -EBADF when none. */
int mfs_ofd_of(int fd)
{
	int i = fd - MFS_FD_BASE;
	if (i < 0 || i >= MFS_FDS || !mfs_m->fdt[mfs_slot][i])
		return -EBADF;
	return mfs_m->fdt[mfs_slot][i] - 1;
}

int mfs_ofd_new(int k, int acc, int append)
{
	int o;
	for (o = 0; o < MFS_OFDS && mfs_m->ofd[o].refs; o++)
		;
	if (o == MFS_OFDS)
		return -ENFILE;
	struct mfs_ofd *f = &mfs_m->ofd[o];
	memset(f, 0, sizeof *f);
	f->refs = 1;
	f->node = (uint16_t)k;
	f->acc = (uint8_t)acc;
	f->append = (uint8_t)append;
	mfs_m->node[k].nopen++;
	return o;
}

/* The last reference to description O is gone: its flock, its hold on the inode. */
void mfs_ofd_release(int o)
{
	struct mfs_ofd *f = &mfs_m->ofd[o];
	if (!f->refs || --f->refs)
		return;
	int k = f->node;
	struct mfs_inode *n = &mfs_m->node[k];
	if (f->lock == LOCK_EX)
		n->flock_ex = 0;
	else if (f->lock == LOCK_SH && n->flock_sh)
		n->flock_sh--;
	f->lock = 0;
	if (n->nopen)
		n->nopen--;
	if (!n->nopen && n->type == MFS_DIR && n->gone) { /* windows: the pending name goes now */
		for (int i = 0; i < mfs_m->ndent; i++)
			if (mfs_m->dent[i].live && mfs_m->dent[i].node == k) {
				unname(i);
				break;
			}
	}
	mfs_inode_maybe_free(k);
}

int mfs_op_open(const char *path, int flags, mode_t mode)
{
	struct walk w;
	int r = mfs_walk(path, &w);
	if (r)
		return fail(r);
	int acc = flags & O_ACCMODE;
	if (w.outside)
		return open(path, flags, mode);
	if (pending(&w))
		return pending_fail(&w, FSX_OPEN, -EACCES);
	int k = w.node;
	if (k >= 0) {
		struct mfs_inode *n = &mfs_m->node[k];
		if ((flags & O_CREAT) && (flags & O_EXCL))
			return fail(-EEXIST);
		if (n->type == MFS_DIR && (acc != O_RDONLY || (flags & O_TRUNC) || (flags & O_CREAT)))
			return fail(-EISDIR);
		if ((flags & O_DIRECTORY) && n->type != MFS_DIR)
			return fail(-ENOTDIR);
		if ((flags & O_TRUNC) && acc != O_RDONLY && n->type == MFS_FILE) {
			n->size = 0;
			touch(k);
		}
	} else {
		if (!(flags & O_CREAT))
			return fail(-ENOENT);
		if (w.trail)
			return fail(-EISDIR);
		if (w.dir < 0)
			return fail(-ENOENT);
		k = inode_alloc(MFS_FILE);
		if (k < 0)
			return fail(k);
		int d = dent_add(w.dir, w.leaf, k);
		if (d < 0) {
			mfs_inode_maybe_free(k);
			return fail(d);
		}
		mfs_m->node[k].nlink = 1;
		mfs_m->node[k].mode = (uint16_t)(mode & 0777 & ~022);
		touch(w.dir);
	}
	int o = mfs_ofd_new(k, acc, (flags & O_APPEND) != 0);
	if (o < 0) {
		mfs_inode_maybe_free(k);
		return fail(o);
	}
	int fd = mfs_fd_alloc(o);
	if (fd < 0) {
		mfs_ofd_release(o);
		return fail(fd);
	}
	return fd;
}

int mfs_op_close(int fd)
{
	if (fd < MFS_FD_BASE)
		return close(fd);
	int o = mfs_ofd_of(fd);
	if (o < 0)
		return fail(o);
	mfs_m->fdt[mfs_slot][fd - MFS_FD_BASE] = 0;
	mfs_ofd_release(o);
	return 0;
}

int mfs_op_link(const char *from, const char *to)
{
	struct walk a, b;
	int r = mfs_walk(from, &a); /* the source first: its ENOENT wins */
	if (!r && !a.outside && a.node < 0)
		r = -ENOENT;
	if (!r)
		r = mfs_walk(to, &b);
	if (r)
		return fail(r);
	if (a.outside || b.outside)
		return a.outside && b.outside ? link(from, to) : fail(-EXDEV);
	if (b.node >= 0 || b.dir < 0) /* before the source's kind, as Linux */
		return fail(-EEXIST);
	if (pending(&a) || mfs_m->node[a.node].type == MFS_DIR)
		return fail(-EPERM);
	int d = dent_add(b.dir, b.leaf, a.node);
	if (d < 0)
		return fail(d);
	mfs_m->node[a.node].nlink++;
	mfs_m->node[a.node].ctime = mfs_now();
	touch(b.dir);
	return 0;
}

int mfs_op_unlink(const char *path)
{
	struct walk w;
	int r = mfs_walk(path, &w);
	if (r)
		return fail(r);
	if (w.outside)
		return unlink(path);
	if (w.dir < 0)
		return fail(-EISDIR);
	if (w.node < 0)
		return fail(-ENOENT);
	if (pending(&w))
		return fail(-EPERM);
	if (mfs_m->node[w.node].type == MFS_DIR)
		return fail(-EISDIR);
	int k = w.node;
	unname(w.dent);
	touch(w.dir);
	mfs_inode_maybe_free(k);
	return 0;
}

/* Is A the directory D or one of its ancestors? */
static int is_ancestor(int a, int d)
{
	for (int guard = 0; guard < MFS_INODES; guard++) {
		if (d == a)
			return 1;
		if (d == MFS_ROOT)
			return 0;
		d = mfs_m->node[d].parent;
	}
	return 0;
}

int mfs_op_rename(const char *from, const char *to)
{
	struct walk a, b;
	int r = mfs_walk(from, &a);
	if (!r)
		r = mfs_walk(to, &b);
	if (r)
		return fail(r);
	if (a.outside || b.outside)
		return a.outside && b.outside ? rename(from, to) : fail(-EXDEV);
	if (a.node < 0)
		return fail(-ENOENT);
	if (a.dir < 0 || b.dir < 0)
		return fail(-EBUSY);
	if (pending(&a) || pending(&b))
		return fail(-EACCES);
	int k = a.node, src_dir = mfs_m->node[k].type == MFS_DIR;
	if (!strcmp(a.leaf, ".") || !strcmp(a.leaf, "..") || !strcmp(b.leaf, ".") || !strcmp(b.leaf, ".."))
		return fail(-EINVAL);
	if (src_dir && is_ancestor(k, b.dir))
		return fail(-EINVAL);
	if (b.node == k)
		return 0; /* two names of one file: nothing happens (POSIX) */
	if (b.node >= 0) {
		if (mfs_wrong_rule == 1)
			return fail(-EEXIST);
		struct mfs_inode *t = &mfs_m->node[b.node];
		if (src_dir && t->type != MFS_DIR)
			return fail(-ENOTDIR);
		if (!src_dir && t->type == MFS_DIR)
			return fail(-EISDIR);
		if (t->type == MFS_DIR && !dir_empty(b.node))
			return fail(-ENOTEMPTY);
	} else if (!src_dir && b.trail) {
		return fail(-ENOTDIR);
	}
	if (b.node >= 0) {
		int old = b.node;
		if (mfs_m->node[old].type == MFS_DIR)
			mfs_m->node[old].gone = 1;
		unname(b.dent);
		mfs_inode_maybe_free(old);
	}
	/* the entry moves: unname without dropping the link count */
	struct mfs_dent *d = &mfs_m->dent[a.dent];
	d->live = 0;
	if (!d->durable)
		mfs_dent_free(a.dent);
	int nd = dent_add(b.dir, b.leaf, k);
	if (nd < 0) { /* cannot happen: the freed record is there to take */
		dent_add(a.dir, a.leaf, k);
		return fail(nd);
	}
	if (src_dir)
		mfs_m->node[k].parent = (uint16_t)b.dir;
	mfs_m->node[k].ctime = mfs_now();
	touch(a.dir);
	touch(b.dir);
	return 0;
}

static int64_t coarse(int64_t ns)
{
	int64_t g = mfs_m->p.time_ns;
	return g > 1 ? ns - ns % g : ns;
}

static void fill_statx(int k, int from_fd, struct statx *sx)
{
	memset(sx, 0, sizeof *sx);
	uint64_t ino;
	int64_t t[4];
	if (k < 0) { /* outside: an existing directory */
		ino = 1;
		sx->stx_mode = S_IFDIR | 0755;
		t[0] = t[1] = t[2] = t[3] = SCHED_EPOCH_MS * 1000000LL;
		sx->stx_nlink = 2;
	} else {
		struct mfs_inode *n = &mfs_m->node[k];
		ino = n->ino;
		if (from_fd && mfs_m->p.split)
			ino += 0x100000;
		sx->stx_mode = (uint16_t)((n->type == MFS_DIR ? S_IFDIR : S_IFREG) | n->mode);
		sx->stx_size = n->type == MFS_DIR ? 4096 : n->size;
		sx->stx_nlink = n->type == MFS_DIR ? 2 : n->nlink;
		t[0] = n->atime;
		t[1] = n->mtime;
		t[2] = n->ctime;
		t[3] = n->btime;
	}
	sx->stx_mask = STATX_BASIC_STATS | (mfs_m->p.btime ? STATX_BTIME : 0);
	sx->stx_ino = ino;
	sx->stx_dev_major = 0;
	sx->stx_dev_minor = MFS_DEV;
	sx->stx_blksize = 4096;
	struct statx_timestamp *ts[4] = { &sx->stx_atime, &sx->stx_mtime, &sx->stx_ctime, &sx->stx_btime };
	for (int i = 0; i < 4; i++) {
		if (i == 3 && !mfs_m->p.btime)
			break;
		int64_t v = coarse(t[i]);
		ts[i]->tv_sec = v / 1000000000LL;
		ts[i]->tv_nsec = (uint32_t)(v % 1000000000LL);
	}
}

/* windows: a stat of a path opens it, asks its handle and closes it (Node's
 * statSync: CreateFileW, GetFileInformationByHandle, CloseHandle), so for the
 * length of a step the directory K is open: one removed meanwhile stays
 * delete pending until this handle closes (mkdir of its name: EPERM, K-ML-4).
 * The handle is a descriptor of this worker's, so its death closes it. */
static int win_stat(int k, const char *path, struct statx *sx)
{
	int o = mfs_ofd_new(k, O_RDONLY, 0);
	if (o < 0)
		return fail(o);
	int fd = mfs_fd_alloc(o);
	if (fd < 0) {
		mfs_ofd_release(o);
		return fail(fd);
	}
	sched_result(0, 0); /* the open; the query is a step of its own */
	sched_step(FSX_STAT, path, NULL);
	fill_statx(k, 0, sx); /* by the handle: a delete-pending directory still answers */
	mfs_m->fdt[mfs_slot][fd - MFS_FD_BASE] = 0;
	mfs_ofd_release(o);
	return 0;
}

/* HOLD: a protocol's own stat (the seam's statx), whose handle a windows
 * stat keeps for a step; the seam's internal stat (the identity of a lock
 * object it journals) is part of another call's step and holds nothing. */
static int statx_at(int dirfd, const char *path, int flags, unsigned mask, struct statx *sx, int hold)
{
	(void)mask;
	if ((flags & AT_EMPTY_PATH) && (!path || !*path)) {
		if (dirfd < MFS_FD_BASE)
			return statx(dirfd, path, flags, mask, sx);
		int o = mfs_ofd_of(dirfd);
		if (o < 0)
			return fail(o);
		fill_statx(mfs_m->ofd[o].node, 1, sx);
		return 0;
	}
	if (dirfd != AT_FDCWD && (!path || path[0] != '/'))
		return fail(-EBADF);
	struct walk w;
	int r = mfs_walk(path, &w);
	if (r)
		return fail(r);
	if (w.outside)
		return statx(dirfd, path, flags, mask, sx);
	if (w.node < 0)
		return fail(-ENOENT);
	if (pending(&w))
		return pending_fail(&w, FSX_STAT, -EPERM);
	if (hold && mfs_m->p.windows && mfs_yields() && fsx_sched && !fsx_compound &&
	    mfs_m->node[w.node].type == MFS_DIR)
		return win_stat(w.node, path, sx);
	fill_statx(w.node, 0, sx);
	return 0;
}

int mfs_op_statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *sx)
{
	return statx_at(dirfd, path, flags, mask, sx, 1);
}

static void statx_to_stat(const struct statx *sx, struct stat *st)
{
	memset(st, 0, sizeof *st);
	st->st_dev = ((dev_t)sx->stx_dev_major << 8) | sx->stx_dev_minor;
	st->st_ino = sx->stx_ino;
	st->st_mode = sx->stx_mode;
	st->st_nlink = sx->stx_nlink;
	st->st_size = (off_t)sx->stx_size;
	st->st_blksize = 4096;
	st->st_atim.tv_sec = sx->stx_atime.tv_sec;
	st->st_atim.tv_nsec = sx->stx_atime.tv_nsec;
	st->st_mtim.tv_sec = sx->stx_mtime.tv_sec;
	st->st_mtim.tv_nsec = sx->stx_mtime.tv_nsec;
	st->st_ctim.tv_sec = sx->stx_ctime.tv_sec;
	st->st_ctim.tv_nsec = sx->stx_ctime.tv_nsec;
}

int mfs_op_stat(const char *path, struct stat *st)
{
	const char *rel;
	if (strip_mount(path, &rel))
		return stat(path, st);
	struct statx sx;
	if (statx_at(AT_FDCWD, path, 0, STATX_BASIC_STATS, &sx, 0) != 0)
		return -1;
	statx_to_stat(&sx, st);
	return 0;
}

int mfs_op_lstat(const char *path, struct stat *st)
{
	const char *rel;
	if (strip_mount(path, &rel))
		return lstat(path, st);
	return mfs_op_stat(path, st); /* no symbolic links in the model */
}

int mfs_op_access(const char *path, int mode)
{
	(void)mode;
	struct walk w;
	int r = mfs_walk(path, &w);
	if (r)
		return fail(r);
	if (w.outside)
		return access(path, mode);
	if (w.node < 0)
		return fail(-ENOENT);
	return pending(&w) ? pending_fail(&w, FSX_STAT, -EPERM) : 0;
}

ssize_t mfs_op_read(int fd, void *buf, size_t len)
{
	if (fd < MFS_FD_BASE)
		return read(fd, buf, len);
	int o = mfs_ofd_of(fd);
	if (o < 0)
		return fail(o);
	struct mfs_ofd *f = &mfs_m->ofd[o];
	struct mfs_inode *n = &mfs_m->node[f->node];
	if (f->acc == O_WRONLY)
		return fail(-EBADF);
	if (n->type == MFS_DIR)
		return fail(-EISDIR);
	if (f->off >= n->size)
		return 0;
	size_t k = n->size - (size_t)f->off;
	if (k > len)
		k = len;
	memcpy(buf, mfs_m->data[f->node] + f->off, k);
	f->off += (int64_t)k;
	return (ssize_t)k;
}

/* LEN bytes of BUF at OFF of inode K: how many landed (EFBIG past the cap). */
static ssize_t put(int k, const void *buf, size_t len, int64_t off)
{
	struct mfs_inode *n = &mfs_m->node[k];
	if (!len)
		return 0;
	if (off >= MFS_FILE_CAP)
		return fail(-EFBIG);
	if ((size_t)off + len > MFS_FILE_CAP)
		len = MFS_FILE_CAP - (size_t)off;
	if (off > n->size)
		memset(mfs_m->data[k] + n->size, 0, (size_t)(off - n->size));
	memcpy(mfs_m->data[k] + off, buf, len);
	if ((uint32_t)(off + (int64_t)len) > n->size)
		n->size = (uint32_t)(off + (int64_t)len);
	if (len)
		touch(k);
	return (ssize_t)len;
}

ssize_t mfs_op_write(int fd, const void *buf, size_t len)
{
	if (fd < MFS_FD_BASE)
		return write(fd, buf, len);
	int o = mfs_ofd_of(fd);
	if (o < 0)
		return fail(o);
	struct mfs_ofd *f = &mfs_m->ofd[o];
	if (f->acc == O_RDONLY || mfs_m->node[f->node].type != MFS_FILE)
		return fail(-EBADF);
	if (f->append)
		f->off = mfs_m->node[f->node].size;
	ssize_t r = put(f->node, buf, len, f->off);
	if (r > 0)
		f->off += r;
	return r;
}

ssize_t mfs_op_pwrite(int fd, const void *buf, size_t len, off_t off)
{
	if (fd < MFS_FD_BASE)
		return pwrite(fd, buf, len, off);
	int o = mfs_ofd_of(fd);
	if (o < 0)
		return fail(o);
	struct mfs_ofd *f = &mfs_m->ofd[o];
	if (f->acc == O_RDONLY || mfs_m->node[f->node].type != MFS_FILE)
		return fail(-EBADF);
	if (off < 0)
		return fail(-EINVAL);
	/* Linux: with O_APPEND, pwrite appends whatever the offset */
	return put(f->node, buf, len, f->append ? mfs_m->node[f->node].size : off);
}

int mfs_op_ftruncate(int fd, off_t len)
{
	if (fd < MFS_FD_BASE)
		return ftruncate(fd, len);
	int o = mfs_ofd_of(fd);
	if (o < 0)
		return fail(o);
	struct mfs_ofd *f = &mfs_m->ofd[o];
	struct mfs_inode *n = &mfs_m->node[f->node];
	if (f->acc == O_RDONLY || n->type != MFS_FILE || len < 0)
		return fail(-EINVAL);
	if (len > MFS_FILE_CAP)
		return fail(-EFBIG);
	if ((uint32_t)len > n->size)
		memset(mfs_m->data[f->node] + n->size, 0, (size_t)len - n->size);
	n->size = (uint32_t)len;
	touch(f->node);
	return 0;
}

static int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000LL + t->tv_nsec;
}

static void set_times(int k, const struct timespec ts[2])
{
	struct mfs_inode *n = &mfs_m->node[k];
	int64_t now = mfs_now();
	for (int i = 0; i < 2; i++) {
		int64_t *dst = i ? &n->mtime : &n->atime;
		if (!ts || ts[i].tv_nsec == UTIME_NOW)
			*dst = now;
		else if (ts[i].tv_nsec != UTIME_OMIT)
			*dst = ts_ns(&ts[i]);
	}
	n->ctime = now;
}

int mfs_op_utimensat(int dirfd, const char *path, const struct timespec ts[2], int flags)
{
	(void)flags;
	if (dirfd != AT_FDCWD && (!path || path[0] != '/'))
		return fail(-EBADF);
	struct walk w;
	int r = mfs_walk(path, &w);
	if (r)
		return fail(r);
	if (w.outside)
		return utimensat(dirfd, path, ts, flags);
	if (w.node < 0)
		return fail(-ENOENT);
	set_times(w.node, ts);
	return 0;
}

int mfs_op_futimens(int fd, const struct timespec ts[2])
{
	if (fd < MFS_FD_BASE)
		return futimens(fd, ts);
	int o = mfs_ofd_of(fd);
	if (o < 0)
		return fail(o);
	set_times(mfs_m->ofd[o].node, ts);
	return 0;
}

int mfs_op_flock(int fd, int op)
{
	if (fd < MFS_FD_BASE)
		return flock(fd, op);
	int o = mfs_ofd_of(fd);
	if (o < 0)
		return fail(o);
	struct mfs_ofd *f = &mfs_m->ofd[o];
	struct mfs_inode *n = &mfs_m->node[f->node];
	int want = op & (LOCK_SH | LOCK_EX | LOCK_UN);
	if (want == LOCK_UN) {
		if (f->lock == LOCK_EX)
			n->flock_ex = 0;
		else if (f->lock == LOCK_SH && n->flock_sh)
			n->flock_sh--;
		f->lock = 0;
		return 0;
	}
	if (want != LOCK_SH && want != LOCK_EX)
		return fail(-EINVAL);
	if (f->lock == want)
		return 0;
	int others_sh = n->flock_sh - (f->lock == LOCK_SH);
	int others_ex = n->flock_ex && n->flock_ex != o + 1;
	if (others_ex || (want == LOCK_EX && others_sh > 0))
		return fail(-EWOULDBLOCK); /* a blocking flock cannot wait in the model: the seam retries */
	if (f->lock == LOCK_SH && n->flock_sh)
		n->flock_sh--;
	if (f->lock == LOCK_EX)
		n->flock_ex = 0;
	f->lock = (uint8_t)want;
	if (want == LOCK_EX)
		n->flock_ex = o + 1;
	else
		n->flock_sh++;
	return 0;
}
