/*
 * vdso.h - CLOCK_MONOTONIC read through the vDSO's own clock_gettime.
 *
 * libc's clock_gettime reaches the vDSO through a pointer in ld.so's data:
 * two more pages (libc's code, ld.so's data) for the first clock read after
 * every system call, on a machine that empties the TLB at each (core/hot.h).
 * The journal reads the clock for every record, so it calls the vDSO's
 * function itself.  Same clock, same values; where no vDSO is found (valgrind,
 * an odd platform) it is libc's clock_gettime.  Neither touches errno.
 */
#ifndef LS_VDSO_H
#define LS_VDSO_H

#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Resolves itself on the first call (a fork inherits the answer). */
extern int (*vdso_clock_gettime)(clockid_t clock, struct timespec *ts);

#ifdef __cplusplus
}
#endif
#endif
