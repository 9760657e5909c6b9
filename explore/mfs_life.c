/*
 * mfs_life.c - the modelled file system's life (see mfs.h, mfs_int.h): the
 * shared mapping, the empty file system of each execution, which process is
 * which, what the explorer reads back.
 */
#include "mfs_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../core/sched.h"

/* ---- the explorer's side ---- */

int mfs_open(const char *mount, const struct mfs_pers *p, struct sched *s)
{
	if (strlen(mount) >= sizeof mfs_m->mount) {
		errno = ENAMETOOLONG;
		return -1;
	}
	void *m = mmap(NULL, sizeof *mfs_m, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	mfs_m = m;
	mfs_m->p = *p;
	mfs_m->clock = s;
	mfs_m->now_ns = SCHED_EPOCH_MS * 1000000LL;
	snprintf(mfs_m->mount, sizeof mfs_m->mount, "%s", mount);
	mfs_slot = MFS_SLOTS - 1;
	mfs_reset();
	return 0;
}

void mfs_close(void)
{
	if (!mfs_m)
		return;
	munmap(mfs_m, sizeof *mfs_m);
	mfs_m = NULL;
}

int mfs_on(void)
{
	return mfs_m != NULL;
}

void mfs_reset(void)
{
	memset(mfs_m->node, 0, sizeof mfs_m->node);
	memset(mfs_m->ofd, 0, sizeof mfs_m->ofd);
	memset(mfs_m->fdt, 0, sizeof mfs_m->fdt);
	memset(mfs_m->dent, 0, (size_t)mfs_m->ndent * sizeof mfs_m->dent[0]);
	memset(mfs_m->ino_used, 0, sizeof mfs_m->ino_used);
	mfs_m->ndent = 0;
	mfs_m->next_ino = MFS_INO_BASE + 1;
	struct mfs_inode *root = &mfs_m->node[MFS_ROOT];
	root->type = MFS_DIR;
	root->ino = 2;
	root->nlink = 1;
	root->mode = 0755;
	root->atime = root->mtime = root->ctime = root->btime = mfs_now();
	root->dmtime = root->mtime;
	root->dctime = root->ctime;
	mfs_m->nused = 1;
}

void mfs_attach(int id)
{
	mfs_slot = id < 0 || id >= MFS_SLOTS - 1 ? MFS_SLOTS - 1 : id;
	mfs_attach_yield(id >= 0);
}

void mfs_proc_gone(int id)
{
	int slot = id < 0 || id >= MFS_SLOTS - 1 ? MFS_SLOTS - 1 : id;
	for (int i = 0; i < MFS_FDS; i++)
		if (mfs_m->fdt[slot][i]) {
			int o = mfs_m->fdt[slot][i] - 1;
			mfs_m->fdt[slot][i] = 0;
			mfs_ofd_release(o);
		}
}

char *mfs_slurp(const char *path, size_t *len)
{
	*len = 0;
	struct walk w;
	if (mfs_walk(path, &w) || w.node < 0 || mfs_m->node[w.node].type != MFS_FILE)
		return NULL;
	struct mfs_inode *n = &mfs_m->node[w.node];
	char *b = malloc(n->size + 1);
	if (!b)
		return NULL;
	memcpy(b, mfs_m->data[w.node], n->size);
	b[n->size] = '\0';
	*len = n->size;
	return b;
}

void mfs_set_clock(int64_t ns)
{
	mfs_m->now_ns = ns;
}

unsigned mfs_inodes_used(void)
{
	return mfs_m->nused;
}
