/*
 * extrun.h - the insides of an external run (struct ext_run), shared by
 * extworker.c (processes, lines, records) and extplan.c (the fault plan).
 */
#ifndef LS_EXTRUN_H
#define LS_EXTRUN_H

#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
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
	pid_t pid;               /* 0: not running (reaped) */
	pid_t pgid;              /* its process group: outlives pid until killed at the reap */
	pid_t rec_pid;           /* the pid its records name (kept after it is reaped) */
	unsigned incarnation;
	int ev_fd, ctl_fd;       /* ours: read end of its fd 3, write end of its stdin */
	int child_ev, child_ctl; /* its ends, open between ext_before_fork and ext_spawned */
	int log_fd, child_log;   /* its stdout+stderr pipe: ours (read), its end */
	int log_out;             /* OUTDIR/adapter-wN.log, written by the driver up to EXT_LOG_MAX */
	uint64_t log_bytes;      /* written to the log so far (every incarnation) */
	size_t log_line;         /* length of the log line being written */
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
	pid_t keeper;            /* kills every adapter group when the driver dies (extproc.c) */
	int keeper_fd;           /* the write end of its pipe: EOF there is the driver's death */
	_Atomic pid_t *groups;   /* shared with the keeper: each worker's live process group, or 0 */
	struct sigaction old_pipe;
	unsigned n;
	struct ext_slot slot[];
};

/* The bounds an adapter lives within (docs/external-workers.md, "Bounds"). */
#define EXT_LOG_MAX (8u << 20)     /* bytes of stdout+stderr per worker (every incarnation) */
#define EXT_LOG_LINE_MAX 65536     /* bytes of one stdout/stderr line */
#define EXT_PUMP_MAX (256u << 10)  /* bytes read from one pipe per turn of the loop */

/* extproc.c: the keeper, a process outside every adapter group that SIGKILLs
 * the groups in x->groups when the driver dies (PR_SET_PDEATHSIG, or EOF on
 * its pipe), since a SIGKILLed driver cannot, and PR_SET_PDEATHSIG reaches
 * only the adapter itself, not the processes it starts.  0, or -1 with errno. */
int ext_keeper_start(struct ext_run *x);
void ext_keeper_stop(struct ext_run *x);
/* Kill worker id's process group (also after its leader was reaped) and
 * forget it. */
void ext_kill_group(struct ext_run *x, unsigned id);
/* In the child: exec cmd.  A command of plain words (letters, digits and
 * -_./,:+@%=) is split at blanks and exec'd itself, so no shell lingers
 * between the driver and the adapter; anything else runs under /bin/sh -c.
 * Returns only on failure, with errno. */
void ext_exec_cmd(const char *cmd, int shell);
/* Does cmd run under /bin/sh -c (see ext_exec_cmd)? */
int ext_needs_shell(const char *cmd);

/* Split the run's fault plan between the shim and the driver (x->specs,
 * x->shim, x->mask, x->hash ...).  0, or -1 with why filled. */
int ext_plan(struct ext_run *x, char *why, size_t len);

#endif
