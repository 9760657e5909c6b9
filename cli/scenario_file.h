/*
 * scenario_file.h - the scenario file (scenarios/NAME.scenario): parse it,
 * check it whole, find it.  docs/scenarios.md describes the format.
 *
 * A scenario file is parsed and checked whole before anything runs: every
 * revision's command line goes through runcfg_parse, so a bad option, fault
 * spec or parameter is reported as "file:line: reason" (exit 2) and never
 * half-way through a library run.
 */
#ifndef LS_SCENARIO_FILE_H
#define LS_SCENARIO_FILE_H

#include <limits.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SC_MAX_REVS 8
#define SC_MAX_OPTS 48
#define SC_NAME_MAX 64
#define SC_MAX_CEX 4
#define SC_MAX_SEEDS 16

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
	char *cex[SC_MAX_CEX];     /* `cex LABEL [FILE]`: counterexamples replayed first (absolute paths) */
	unsigned ncex;
};

struct scenario {
	char path[PATH_MAX];
	char name[SC_NAME_MAX];
	char *story;               /* story lines joined by spaces; "\n" between paragraphs; never NULL */
	struct sc_rev rev[SC_MAX_REVS];
	unsigned nrev;
	struct sc_opt opt[SC_MAX_OPTS]; /* options common to every revision */
	unsigned nopt;
	unsigned long long seeds[SC_MAX_SEEDS]; /* `seeds S,S..`: a FAIL revision without a cex tries them in turn */
	unsigned nseeds;
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

/* NAME: a path (has a '/' or ends in .scenario), DIR/NAME.scenario, or the
 * library file whose `name` line says NAME.  0 with out set, else -1 with why. */
int sc_resolve(const char *arg, char *out, size_t len, char *why, size_t wlen);
/* Every DIR/x.scenario, sorted: a malloc'd array of malloc'd paths. */
char **sc_dir_files(const char *dir, size_t *n);
void sc_free_files(char **v, size_t n);

/* Small helpers the scenario commands share. */
char *sc_trim(char *s);
int sc_name_ok(const char *s, int allow_comma);
int sc_is_file(const char *p);
int sc_inv_index(const char *name);
void sc_inv_list(unsigned mask, char *out, size_t len);

#ifdef __cplusplus
}
#endif
#endif
