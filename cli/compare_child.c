/*
 * compare_child.c - one `lockstorm run` of a compare (see compare_child.h).
 */
#include "compare_child.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int compare_child_run(const char *exe, const char *plist, char *const *pass, unsigned npass, uint64_t seed,
		      const char *json, const char *outdir, volatile sig_atomic_t *interrupted)
{
	char seedbuf[32];
	snprintf(seedbuf, sizeof seedbuf, "%llu", (unsigned long long)seed);
	char *av[COMPARE_MAX_PASS + 16];
	if (npass > COMPARE_MAX_PASS)
		npass = COMPARE_MAX_PASS; /* compare's parser refuses more */
	int n = 0;
	av[n++] = (char *)exe;
	av[n++] = "run";
	av[n++] = "-p";
	av[n++] = (char *)plist;
	for (unsigned k = 0; k < npass; k++)
		av[n++] = pass[k];
	av[n++] = "-s";
	av[n++] = seedbuf;
	av[n++] = "-q";
	av[n++] = "--json";
	av[n++] = (char *)json;
	av[n++] = "-o";
	av[n++] = (char *)outdir;
	av[n] = NULL;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* the run dies with us (SIGTERM: it stops its workers cleanly), and
		 * sits in a group of its own, so a terminal's ^C reaches it once:
		 * from us, below */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		setpgid(0, 0);
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null >= 0)
			dup2(null, STDOUT_FILENO); /* the verdict line: the table says it */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execv(exe, av);
		fprintf(stderr, "lockstorm: compare: cannot run %s: %s\n", exe, strerror(errno));
		_exit(3);
	}
	setpgid(pid, pid);
	int status, told = 0;
	if (*interrupted) { /* it came between our check and the fork */
		kill(pid, SIGTERM);
		told = 1;
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -1;
		if (*interrupted && !told) { /* the run stops and reports INCOMPLETE */
			kill(pid, SIGTERM);
			told = 1;
		}
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

