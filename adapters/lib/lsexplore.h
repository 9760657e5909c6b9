/*
 * lsexplore.h - what the two files of the C explore seam share
 * (liblockstorm_explore.so: lsexplore.c the protocol, the clock and the
 * processes; lsexplore_fs.c the file-system calls).  Not a public header.
 */
#ifndef LS_LSEXPLORE_H
#define LS_LSEXPLORE_H

#undef _FORTIFY_SOURCE
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>


#define EXPORT __attribute__((visibility("default")))
#define SE_FDS 1024 /* descriptors the seam tracks (opened in the store) */
#define SE_TEAR 10  /* short and split writes: the bytes that land first (explore/xfaults.c) */

struct se_state {
	int init, on;         /* looked at the environment; LOCKSTORM_EXPLORE=1 */
	int ev;               /* the event pipe */
	int busy;             /* inside a granted call: no steps, no sleeps */
	int worker, workers;
	int64_t t0, now, last; /* virtual ms */
	unsigned sub, step;
	char store[PATH_MAX];
	size_t storelen;
	char in[1024];        /* the control pipe's unread bytes */
	size_t inlen;
	char *fdp[SE_FDS];    /* a tracked descriptor's path */
};
extern struct se_state se;

/* ---- the real functions ---- */

#define REAL(name)                                                                \
	({                                                                        \
		static __typeof__(&name) f_;                                      \
		if (!f_)                                                          \
			f_ = (__typeof__(&name))dlsym(RTLD_NEXT, #name);          \
		f_;                                                               \
	})

int se_live(void);
void se_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void se_sleep_ms(int64_t ms);
int se_in_store(int dirfd, const char *p);
int se_fd(int fd);
int se_begin(const char *call, const char *p1, const char *p2, int rest, unsigned *k, char *word, size_t wlen);
void se_end(unsigned k, long rc, int err);
void se_stamp_at(int dirfd, const char *p, int fd);
void se_stamp(int dirfd, const char *p, int file, int dir);
void se_track(int fd, int dirfd, const char *p);
void se_untrack(int fd);
void se_vstat(struct stat *st);
size_t se_next_op(char *out, size_t len);

/* A call on one or two paths: make it as granted, stamp what it changed. */
#define SE_PATHCALL(call, p1, p2, expr, stampfn)                                          \
	do {                                                                              \
		unsigned k_;                                                              \
		char word_[32];                                                           \
		if (se_begin(call, p1, p2, 0, &k_, word_, sizeof word_) != 0)             \
			return -1;                                                        \
		se.busy = 1;                                                              \
		long r_ = (long)(expr);                                                   \
		int err_ = r_ < 0 ? errno : 0;                                            \
		se.busy = 0;                                                              \
		if (r_ >= 0)                                                              \
			stampfn;                                                          \
		se_end(k_, r_, err_);                                                     \
		return (int)r_;                                                           \
	} while (0)

#endif
