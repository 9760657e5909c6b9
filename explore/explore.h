/*
 * explore.h - `lockstorm explore` and `lockstorm replay`: deterministic
 * interleavings of the workers' file-system steps (harness/sched.h), with
 * virtual time, stalls and crashes as scheduler choices, random / PCT /
 * bounded-DFS strategies, counterexamples shrunk to a short story, and
 * exact replay.  docs/explore.md is the user's page.
 *
 * One execution: an empty directory, N forked workers each running OPS
 * operations of the workload; at every decision the controller lists the
 * options (run worker w, stall w, crash w), a strategy picks one, and the
 * pick is recorded.  Option 0 is always the default: keep running the worker
 * that ran last, else the lowest-numbered one that can run.  A run is
 * therefore fully described by its deviations from the default (decision
 * index + option), which is what counterexample files hold and what the
 * shrinker minimises.
 */
#ifndef LS_EXPLORE_H
#define LS_EXPLORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* run: grant the worker's step; stall: the clock jumps K stale ages at once
 * (every worker sees the time gone by); pause: the worker is descheduled for
 * K stale ages while the others go on through the times in between; crash:
 * SIGKILL at its step. */
enum xkind {
	XK_RUN, XK_STALL, XK_CRASH, XK_PAUSE,
	/* the fault engine's kinds as choices (docs/explore.md "Faults"): at w's announced step */
	XK_ERRNO,     /* the call fails with an errno (m: index in the explorer's errno table) */
	XK_SHORT,     /* a write: a few bytes land, then ENOSPC (torn) */
	XK_SPLIT,     /* a write: a few bytes land, w pauses, the rest lands later (others go on) */
	XK_PIDREUSE,  /* kill -0 of a dead holder's pid says alive (the pid was reused) */
	XK_PIDDEAD,   /* kill -0 of a live holder's pid says ESRCH (another pid namespace) */
	/* ... and at any decision, from then on */
	XK_SWEEP,     /* a sweeper removes the empty folders beside the lock (never a lock object) */
	XK_SKEW,      /* w's clock reads +-K stale ages off (m: 2 x the --stall index, +1 behind) */
	XK_COARSE,    /* w's stat sees file times in whole 2 s steps */
	XK_OTHERHOST, /* w plays a second machine (its hostname reads differ) */
	XK_POWER,     /* power fails (modelled file system only): every worker dies, what was not fsync'd is lost */
	XK_RESTART,   /* w is killed and started again at once with the same pid (a container's, a tab's numbering) */
	XK__COUNT
};

/* One deviation from the default schedule: at decision `at`, do `kind` to worker `w`. */
struct xchoice {
	uint32_t at;
	uint8_t kind;
	uint8_t w;
	uint8_t m;   /* stall, pause: which of the run's --stall multiples; errno, skew: as above */
};

/* Delta debugging (Zeller & Hildebrandt): shrink ITEMS (n elements of SIZE
 * bytes, in place) to a 1-minimal subsequence for which pred still holds.
 * pred must hold for the input.  Returns the new count. */
size_t explore_ddmin(void *items, size_t n, size_t size,
		     int (*pred)(void *ctx, const void *items, size_t n), void *ctx);

/* A scripted execution (for tests of the scheduler): N workers each run
 * BODY(id, dir, arg) under the scheduler - every fsx call a step, fsx time
 * virtual - with the given deviations from the default schedule.  *lines
 * gets one malloc'd line per step in the words of a story (free each and the
 * array).  Returns 0, or -1 with why. */
struct explore_script {
	unsigned workers;                                  /* 1..16 */
	void (*body)(unsigned id, const char *dir, void *arg);
	void *arg;
	const struct xchoice *choices;
	size_t nchoices;
	int64_t stale_ms;                                  /* what a stall's "1 stale" is */
	double stall;                                      /* stall length in stale ages */
};
int explore_script(const struct explore_script *sc, char ***lines, size_t *n, char *why, size_t len);
void explore_lines_free(char **lines, size_t n);

/* The commands; argv after the command name.  Exit codes as everywhere. */
int explore_main(int argc, char **argv);
int replay_main(int argc, char **argv);
int triage_main(int argc, char **argv);
/* `lockstorm triage OUTDIR` on a kept run (also `run --triage`): counterexamples
 * go to ODIR (NULL: OUTDIR/triage).  Exit code as triage_main's: 1 confirmed,
 * 0 not reproduced within BUDGET_MS (or nothing to triage), 2 bad input, 3 harness. */
int triage_outdir(const char *outdir, const char *odir, int64_t budget_ms, int quiet);

#ifdef __cplusplus
}
#endif
#endif
