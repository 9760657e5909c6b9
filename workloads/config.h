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
	int64_t wvals[LS_MAX_PARAMS];
	int64_t pvals_us[CFG_MAX_PROTOS][LS_MAX_PARAMS]; /* the same, PU_MS in exact us (lk->us) */
	int64_t wvals_us[LS_MAX_PARAMS];
	struct fault_plan faults;
	char workdir[PATH_MAX];
	char outdir[PATH_MAX];
	char json_path[PATH_MAX];
	char junit_path[PATH_MAX]; /* --junit FILE: JUnit XML, one testcase per invariant */
	char exec_cmd[4096];    /* --exec CMD: the adapter of protocol "exec" (/bin/sh -c CMD) */
	int respawn;
	int strict;             /* --strict: judge strict-lease too */
	int keep;
	int quiet;
	int verbose;
	int trace;
	int64_t triage_ms;      /* --triage: the triage budget when the run fails; 0 off */
	int workdir_ours;       /* we made it (mkdtemp): remove it all at the end */
	int outdir_temp;        /* no -o: journals go to a temp dir removed at the end */
};

/* The protocol slot worker w runs in a mixed fleet. */
static inline unsigned cfg_proto_slot(const struct run_config *c, unsigned w)
{
	return w % c->nproto;
}

#ifdef __cplusplus
}
#endif
#endif
