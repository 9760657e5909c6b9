/*
 * rundir.h - the folders a run writes into, and the marker that makes them
 * lockstorm's.
 *
 * A run's work directory (--dir, else a fresh $TMPDIR/lockstorm-work.*) and
 * output directory (-o, else a fresh $TMPDIR/lockstorm-out.*) each carry a
 * marker file (.lockstorm-owned, .lockstorm-out).  The marker
 *
 *   - is flock'ed (LOCK_EX) for the whole run: a second run on the same
 *     folder finds it locked and is refused, naming the first run's pid;
 *     workers inherit the lock, so it is held while any of them lives;
 *   - records the owner's pid and every top-level name lockstorm made there
 *     (`made store`), written before the thing is made; clean-up removes
 *     only those names, so a hand-planted marker beside a user's store/
 *     never gets store/ deleted (the run is refused instead);
 *   - in a kept temp folder (--keep) says `kept`, so it is not swept.
 *
 * Life of one folder:
 *
 *   rundir_claim / rundir_temp --> rundir_note NAME (before making NAME)
 *        |                         rundir_clear NAME (an earlier run's NAME)
 *        +--> rundir_release (removes the folder, or what was noted, or
 *             nothing; unlocks)
 *
 * A marker that is not locked belongs to nobody alive: it is taken over,
 * and what it lists may be cleared.  rundir_sweep_stale removes the temp
 * folders of lockstorm runs, explorers and compares whose owner died
 * (SIGKILL) before its clean-up.
 *
 * Errors: 0, or -1 with a one-line reason in why (the caller exits 2).
 */
#ifndef LS_RUNDIR_H
#define LS_RUNDIR_H

#include <limits.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RUNDIR_MAX_MADE 16
#define RUNDIR_NAME_MAX 64

struct rundir {
	char path[PATH_MAX];
	char marker[64];         /* the marker's file name */
	int fd;                  /* the marker, flock'ed; -1: not claimed */
	int temp;                /* made by mkdtemp: removed whole */
	char made[RUNDIR_MAX_MADE][RUNDIR_NAME_MAX]; /* top-level names lockstorm made here */
	unsigned nmade;
};

void rundir_init(struct rundir *d);
/* PATH (made when absent; else empty, or marked and not in use). */
int rundir_claim(struct rundir *d, const char *path, const char *marker, const char *what, char *why,
		 size_t len);
/* A fresh $TMPDIR/PREFIX.XXXXXX with its marker; its path in d->path. */
int rundir_temp(struct rundir *d, const char *prefix, const char *marker, char *why, size_t len);
/* A fresh BASE/PREFIX.XXXXXX with its marker (the explorer's scratch, in /dev/shm or --dir). */
int rundir_temp_in(struct rundir *d, const char *base, const char *prefix, const char *marker, char *why,
		   size_t len);
/* rundir_temp at exactly PATH (made here; an existing PATH is an error). */
int rundir_temp_at(struct rundir *d, const char *path, const char *marker, char *why, size_t len);
/* NAME is about to be made here: record it in the marker. */
int rundir_note(struct rundir *d, const char *name, char *why, size_t len);
/* An earlier run's NAME: remove it when the marker lists it; refuse a NAME
 * lockstorm did not make.  Notes NAME as ours either way it goes on. */
int rundir_clear(struct rundir *d, const char *name, char *why, size_t len);
/* End of the run.  REMOVE: the temp folder whole, or in a claimed folder
 * the names noted; else the marker says `kept`.  Unlocks. */
void rundir_release(struct rundir *d, int remove);
/* Remove the temp folders of dead owners (lockstorm-work.*, -out.*, -explore.*,
 * -j.*, -xext.*, -compare.*) in $TMPDIR and /dev/shm, or in BASE (a --dir). */
void rundir_sweep_stale(void);
void rundir_sweep_stale_in(const char *base);
/* Can FILE be written (its folder exists and is writable, it is no folder)?
 * WHAT names the option in the reason ("--json"). */
int rundir_check_writable(const char *file, const char *what, char *why, size_t len);

#ifdef __cplusplus
}
#endif
#endif
