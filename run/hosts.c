/*
 * hosts.c - hosts as namespaces (see hosts.h).
 *
 * OS facts relied on:
 *  - clone(CLONE_NEWPID) makes the child pid 1 of a new pid namespace; when
 *    that init dies the kernel SIGKILLs every process in the namespace, and
 *    no process can be forked into it any more.  Orphans inside reparent to
 *    it (not to an outside subreaper): it must reap them.
 *  - setns(fd, CLONE_NEWPID) changes only where the caller's *next*
 *    children go; setns back to the caller's own namespace is allowed.
 *  - setns(CLONE_NEWUTS / CLONE_NEWNS) needs a single-threaded caller (the
 *    forked child is one).
 *  - From a sibling pid namespace, another host's pid is not visible:
 *    kill(pid, 0) answers ESRCH, or names a process of one's own host that
 *    happens to have the same number.
 *  - Signals from inside a namespace to its init are dropped unless it has
 *    a handler; SIGKILL from the parent namespace always lands.
 */
#include "hosts.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "netfs.h"
#include "../report/byhost.h"

#define HOST_READY_MS 30000 /* set up, mounts included */

void hosts_name(unsigned h, char *buf, size_t len)
{
	byhost_hostname(h, buf, len);
}

int hosts_is_init(const struct hosts *hs, pid_t pid)
{
	for (unsigned i = 0; hs && i < hs->n; i++)
		if (hs->h[i].init == pid)
			return 1;
	return 0;
}

int hosts_check_privilege(char *why, size_t len)
{
	if (geteuid() != 0) {
		snprintf(why, len, "--hosts needs root (namespaces: pid, UTS, mount); run as root or drop --hosts");
		return -1;
	}
	if (access("/proc/self/ns/pid", F_OK) != 0 || access("/proc/self/ns/uts", F_OK) != 0) {
		snprintf(why, len, "--hosts: this kernel has no pid or UTS namespaces (/proc/self/ns)");
		return -1;
	}
	return 0;
}

/* The fork of a new namespace set: the child is pid 1 of its pid namespace. */
static pid_t clone_host(void)
{
	return (pid_t)syscall(SYS_clone, CLONE_NEWPID | CLONE_NEWUTS | CLONE_NEWNS | SIGCHLD, NULL, NULL, NULL, NULL);
}

static void on_chld(int sig)
{
	(void)sig;
}

/* Pid 1 of a host: set it up, say so on fd `st` ("ok" or the reason), then
 * reap orphans until killed. */
static _Noreturn void host_init(const struct run_config *cfg, const struct netfs *nf, unsigned h, int alive,
				int st)
{
	char msg[512] = "ok";
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* the driver died before PDEATHSIG was armed: its end of `alive` is
	 * closed (an empty read), and nobody is left to kill us */
	char c;
	int fl = fcntl(alive, F_GETFL);
	fcntl(alive, F_SETFL, fl | O_NONBLOCK);
	if (read(alive, &c, 1) == 0)
		_exit(0);
	close(alive);
	setpgid(0, 0);
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	char name[32];
	hosts_name(h, name, sizeof name);
	if (sethostname(name, strlen(name)) != 0)
		snprintf(msg, sizeof msg, "--hosts: sethostname: %s", strerror(errno));
	/* private mounts: nothing mounted here shows in the driver's namespace */
	else if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		snprintf(msg, sizeof msg, errno == EINVAL ? "--hosts: the root directory is not a mount point here (a chroot?), "
			 "and a host's private mounts need one: %s" : "--hosts: cannot make the host's mounts private: %s",
			 strerror(errno));
	/* its own /proc: `ps` on a host shows that host's processes */
	else if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
		snprintf(msg, sizeof msg, "--hosts: cannot mount the host's /proc: %s", strerror(errno));
	else if (nf)
		netfs_mount(nf, cfg, h, msg, sizeof msg); /* msg stays "ok", or says why */
	if (write(st, msg, strlen(msg)) < 0)
		_exit(3);
	close(st);
	if (strcmp(msg, "ok"))
		_exit(3);

	/* reap: SIGCHLD blocked, so none is lost between a wait and the sleep */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_chld;
	sigaction(SIGCHLD, &sa, NULL);
	sigset_t block, none;
	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &none);
	sigdelset(&none, SIGCHLD);
	for (;;) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		sigsuspend(&none);
	}
}

