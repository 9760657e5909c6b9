/*
 * extworker.h - the driver's side of external workers: adapter processes
 * that run a real lock implementation and speak the worker protocol of
 * docs/external-workers.md on two pipes.
 *
 *   driver                                   adapter (exec'd after fork)
 *     ctl pipe  --- "op N" | "stop" --->      stdin
 *     ev pipe   <--- "next", "<ns> EVENT k=v" fd 3
 *     OUTDIR/adapter-wN.log  <---------       stdout, stderr
 *
 * Calling sequence (driver.c):
 *   ext_prepare()                    before any fork: commands, plans, pipes' home
 *   per spawn: ext_before_fork(); fork(); child: ext_child_exec(); parent: ext_spawned()
 *   loop: ext_wait() (pump lines, answer `next`), ext_watchdog() per worker
 *   barrier: the arena's ready count rises at each first `next`; ext_go() answers them
 *   reaped: ext_reaped() (drain, journal, classify)
 *   after the run: ext_free(), then ext_resequence(OUTDIR) before the checker
 *
 * Lifecycle of one adapter incarnation:
 *
 *   spawned --first next--> ready --go--> running: idle -attempt-> attempting
 *     -acquired-> holding -release-begin-> releasing -released-> idle ...
 *   running --`stop` answered--> told-stop --exit 0--> gone (EV_WORKER_EXIT)
 *   any --bad line / hang / early exit--> failed (killed; the run ends, exit 3)
 *
 * Every event line becomes one journal record in journal/wNNNN.bin with the
 * adapter's CLOCK_MONOTONIC time; ext_resequence() orders all records by time
 * afterwards, since lines from different pipes arrive interleaved.
 */
#ifndef LS_EXTWORKER_H
#define LS_EXTWORKER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../core/arena.h"
#include "../workloads/config.h"
#include "../core/journal.h"
#include "extline.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ext_run;

/* NULL in *out when no protocol of the run is external.  0 ok; else the exit
 * code (2 bad configuration, adapter not found; 3 harness) with why filled. */
int ext_prepare(struct ext_run **out, struct run_config *cfg, struct arena *arena,
		struct fault_state *fstates, const char *state_file,
		char *why, size_t len);
/* The command that runs the run's protocol slot SLOT (an external one): *shell as
 * ext_exec_cmd() takes it.  0, or 2 with why (not found, not executable). */
int ext_command(const struct run_config *cfg, unsigned slot, char *out, size_t len, int *shell, char *why,
		size_t wlen);
int ext_is(const struct ext_run *x, unsigned id);
/* Pipes for worker id's next incarnation: 0, or -1 with errno. */
int ext_before_fork(struct ext_run *x, unsigned id);
/* In the child: fds, environment, exec.  Never returns. */
#ifndef __cplusplus
_Noreturn
#endif
void ext_child_exec(struct ext_run *x, unsigned id, unsigned incarnation, const sigset_t *mask);
void ext_spawned(struct ext_run *x, unsigned id, unsigned incarnation, pid_t pid);
/* Handle event lines for up to ms, or until a SIGCHLD is pending. */
void ext_wait(struct ext_run *x, int64_t ms);
/* The start barrier lifted: answer every `next` held until now. */
void ext_go(struct ext_run *x);
/* Wake stopped adapters; judge a silent one.  Returns 1 when it killed the
 * worker as a liveness finding (a lock call that does not return), having
 * journalled EV_LIVENESS in dj. */
int ext_watchdog(struct ext_run *x, unsigned id, int64_t extra_ms, struct journal *dj);
/* Worker id's process ended with status.  Returns 1 when the driver should
 * treat it like a built-in worker's end (journal EV_KILLED for a signal,
 * respawn if asked), 0 when it was a clean exit or an adapter failure. */
int ext_reaped(struct ext_run *x, unsigned id, int status);
/* The process group to signal for worker id (its own group). */
pid_t ext_group(const struct ext_run *x, unsigned id);
/* End of grace: SIGKILL every adapter's group (their ends are not crashes). */
void ext_kill_all(struct ext_run *x);
/* 0, or the exit code an adapter failure asks for (3; 2 for a command not found). */
int ext_failed(const struct ext_run *x);
void ext_free(struct ext_run *x);

/* Order every record of OUTDIR/journal/ by (ns, worker, old seq) and give
 * them new sequence numbers 1.. in that order, rewriting each file.  0 or -1
 * with errno. */
int ext_resequence(const char *outdir);

#ifdef __cplusplus
}
#endif
#endif
