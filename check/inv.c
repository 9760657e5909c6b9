/*
 * inv.c - the invariants' names (see inv.h).
 */
#include "inv.h"

#include <stddef.h>

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
};

const char *check_inv_name(enum inv_id id)
{
	if ((int)id < 0 || id >= INV__COUNT)
		return "unknown";
	return check_inv_names[id];
}
