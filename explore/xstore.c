/*
 * xstore.c - the store between executions on the real file system (see
 * xint.h): emptied and kept open, then, after the workload's setup, stamped
 * with the virtual clock's start.  The modelled file system's is mfs_reset.
 */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../core/fsutil.h"
#include "../core/sched.h"
#include "../faults/fsx.h"
#include "xint.h"

/* the virtual clock's start, what the store and its first contents are stamped with */
static const struct timespec epoch[2] = { { SCHED_EPOCH_MS / 1000, 0 }, { SCHED_EPOCH_MS / 1000, 0 } };

static int stamp_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	utimensat(AT_FDCWD, path, epoch, AT_SYMLINK_NOFOLLOW);
	return 0;
}

/* x_stamp_store's stamper: an entry of the store, or the tree below it */
static int stamp_store_entry(int dfd, const char *name, unsigned char type, void *arg)
{
	if (type == DT_DIR || type == DT_UNKNOWN) {
		char sub[PATH_MAX];
		if ((size_t)snprintf(sub, sizeof sub, "%s/%s", (const char *)arg, name) < sizeof sub)
			nftw(sub, stamp_entry, 16, FTW_PHYS);
	} else {
		utimensat(dfd, name, epoch, AT_SYMLINK_NOFOLLOW);
	}
	return 0;
}

/* What the workload's setup left in the store, and the store, as old as the
 * virtual clock: nftw with stamp_entry, but the store's own entries from one
 * read of it, open on FD (closed here; -1: not open).  EMPTY: the setup made
 * nothing (it made no call that could): the store alone. */
void x_stamp_store(struct sched *s, const char *store, int fd, int empty)
{
	if (fd >= 0 && empty) {
		/* the store's own stamp waits with the workers' (faults/fsx_vt.c):
		 * their first change of it makes it theirs before anyone looks */
		if (fsx_vt_stamp_shared(s, store) != 0)
			futimens(fd, epoch);
		close(fd);
		return;
	}
	if (fd < 0)
		fd = open(store, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || lseek(fd, 0, SEEK_SET) != 0) {
		if (fd >= 0)
			close(fd);
		nftw(store, stamp_entry, 16, FTW_PHYS);
		return;
	}
	futimens(fd, epoch);
	fsutil_each_entry(fd, stamp_store_entry, (void *)store);
	close(fd);
}

/* An empty store on the real file system, open (or -1 when it was made
 * again and is not): emptied and kept, fewer calls than a new one; one that
 * cannot be emptied is removed and made again.  0, or -1 with errno. */
int x_reset_store(const char *store, int *fd)
{
	*fd = open(store, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*fd >= 0 && fsutil_empty_fd(*fd, store) == 0)
		return 0;
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
	return fsutil_rm_tree(store) != 0 || mkdir(store, 0777) != 0 ? -1 : 0;
}
