/*
 * extrun.h - the insides of an external run (struct ext_run), shared by
 * extworker.c (processes, lines, records) and extplan.c (the fault plan).
 */
#ifndef LS_EXTRUN_H
#define LS_EXTRUN_H

#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../core/journal.h"
#include "../core/prng.h"
#include "extline.h"

struct arena;
struct fault_state;
struct lock_ops;
struct run_config;

enum ext_phase { PH_IDLE, PH_ATTEMPT, PH_HOLD, PH_RELEASE };

struct ext_slot {
	int ext;                 /* this worker runs an adapter */
	const char *cmd;         /* the adapter's path, or the --exec command */
	int shell;               /* run cmd with /bin/sh -c */
	const struct lock_ops *ops;
	const int64_t *pvals;
	pid_t pid;               /* 0: not running; also its process group */
	pid_t rec_pid;           /* the pid its records name (kept after it is reaped) */
	unsigned incarnation;
	int ev_fd, ctl_fd;       /* ours: read end of its fd 3, write end of its stdin */
	int child_ev, child_ctl; /* its ends, open between ext_before_fork and ext_spawned */
	char buf[EXT_LINE_MAX + 1];
	size_t len;
	struct journal j;
	struct prng rng;         /* the driver's decisions for this worker */
	uint32_t op;
	int started;             /* sent its first `next` */
	int waiting;             /* a `next` held at the start barrier */
	int has_op;              /* was given an op */
	int told_stop;
	int failed;              /* reported and killed: no respawn */
	int wd_killed;           /* the watchdog killed it (liveness) */
	enum ext_phase phase;
	unsigned long lines;
	int64_t spawn_ns;
	int64_t last_ns;         /* driver clock: when its last line arrived */
	uint64_t last_ev_ns;     /* its own stamp on its last event */
	int64_t stop_until;      /* stopped by a fault: SIGCONT then */
	int64_t crash_ns;        /* SIGKILLed by a crash fault at this time: later lines are dropped */
	int64_t stale_ms, budget_ms;
	char last_line[160];
};

struct ext_run {
	struct run_config *cfg;
	struct arena *arena;
	struct fault_state *fstates; /* per worker, the driver's (fault_states_create) */
	const char *state_file;
	char shim[PATH_MAX];
	char *specs;             /* the shim's rules, one per line; NULL: no shim */
	int64_t shim_stall_ms;   /* the longest stall the shim may make (watchdog excuse) */
	int shim_crash;          /* the shim may SIGKILL an adapter */
	uint32_t mask[PT__N];    /* the driver's rules at each point */
	uint64_t hash[PT__N];
	int64_t hold_ms;
	int sigfd;
	int go;
	int killing;             /* the driver is killing every worker (end of grace) */
	int fail_rc;
	struct sigaction old_pipe;
	unsigned n;
	struct ext_slot slot[];
};

/* Split the run's fault plan between the shim and the driver (x->specs,
 * x->shim, x->mask, x->hash ...).  0, or -1 with why filled. */
int ext_plan(struct ext_run *x, char *why, size_t len);

#endif
