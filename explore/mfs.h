/*
 * mfs.h - the modelled file system of `lockstorm explore --fs model` (the
 * default): directories, files with contents, hard links, rename, O_EXCL,
 * open file descriptions, flock, fsync and power loss, in one shared mapping
 * made before the workers fork, behind the seam's system calls
 * (faults/fsx_backend.h).  docs/explore.md ("The modelled file system") is
 * the user's page.
 *
 * One worker runs at a time (the scheduler grants one step at a time), so the
 * model takes no locks.  It serves the paths under its mount (the explorer's
 * store directory); the mount's ancestors are directories that exist, any
 * other path does not.
 *
 * Its personality says what a protocol may rely on:
 *   reuse=immediate|never  an inode number freed is handed out again at once
 *                          (the lowest free one, as ext4), or never (tmpfs)
 *   btime=yes|no           birth time reported, or absent (0)
 *   readdir=steps|snapshot a listing reads one entry per step, so entries
 *                          created or removed meanwhile may be missed or
 *                          shown (the order is a hash of the name), or it is
 *                          one atomic step
 *   time=ns|1s|2s          file times' granularity
 *   case=sensitive|insensitive
 *   windows=yes|no         a removed directory someone still has open lingers
 *                          (delete pending: mkdir EPERM, open EACCES) until its
 *                          last handle closes
 *   split=yes|no           fstat(fd) reports another identity than lstat(path)
 * Presets: ext4 (the default: immediate, btime, steps, ns), tmpfs (never,
 * btime, snapshot, ns), fat (2s, insensitive, no btime), windows (windows,
 * insensitive), tab (split, no btime).
 */
#ifndef LS_MFS_H
#define LS_MFS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sched;
struct fsx_backend;

enum { MFS_REUSE_IMMEDIATE, MFS_REUSE_NEVER };
enum { MFS_RD_STEPS, MFS_RD_SNAPSHOT };

struct mfs_pers {
	uint8_t model;      /* 0: the real file system (--fs real) */
	uint8_t reuse;
	uint8_t btime;
	uint8_t readdir;
	uint8_t nocase;
	uint8_t windows;
	uint8_t split;
	int64_t time_ns;    /* 1, 1e9 or 2e9 */
};

/* "real", "model", "model:PRESET", "model:k=v,..." (a preset first, then
 * keys): 0, or -1 with why. */
int mfs_pers_parse(const char *spec, struct mfs_pers *p, char *why, size_t len);
/* The canonical spelling ("real", "model:reuse=immediate,btime=yes,..."). */
void mfs_pers_format(const struct mfs_pers *p, char *buf, size_t len);
void mfs_pers_default(struct mfs_pers *p); /* model:ext4 */

/* ---- the explorer's side ---- */
/* Map the model (shared, inherited by forks) serving MOUNT; times come from
 * S's virtual clock (NULL: a clock only mfs_set_clock moves).  0 or -1 errno. */
int mfs_open(const char *mount, const struct mfs_pers *p, struct sched *s);
void mfs_close(void);
int mfs_on(void);
const struct fsx_backend *mfs_backend(void);
/* An empty file system with only the mount (before each execution). */
void mfs_reset(void);
/* A folder PATH under the mount, numbered 2 (the explorer's store, made
 * after each reset): 0 or -1 errno. */
int mfs_make_store(const char *path);
/* Every time to T_NS, everything durable (what a workload's setup made). */
void mfs_settle(int64_t t_ns);
/* This process is worker ID (0..15), or the controller (-1: the default). */
void mfs_attach(int id);
/* Worker ID died: its descriptors close. */
void mfs_proc_gone(int id);
/* In the worker whose process lived through its crash (explore's
 * x_kill_one): the directory streams in its memory are gone, as a new
 * process would have none (the model's side is mfs_proc_gone's). */
void mfs_forget_process(void);
/* Power loss: every descriptor closes, whatever was not fsync'd is lost
 * (file data; entries whose directory was not fsync'd). */
void mfs_power_loss(void);
/* The whole file, NUL-terminated, malloc'd (NULL when missing). */
char *mfs_slurp(const char *path, size_t *len);
void mfs_set_clock(int64_t ns);  /* without a scheduler */
/* Inodes in use (tests: nothing leaks). */
unsigned mfs_inodes_used(void);
/* Tests only: a deliberately wrong rule, to prove the differential test
 * catches one.  0 none; 1: rename over an existing name fails EEXIST. */
extern int mfs_wrong_rule;

#ifdef __cplusplus
}
#endif
#endif
