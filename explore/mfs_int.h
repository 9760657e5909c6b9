/*
 * mfs_int.h - what the modelled file system's files share (explore/mfs*.c):
 * the shared mapping's layout.  Not for use elsewhere (mfs.h is the public side).
 *
 *   mfs_core.c  names, paths, inodes, open file descriptions, the calls
 *   mfs_life.c  the mapping, reset, processes, reading back
 *   mfs_dir.c   directory streams, fsync, power loss, settling after setup
 *   mfs_pers.c  the personality: parse and format
 */
#ifndef LS_MFS_INT_H
#define LS_MFS_INT_H

#include <dirent.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "../faults/fsx_backend.h"
#include "mfs.h"

#define MFS_INODES 256
#define MFS_DENTS 512
#define MFS_OFDS 256
#define MFS_FDS 64
#define MFS_SLOTS 17            /* 16 workers and the controller */
#define MFS_NAME 96
#define MFS_FILE_CAP 16384      /* bytes one file may hold (EFBIG past it) */
#define MFS_FD_BASE 600         /* the model's descriptors: 600 + index (clear of real ones) */
#define MFS_ROOT 0              /* inode 0 is the mount */
#define MFS_INO_BASE 11         /* inode k is number 11 + k under reuse=immediate (ext4's first is 12) */
#define MFS_DEV 0x4d            /* st_dev minor */

enum { MFS_FREE, MFS_FILE, MFS_DIR };

struct mfs_inode {
	uint8_t type;
	uint8_t gone;            /* a directory removed (or, windows, delete pending) */
	uint8_t zombie;          /* no name, nothing open, but a durable entry names it (power loss brings it back) */
	uint16_t mode;
	uint16_t nlink, nopen;
	uint16_t parent;         /* directories: the one it is in */
	int32_t flock_ex;        /* description + 1 holding LOCK_EX */
	uint16_t flock_sh;
	uint32_t size, dsize;    /* now; on disk (fsync'd) */
	uint64_t ino;
	int64_t atime, mtime, ctime, btime;
	int64_t dmtime, dctime;  /* on disk: what an fsync or a write-back last kept (a power loss brings them back) */
};

/* A name in a directory, now (live, node) and on disk (durable, dnode). */
struct mfs_dent {
	uint8_t live, durable;
	uint16_t dir, node, dnode;
	uint32_t hash;
	char name[MFS_NAME];
};

struct mfs_ofd {
	uint16_t refs;
	uint16_t node;
	uint8_t acc, append, lock;
	int64_t off;
};

struct mfs_shm {
	struct mfs_pers p;
	struct sched *clock;     /* the explorer's: times are its virtual clock */
	int64_t now_ns;          /* without one */
	uint64_t next_ino;       /* reuse=never */
	unsigned nused;
	int ndent;               /* records in use are below this */
	char mount[4096];
	uint8_t ino_used[MFS_INODES]; /* reuse=immediate: number MFS_INO_BASE + i is taken */
	struct mfs_inode node[MFS_INODES];
	struct mfs_dent dent[MFS_DENTS];
	struct mfs_ofd ofd[MFS_OFDS];
	int16_t fdt[MFS_SLOTS][MFS_FDS]; /* description + 1 */
	char data[MFS_INODES][MFS_FILE_CAP];
	char ddata[MFS_INODES][MFS_FILE_CAP];
};

extern struct mfs_shm *mfs_m;
extern int mfs_slot;             /* this process's descriptor table */

struct walk {
	int dir;       /* the directory the last name is in (-1: the mount, or outside) */
	int node;      /* what the last name is (-1: nothing) */
	int dent;      /* its entry (-1: none, or the mount itself) */
	int outside;   /* an existing directory outside the model (the mount's ancestors) */
	char leaf[MFS_NAME];
	int trail;     /* the last name was followed by '/' */
};

/* mfs_core.c */
uint32_t mfs_hash(const char *name);
int mfs_walk(const char *path, struct walk *w);
int mfs_ofd_of(int fd);
int mfs_ofd_new(int k, int acc, int append);
int mfs_fd_alloc(int ofd); /* a descriptor of this process's for description OFD, or -errno */
void mfs_ofd_release(int o);
void mfs_dent_free(int i);
void mfs_inode_maybe_free(int k);
void mfs_ino_take(int k);
int64_t mfs_now(void);
void mfs_attach_yield(int on);
int mfs_yields(void); /* this process is a worker under the scheduler */
/* the calls behind the seam (mfs_backend.c's table) */
int mfs_op_mkdir(const char *path, mode_t mode);
int mfs_op_rmdir(const char *path);
int mfs_op_open(const char *path, int flags, mode_t mode);
int mfs_op_close(int fd);
int mfs_op_link(const char *from, const char *to);
int mfs_op_unlink(const char *path);
int mfs_op_rename(const char *from, const char *to);
int mfs_op_statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *sx);
int mfs_op_stat(const char *path, struct stat *st);
int mfs_op_lstat(const char *path, struct stat *st);
int mfs_op_access(const char *path, int mode);
ssize_t mfs_op_read(int fd, void *buf, size_t len);
ssize_t mfs_op_write(int fd, const void *buf, size_t len);
ssize_t mfs_op_pwrite(int fd, const void *buf, size_t len, off_t off);
int mfs_op_ftruncate(int fd, off_t len);
int mfs_op_utimensat(int dirfd, const char *path, const struct timespec ts[2], int flags);
int mfs_op_futimens(int fd, const struct timespec ts[2]);
int mfs_op_flock(int fd, int op);

/* mfs_dir.c */
DIR *mfs_opendir(const char *path);
struct dirent *mfs_readdir(DIR *d);
int mfs_closedir(DIR *d);
int mfs_fsync(int fd);

#endif
