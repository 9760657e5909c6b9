/*
 * registry.c - every lock protocol revision lockstorm knows, by name.
 *
 * Adding a protocol: its file in protocols/, one line here, one line in
 * CMakeLists.txt.  The conformance test in tests/unit_protocols.cc loops over
 * this array, so a new entry is checked without further work.
 */
#include <stdio.h>
#include <string.h>

#include "external.h"
#include "lock.h"

const struct lock_ops *const lock_registry[] = {
	&mkdir_legacy_ops, /* doflow 2.0.0-beta.5 */
	&mkdir_owner_ops,  /* doflow 2.0.0 */
	&lockfile_legacy_ops,   /* volter 3.0.155 */
	&lockfile_recorded_ops, /* volter 3.0.157 */
	&pidlock_ops,      /* quiver 1.0.0 source-lock */
	&flock_ops,        /* control: a kernel lock, never caught */
	&none_ops,         /* busted control: takes nothing, always caught */
	NULL,
};

/* NULL when unknown: the caller prints lock_names() in its message.
 * External adapters ("ext:NAME", "exec") are found too. */
const struct lock_ops *lock_find(const char *name)
{
	for (int i = 0; lock_registry[i]; i++)
		if (strcmp(lock_registry[i]->name, name) == 0)
			return lock_registry[i];
	return ext_find(name);
}

void lock_names(char *buf, size_t len)
{
	size_t used = 0;

	if (!len)
		return;
	buf[0] = '\0';
	for (int i = 0; lock_registry[i]; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
				 lock_registry[i]->name);
		if (n < 0 || (size_t)n >= len - used)
			return; /* truncated: snprintf has NUL-terminated it */
		used += (size_t)n;
	}
}
