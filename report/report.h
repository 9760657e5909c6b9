/*
 * report.h - the terminal summary and the JSON report (lockstorm-report/1).
 */
#ifndef LS_REPORT_H
#define LS_REPORT_H

#include <stdio.h>

#include "../faults/fsx.h"
#include "../check/checker.h"
#include "../check/verdict.h"
#include "../workloads/config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What only a live run knows (not re-derivable by `check`): NULL when absent. */
struct report_live {
	uint64_t fs_calls[FSX_OP_COUNT]; /* every call through the seam, all workers */
	uint64_t online_breaches;        /* double holders seen by the arena's counter the instant they happened */
	unsigned first_a, first_b;       /* the first such pair of workers */
	unsigned cut;                    /* stalls and stops longer than the run, cut at its end */
};

/* Full summary: config, totals, throughput, one row per invariant, and V's
 * line last (verdict_print; alone, it is what --quiet prints). */
void report_print_text(FILE *f, const struct run_config *cfg, const struct check_result *res,
		       const struct verdict *v, const struct report_live *live);
/* The report with V's JSON value as `verdict`.  0 or -1 errno. */
int report_write_json(const char *path, const struct run_config *cfg, const struct check_result *res,
		      const struct verdict *v, const struct report_live *live);

#ifdef __cplusplus
}
#endif
#endif
