/*
 * mfs_dir.c - the modelled file system's directory streams, fsync, power
 * loss and settling after setup (see mfs.h, mfs_int.h).
 */
#include "mfs_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/sched.h"
#include "../faults/fsx.h"

/* A directory stream: the directory held open, the last (hash, name) returned. */
struct mfs_dirh {
	int ofd;
	int fd;        /* a descriptor of the process's for it: a worker's death closes it */
	int node;
	unsigned calls;
	uint32_t hash;
	char last[MFS_NAME];
	char path[SCHED_PATH];
	struct dirent de;
};

/* This process's model streams (a real DIR * is any other pointer). */
static struct mfs_dirh *mine[8];

void mfs_forget_process(void)
{
	for (int i = 0; i < 8; i++) {
		free(mine[i]);
		mine[i] = NULL;
	}
}

static int is_mine(const void *d)
{
	for (int i = 0; i < 8; i++)
		if (d && mine[i] == d)
			return 1;
	return 0;
}

DIR *mfs_opendir(const char *path)
{
	struct walk w;
	int r = mfs_walk(path, &w);
	if (!r && w.outside)
		return opendir(path);
	if (!r && w.node < 0)
		r = -ENOENT;
	if (!r && mfs_m->node[w.node].gone)
		r = mfs_m->p.windows ? -EPERM : -ENOENT;
	if (!r && mfs_m->node[w.node].type != MFS_DIR)
		r = -ENOTDIR;
	if (r) {
		errno = -r;
		return NULL;
	}
	struct mfs_dirh *h = calloc(1, sizeof *h);
	if (!h) {
		errno = ENOMEM;
		return NULL;
	}
	h->ofd = mfs_ofd_new(w.node, O_RDONLY, 0);
	if (h->ofd < 0) {
		errno = -h->ofd;
		free(h);
		return NULL;
	}
	h->fd = mfs_fd_alloc(h->ofd);
	if (h->fd < 0) {
		mfs_ofd_release(h->ofd);
		errno = -h->fd;
		free(h);
		return NULL;
	}
	int slot;
	for (slot = 0; slot < 8 && mine[slot]; slot++)
		;
	if (slot == 8) {
		mfs_m->fdt[mfs_slot][h->fd - MFS_FD_BASE] = 0;
		mfs_ofd_release(h->ofd);
		free(h);
		errno = EMFILE;
		return NULL;
	}
	mine[slot] = h;
	h->node = w.node;
	snprintf(h->path, sizeof h->path, "%s", path);
	return (DIR *)h;
}

/* (hash, name) order: the order a listing goes in (ext4's htree is by hash). */
static int after(const struct mfs_dent *d, uint32_t hash, const char *name)
{
	return d->hash > hash || (d->hash == hash && strcmp(d->name, name) > 0);
}

struct dirent *mfs_readdir(DIR *dp)
{
	if (!is_mine(dp))
		return readdir(dp);
	struct mfs_dirh *h = (struct mfs_dirh *)dp;
	if (h->calls++ && mfs_yields() && mfs_m->p.readdir == MFS_RD_STEPS) {
		/* the listing goes on in a later step: others may create or remove meanwhile */
		sched_result(0, 0);
		sched_step(FSX_LIST, h->path, NULL);
	}
	if (mfs_m->node[h->node].gone)
		return NULL; /* removed while listed: nothing more */
	int best = -1;
	for (int i = 0; i < mfs_m->ndent; i++) {
		const struct mfs_dent *d = &mfs_m->dent[i];
		if (!d->live || d->dir != h->node || (h->calls > 1 && !after(d, h->hash, h->last)))
			continue;
		if (best < 0 || after(&mfs_m->dent[best], d->hash, d->name))
			best = i;
	}
	if (best < 0)
		return NULL;
	const struct mfs_dent *d = &mfs_m->dent[best];
	h->hash = d->hash;
	snprintf(h->last, sizeof h->last, "%s", d->name);
	memset(&h->de, 0, sizeof h->de);
	h->de.d_ino = mfs_m->node[d->node].ino;
	h->de.d_type = mfs_m->node[d->node].type == MFS_DIR ? DT_DIR : DT_REG;
	snprintf(h->de.d_name, sizeof h->de.d_name, "%s", d->name);
	return &h->de;
}

int mfs_closedir(DIR *dp)
{
	if (!is_mine(dp))
		return closedir(dp);
	for (int i = 0; i < 8; i++)
		if (mine[i] == (void *)dp)
			mine[i] = NULL;
	struct mfs_dirh *h = (struct mfs_dirh *)dp;
	mfs_m->fdt[mfs_slot][h->fd - MFS_FD_BASE] = 0;
	mfs_ofd_release(h->ofd);
	free(h);
	return 0;
}

/* Entry I's state on disk is its state now. */
static void dent_persist(int i)
{
	struct mfs_dent *d = &mfs_m->dent[i];
	int old = d->durable ? d->dnode : -1;
	d->durable = d->live;
	d->dnode = d->node;
	if (!d->live)
		mfs_dent_free(i);
	if (old >= 0 && mfs_m->node[old].zombie) { /* the last name on disk of a removed file? */
		for (int j = 0; j < mfs_m->ndent; j++)
			if (mfs_m->dent[j].durable && mfs_m->dent[j].dnode == old)
				return;
		mfs_m->node[old].type = MFS_FREE;
		mfs_m->node[old].zombie = 0;
		mfs_m->nused--;
	}
}

