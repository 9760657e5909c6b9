/*
 * scenario_run.h - `lockstorm scenario list | show | run`, and the report a
 * revision's run leaves (read by `scenario new` too).
 */
#ifndef LS_SCENARIO_RUN_H
#define LS_SCENARIO_RUN_H

#include "../check/checker.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What one run's report.json says. */
struct sc_observed {
	int ran;               /* a report was read */
	int status;            /* the child's exit code (128+signal) */
	int pass;
	unsigned viol;         /* violated invariants */
	char example[INV__COUNT][320];
	double ops_per_s;
	long long attempts, acquired, busy, errors;
	char err[512];         /* why it did not run */
};

/* 0 with o filled, -1 with o->err set. */
int sc_read_report(const char *path, struct sc_observed *o);
/* "PASS", "FAIL (inv, ..)" or "no verdict". */
void sc_got_text(const struct sc_observed *o, char *out, size_t len);

/* argv after "scenario" (argv[0] is the verb).  Exit codes as scenario_main's. */
int sc_list(int argc, char **argv);
int sc_show(int argc, char **argv);
int sc_run(int argc, char **argv);
/* getopt_long's "unknown option" / "needs a value" for `scenario VERB`, as one line; 2. */
int sc_bad_option(const char *verb, int c, char **argv);

#ifdef __cplusplus
}
#endif
#endif