static int open_ns(pid_t pid, const char *kind)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/ns/%s", (int)pid, kind);
	return open(p, O_RDONLY | O_CLOEXEC);
}

int hosts_start(struct hosts *hs, const struct run_config *cfg, const struct netfs *nf,
		const volatile sig_atomic_t *stop, char *why, size_t len)
{
	memset(hs, 0, sizeof *hs);
	hs->self_pidns = -1;
	if (hosts_check_privilege(why, len))
		return -1;
	if ((hs->self_pidns = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC)) < 0) {
		snprintf(why, len, "--hosts: /proc/self/ns/pid: %s", strerror(errno));
		return -1;
	}
	for (unsigned h = 0; h < cfg->hosts; h++) {
		if (stop && *stop) {
			snprintf(why, len, "--hosts: host %u was not set up: interrupted", h);
			hosts_stop(hs);
			return -1;
		}
		struct host *ho = &hs->h[h];
		ho->pidns = ho->utsns = ho->mntns = -1;
		hosts_name(h, ho->name, sizeof ho->name);
		int alive[2], st[2];
		if (pipe2(alive, O_CLOEXEC) != 0)
			goto fail_errno;
		if (pipe2(st, O_CLOEXEC) != 0) {
			close(alive[0]);
			close(alive[1]);
			goto fail_errno;
		}
		fflush(NULL);
		pid_t pid = clone_host();
		if (pid == 0) {
			close(alive[1]);
			close(st[0]);
			host_init(cfg, nf, h, alive[0], st[1]);
		}
		int err = errno;
		close(alive[0]);
		close(st[1]);
		if (pid < 0) {
			close(alive[1]);
			close(st[0]);
			errno = err;
			snprintf(why, len, "--hosts: cannot make host %u's namespaces: %s%s", h, strerror(err),
				 err == EPERM ? " (needs CAP_SYS_ADMIN; in a container, one allowed to unshare)" : "");
			hosts_stop(hs);
			return -1;
		}
		hs->n = h + 1;
		ho->init = pid;
		/* bounded: a mount that hangs, or an interrupt (^C, SIGTERM: the
		 * driver's handlers do not restart calls), ends the start */
		char msg[512];
		ssize_t r = -1;
		struct pollfd pf = { .fd = st[0], .events = POLLIN };
		int pr = poll(&pf, 1, HOST_READY_MS);
		if (pr > 0)
			r = read(st[0], msg, sizeof msg - 1);
		if (r < 0)
			snprintf(msg, sizeof msg, "--hosts: host %u %s", h,
				 pr == 0 ? "was not ready within 30 s" : "was not set up: interrupted");
		close(st[0]);
		close(alive[1]);
		if (r >= 0)
			msg[r] = '\0';
		if (strcmp(msg, "ok")) {
			snprintf(why, len, "%s", r != 0 ? msg : "--hosts: a host's init died while setting up");
			hosts_stop(hs);
			return -1;
		}
		ho->pidns = open_ns(pid, "pid");
		ho->utsns = open_ns(pid, "uts");
		ho->mntns = open_ns(pid, "mnt");
		if (ho->pidns < 0 || ho->utsns < 0 || ho->mntns < 0)
			goto fail_errno;
	}
	return 0;
fail_errno:
	snprintf(why, len, "--hosts: %s", strerror(errno));
	hosts_stop(hs);
	return -1;
}

