/*
 * preload.h - what the preload shim (liblockstorm_preload.so) and
 * `lockstorm exec` agree on: the library's file name, the environment it
 * reads, and the libfiu points it registers.  See docs/preload.md.
 */
#ifndef LS_PRELOAD_H
#define LS_PRELOAD_H

#define PRELOAD_LIB_NAME "liblockstorm_preload.so"

#define PRELOAD_ENV_FAULTS "LOCKSTORM_FAULTS"     /* fault specs, one per line */
#define PRELOAD_ENV_SEED "LOCKSTORM_SEED"         /* decimal; default 1 */
#define PRELOAD_ENV_LOG "LOCKSTORM_INJECT_LOG"    /* file to append one line per injection to */
#define PRELOAD_ENV_FIFO "LOCKSTORM_FIU_FIFO"     /* fiu_rc_fifo() base name: steer with fiu-ctrl */
#define PRELOAD_ENV_STALE "LOCKSTORM_STALE_MS"    /* what 1stale means outside lockstorm; default 10000 */
#define PRELOAD_ENV_WORKER "LOCKSTORM_WORKER"     /* the worker id workers= rules are matched against; default 0 */
/* 16 hex digits: the PRNG stream of this process image.  A forked child
 * rewrites the digits in place (no allocation: safe after fork), so the
 * program it execs draws its own stream, the same one on every run. */
#define PRELOAD_ENV_LINEAGE "LOCKSTORM_LINEAGE"
#define PRELOAD_LINEAGE_DIGITS 16

/* The libfiu points the shim registers, the same names as lockstorm's fsx
 * seam.  Index = the shim's op number. */
static const char *const preload_points[] = {
	"fs/mkdir",   /* mkdir mkdirat */
	"fs/rmdir",   /* rmdir */
	"fs/link",    /* link linkat symlink symlinkat */
	"fs/unlink",  /* unlink unlinkat */
	"fs/rename",  /* rename renameat renameat2 */
	"fs/open",    /* open open64 openat openat64 creat creat64 fopen fopen64 __open_2 ... */
	"fs/utimens", /* utimensat futimens utimes */
	"fs/write",   /* write pwrite pwrite64 */
	"fs/fsync",   /* fsync */
	"fs/close",   /* close */
};
#define PRELOAD_NPOINTS ((int)(sizeof preload_points / sizeof preload_points[0]))

#endif
