/*
 * leftover.c - kill and reap every child the driver still has (see leftover.h).
 */
#include "leftover.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Our children, by their parent field in /proc/PID/stat (the children
 * file needs CONFIG_PROC_CHILDREN, which not every kernel has). */
static unsigned children_of_self(pid_t *out, unsigned max)
{
	DIR *dir = opendir("/proc");
	unsigned n = 0;
	struct dirent *de;
	while (dir && n < max && (de = readdir(dir))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		char p[64], buf[512];
		snprintf(p, sizeof p, "/proc/%s/stat", de->d_name);
		int fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t k = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (k <= 0)
			continue;
		buf[k] = '\0';
		char *end = strrchr(buf, ')'); /* after the command name, which may hold anything */
		int ppid = 0;
		if (end && sscanf(end + 1, " %*c %d", &ppid) == 1 && ppid == (int)getpid())
			out[n++] = (pid_t)atoi(de->d_name);
	}
	if (dir)
		closedir(dir);
	return n;
}

void leftover_kill_all(void)
{
	for (int round = 0; round < 64; round++) { /* a killed one's own orphans come to us next */
		pid_t kids[256];
		unsigned nk = children_of_self(kids, 256);
		for (unsigned i = 0; i < nk; i++) {
			pid_t g = getpgid(kids[i]);
			if (g > 1 && g != getpgrp())
				kill(-g, SIGKILL);
			kill(kids[i], SIGKILL);
		}
		for (unsigned i = 0; i < nk; i++)
			while (waitpid(kids[i], NULL, 0) < 0 && errno == EINTR)
				;
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (!nk)
			return;
	}
}

