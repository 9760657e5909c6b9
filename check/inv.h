/*
 * inv.h - the invariants the checker judges (DESIGN.md "Invariants"): their
 * ids, in the order every table and report lists them, and their names.
 */
#ifndef LS_INV_H
#define LS_INV_H

#ifdef __cplusplus
extern "C" {
#endif

enum inv_id {
	INV_EXCLUSION,
	INV_ZOMBIE_WRITE,
	INV_NO_LOST_WRITES,
	INV_SERIAL_UPDATES,
	INV_STATE_INTACT,
	INV_OWN_RELEASE,
	INV_LIVENESS,
	INV_JOURNAL_SEQ,
	INV_STALE_READ,
	INV_NO_PHANTOM_RESULT,
	INV_NO_ORPHAN_LOCK,
	INV_NO_LIVELOCK,
	INV__COUNT
};

/* "exclusion", ...; "unknown" for an id out of range. */
const char *check_inv_name(enum inv_id id);
/* One line: what it means that ID holds; "" out of range. */
const char *check_inv_means(enum inv_id id);
/* The workload flags (WL_CHECK_*, workloads/workload.h) a workload must have
 * for ID to be judged on it; 0: every workload exercises it. */
unsigned check_inv_needs(enum inv_id id);

#ifdef __cplusplus
}
#endif
#endif
