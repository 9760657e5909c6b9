/*
 * report.h - the terminal summary and the JSON report (lockstorm-report/1).
 */
#ifndef LS_REPORT_H
#define LS_REPORT_H

#include <stdio.h>

#include "../faults/fsx.h"
#include "../check/checker.h"
#include "../workloads/config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What only a live run knows (not re-derivable by `check`): NULL when absent. */
struct report_live {
	uint64_t fs_calls[FSX_OP_COUNT]; /* every call through the seam, all workers */
	uint64_t online_breaches;        /* double holders seen by the arena's counter the instant they happened */
	unsigned first_a, first_b;       /* the first such pair of workers */
};

/* Full summary: config, totals, throughput, one row per invariant, verdict. */
void report_print_text(FILE *f, const struct run_config *cfg, const struct check_result *res,
		       const struct report_live *live);
/* The last line alone: "verdict: PASS" / "verdict: FAIL (exclusion, ...)". */
void report_print_verdict(FILE *f, const struct check_result *res);
/* 0 or -1 errno. */
int report_write_json(const char *path, const struct run_config *cfg, const struct check_result *res,
		      const struct report_live *live);

#ifdef __cplusplus
}
#endif
#endif
