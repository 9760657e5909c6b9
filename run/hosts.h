/*
 * hosts.h - `run --hosts N`: the workers split over N hosts, each a UTS, pid
 * and mount namespace of its own, all sharing the work directory.
 *
 * A host is one "init" process the driver makes with clone(CLONE_NEWPID |
 * CLONE_NEWUTS | CLONE_NEWNS): pid 1 of its pid namespace, hostname
 * "lockstorm-hN", its mounts private (so what it mounts, a /proc of its own
 * and an sshfs of the work directory under --netfs, never shows outside).
 * It reaps whatever is orphaned inside it and otherwise waits.  Workers stay
 * the driver's children (waitpid, kill, PR_SET_PDEATHSIG work as without
 * hosts): hosts_fork enters the host's pid namespace for the one fork
 * (setns: the driver's own namespace is untouched) and the child joins the
 * host's UTS and mount namespaces before it returns.
 *
 * Nothing is left behind: each init has PR_SET_PDEATHSIG (SIGKILL) from the
 * driver, and the death of a pid namespace's init kills every process in it;
 * its mount namespace, with the mounts made there, goes with its last
 * process.  hosts_stop SIGKILLs and reaps the inits.
 *
 * Calling sequence:
 *   hosts_start(&hs, cfg, nf, stop, why)  (root; -1: a one-line reason, exit 2)
 *   pid = hosts_fork(&hs, host)     as fork(): 0 in the child, which runs in host
 *   hosts_stop(&hs)                 every init killed and reaped
 */
#ifndef LS_HOSTS_H
#define LS_HOSTS_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../workloads/config.h"

#ifdef __cplusplus
extern "C" {
#endif

struct netfs;

struct host {
	pid_t init;          /* its pid 1, as the driver sees it; 0 none */
	int pidns, utsns, mntns; /* /proc/INIT/ns/... */
	char name[32];       /* its hostname */
};

struct hosts {
	unsigned n;
	struct host h[CFG_MAX_HOSTS];
	int self_pidns;      /* the driver's own pid namespace, to return to */
};

/* Make cfg->hosts hosts (each mounting NETFS over the work directory when
 * it is not NULL).  0, or -1 with why (everything made is undone).  STOP
 * (may be NULL): the driver's interrupt count; once it is not 0 the start
 * ends at the next step with -1 ("interrupted"). */
int hosts_start(struct hosts *hs, const struct run_config *cfg, const struct netfs *nf,
		const volatile sig_atomic_t *stop, char *why, size_t len);
/* What `run` does: the --netfs server (when cfg->netfs names one), then the
 * hosts mounting it; *dev is the work directory's device for
 * fsx_binding.dev under --netfs (0 without).  On failure nothing is left
 * and why says what failed (the run exits 2). */
int hosts_start_run(const struct run_config *cfg, struct hosts *hs, struct netfs *nf, uint64_t *dev,
		    const volatile sig_atomic_t *stop, char *why, size_t len);
/* fork() into host h: the child runs in its pid, UTS and mount namespaces.
 * -1 and errno in the parent on failure. */
pid_t hosts_fork(struct hosts *hs, unsigned h);
/* Kill and reap every init (and so everything in its namespaces). */
void hosts_stop(struct hosts *hs);
/* PID (as the driver sees it) as its own pid namespace numbers it: the
 * last field of /proc/PID/status's NSpid; PID itself when that cannot be read. */
pid_t hosts_ns_pid(pid_t pid);
/* Is pid one of the inits? (the driver's reaper skips them) */
int hosts_is_init(const struct hosts *hs, pid_t pid);

/* Can this process make hosts?  0, or -1 with the reason (not root, no
 * namespaces) in why. */
int hosts_check_privilege(char *why, size_t len);

/* The name of host h: "lockstorm-h<h>". */
void hosts_name(unsigned h, char *buf, size_t len);

/* A skew rule with host=H: it applies to the workers on host H (and, with
 * workers=, only those of them).  Refuses a host the run does not have. */
int hosts_resolve_faults(struct run_config *cfg, char *why, size_t len);

#ifdef __cplusplus
}
#endif
#endif
