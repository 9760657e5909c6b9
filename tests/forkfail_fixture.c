/*
 * forkfail_fixture.c - an LD_PRELOAD fixture for integ_respawn.cc: in the
 * process that first calls fork(), every fork() after the first
 * LS_FORKFAIL_AFTER fails with EAGAIN (as at the process limit, which root
 * does not meet: RLIMIT_NPROC does not bind it).  Children fork as usual.
 * Deterministic: it counts calls, it does not time them.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

pid_t fork(void)
{
	static pid_t (*real_fork)(void);
	static pid_t owner;
	static long calls;
	if (!real_fork)
		real_fork = (pid_t(*)(void))dlsym(RTLD_NEXT, "fork");
	const char *after = getenv("LS_FORKFAIL_AFTER");
	if (after && *after) {
		if (!owner)
			owner = getpid();
		if (owner == getpid() && calls++ >= atol(after)) {
			errno = EAGAIN;
			return -1;
		}
	}
	return real_fork();
}
