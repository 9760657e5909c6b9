/*
 * inv.c - the invariants' names (see inv.h).
 */
#include "inv.h"

#include <stddef.h>

#include "../workloads/workload.h"

static const char *const check_inv_names[INV__COUNT] = {
	[INV_EXCLUSION] = "exclusion",
	[INV_ZOMBIE_WRITE] = "zombie-write",
	[INV_NO_LOST_WRITES] = "no-lost-writes",
	[INV_SERIAL_UPDATES] = "serial-updates",
	[INV_STATE_INTACT] = "state-intact",
	[INV_OWN_RELEASE] = "own-release",
	[INV_LIVENESS] = "liveness",
	[INV_JOURNAL_SEQ] = "journal-seq",
	[INV_STALE_READ] = "stale-read",
	[INV_NO_PHANTOM_RESULT] = "no-phantom-result",
	[INV_NO_ORPHAN_LOCK] = "no-orphan-lock",
	[INV_NO_LIVELOCK] = "no-livelock",
	[INV_NO_ESCAPED_ERROR] = "no-escaped-error",
	[INV_STRICT_LEASE] = "strict-lease",
};

const char *check_inv_name(enum inv_id id)
{
	if ((int)id < 0 || id >= INV__COUNT)
		return "unknown";
	return check_inv_names[id];
}

/* What each invariant means (`lockstorm list invariants`), and the workload
 * flags (WL_CHECK_*) a workload needs for it to be judged; 0: every one. */
static const struct {
	const char *means;
	unsigned needs;
} check_inv_info[INV__COUNT] = {
	[INV_EXCLUSION] = { "no two workers hold the lock at once (acquired to release-begin), nor any other "
			    "mutex the protocol declares (lockfile's .recovery: mutex-take to mutex-drop), "
			    "unless the earlier one had held it past its stale age (a legal reclaim)", 0 },
	[INV_ZOMBIE_WRITE] = { "no worker begins a commit after another took its lock over",
			       WL_CHECK_STATE | WL_CHECK_STALE_READ },
	[INV_NO_LOST_WRITES] = { "every commit a worker saw succeed is in the final state", WL_CHECK_STATE },
	[INV_SERIAL_UPDATES] = { "every commit writes its read's revision + 1, and no two share a revision",
				 WL_CHECK_STATE },
	[INV_STATE_INTACT] = { "every read and the final state parse", WL_CHECK_STATE },
	[INV_OWN_RELEASE] = { "no release or reclaim removes a lock object another worker still holds, unless "
			      "it had held it past the stale age", 0 },
	[INV_LIVENESS] = { "every attempt ends within its bound; nobody gives up waiting on a lock nobody "
			   "holds or occupies (a holder inside its release still does), on a dead holder's lock "
			   "once the protocol promised to reclaim it, or on itself; no stretch without a holder "
			   "outlasts stale age + wait while attempts end busy", 0 },
	[INV_JOURNAL_SEQ] = { "appended sequence numbers are unique and gap-free; a trusted snapshot matches "
			      "the journal", WL_CHECK_SEQ },
	[INV_STALE_READ] = { "no read returns a version older than one whose write had finished before the "
			     "read began", WL_CHECK_STALE_READ },
	[INV_NO_PHANTOM_RESULT] = { "no op that reported its write failed has that write in the final state "
				    "(unless a later unreported write explains it); success without the write is "
				    "no-lost-writes", WL_CHECK_STATE },
	[INV_NO_ORPHAN_LOCK] = { "no lock object outlives every process that made it (died, or its release "
				 "returned) by more than the stale age + jitter while a waiter, nobody else "
				 "occupying the lock, waits its whole budget on it and gives up", 0 },
	[INV_NO_LIVELOCK] = { "no worker takes more than 200 steps inside one op without a sleep or a change "
			      "of the lock directory (explore's steps; a schedule cut at --max-steps too); on a "
			      "real run, no 10000 file-system calls inside one op without a sleep while no lock "
			      "object is made or removed (built-in protocols)", 0 },
	[INV_NO_ESCAPED_ERROR] = { "no error the protocol claims to absorb (its errno at its call, `list "
				   "protocols`) reaches the caller; a protocol that claims busy means a live "
				   "holder never gives up while nobody held, occupied or made a lock object", 0 },
	[INV_STRICT_LEASE] = { "(--strict only) no live holder's lock is taken over at all, even past the "
			       "stale age, unless its protocol has a held() check or a heartbeat", 0 },
};

const char *check_inv_means(enum inv_id id)
{
	if ((int)id < 0 || id >= INV__COUNT)
		return "";
	return check_inv_info[id].means;
}

unsigned check_inv_needs(enum inv_id id)
{
	if ((int)id < 0 || id >= INV__COUNT)
		return 0;
	return check_inv_info[id].needs;
}
