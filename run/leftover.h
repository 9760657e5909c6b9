/*
 * leftover.h - what is left of a run's processes at its end.
 *
 * The driver is a subreaper (PR_SET_CHILD_SUBREAPER): an adapter's
 * background job, orphaned, becomes its child.  leftover_kill_all SIGKILLs
 * every child it still has, and the process group of each (unless that is
 * the driver's own: the caller's), then reaps them, round after round while
 * the killed ones' orphans come to it.  Signalling only unreaped children
 * and their groups is safe: an unreaped child holds its pid and its group's
 * number, so neither can name a stranger.
 */
#ifndef LS_LEFTOVER_H
#define LS_LEFTOVER_H

#ifdef __cplusplus
extern "C" {
#endif

void leftover_kill_all(void);

#ifdef __cplusplus
}
#endif
#endif
