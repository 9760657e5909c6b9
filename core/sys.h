/*
 * sys.h - the system calls of every op of a run, made by lockstorm itself.
 *
 * libc's open, flock and close reach the kernel through a PLT slot (a page
 * of lockstorm's GOT), their own code and a check of libc's data (is the
 * process single-threaded, may it be cancelled here): three pages an op
 * reads after the call before, on a machine that empties the TLB at every
 * system call (core/hot.h).  These make the same calls with the same
 * arguments and the same result and errno, from lockstorm's own code.  On
 * other than x86-64 they are libc's.
 */
#ifndef LS_SYS_H
#define LS_SYS_H

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__) && defined(__linux__)
static inline long ls_syscall4(long n, long a, long b, long c, long d)
{
	long r;
	register long r10 __asm__("r10") = d;
	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
	return r;
}

static inline int ls_result(long r)
{
	if (__builtin_expect(r < 0 && r > -4096, 0)) {
		errno = (int)-r;
		return -1;
	}
	return (int)r;
}

static inline int ls_open(const char *path, int flags, mode_t mode)
{
	return ls_result(ls_syscall4(SYS_openat, AT_FDCWD, (long)path, flags, mode));
}

static inline int ls_flock(int fd, int op)
{
	return ls_result(ls_syscall4(SYS_flock, fd, op, 0, 0));
}

static inline int ls_close(int fd)
{
	return ls_result(ls_syscall4(SYS_close, fd, 0, 0, 0));
}
#else
#define ls_open open
#define ls_flock flock
#define ls_close close
#endif

#endif
