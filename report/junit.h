/*
 * junit.h - JUnit XML for CI systems (`--junit FILE` on run, check, compare).
 *
 * Shape (the common JUnit schema that Jenkins, GitLab, GitHub reporters and
 * pytest share):
 *
 *   <testsuites name="lockstorm" tests= failures= errors= skipped= time=>
 *     <testsuite name="lockstorm run PROTOCOLS/WORKLOAD" tests= failures= errors= skipped= time=
 *                timestamp= hostname=>
 *       <properties><property name="seed" value="1"/>...</properties>
 *       <testcase classname="lockstorm.PROTOCOLS.WORKLOAD" name="INVARIANT" time="0">
 *         <failure type="INVARIANT" message="N violations: first example">every example</failure>
 *       </testcase>
 *       <testcase ... name="journal-seq"><skipped message="..."/></testcase>   (n/a invariants)
 *     </testsuite>
 *   </testsuites>
 *
 * One testcase per invariant; compare writes one testsuite per protocol
 * revision.  Text is escaped for XML 1.0 (markup characters, control
 * characters and invalid UTF-8 are replaced).  Each writer returns 0, or -1
 * with errno.
 */
#ifndef LS_JUNIT_H
#define LS_JUNIT_H

#include <jansson.h>
#include <stdio.h>

#include "../check/checker.h"
#include "../check/verdict.h"
#include "../workloads/config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* run / check: one suite for the run's verdict V (its JSON value is the
 * suite's `verdict` property). */
int junit_write_result(const char *path, const struct run_config *cfg, const struct check_result *res,
		       const struct verdict *v);

/* compare: one suite per revision.  report[i] is a lockstorm-report/1
 * document summing that revision's runs (violations added up, examples of
 * its runs); runs[i] / failed[i] / harness_errors[i] say how many runs it
 * had, how many failed, how many could not be judged. */
int junit_write_reports(const char *path, size_t n, const char *const *names, json_t *const *report,
			const unsigned *runs, const unsigned *failed, const unsigned *harness_errors);

/* XML 1.0 text or attribute value of S. */
void junit_escape(FILE *f, const char *s);

/* A document built case by case, for commands whose testcases are not one
 * run's invariants: `scenario run` (a suite per scenario, a case per
 * revision) and `explore` (a case per invariant).  Calling sequence:
 *
 *   struct junit_doc *d = junit_doc_open();          NULL: out of memory
 *   junit_doc_suite(d, "lockstorm scenario NAME");    then its cases:
 *   junit_doc_case(d, CLASSNAME, NAME, SECONDS, JUNIT_FAILURE, MESSAGE, TEXT);
 *   junit_doc_property(d, "seed", "1");              (of the current suite)
 *   junit_doc_write(d, PATH);                        0, or -1 with errno
 *   junit_doc_free(d);
 *
 * Counts are summed as the cases come; the root carries tests, failures,
 * errors and time only (junit-10.xsd).  MESSAGE and TEXT may be NULL. */
enum junit_outcome { JUNIT_PASS, JUNIT_FAILURE, JUNIT_ERROR, JUNIT_SKIPPED };
struct junit_doc;
struct junit_doc *junit_doc_open(void);
void junit_doc_suite(struct junit_doc *d, const char *name);
void junit_doc_property(struct junit_doc *d, const char *name, const char *value);
void junit_doc_case(struct junit_doc *d, const char *classname, const char *name, double seconds,
		    enum junit_outcome outcome, const char *message, const char *text);
int junit_doc_write(struct junit_doc *d, const char *path);
void junit_doc_free(struct junit_doc *d);

#ifdef __cplusplus
}
#endif
#endif
