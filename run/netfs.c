/*
 * netfs.c - the work directory over sshfs, one mount per host (see netfs.h).
 *
 * OS and tool facts relied on:
 *  - sshd -D stays in the foreground; -e logs to stderr (here: a log file
 *    in the key folder), so a refused config says why.  Debian's sshd wants
 *    /run/sshd (its privilege-separation directory, compiled in) to exist:
 *    sshd gets a mount namespace of its own with a private tmpfs on /run
 *    that holds it, so the host's /run is never touched (unless the work
 *    directory lives under /run itself; then /run/sshd is made there).
 *  - sshd runs as pid 2 of a pid namespace whose init has PR_SET_PDEATHSIG:
 *    a SIGKILLed driver kills the init, and with it sshd and every
 *    per-connection sshd and sftp child.
 *  - sshfs (without -f) returns once the mount is in place and leaves its
 *    daemon behind; in a host's namespaces that daemon is an orphan of the
 *    host's init and dies with it.  sftp's open with SSH_FXF_EXCL is the
 *    server's O_CREAT|O_EXCL; link(2) and rename over an existing name go
 *    through OpenSSH's hardlink@ and posix-rename@ extensions (atomic on the
 *    server); flock and fcntl locks are FUSE's local emulation, per mount.
 */
#include "netfs.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../core/fsutil.h"
#include "../core/num.h"

#define NETFS_DIR ".lockstorm-netfs"
#define SSHD "/usr/sbin/sshd"
#define SSHFS "/usr/bin/sshfs"
#define KEYGEN "/usr/bin/ssh-keygen"
#define READY_MS 10000 /* sshd listening, or the start failed */

int netfs_parse(const char *spec, struct netfs *nf, char *why, size_t len)
{
	memset(nf, 0, sizeof *nf);
	nf->attr_ms = 1000;
	nf->dir_ms = 1000;
	char buf[128];
	if (strlen(spec) >= sizeof buf) {
		snprintf(why, len, "--netfs: '%s' is too long", spec);
		return -1;
	}
	snprintf(buf, sizeof buf, "%s", spec);
	char *keys = strchr(buf, ':');
	if (keys)
		*keys++ = '\0';
	if (!strcmp(buf, "nfs")) {
		snprintf(why, len, "--netfs nfs: this kernel offers no NFS server to export the work directory "
			 "on loopback (no kernel nfsd here); use --netfs sshfs");
		return -1;
	}
	if (strcmp(buf, "sshfs")) {
		snprintf(why, len, "--netfs: unknown file system '%s' (known: sshfs, nfs)", buf);
		return -1;
	}
	nf->kind = NETFS_SSHFS;
	for (char *save = NULL, *kv = keys ? strtok_r(keys, ",", &save) : NULL; kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		if (!eq) {
			snprintf(why, len, "--netfs: '%s' needs a value (attr=DUR or dir=DUR)", kv);
			return -1;
		}
		*eq = '\0';
		int64_t *to = !strcmp(kv, "attr") ? &nf->attr_ms : !strcmp(kv, "dir") ? &nf->dir_ms : NULL;
		if (!to) {
			snprintf(why, len, "--netfs: unknown key '%s' (known: attr, dir)", kv);
			return -1;
		}
		char msg[160];
		if (num_ms(eq + 1, 0, to, msg, sizeof msg) || *to > 3600000) {
			snprintf(why, len, "--netfs: %s=%s: %s", kv, eq + 1, *msg ? msg : "at most 1h");
			return -1;
		}
	}
	return 0;
}

/* sshfs's own directory cache counts whole seconds: round up, so a cache
 * asked for is never turned off. */
static long whole_s(int64_t ms)
{
	return (long)((ms + 999) / 1000);
}

void netfs_describe(const struct netfs *nf, char *buf, size_t len)
{
	snprintf(buf, len, "sshfs attr_timeout=%.3fs entry_timeout=%.3fs negative_timeout=%.3fs "
		 "dir_cache=%s dcache_stat_timeout=%lds dcache_dir_timeout=%lds",
		 (double)nf->attr_ms / 1000.0, (double)nf->dir_ms / 1000.0, (double)nf->dir_ms / 1000.0,
		 nf->attr_ms || nf->dir_ms ? "yes" : "no", whole_s(nf->attr_ms), whole_s(nf->dir_ms));
}

