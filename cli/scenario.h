/*
 * scenario.h - `lockstorm scenario list | show | run | new`: production
 * incidents and known bad interleavings stated as torture configurations
 * (scenarios/NAME.scenario), each run against the revisions it names, with the
 * verdict every revision is expected to reach.  docs/scenarios.md describes
 * the file format and the commands.
 *
 * A scenario file is parsed and checked whole before anything runs: every
 * revision's command line goes through runcfg_parse, so a bad option, fault
 * spec or parameter is reported as "file:line: reason" (exit 2) and never
 * half-way through a library run.
 */
#ifndef LS_SCENARIO_H
#define LS_SCENARIO_H

#include <limits.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SC_MAX_REVS 8
#define SC_MAX_OPTS 48
#define SC_NAME_MAX 64

enum sc_expect { SC_EXPECT_NONE, SC_EXPECT_PASS, SC_EXPECT_FAIL, SC_EXPECT_BOUND };

/* One run option as the command line spells it: one or two words. */
struct sc_opt {
	char *word[2];
	int nword;
	int line;
};

struct sc_rev {
	char label[SC_NAME_MAX];   /* "3.0.155", or the protocol list itself */
	char *protos;              /* passed as -p */
	int line;
	struct sc_opt opt[SC_MAX_OPTS]; /* `option LABEL ...` lines, after the common ones */
	unsigned nopt;
	enum sc_expect expect;
	unsigned inv_mask;         /* SC_EXPECT_FAIL: bit i = enum inv_id i must be violated */
	char *bound;               /* SC_EXPECT_BOUND: the explanation */
	int expect_line;
};

struct scenario {
	char path[PATH_MAX];
	char name[SC_NAME_MAX];
	char *story;               /* story lines joined by spaces; "\n" between paragraphs; never NULL */
	struct sc_rev rev[SC_MAX_REVS];
	unsigned nrev;
	struct sc_opt opt[SC_MAX_OPTS]; /* options common to every revision */
	unsigned nopt;
};

/* Parse and check PATH.  NULL with why = "PATH:LINE: reason" on any error. */
struct scenario *scenario_load(const char *path, char *why, size_t len);
void scenario_free(struct scenario *sc);

/* The `lockstorm run` argv of revision r (argv[0] = "run", no output
 * options), NULL-terminated, in a malloc'd array whose strings belong to sc. */
char **scenario_run_argv(const struct scenario *sc, const struct sc_rev *r, int *argc);

/* The directory `list` and `run --all` use: $LOCKSTORM_SCENARIOS, else
 * scenarios/ next to the binary, else the source tree's.  -1 if none. */
int scenario_dir(char *out, size_t len);

/* argv after "scenario".  Exit code: 0 every revision as expected, 1 a
 * revision that was not, 2 bad usage or a bad scenario file, 3 a revision
 * whose run failed (the harness, not a verdict). */
int scenario_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