pid_t hosts_fork(struct hosts *hs, unsigned h)
{
	if (h >= hs->n) {
		errno = EINVAL;
		return -1;
	}
	if (setns(hs->h[h].pidns, CLONE_NEWPID) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		if (setns(hs->h[h].utsns, CLONE_NEWUTS) != 0 || setns(hs->h[h].mntns, CLONE_NEWNS) != 0)
			_exit(3);
		return 0;
	}
	int err = errno;
	if (setns(hs->self_pidns, CLONE_NEWPID) != 0)
		abort(); /* BUG: the driver's later children would land on a host */
	errno = err;
	return pid;
}

void hosts_stop(struct hosts *hs)
{
	for (unsigned h = 0; h < hs->n; h++) {
		struct host *ho = &hs->h[h];
		if (ho->init > 0) {
			kill(ho->init, SIGKILL);
			while (waitpid(ho->init, NULL, 0) < 0 && errno == EINTR)
				;
			ho->init = 0;
		}
		int *fds[] = { &ho->pidns, &ho->utsns, &ho->mntns };
		for (int k = 0; k < 3; k++)
			if (*fds[k] >= 0) {
				close(*fds[k]);
				*fds[k] = -1;
			}
	}
	hs->n = 0;
	if (hs->self_pidns >= 0)
		close(hs->self_pidns);
	hs->self_pidns = -1;
}

int hosts_resolve_faults(struct run_config *cfg, char *why, size_t len)
{
	unsigned hosts = cfg->hosts ? cfg->hosts : 1;
	for (unsigned i = 0; i < cfg->faults.n; i++) {
		struct fault_rule *r = &cfg->faults.rule[i];
		if (!r->on_host)
			continue;
		unsigned host = r->on_host - 1;
		if (host >= hosts) {
			snprintf(why, len, "fault '%s': host=%u, but the run has %u host%s (--hosts N)", r->spec,
				 host, hosts, hosts == 1 ? "" : "s");
			return -1;
		}
		uint64_t bits[16] = { 0 };
		for (unsigned w = 0; w < cfg->workers && w < 16 * 64; w++) {
			int mine = r->workers_all || (r->workers[w / 64] >> (w % 64) & 1);
			if (mine && cfg_host_of(cfg, w) == host)
				bits[w / 64] |= 1ull << (w % 64);
		}
		memcpy(r->workers, bits, sizeof bits);
		r->workers_all = 0;
	}
	return 0;
}

int hosts_start_run(const struct run_config *cfg, struct hosts *hs, struct netfs *nf, uint64_t *dev,
		    const volatile sig_atomic_t *stop, char *why, size_t len)
{
	memset(hs, 0, sizeof *hs);
	hs->self_pidns = -1;
	memset(nf, 0, sizeof *nf);
	*dev = 0;
	if (hosts_check_privilege(why, len))
		return -1;
	if (cfg->netfs[0]) {
		struct stat st;
		if (netfs_parse(cfg->netfs, nf, why, len) || netfs_start(nf, cfg, stop, why, len))
			return -1;
		if (stat(cfg->workdir, &st) == 0)
			*dev = (uint64_t)st.st_dev;
	}
	if (hosts_start(hs, cfg, cfg->netfs[0] ? nf : NULL, stop, why, len) != 0) {
		netfs_stop(nf);
		return -1;
	}
	return 0;
}

pid_t hosts_ns_pid(pid_t pid)
{
	char p[64], buf[2048];
	snprintf(p, sizeof p, "/proc/%d/status", (int)pid);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pid;
	ssize_t k = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (k <= 0)
		return pid;
	buf[k] = '\0';
	char *l = strstr(buf, "\nNSpid:");
	if (!l)
		return pid;
	char *end = strchr(l + 1, '\n');
	if (end)
		*end = '\0';
	char *last = strrchr(l, '\t');
	long v = last ? strtol(last + 1, NULL, 10) : 0;
	return v > 0 ? (pid_t)v : pid;
}
