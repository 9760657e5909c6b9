/* registry.c - every workload; a miss lists them all. */
#include <stdio.h>
#include <string.h>

#include "../faults/fsx.h"
#include "../protocols/external.h"
#include "workload.h"

const struct workload_ops *const workload_registry[] = {
	&update_workload,
	&hold_workload,
	&append_workload,
	&generation_workload,
	NULL,
};

static const char *point_in(const char *const *points, uint64_t hash)
{
	for (; points && *points; points++)
		if (point_hash(*points) == hash)
			return *points;
	return NULL;
}

const char *point_name(uint64_t hash)
{
	const char *name;
	for (int op = 0; op < FSX_OP_COUNT; op++)
		if (point_hash(fsx_op_point((enum fsx_op)op)) == hash)
			return fsx_op_point((enum fsx_op)op);
	for (const struct lock_ops *const *o = lock_registry; *o; o++)
		if ((name = point_in((*o)->points, hash)))
			return name;
	for (const struct workload_ops *const *w = workload_registry; *w; w++)
		if ((name = point_in((*w)->points, hash)))
			return name;
	return point_in(ext_point_names, hash);
}

const struct workload_ops *workload_find(const char *name)
{
	for (const struct workload_ops *const *w = workload_registry; *w; w++)
		if (!strcmp((*w)->name, name))
			return *w;
	return NULL;
}

void workload_names(char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (const struct workload_ops *const *w = workload_registry; *w; w++) {
		int n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", (*w)->name);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
}
