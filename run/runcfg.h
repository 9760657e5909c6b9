/*
 * runcfg.h - parse `lockstorm run` options into a run_config, resolve
 * protocol and workload parameters, save and load OUTDIR/run.json.
 *
 * Errors: every function returns 0, or -1 with a one-line reason in why;
 * the caller prints "lockstorm: <why>" and exits 2.
 */
#ifndef LS_RUNCFG_H
#define LS_RUNCFG_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

#include "../workloads/config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Write a one-line reason into why (printf-style); returns -1. */
int runcfg_fail(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Defaults: -p mkdir-owner -w update -n 8 -d 5s -s 1 --time-scale 1. */
void runcfg_defaults(struct run_config *cfg);
/* argv after "run" (getopt_long: --opt=VALUE and --opt VALUE alike; numbers
 * and durations through core/num.h).  Returns 0 ok, 1 when --help was
 * printed, -1 bad usage. */
int runcfg_parse(struct run_config *cfg, int argc, char **argv, char *why, size_t len);
/* Resolve --param K=V against the protocols and the workload (after parse or load). */
int runcfg_resolve(struct run_config *cfg, char *why, size_t len);
int runcfg_save(const struct run_config *cfg, const char *path);
/* Every value bounded as the options bound it (durations at most NUM_MAX_MS,
 * time_scale in (0, 1000], workers 1..CFG_MAX_WORKERS): a bad one is refused
 * with a one-line reason.  The params it reads are copies: runcfg_unload
 * frees them (a failed load has freed them already). */
int runcfg_load(struct run_config *cfg, const char *path, char *why, size_t len);
void runcfg_unload(struct run_config *cfg);
/* Per-worker stale age and wait budget (scaled), for the checker and the watchdog. */
int64_t runcfg_stale_ms(const struct run_config *cfg, unsigned worker);
int64_t runcfg_budget_ms(const struct run_config *cfg, unsigned worker);
/* Is NAME a point some protocol of this run, its workload or the fs points define (glob allowed)? */
int runcfg_point_known(const struct run_config *cfg, const char *glob);
/* -p A,B and -w NAME as `run` takes them (explore shares them). */
int runcfg_set_protocols(struct run_config *cfg, const char *list, char *why, size_t len);
int runcfg_set_workload(struct run_config *cfg, const char *name, char *why, size_t len);
/* `lockstorm run --help`: the protocols, workloads and fault kinds listed
 * from their registries. */
void runcfg_usage(FILE *f);
/* The run options as getopt_long takes them, shared by compare and scenario
 * files (cli/); runcfg_shortopts has no leading ':'. */
extern const struct option runcfg_longopts[];
extern const char runcfg_shortopts[];
/* The entry of runcfg_longopts whose val is VAL ('p', or a long-only one), or NULL. */
const struct option *runcfg_option(int val);

#ifdef __cplusplus
}
#endif
#endif
