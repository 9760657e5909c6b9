/*
 * driver.h - `lockstorm run`: set up the directories, fork and supervise the
 * workers, stop them, then check and report.
 *
 * Lifecycle of one run:
 *
 *   workdir + outdir ready -> arena -> fork N workers (own process group,
 *   PR_SET_PDEATHSIG) -> barrier -> supervise (reap, respawn, watchdog,
 *   status line) until the duration or op budget is spent -> stop flag ->
 *   grace period -> SIGKILL stragglers -> final state kept -> checker ->
 *   report -> workdir and temporary outdir removed.
 */
#ifndef LS_DRIVER_H
#define LS_DRIVER_H

#include "../check/checker.h"
#include "../core/fsutil.h"
#include "../workloads/config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Returns the process exit code: 0 pass, 1 violation, 2 bad input, 3 harness failure. */
int driver_run(struct run_config *cfg);

/* `lockstorm check OUTDIR`: the same verdict from the kept files alone. */
int driver_check(const char *outdir, int quiet, const char *json_path);
/* The same, also writing JUnit XML to junit_path when it is not NULL. */
int driver_check_junit(const char *outdir, int quiet, const char *json_path, const char *junit_path);

/* Load journals + final state of OUTDIR and run the checker (used by both). */
int driver_verdict(const struct run_config *cfg, const char *outdir, struct check_result *res,
		   unsigned *files, char *why, size_t len);
/* What a run or `lockstorm check` prints (text, or the verdict line with -q)
 * and writes (OUTDIR/report.json when write_outdir_json, --json, --junit) of
 * verdict V; LIVE is the run's own figures (NULL for check).  run/judge.c. */
struct verdict;
struct report_live;
void driver_finish_report(const struct run_config *cfg, const struct check_result *res,
			  const struct verdict *v, const struct report_live *live, const char *outdir,
			  int write_outdir_json);


#ifdef __cplusplus
}
#endif
#endif
