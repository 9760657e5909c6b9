/*
 * compare.h - `lockstorm compare -p A,B[,C] [run options] [--repeat R]`.
 *
 * Runs each protocol revision with the same run options, seeds and fault
 * plan, interleaved (A B A B ..., repetition r uses seed S+r for every
 * revision) so that drift of the machine hits all of them alike.  Each run
 * is a child `lockstorm run ... -q --json FILE -o DIR` (this binary, through
 * /proc/self/exe); the errors by errno come from the child's journals.
 * Prints a side-by-side table and exports it as JSON (schema
 * lockstorm-compare/1), markdown and JUnit (one testsuite per revision).
 *
 * exit: 0 no revision had a violation, 1 some revision had one, 2 bad usage,
 * 3 a run could not be judged (the harness failed).
 */
#ifndef LS_COMPARE_H
#define LS_COMPARE_H

#ifdef __cplusplus
extern "C" {
#endif

int compare_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