int netfs_available(char *why, size_t len)
{
	if (access(SSHD, X_OK) != 0 || access(KEYGEN, X_OK) != 0) {
		snprintf(why, len, "--netfs sshfs: %s is not installed (Debian: apt-get install openssh-server; "
			 "ci/setup installs it)", access(SSHD, X_OK) ? SSHD : KEYGEN);
		return -1;
	}
	if (access(SSHFS, X_OK) != 0) {
		snprintf(why, len, "--netfs sshfs: %s is not installed (Debian: apt-get install sshfs; ci/setup installs it)",
			 SSHFS);
		return -1;
	}
	int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, len, "--netfs sshfs: cannot open /dev/fuse: %s (FUSE is needed)", strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

/* A tool starts with the signals as a shell would give them: the driver's
 * blocked SIGCHLD and ignored SIGINT/SIGTERM are inherited across exec, and
 * sshd and ssh do not work without SIGCHLD. */
static void plain_signals(void)
{
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
}

/* Run argv, output to LOG; its exit status (-1: could not run). */
static int run_tool(char *const argv[], const char *log)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if (nul >= 0)
			dup2(nul, 0);
		plain_signals();
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The last line of the log, for a reason. */
static void log_tail(const char *log, char *buf, size_t len)
{
	size_t n = 0;
	char *s = fsutil_slurp(log, &n);
	buf[0] = '\0';
	if (!s)
		return;
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = '\0';
	char *l = strrchr(s, '\n');
	snprintf(buf, len, "%s", l ? l + 1 : s);
	free(s);
}

static int free_port(void)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = 0 };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t al = sizeof a;
	int port = -1;
	if (bind(s, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(s, (struct sockaddr *)&a, &al) == 0)
		port = ntohs(a.sin_port);
	close(s);
	return port;
}

static int port_open(int port)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return 0;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int ok = connect(s, (struct sockaddr *)&a, sizeof a) == 0;
	close(s);
	return ok;
}

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	size_t n = strlen(text);
	int rc = write(fd, text, n) == (ssize_t)n ? 0 : -1;
	close(fd);
	return rc;
}

/* sshd's privilege-separation directory, in sshd's own mount namespace:
 * a private tmpfs on /run holds it, unless the key folder is under /run
 * (the tmpfs would hide it): then it is made on the host as it is. */
static void privsep_dir(const struct netfs *nf)
{
	struct stat st;
	if (stat("/run/sshd", &st) == 0)
		return;
	char real[PATH_MAX];
	int under_run = !realpath(nf->dir, real) || !strncmp(real, "/run/", 5);
	if (!under_run && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 &&
	    mount("lockstorm-sshd", "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m") == 0) {
		mkdir("/run/sshd", 0755);
		return;
	}
	mkdir("/run/sshd", 0755);
}

