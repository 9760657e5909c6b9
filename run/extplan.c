/*
 * extplan.c - an external run's fault plan, split between the preload shim
 * and the driver (see extrun.h).
 */
#include "extrun.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/point.h"
#include "../faults/fault.h"
#include "../faults/preload/preload.h"
#include "../protocols/external.h"
#include "exec.h"
#include "runcfg.h"

static int ext_kind_shim(enum fault_kind k)
{
	return k == FK_ERRNO || k == FK_SHORT_WRITE || k == FK_STALL || k == FK_CRASH;
}

static int ext_kind_driver(enum fault_kind k)
{
	return k == FK_STALL || k == FK_STOP || k == FK_CRASH;
}

/* Split the plan: rules at fs/<call> go to the shim (confined to the work
 * directory unless they name a path), stall/stop/crash rules at ext points
 * to the driver; a stop rule that matches no ext point acts while the lock
 * is held (after `acquired`). */
int ext_plan(struct ext_run *x, char *why, size_t len)
{
	const struct fault_plan *plan = &x->cfg->faults;
	size_t cap = 1;
	for (unsigned i = 0; i < plan->n; i++)
		cap += strlen(plan->rule[i].spec) + strlen(x->cfg->workdir) + 16;
	char *specs = calloc(1, cap);
	if (!specs)
		return runcfg_fail(why, len, "out of memory");
	size_t used = 0;
	uint32_t driver = 0, anywhere = 0;
	for (int pt = 0; pt < PT__N; pt++) {
		x->hash[pt] = point_hash(ext_point_names[pt]);
		anywhere |= fault_point_mask(plan, ext_point_names[pt]);
	}
	for (unsigned i = 0; i < plan->n; i++) {
		const struct fault_rule *r = &plan->rule[i];
		if (ext_kind_driver(r->kind))
			driver |= 1u << i;
		if (!ext_kind_shim(r->kind))
			continue;
		int at_fs = 0;
		for (int p = 0; p < PRELOAD_NPOINTS; p++)
			at_fs |= (int)(fault_point_mask(plan, preload_points[p]) >> i & 1u);
		if (!at_fs)
			continue;
		const char *sep = strchr(r->spec, ':') ? "," : ":";
		if (r->path[0])
			used += (size_t)sprintf(specs + used, "%s\n", r->spec);
		else
			used += (size_t)sprintf(specs + used, "%s%spath=%s/*\n", r->spec, sep, x->cfg->workdir);
		if (r->kind == FK_CRASH)
			x->shim_crash = 1;
		if (r->kind == FK_STALL) {
			int64_t ms = r->for_ms >= 0 ? r->for_ms : 0;
			for (unsigned w = 0; w < x->n; w++)
				if (r->for_ms < 0 && x->slot[w].ext && (int64_t)(r->for_stale * (double)x->slot[w].stale_ms) > ms)
					ms = (int64_t)(r->for_stale * (double)x->slot[w].stale_ms);
			if (ms > x->shim_stall_ms)
				x->shim_stall_ms = ms;
		}
	}
	for (int pt = 0; pt < PT__N; pt++)
		x->mask[pt] = fault_point_mask(plan, ext_point_names[pt]) & driver;
	for (unsigned i = 0; i < plan->n; i++)
		if (plan->rule[i].kind == FK_STOP && !(anywhere >> i & 1u))
			x->mask[PT_ACQUIRED] |= 1u << i;
	if (!used) {
		free(specs);
		return 0;
	}
	x->specs = specs;
	if (exec_find_shim(x->shim, sizeof x->shim) != 0)
		return runcfg_fail(why, len, "preload library not found: %s (%s)", x->shim, strerror(errno));
	return 0;
}
