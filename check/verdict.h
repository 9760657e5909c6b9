/*
 * verdict.h - the one verdict line every command ends with, and its JSON value.
 *
 *   verdict: PASS
 *   verdict: FAIL (exclusion, zombie-write)
 *   verdict: FAIL (mkdir-legacy: exclusion, own-release; mkdir-v2: liveness)
 *   verdict: INCOMPLETE (interrupted after 3.2 s)
 *
 * The line is what scripts and CI grep for; anything else a command wants
 * to say about it (why nothing was found, that a saved violation no longer
 * happens) goes on a line of its own.  The JSON `verdict` value is "pass",
 * "fail" or "incomplete", from the same struct.
 *
 * Precedence: a violation seen is a FAIL even when the run was cut short (it
 * happened; the rest of the run cannot undo it); INCOMPLETE is for a run that
 * was cut short with nothing found so far, which proves nothing; PASS needs
 * a run that finished and found nothing.
 *
 * Calling sequence:
 *
 *     struct verdict v;
 *     verdict_init(&v);                   or verdict_from_check(&v, &res)
 *     verdict_fail(&v, NULL, "exclusion");    once per failed invariant
 *     verdict_incomplete(&v, "interrupted");  when the run did not finish
 *     verdict_print(stdout, &v);
 *     json_string(verdict_json(&v));
 *
 * verdict_fail keeps the strings it is given by pointer: they must outlive
 * the struct's last use (invariant names and revision names do).  A
 * (scope, name) given twice is listed once.  No call fails; past
 * VERDICT_MAX_FAILS distinct failures the line ends in "N more".
 */
#ifndef LS_VERDICT_H
#define LS_VERDICT_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct check_result;

enum verdict_kind {
	VERDICT_PASS,
	VERDICT_FAIL,
	VERDICT_INCOMPLETE,
};

#define VERDICT_MAX_FAILS 96 /* CHECK_MAX_REVS revisions x INV__COUNT invariants, with room */

struct verdict {
	struct {
		const char *scope; /* a revision of a compare, NULL for a single run */
		const char *name;  /* the invariant */
	} fail[VERDICT_MAX_FAILS];
	unsigned nfail;
	unsigned more;         /* failures past VERDICT_MAX_FAILS, counted only */
	int incomplete;
	char why[160];         /* incomplete: what cut the run short */
};

void verdict_init(struct verdict *v);
/* The verdict of one checked run: a FAIL naming each applicable invariant
 * with violations, in check_result order; else PASS. */
void verdict_from_check(struct verdict *v, const struct check_result *res);
/* NAME failed (in revision SCOPE, or NULL). */
void verdict_fail(struct verdict *v, const char *scope, const char *name);
/* The run did not finish; WHY says what stopped it ("interrupted").  A
 * second call keeps the first reason. */
void verdict_incomplete(struct verdict *v, const char *why);

enum verdict_kind verdict_kind(const struct verdict *v);
/* The line without its newline, snprintf-style: the length it needs
 * (excluding the NUL), written up to LEN - 1 bytes. */
size_t verdict_format(const struct verdict *v, char *buf, size_t len);
/* The line and a newline, to F. */
void verdict_print(FILE *f, const struct verdict *v);
/* "pass", "fail" or "incomplete". */
const char *verdict_json(const struct verdict *v);
/* The exit code every command gives for V: 0 PASS, 1 FAIL, 4 INCOMPLETE
 * (VERDICT_EXIT_INCOMPLETE: interrupted, a budget cut, workers lost, or
 * data that cannot be judged; never 0). */
#define VERDICT_EXIT_INCOMPLETE 4
int verdict_exit(const struct verdict *v);

#ifdef __cplusplus
}
#endif
#endif