int mfs_fsync(int fd)
{
	if (fd < MFS_FD_BASE)
		return fsync(fd);
	int o = mfs_ofd_of(fd);
	if (o < 0) {
		errno = -o;
		return -1;
	}
	int k = mfs_m->ofd[o].node;
	struct mfs_inode *n = &mfs_m->node[k];
	n->dmtime = n->mtime; /* the inode goes to disk with what it names or holds */
	n->dctime = n->ctime;
	if (n->type == MFS_FILE) {
		memcpy(mfs_m->ddata[k], mfs_m->data[k], n->size);
		n->dsize = n->size;
		return 0;
	}
	for (int i = 0; i < mfs_m->ndent; i++)
		if ((mfs_m->dent[i].live || mfs_m->dent[i].durable) && mfs_m->dent[i].dir == k)
			dent_persist(i);
	return 0;
}

/* Everything on disk as it is now (its data, its names, its times). */
static void persist_all(void)
{
	for (int k = 0; k < MFS_INODES; k++) {
		struct mfs_inode *n = &mfs_m->node[k];
		if (!n->type)
			continue;
		n->dmtime = n->mtime;
		n->dctime = n->ctime;
		if (n->type == MFS_FILE) {
			memcpy(mfs_m->ddata[k], mfs_m->data[k], n->size);
			n->dsize = n->size;
		}
	}
	for (int i = 0; i < mfs_m->ndent; i++)
		if (mfs_m->dent[i].live || mfs_m->dent[i].durable)
			dent_persist(i);
}

void mfs_settle(int64_t t_ns)
{
	for (int k = 0; k < MFS_INODES; k++)
		if (mfs_m->node[k].type)
			mfs_m->node[k].atime = mfs_m->node[k].mtime = mfs_m->node[k].ctime = mfs_m->node[k].btime = t_ns;
	persist_all();
}

/* Reachable from the mount through durable entries: what is on disk. */
static void mark(int k, uint8_t *seen)
{
	if (seen[k])
		return;
	seen[k] = 1;
	for (int i = 0; i < mfs_m->ndent; i++)
		if (mfs_m->dent[i].live && mfs_m->dent[i].dir == k && mfs_m->node[mfs_m->dent[i].node].type == MFS_DIR)
			mark(mfs_m->dent[i].node, seen);
}

void mfs_power_loss(void)
{
	/* every process is gone: no descriptor, no lock, no stream (their
	 * handles are the dead processes' memory) */
	memset(mfs_m->fdt, 0, sizeof mfs_m->fdt);
	memset(mfs_m->ofd, 0, sizeof mfs_m->ofd);
	/* the entries are what is on disk */
	for (int i = 0; i < mfs_m->ndent; i++) {
		struct mfs_dent *d = &mfs_m->dent[i];
		if (!d->live && !d->durable)
			continue;
		if (!d->durable) {
			mfs_dent_free(i);
			continue;
		}
		d->live = 1;
		d->node = d->dnode;
	}
	uint8_t seen[MFS_INODES] = { 0 };
	mark(MFS_ROOT, seen);
	/* an entry in a directory no longer on disk is not on disk either */
	for (int i = 0; i < mfs_m->ndent; i++)
		if (mfs_m->dent[i].live && !seen[mfs_m->dent[i].dir])
			mfs_dent_free(i);
	for (int k = 0; k < MFS_INODES; k++) {
		struct mfs_inode *n = &mfs_m->node[k];
		n->nlink = 0;
		n->nopen = 0;
		n->flock_ex = 0;
		n->flock_sh = 0;
	}
	for (int i = 0; i < mfs_m->ndent; i++)
		if (mfs_m->dent[i].live) {
			struct mfs_inode *n = &mfs_m->node[mfs_m->dent[i].node];
			n->nlink = n->type == MFS_DIR ? 1 : (uint16_t)(n->nlink + 1);
			if (n->type == MFS_DIR)
				n->parent = mfs_m->dent[i].dir;
		}
	memset(mfs_m->ino_used, 0, sizeof mfs_m->ino_used);
	mfs_m->nused = 1;
	for (int k = 1; k < MFS_INODES; k++) {
		struct mfs_inode *n = &mfs_m->node[k];
		if (!n->type)
			continue;
		if (!n->nlink) {
			n->type = MFS_FREE;
			n->zombie = 0;
			continue;
		}
		mfs_m->nused++;
		n->zombie = n->gone = 0;
		n->size = n->dsize; /* data not fsync'd is lost, and the times its changes gave */
		n->mtime = n->dmtime;
		n->ctime = n->dctime;
		memcpy(mfs_m->data[k], mfs_m->ddata[k], n->size);
	}
	/* numbers on disk stay theirs; a clash (a zombie's number handed out
	 * meanwhile) gets the next free one */
	for (int k = 1; k < MFS_INODES; k++) {
		struct mfs_inode *n = &mfs_m->node[k];
		if (!n->type || mfs_m->p.reuse == MFS_REUSE_NEVER || n->ino <= MFS_INO_BASE)
			continue; /* (a number below the range: the explorer's store, 2) */
		uint64_t i = n->ino - MFS_INO_BASE;
		if (n->ino > MFS_INO_BASE && i < MFS_INODES && !mfs_m->ino_used[i])
			mfs_m->ino_used[i] = 1;
		else
			mfs_ino_take(k);
	}
}
