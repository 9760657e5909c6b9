/*
 * report.h - the terminal summary and the JSON report (lockstorm-report/1).
 */
#ifndef LS_REPORT_H
#define LS_REPORT_H

#include <stdio.h>

#include "checker.h"
#include "config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Full summary: config, totals, throughput, one row per invariant, verdict. */
void report_print_text(FILE *f, const struct run_config *cfg, const struct check_result *res);
/* The last line alone: "verdict: PASS" / "verdict: FAIL (exclusion, ...)". */
void report_print_verdict(FILE *f, const struct check_result *res);
/* 0 or -1 errno. */
int report_write_json(const char *path, const struct run_config *cfg, const struct check_result *res);

#ifdef __cplusplus
}
#endif
#endif
