/* registry.c - every workload; a miss lists them all. */
#include <stdio.h>
#include <string.h>

#include "workload.h"

const struct workload_ops *const workload_registry[] = {
	&update_workload,
	&hold_workload,
	NULL,
};

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
