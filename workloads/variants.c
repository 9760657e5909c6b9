/*
 * variants.c - --param lists: a value list (--param rev=legacy,append)
 * alternates across workers as `-p A,B` does (workloads/config.h).
 *
 * The run gets S = lcm(protocols given, every list's length) slots; proto[]
 * repeats the protocols to S entries, so worker w runs slot w % S: protocol
 * w % P, and value w % L of each list.  Everything that already works by
 * slot (params, stale ages, the checker's figures by revision) then works by
 * revision too.  Expanding an expanded config (run.json read back) gives the
 * same slots.
 */
#include <stdio.h>
#include <string.h>

#include "config.h"

int cfg_slots_expand(struct run_config *c, char *why, size_t len)
{
	unsigned p = c->nproto_given ? c->nproto_given : c->nproto;
	unsigned v = param_variants(c->kv, c->nkv);
	/* a list read back already repeated (run.json, a counterexample): its period */
	for (unsigned q = 1; !c->nproto_given && v > 1 && q < p; q++) {
		int periodic = p % q == 0 && param_lcm(q, v) == p;
		for (unsigned i = q; periodic && i < p; i++)
			periodic = c->proto[i] == c->proto[i % q];
		if (periodic) {
			p = q;
			break;
		}
	}
	unsigned s = v ? param_lcm(p, v) : 0;
	if (!s || s > CFG_MAX_PROTOS) {
		snprintf(why, len, "--param lists and -p need lcm(protocols, list lengths) <= %d slots of workers",
			 CFG_MAX_PROTOS);
		return -1;
	}
	c->nproto_given = p;
	for (unsigned i = p; i < s; i++)
		c->proto[i] = c->proto[i % p];
	c->nproto = s;
	for (unsigned i = 0; i < s; i++) {
		char *l = c->slot_label[i];
		size_t used = (size_t)snprintf(l, sizeof c->slot_label[i], "%s", c->proto[i]->name);
		for (unsigned j = 0; j < c->nkv; j++) {
			char kv[256], msg[160];
			if (param_list_len(c->kv[j]) < 2 || !strncmp(c->kv[j], "instances=", 10))
				continue;
			if (param_kv_pick(c->kv[j], i, kv, sizeof kv, msg, sizeof msg) != 0) {
				snprintf(why, len, "%s", msg);
				return -1;
			}
			if (used < sizeof c->slot_label[i])
				used += (size_t)snprintf(l + used, sizeof c->slot_label[i] - used, " %s", kv);
		}
	}
	return 0;
}

/* --param instances=N (1..8): for protocols whose state is per module instance. */
int cfg_instances(struct run_config *c, unsigned char *used, char *why, size_t len)
{
	c->instances = 1;
	for (unsigned j = 0; j < c->nkv; j++) {
		if (strncmp(c->kv[j], "instances=", 10))
			continue;
		const char *v = c->kv[j] + 10;
		if (strlen(v) != 1 || *v < '1' || *v > '8') {
			snprintf(why, len, "--param %s: want instances=N, N from 1 to 8 module instances per process", c->kv[j]);
			return -1;
		}
		c->instances = (unsigned)(*v - '0');
		used[j] = 1;
	}
	for (unsigned i = 0; c->instances > 1 && i < c->nproto; i++)
		if (!(c->proto[i]->flags & LOCK_PER_INSTANCE)) {
			snprintf(why, len, "--param instances=%u: %s keeps no state per module instance (instances are "
				 "for lockfile-recorded and lockfile-legacy)", c->instances, c->proto[i]->name);
			return -1;
		}
	return 0;
}

int cfg_slot_kv(const struct run_config *c, unsigned slot, char store[][256], const char **out, char *why,
		size_t len)
{
	for (unsigned j = 0; j < c->nkv; j++) {
		if (param_list_len(c->kv[j]) < 2) {
			out[j] = c->kv[j];
			continue;
		}
		if (param_kv_pick(c->kv[j], slot, store[j], 256, why, len) != 0)
			return -1;
		out[j] = store[j];
	}
	return 0;
}
