/*
 * hot.h - LS_HOT marks a function on the path every op of a real run's worker
 * takes (the seam's wrappers, the journal, the worker's loop, the arena's
 * counters).
 *
 * GCC puts such functions in .text.hot, which the linker keeps together, so
 * that path's code spans two pages instead of a dozen spread over the binary.
 * LS_HOT_DATA does the same for the variables that path reads: they go to a
 * section of their own, ls_hot, which cmake/hot.ld puts on a page of its own
 * (without that script, as in a foreign build, they still sit together).
 *
 * That matters on machines that empty the TLB at every system call (kernel
 * page-table isolation without PCID, as on the VM the benchmarks ran on):
 * each page touched between two calls costs a page walk, every time.  Only
 * writable, non-const variables may be LS_HOT_DATA (one section, one type).
 */
#ifndef LS_HOT_H
#define LS_HOT_H

#define LS_HOT __attribute__((hot))
#define LS_HOT_DATA __attribute__((section("ls_hot")))

#endif
