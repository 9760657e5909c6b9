/*
 * config.h - one run's configuration, as parsed from the command line and
 * saved to OUTDIR/run.json so `lockstorm check` can re-derive the verdict.
 */
#ifndef LS_CONFIG_H
#define LS_CONFIG_H

#include <limits.h>
#include <stdint.h>

#include "../faults/fault.h"
#include "../protocols/lock.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CFG_MAX_PROTOS 8
#define CFG_MAX_KV 64
#define CFG_MAX_WORKERS 4096
#define CFG_MAX_HOSTS 16

struct workload_ops;

struct run_config {
	const struct lock_ops *proto[CFG_MAX_PROTOS]; /* workers take them in turn */
	unsigned nproto;
	const struct workload_ops *workload;
	unsigned workers;
	int64_t duration_ms;    /* 0 when --ops is used */
	uint64_t ops;           /* 0: no op limit */
	uint64_t seed;
	double time_scale;
	const char *kv[CFG_MAX_KV]; /* --param K=V, as given */
	unsigned nkv;
	/* resolved per protocol slot: */
	int64_t pvals[CFG_MAX_PROTOS][LS_MAX_PARAMS];
	int64_t wvals[LS_MAX_PARAMS];   /* slot 0's (the workload's setup takes these) */
	/* A --param K=A,B list alternates across workers as -p A,B does: the run has
	 * lcm(protocols, list lengths) slots (proto[] repeats its list to fill them)
	 * and worker w takes slot w % nproto, its values and its label. */
	int64_t wvals_slot[CFG_MAX_PROTOS][LS_MAX_PARAMS];
	char slot_label[CFG_MAX_PROTOS][96]; /* "flock rev=legacy": the slot's revision */
	unsigned nproto_given;  /* -p's list before the slots repeat it (0: nproto) */
	unsigned instances;     /* --param instances=N: workers kN..kN+N-1 are N instances of their
	                         * protocol module in one process (one pid, the first's); 0 or 1: none */
	struct fault_plan faults;
	char workdir[PATH_MAX];
	char outdir[PATH_MAX];
	char json_path[PATH_MAX];
	char junit_path[PATH_MAX]; /* --junit FILE: JUnit XML, one testcase per invariant */
	char exec_cmd[4096];    /* --exec CMD: the adapter of protocol "exec" (/bin/sh -c CMD) */
	int respawn;
	int keep;
	int quiet;
	int verbose;
	int trace;
	int64_t triage_ms;      /* --triage: the triage budget when the run fails; 0 off */
	int workdir_ours;       /* we made it (mkdtemp): remove it all at the end */
	int outdir_temp;        /* no -o: journals go to a temp dir removed at the end */
	unsigned hosts;         /* --hosts N: namespaces the workers are split over (run/hosts.h); 0/1 none */
	char netfs[128];        /* --netfs SPEC as given (run/netfs.h), "" none */
};

/* The protocol slot worker w runs in a mixed fleet. */
static inline unsigned cfg_proto_slot(const struct run_config *c, unsigned w)
{
	return w % c->nproto;
}

/* The host worker w runs on under --hosts: contiguous blocks, so a mixed
 * fleet's revisions are on every host (0 without hosts). */
static inline unsigned cfg_host_of(const struct run_config *c, unsigned w)
{
	return c->hosts > 1 && c->workers ? (unsigned)((uint64_t)w * c->hosts / c->workers) : 0;
}

/* The worker whose pid worker w reports: the first instance of its process. */
static inline unsigned cfg_pid_worker(const struct run_config *c, unsigned w)
{
	return c->instances > 1 ? w - w % c->instances : w;
}

/* Worker w's workload params (its slot's). */
static inline const int64_t *cfg_wparam(const struct run_config *c, unsigned w)
{
	return c->wvals_slot[cfg_proto_slot(c, w)];
}

/* workloads/variants.c: the slots of --param lists.  cfg_slots_expand repeats
 * proto[] to lcm(protocols, list lengths) slots (-1 with why above
 * CFG_MAX_PROTOS) and writes each slot's label; cfg_slot_kv gives slot's
 * "K=V" list (each list picked) in store, pointed to by out. */
int cfg_slots_expand(struct run_config *c, char *why, size_t len);
int cfg_instances(struct run_config *c, unsigned char *used, char *why, size_t len);
int cfg_slot_kv(const struct run_config *c, unsigned slot, char store[][256], const char **out, char *why,
		size_t len);
/* Worker w's label ("flock rev=legacy", or the protocol's name when no list). */
static inline const char *cfg_slot_label(const struct run_config *c, unsigned w)
{
	unsigned s = cfg_proto_slot(c, w);
	return c->slot_label[s][0] ? c->slot_label[s] : c->proto[s]->name;
}

#ifdef __cplusplus
}
#endif
#endif
