/*
 * netfs.h - `run --netfs sshfs[:attr=DUR,dir=DUR]`: each host sees the work
 * directory through its own sshfs mount of a local sshd on 127.0.0.1
 * (docs/hosts.md says what each mount guarantees).
 *
 *   netfs_parse(spec)            the spec alone (options, `check`); nfs is refused here
 *   netfs_start(nf, cfg, stop)       a throw-away key and sshd config in WORKDIR/.lockstorm-netfs,
 *                                sshd on a free loopback port, in a pid namespace of its own
 *                                whose init dies with the driver (PR_SET_PDEATHSIG)
 *   netfs_mount(nf, cfg, h)      in host h's init (its private mount namespace): sshfs of
 *                                WORKDIR/store (the lock's and the state's folder) over itself
 *   netfs_stop(nf)               sshd's namespace killed and reaped, the key files removed
 *
 * The mounts need no unmount: each lives in its host's mount namespace and
 * goes with it (hosts_stop).  Errors: -1 with a one-line reason in why.
 */
#ifndef LS_NETFS_H
#define LS_NETFS_H

#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../workloads/config.h"

#ifdef __cplusplus
extern "C" {
#endif

enum netfs_kind { NETFS_NONE = 0, NETFS_SSHFS };

struct netfs {
	enum netfs_kind kind;
	int64_t attr_ms;       /* attribute cache timeout (FUSE attr_timeout, sshfs dcache_stat_timeout) */
	int64_t dir_ms;        /* lookup and name cache (FUSE entry/negative_timeout, sshfs dcache_dir_timeout) */
	char dir[PATH_MAX];    /* WORKDIR/.lockstorm-netfs: key, host key, sshd_config, log */
	int port;              /* sshd's loopback port */
	pid_t server;          /* sshd's pid-namespace init; 0 none */
};

/* Parse SPEC ("sshfs", "sshfs:attr=1s,dir=500ms", "nfs").  0 or -1 with why. */
int netfs_parse(const char *spec, struct netfs *nf, char *why, size_t len);
/* "attr_timeout=1 dir_timeout=1" as the report and docs show the cache settings. */
void netfs_describe(const struct netfs *nf, char *buf, size_t len);
/* STOP (may be NULL): the driver's interrupt count; not 0: -1, "interrupted". */
int netfs_start(struct netfs *nf, const struct run_config *cfg, const volatile sig_atomic_t *stop, char *why,
		size_t len);
int netfs_mount(const struct netfs *nf, const struct run_config *cfg, unsigned host, char *why, size_t len);
void netfs_stop(struct netfs *nf);
/* Can --netfs sshfs run here (sshd, sshfs, ssh-keygen, /dev/fuse)?  0, or -1 with the reason. */
int netfs_available(char *why, size_t len);

#ifdef __cplusplus
}
#endif
#endif
