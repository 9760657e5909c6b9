/*
 * coverage.c - coverage: ordered step pairs across workers, protocol points hit (see xint.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../faults/fsx.h"
#include "../workloads/workload.h"
#include "../core/arena.h"
#include "../check/checker.h"
#include "../workloads/config.h"
#include "../run/driver.h"
#include "../core/journal.h"
#include "../core/prng.h"
#include "../run/runcfg.h"
#include "../core/sched.h"
#include "xint.h"

/* Coverage: ordered pairs of consecutive steps by different workers, each
 * step named by its call and the last protocol point before it. */
void cover(struct explorer *ex, const struct xexec *x)
{
	uint64_t prev = 0;
	int prev_w = -1;
	for (size_t k = 0; k < x->nstep; k++) {
		const struct xstep *st = &x->step[k];
		if (st->kind != XK_RUN)
			continue;
		uint64_t label = (st->point ? point_hash(st->point) : 0) * 31 + st->fsop + 1;
		if (prev_w >= 0 && prev_w != st->w) {
			uint64_t h = (prev * 0x100000001b3ULL) ^ label;
			h |= 1;
			size_t i = h % X_PAIRS;
			for (size_t probe = 0; probe < X_PAIRS; probe++, i = (i + 1) % X_PAIRS) {
				if (ex->pairs[i] == h)
					break;
				if (!ex->pairs[i]) {
					ex->pairs[i] = h;
					ex->npairs++;
					break;
				}
			}
		}
		prev = label;
		prev_w = st->w;
	}
}

static int point_hit(const struct explorer *ex, const char *name)
{
	uint64_t h = point_hash(name);
	size_t i = h % SCHED_POINTS;
	for (size_t k = 0; k < SCHED_POINTS; k++, i = (i + 1) % SCHED_POINTS) {
		if (ex->s->points[i] == h)
			return 1;
		if (!ex->s->points[i])
			return 0;
	}
	return 0;
}

/* The points this run's protocols and workload declare: hit and missed. */
void coverage_lists(const struct explorer *ex, json_t *hit, json_t *missed, unsigned *nhit, unsigned *nall)
{
	const struct run_config *r = &ex->cfg->run;
	*nhit = *nall = 0;
	for (unsigned i = 0; i <= r->nproto; i++) {
		const char *const *p = i < r->nproto ? r->proto[i]->points : r->workload->points;
		int dup = 0;
		for (unsigned j = 0; j < i && i < r->nproto; j++)
			dup |= r->proto[j] == r->proto[i];
		for (; p && *p && !dup; p++) {
			int h = point_hit(ex, *p);
			(*nall)++;
			*nhit += (unsigned)h;
			json_array_append_new(h ? hit : missed, json_string(*p));
		}
	}
}

