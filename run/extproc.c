/*
 * extproc.c - the processes of external workers that the driver does not
 * reap itself: the keeper, and how an adapter command is exec'd.
 *
 * Why a keeper.  Every adapter runs in a process group of its own (stop and
 * crash faults signal the whole of it), and gets PR_SET_PDEATHSIG from the
 * driver.  That signal reaches the adapter process only: a runtime's helper,
 * a lock tool it runs, or `sleep 777 &` in an --exec command does not inherit
 * it, and a SIGKILLed driver kills nobody.  The keeper is forked before the
 * first adapter, sits in a group of its own (a terminal's ^C is the driver's
 * to handle, not its), and waits for one of two things, either of which says
 * the driver is gone: its parent-death signal (SIGTERM), or EOF on a pipe
 * whose write end only the driver (and its workers, which die with it) hold.
 * It then SIGKILLs every process group listed in the shared x->groups and
 * exits.  At the normal end the driver has killed and forgotten every group
 * itself and simply SIGKILLs the keeper.
 *
 *   driver:  ext_keeper_start -> (spawn: groups[id] = pgid ... reap: kill
 *            the group, groups[id] = 0) -> ext_keeper_stop
 *   keeper:  wait (PDEATHSIG | EOF) -> SIGKILL groups[] -> _exit
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "extrun.h"

#define EXT_ARGV_MAX 64

static void ext_kill_groups(_Atomic pid_t *groups, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		pid_t g = atomic_load(&groups[i]);
		if (g > 1)
			kill(-g, SIGKILL); /* stopped members too */
	}
}

static _Noreturn void ext_keeper_main(_Atomic pid_t *groups, unsigned n, int rfd, pid_t driver)
{
	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	setpgid(0, 0);
	/* nothing of the driver's but the pipe: a caller waiting for EOF on
	 * the driver's stdout must not wait for us */
	for (int fd = 0; fd < 1024; fd++)
		if (fd != rfd)
			close(fd);
	sigset_t term;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	int sfd = signalfd(-1, &term, SFD_CLOEXEC);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() == driver) { /* else the driver died before we got here */
		struct pollfd pf[2] = { { .fd = rfd, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
		char c;
		for (;;) {
			int k = poll(pf, sfd >= 0 ? 2 : 1, -1);
			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0 || pf[1].revents)
				break;
			if (pf[0].revents && read(rfd, &c, 1) <= 0)
				break; /* EOF: the last write end is gone */
		}
	}
	ext_kill_groups(groups, n);
	_exit(0);
}

int ext_keeper_start(struct ext_run *x)
{
	size_t sz = x->n * sizeof *x->groups;
	void *m = mmap(NULL, sz ? sz : 1, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	x->groups = m;
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0)
		return -1;
	pid_t driver = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		errno = e;
		return -1;
	}
	if (pid == 0)
		ext_keeper_main(x->groups, x->n, p[0], driver);
	close(p[0]);
	x->keeper = pid;
	x->keeper_fd = p[1];
	return 0;
}

void ext_keeper_stop(struct ext_run *x)
{
	if (x->groups)
		ext_kill_groups(x->groups, x->n);
	if (x->keeper > 0) {
		kill(x->keeper, SIGKILL);
		while (waitpid(x->keeper, NULL, 0) < 0 && errno == EINTR)
			;
		x->keeper = 0;
	}
	if (x->keeper_fd >= 0)
		close(x->keeper_fd);
	x->keeper_fd = -1;
	if (x->groups)
		munmap(x->groups, x->n ? x->n * sizeof *x->groups : 1);
	x->groups = NULL;
}

void ext_kill_group(struct ext_run *x, unsigned id)
{
	struct ext_slot *s = &x->slot[id];
	if (s->pgid > 1) {
		kill(-s->pgid, SIGCONT);
		kill(-s->pgid, SIGKILL);
	}
	s->pgid = 0;
	if (x->groups)
		atomic_store(&x->groups[id], 0);
}

static int ext_plain(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       strchr("-_./,:+@%=", c) != NULL;
}

int ext_needs_shell(const char *cmd)
{
	int words = 0;
	for (const char *c = cmd; *c; c++) {
		if (*c == ' ' || *c == '\t')
			continue;
		if (!ext_plain(*c))
			return 1;
		if (c == cmd || c[-1] == ' ' || c[-1] == '\t') {
			/* a leading NAME=value is an assignment: the shell's */
			if (!words && strcspn(c, "= \t") < strcspn(c, " \t"))
				return 1;
			words++;
		}
	}
	return words == 0 || words >= EXT_ARGV_MAX;
}

void ext_exec_cmd(const char *cmd, int shell)
{
	if (!shell) {
		execl(cmd, cmd, (char *)NULL);
		return;
	}
	if (ext_needs_shell(cmd)) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		return;
	}
	static char buf[4096];
	char *argv[EXT_ARGV_MAX + 1];
	int n = 0;
	if (strlen(cmd) >= sizeof buf) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		return;
	}
	strcpy(buf, cmd);
	for (char *tok = strtok(buf, " \t"); tok && n < EXT_ARGV_MAX; tok = strtok(NULL, " \t"))
		argv[n++] = tok;
	argv[n] = NULL;
	execvp(argv[0], argv);
}