/* pid 1 of sshd's namespace: start sshd, reap, until killed. */
static _Noreturn void server_init(const struct netfs *nf, int alive)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	privsep_dir(nf);
	char c;
	fcntl(alive, F_SETFL, fcntl(alive, F_GETFL) | O_NONBLOCK);
	if (read(alive, &c, 1) == 0) /* the driver is gone already */
		_exit(0);
	close(alive);
	setpgid(0, 0);
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	char cfgp[PATH_MAX + 32], logp[PATH_MAX + 32];
	snprintf(cfgp, sizeof cfgp, "%s/sshd_config", nf->dir);
	snprintf(logp, sizeof logp, "%s/sshd.log", nf->dir);
	pid_t pid = fork();
	if (pid == 0) {
		char *argv[] = { SSHD, "-D", "-e", "-f", cfgp, NULL };
		int fd = open(logp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if (nul >= 0)
			dup2(nul, 0);
		plain_signals();
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	for (;;) { /* pid 1: every orphan is ours to reap; sshd's end is ours too */
		pid_t r = waitpid(-1, &st, 0);
		if (r == pid || (r < 0 && errno == ECHILD))
			_exit(3);
	}
}

#define STOPPED(stop) ((stop) && *(stop))

int netfs_start(struct netfs *nf, const struct run_config *cfg, const volatile sig_atomic_t *stop, char *why,
		size_t len)
{
	nf->server = 0;
	if (netfs_available(why, len))
		return -1;
	snprintf(nf->dir, sizeof nf->dir, "%s/" NETFS_DIR, cfg->workdir);
	fsutil_rm_tree(nf->dir);
	if (mkdir(nf->dir, 0700) != 0) {
		snprintf(why, len, "--netfs: cannot make %s: %s", nf->dir, strerror(errno));
		return -1;
	}
	char key[PATH_MAX + 32], hkey[PATH_MAX + 32], log[PATH_MAX + 32], p[PATH_MAX + 32];
	snprintf(key, sizeof key, "%s/key", nf->dir);
	snprintf(hkey, sizeof hkey, "%s/host_key", nf->dir);
	snprintf(log, sizeof log, "%s/keygen.log", nf->dir);
	char *kg1[] = { KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", "lockstorm-netfs", "-f", key, NULL };
	char *kg2[] = { KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", "lockstorm-netfs-host", "-f", hkey, NULL };
	if (run_tool(kg1, log) != 0 || run_tool(kg2, log) != 0) {
		char tail[200];
		log_tail(log, tail, sizeof tail);
		snprintf(why, len, "--netfs: ssh-keygen failed: %s", tail);
		goto fail;
	}
	if (STOPPED(stop)) {
		snprintf(why, len, "--netfs: sshd was not set up: interrupted");
		goto fail;
	}
	char pub[PATH_MAX + 32];
	snprintf(pub, sizeof pub, "%s.pub", key);
	size_t pn = 0;
	char *pubkey = fsutil_slurp(pub, &pn);
	snprintf(p, sizeof p, "%s/authorized_keys", nf->dir);
	int wrc = pubkey ? write_text(p, pubkey) : -1;
	free(pubkey);
	if (wrc != 0) {
		snprintf(why, len, "--netfs: cannot write %s: %s", p, strerror(errno));
		goto fail;
	}
	for (int attempt = 0; attempt < 3; attempt++) {
		if ((nf->port = free_port()) < 0) {
			snprintf(why, len, "--netfs: no free loopback port: %s", strerror(errno));
			goto fail;
		}
		char conf[4 * PATH_MAX + 512];
		snprintf(conf, sizeof conf,
			 "Port %d\nListenAddress 127.0.0.1\nHostKey %s\nAuthorizedKeysFile %s/authorized_keys\n"
			 "PidFile none\nUsePAM no\nStrictModes no\nPasswordAuthentication no\n"
			 "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\nPermitRootLogin prohibit-password\n"
			 "AllowTcpForwarding no\nX11Forwarding no\nMaxStartups 64\nMaxSessions 64\nLogLevel ERROR\n"
			 "Subsystem sftp internal-sftp\n",
			 nf->port, hkey, nf->dir);
		snprintf(p, sizeof p, "%s/sshd_config", nf->dir);
		if (write_text(p, conf) != 0) {
			snprintf(why, len, "--netfs: cannot write %s: %s", p, strerror(errno));
			goto fail;
		}
		int alive[2];
		if (pipe2(alive, O_CLOEXEC) != 0) {
			snprintf(why, len, "--netfs: pipe: %s", strerror(errno));
			goto fail;
		}
		fflush(NULL);
		pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWPID | CLONE_NEWNS | SIGCHLD, NULL, NULL, NULL, NULL);
		if (pid == 0) {
			close(alive[1]);
			server_init(nf, alive[0]);
		}
		close(alive[0]);
		if (pid < 0) {
			close(alive[1]);
			snprintf(why, len, "--netfs: cannot start sshd's namespace: %s", strerror(errno));
			goto fail;
		}
		nf->server = pid;
		/* listening, or dead: sshd's start is bounded */
		struct timespec t0, now, pause = { 0, 10 * 1000000L };
		clock_gettime(CLOCK_MONOTONIC, &t0);
		int up = 0, dead = 0;
		for (;;) {
			if ((up = port_open(nf->port)))
				break;
			if (waitpid(pid, NULL, WNOHANG) == pid) {
				dead = 1;
				nf->server = 0;
				break;
			}
			clock_gettime(CLOCK_MONOTONIC, &now);
			if ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 > READY_MS)
				break;
			if (STOPPED(stop) || nanosleep(&pause, NULL) != 0) {
				/* ^C or SIGTERM: the start ends here */
				close(alive[1]);
				snprintf(why, len, "--netfs: sshd was not set up: interrupted");
				goto fail;
			}
		}
		close(alive[1]);
		if (up)
			return 0;
		if (!dead) {
			kill(pid, SIGKILL);
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
			nf->server = 0;
		}
		char tail[300];
		snprintf(log, sizeof log, "%s/sshd.log", nf->dir);
		log_tail(log, tail, sizeof tail);
		snprintf(why, len, "--netfs: sshd did not start on 127.0.0.1:%d: %s", nf->port,
			 *tail ? tail : "no word from it");
		if (!strstr(tail, "Address already in use"))
			break; /* only a lost race for the port is worth another try */
	}
fail:
	netfs_stop(nf);
	return -1;
}

int netfs_mount(const struct netfs *nf, const struct run_config *cfg, unsigned host, char *why, size_t len)
{
	(void)host;
	char src[PATH_MAX + 32], port[16], log[PATH_MAX + 32], opts[4 * PATH_MAX + 512];
	/* the store, not the work directory: the key beside it must stay
	 * readable to ssh without the mount it is making */
	char mnt[PATH_MAX + 16];
	snprintf(mnt, sizeof mnt, "%s/store", cfg->workdir);
	if (mkdir(mnt, 0777) != 0 && errno != EEXIST) {
		snprintf(why, len, "--netfs: cannot make %s: %s", mnt, strerror(errno));
		return -1;
	}
	snprintf(src, sizeof src, "root@127.0.0.1:%s", mnt);
	snprintf(port, sizeof port, "%d", nf->port);
	snprintf(log, sizeof log, "%s/sshfs-h%u.log", nf->dir, host);
	snprintf(opts, sizeof opts,
		 "IdentityFile=%s/key,IdentitiesOnly=yes,StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null,"
		 "BatchMode=yes,LogLevel=ERROR,attr_timeout=%.3f,entry_timeout=%.3f,negative_timeout=%.3f,"
		 "dir_cache=%s,dcache_stat_timeout=%ld,dcache_dir_timeout=%ld,dcache_link_timeout=%ld,"
		 "fsname=lockstorm-sshfs-h%u",
		 nf->dir, (double)nf->attr_ms / 1000.0, (double)nf->dir_ms / 1000.0, (double)nf->dir_ms / 1000.0,
		 nf->attr_ms || nf->dir_ms ? "yes" : "no", whole_s(nf->attr_ms), whole_s(nf->dir_ms),
		 whole_s(nf->dir_ms), host);
	char *argv[] = { SSHFS, src, mnt, "-p", port, "-o", opts, NULL };
	int rc = run_tool(argv, log);
	if (rc != 0) {
		char tail[300];
		log_tail(log, tail, sizeof tail);
		snprintf(why, len, "--netfs: sshfs on host %u failed (exit %d): %s", host, rc, *tail ? tail : "no word from it");
		return -1;
	}
	return 0;
}

void netfs_stop(struct netfs *nf)
{
	if (nf->server > 0) {
		kill(nf->server, SIGKILL);
		while (waitpid(nf->server, NULL, 0) < 0 && errno == EINTR)
			;
		nf->server = 0;
	}
	if (nf->dir[0])
		fsutil_rm_tree(nf->dir);
	nf->dir[0] = '\0';
}
