/*
 * scenario_file.c - the scenario file: parse, check, find (see scenario_file.h
 * and docs/scenarios.md).
 */
#include "scenario_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../core/fsutil.h"
#include "../check/checker.h"
#include "../workloads/config.h"
#include "../run/runcfg.h"

#ifndef LS_SOURCE_DIR
#define LS_SOURCE_DIR "."
#endif

/* ---- small helpers ---- */

static int sc_fail(char *why, size_t len, const char *path, int line, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(why, len, "%s:%d: ", path, line);
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < len)
		vsnprintf(why + n, len - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

char *sc_trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = '\0';
	return s;
}

/* Split off the first word of *s (s is trimmed); *s points past it, trimmed. */
static char *first_word(char **s)
{
	char *w = *s, *p = w;
	while (*p && *p != ' ' && *p != '\t')
		p++;
	if (*p) {
		*p++ = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
	}
	*s = p;
	return w;
}

int sc_name_ok(const char *s, int allow_comma)
{
	if (!*s || strlen(s) >= SC_NAME_MAX || *s == '.' || *s == '-')
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '.' || *s == '_' || *s == '-' || *s == '+' || (allow_comma && *s == ',')))
			return 0;
	return 1;
}

int sc_is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int sc_inv_index(const char *name)
{
	for (int i = 0; i < INV__COUNT; i++)
		if (!strcmp(check_inv_name((enum inv_id)i), name))
			return i;
	return -1;
}

void sc_inv_list(unsigned mask, char *out, size_t len)
{
	size_t n = 0;
	out[0] = '\0';
	for (int i = 0; i < INV__COUNT; i++)
		if (mask & (1u << i))
			n += (size_t)snprintf(out + n, n < len ? len - n : 0, "%s%s", n ? ", " : "",
					      check_inv_name((enum inv_id)i));
}

/* ---- run options ---- */

/* The run options a scenario may not set, and why; every other option of
 * runcfg_longopts (the table `lockstorm run` parses with) it may. */
static const struct sc_refuse {
	const char *name;
	const char *why;
} sc_refused[] = {
	{ "protocol", "protocols go on `revision` lines" },
	{ "dir", "scenario run picks the work directory" },
	{ "out", "keep runs with `scenario run -o OUTDIR`" },
	{ "json", "scenario run writes the JSON report itself" },
	{ "junit", "scenario run reads the JSON report" },
	{ "keep", "scenario run removes its work directories" },
	{ "quiet", "scenario run chooses the output" },
	{ "verbose", "scenario run chooses the output" },
	{ "help", "not a run option" },
	{ NULL, NULL },
};

/* WORD as `lockstorm run` spells an option: --name or -x.  NULL if none. */
static const struct option *sc_run_option(const char *word)
{
	if (!strncmp(word, "--", 2)) {
		for (const struct option *o = runcfg_longopts; o->name; o++)
			if (!strcmp(o->name, word + 2))
				return o;
		return NULL;
	}
	if (word[0] == '-' && word[1] && !word[2] && word[1] != ':' && strchr(runcfg_shortopts, word[1]))
		return runcfg_option(word[1]);
	return NULL;
}

/* Strip one pair of matching quotes around a value pasted from a shell line. */
static char *unquote(char *v)
{
	size_t n = strlen(v);
	if (n >= 2 && (v[0] == '\'' || v[0] == '"') && v[n - 1] == v[0]) {
		v[n - 1] = '\0';
		return v + 1;
	}
	return v;
}

/* One run option line: WORD [VALUE] (VALUE: the rest of the line), or --opt=VALUE. */
static int parse_opt(const char *path, int line, char *word, char *rest, struct sc_opt *o, char *why,
		     size_t len)
{
	char *value = rest;
	char *eq = NULL;
	if (!strncmp(word, "--", 2) && (eq = strchr(word, '=')) != NULL) {
		if (*rest)
			return sc_fail(why, len, path, line, "'%s': a value after --opt=VALUE", word);
		*eq = '\0';
		value = eq + 1;
	}
	const struct option *d = sc_run_option(word);
	if (!d)
		return sc_fail(why, len, path, line,
			       "unknown run option '%s' (write it as `lockstorm run` spells it, one per line: "
			       "-w update, --ops 600, --fault SPEC)", word);
	for (const struct sc_refuse *r = sc_refused; r->name; r++)
		if (!strcmp(r->name, d->name))
			return sc_fail(why, len, path, line, "'%s' is not allowed in a scenario: %s", word, r->why);
	int arg = d->has_arg == required_argument;
	value = unquote(value);
	if (arg && !*value)
		return sc_fail(why, len, path, line, "'%s' needs a value on the same line", word);
	if (!arg && (*value || eq))
		return sc_fail(why, len, path, line, "'%s' takes no value (got '%s')", word, value);
	o->word[0] = strdup(word); /* as written: `show` prints the file's own spelling */
	o->word[1] = arg ? strdup(value) : NULL;
	o->nword = arg ? 2 : 1;
	o->line = line;
	if (!o->word[0] || (arg && !o->word[1]))
		return sc_fail(why, len, path, line, "out of memory");
	return 0;
}

static void opt_free(struct sc_opt *o)
{
	free(o->word[0]);
	free(o->word[1]);
}

/* ---- the file ---- */

struct pending { /* expect/option lines, resolved against the revisions at the end */
	int line;
	char label[SC_NAME_MAX];
	int is_option;
	char *cex;                 /* a `cex` line: the file, resolved beside the scenario */
	struct sc_opt opt;
	enum sc_expect expect;
	unsigned mask;
	char *bound;
};

void scenario_free(struct scenario *sc)
{
	if (!sc)
		return;
	free(sc->story);
	for (unsigned i = 0; i < sc->nopt; i++)
		opt_free(&sc->opt[i]);
	for (unsigned r = 0; r < sc->nrev; r++) {
		free(sc->rev[r].protos);
		free(sc->rev[r].bound);
		for (unsigned i = 0; i < sc->rev[r].ncex; i++)
			free(sc->rev[r].cex[i]);
		for (unsigned i = 0; i < sc->rev[r].nopt; i++)
			opt_free(&sc->rev[r].opt[i]);
	}
	free(sc);
}

static int story_add(struct scenario *sc, const char *text)
{
	size_t have = strlen(sc->story), add = strlen(text);
	char *s = realloc(sc->story, have + add + 2);
	if (!s)
		return -1;
	sc->story = s;
	if (!add) { /* a bare `story` line: a paragraph break */
		if (have && s[have - 1] != '\n')
			strcpy(s + have, "\n");
		return 0;
	}
	if (have && s[have - 1] != '\n')
		s[have++] = ' ';
	memcpy(s + have, text, add + 1);
	return 0;
}

char **scenario_run_argv(const struct scenario *sc, const struct sc_rev *r, int *argc)
{
	size_t cap = 4 + 2 * ((size_t)sc->nopt + r->nopt);
	char **argv = calloc(cap, sizeof *argv);
	int n = 0;
	if (!argv)
		return NULL;
	argv[n++] = "run";
	argv[n++] = "-p";
	argv[n++] = r->protos;
	for (unsigned i = 0; i < sc->nopt; i++)
		for (int k = 0; k < sc->opt[i].nword; k++)
			argv[n++] = sc->opt[i].word[k];
	for (unsigned i = 0; i < r->nopt; i++)
		for (int k = 0; k < r->opt[i].nword; k++)
			argv[n++] = r->opt[i].word[k];
	argv[n] = NULL;
	*argc = n;
	return argv;
}

/* Every revision's command line through the real option parser, whole (as
 * it will run); when that fails, growing prefixes name the line at fault: the
 * first prefix that fails ends at the culprit (a fault point only another
 * revision has, a --param no protocol of this one takes, -d after --ops).  In
 * the prefixes the workload lines come first, since points and parameters
 * depend on the workload; runcfg_parse itself checks them after every option,
 * so the order of the lines means nothing to the run. */
static int sc_validate(const struct scenario *sc, char *why, size_t len)
{
	struct run_config *cfg = malloc(sizeof *cfg);
	char msg[1024];
	if (!cfg)
		return sc_fail(why, len, sc->path, 0, "out of memory");
	for (unsigned ri = 0; ri < sc->nrev; ri++) {
		const struct sc_rev *r = &sc->rev[ri];
		int argc;
		char **argv = scenario_run_argv(sc, r, &argc);
		char **tmp = calloc((size_t)argc + 1, sizeof *tmp);
		if (!argv || !tmp) {
			free(argv);
			free(tmp);
			free(cfg);
			return sc_fail(why, len, sc->path, 0, "out of memory");
		}
		memcpy(tmp, argv, (size_t)argc * sizeof *tmp); /* getopt may permute */
		runcfg_defaults(cfg);
		int rc = runcfg_parse(cfg, argc, tmp, msg, sizeof msg);
		int line = r->line;
		if (rc != 0) {
			const struct sc_opt *lines[2 * SC_MAX_OPTS];
			unsigned nlines = 0;
			for (int pass = 0; pass < 2; pass++) {
				for (unsigned i = 0; i < sc->nopt + r->nopt; i++) {
					const struct sc_opt *o = i < sc->nopt ? &sc->opt[i] : &r->opt[i - sc->nopt];
					int wl = !strcmp(o->word[0], "--workload") || !strcmp(o->word[0], "-w");
					if (wl == (pass == 0))
						lines[nlines++] = o;
				}
			}
			int upto = 3;
			for (unsigned k = 0; k < nlines; k++) {
				char m2[1024];
				for (int w = 0; w < lines[k]->nword; w++)
					argv[upto++] = lines[k]->word[w];
				memcpy(tmp, argv, (size_t)upto * sizeof *tmp);
				tmp[upto] = NULL;
				runcfg_defaults(cfg);
				if (runcfg_parse(cfg, upto, tmp, m2, sizeof m2) != 0) {
					line = lines[k]->line;
					snprintf(msg, sizeof msg, "%s", m2);
					break;
				}
			}
		}
		free(argv);
		free(tmp);
		if (rc != 0) {
			free(cfg);
			if (rc == 1)
				return sc_fail(why, len, sc->path, line, "revision %s: not a run", r->label);
			return sc_fail(why, len, sc->path, line, "revision %s: %s", r->label, msg);
		}
	}
	free(cfg);
	return 0;
}

static struct sc_rev *find_rev(struct scenario *sc, const char *label)
{
	for (unsigned i = 0; i < sc->nrev; i++)
		if (!strcmp(sc->rev[i].label, label))
			return &sc->rev[i];
	return NULL;
}

static int parse_expect(const char *path, int line, char *rest, struct pending *p, char *why, size_t len)
{
	char *label = first_word(&rest);
	char *kind = first_word(&rest);
	if (!*label || !*kind)
		return sc_fail(why, len, path, line,
			       "expect: want `expect REVISION pass`, `expect REVISION fail INVARIANT[,INVARIANT]` "
			       "or `expect REVISION bound TEXT`");
	snprintf(p->label, sizeof p->label, "%s", label);
	if (!strcmp(kind, "pass")) {
		if (*rest)
			return sc_fail(why, len, path, line, "expect %s pass: unexpected '%s'", label, rest);
		p->expect = SC_EXPECT_PASS;
	} else if (!strcmp(kind, "fail")) {
		if (!*rest)
			return sc_fail(why, len, path, line,
				       "expect %s fail: name the invariant(s) that must break, e.g. fail exclusion,own-release",
				       label);
		p->expect = SC_EXPECT_FAIL;
		for (char *save = NULL, *t = strtok_r(rest, ", \t", &save); t; t = strtok_r(NULL, ", \t", &save)) {
			int i = sc_inv_index(t);
			if (i < 0) {
				char known[256];
				sc_inv_list((1u << INV__COUNT) - 1, known, sizeof known);
				return sc_fail(why, len, path, line, "expect %s fail: unknown invariant '%s' (known: %s)",
					       label, t, known);
			}
			p->mask |= 1u << i;
		}
		if (!p->mask)
			return sc_fail(why, len, path, line, "expect %s fail: name at least one invariant", label);
	} else if (!strcmp(kind, "bound")) {
		if (!*rest)
			return sc_fail(why, len, path, line,
				       "expect %s bound: say why no verdict can show it (the text is printed with the run)",
				       label);
		p->expect = SC_EXPECT_BOUND;
		p->bound = strdup(rest);
	} else {
		return sc_fail(why, len, path, line, "expect %s: '%s' is not pass, fail or bound", label, kind);
	}
	return 0;
}

static int sc_line(struct scenario *sc, int line, char *s, struct pending **pend, size_t *npend, char *why,
		   size_t len)
{
	const char *path = sc->path;
	char *rest = s;
	char *key = first_word(&rest);

	if (key[0] == '-') {
		if (sc->nopt == SC_MAX_OPTS)
			return sc_fail(why, len, path, line, "too many options (at most %d)", SC_MAX_OPTS);
		if (parse_opt(path, line, key, rest, &sc->opt[sc->nopt], why, len))
			return -1;
		sc->nopt++;
		return 0;
	}
	if (!strcmp(key, "name")) {
		if (sc->name[0])
			return sc_fail(why, len, path, line, "a second `name` line (the first says '%s')", sc->name);
		if (!sc_name_ok(rest, 0))
			return sc_fail(why, len, path, line,
				       "name '%s': want one word of letters, digits, '.', '_', '-', '+' (under %d chars)",
				       rest, SC_NAME_MAX);
		snprintf(sc->name, sizeof sc->name, "%s", rest);
		return 0;
	}
	if (!strcmp(key, "story"))
		return story_add(sc, rest) ? sc_fail(why, len, path, line, "out of memory") : 0;
	if (!strcmp(key, "revision")) {
		char *label = first_word(&rest);
		char *protos = first_word(&rest);
		if (!*label || *rest)
			return sc_fail(why, len, path, line, "revision: want `revision PROTO[,PROTO..]` or "
							     "`revision LABEL PROTO[,PROTO..]`");
		if (!*protos)
			protos = label;
		if (!sc_name_ok(label, 1))
			return sc_fail(why, len, path, line,
				       "revision label '%s': letters, digits, '.', '_', '-', '+', ',' only", label);
		if (find_rev(sc, label))
			return sc_fail(why, len, path, line, "revision '%s' named twice", label);
		if (sc->nrev == SC_MAX_REVS)
			return sc_fail(why, len, path, line, "too many revisions (at most %d)", SC_MAX_REVS);
		char buf[512];
		snprintf(buf, sizeof buf, "%s", protos);
		for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
			if (!lock_find(t)) {
				char names[512];
				lock_names(names, sizeof names);
				return sc_fail(why, len, path, line, "revision %s: unknown protocol '%s' (known: %s)",
					       label, t, names);
			}
		struct sc_rev *r = &sc->rev[sc->nrev];
		snprintf(r->label, sizeof r->label, "%s", label);
		r->protos = strdup(protos);
		r->line = line;
		sc->nrev++;
		return r->protos ? 0 : sc_fail(why, len, path, line, "out of memory");
	}
	if (!strcmp(key, "seeds")) {
		/* seeds S,S..: the torture of a FAIL revision without a counterexample tries them in
		 * turn until one shows the expected violation (the machine's timing decides a seed) */
		if (sc->nseeds)
			return sc_fail(why, len, path, line, "a second `seeds` line");
		for (char *save = NULL, *t = strtok_r(rest, ", \t", &save); t; t = strtok_r(NULL, ", \t", &save)) {
			char *end;
			errno = 0;
			unsigned long long v = strtoull(t, &end, 10);
			if (*end || errno || t[0] == '-' || sc->nseeds == SC_MAX_SEEDS)
				return sc_fail(why, len, path, line, "seeds: want up to %d whole numbers, e.g. seeds 3,1,2",
					       SC_MAX_SEEDS);
			sc->seeds[sc->nseeds++] = v;
		}
		return sc->nseeds ? 0 : sc_fail(why, len, path, line, "seeds: name at least one seed");
	}
	if (!strcmp(key, "cex")) {
		/* cex LABEL [FILE]: a counterexample of the revision's FAIL, made by explore;
		 * FILE is beside the scenario (default NAME.cex.json) */
		char *label = first_word(&rest);
		char *file = first_word(&rest);
		if (!*label || *rest)
			return sc_fail(why, len, path, line, "cex: want `cex REVISION [FILE]` (default FILE: NAME.cex.json)");
		if (!*file && !sc->name[0])
			return sc_fail(why, len, path, line, "cex %s: without a FILE the `name` line must come first", label);
		char rel[PATH_MAX], full[PATH_MAX * 2 + 2];
		snprintf(rel, sizeof rel, "%s", *file ? file : sc->name);
		if (!*file)
			snprintf(rel + strlen(rel), sizeof rel - strlen(rel), ".cex.json");
		const char *slash = strrchr(path, '/');
		if (rel[0] == '/' || !slash)
			snprintf(full, sizeof full, "%s", rel);
		else
			snprintf(full, sizeof full, "%.*s/%s", (int)(slash - path), path, rel);
		if (!sc_is_file(full))
			return sc_fail(why, len, path, line, "cex %s: no file %s (make it with lockstorm explore ... -o DIR "
				       "and copy DIR/cex-1.json there)", label, full);
		struct pending *g = realloc(*pend, (*npend + 1) * sizeof *g);
		if (!g)
			return sc_fail(why, len, path, line, "out of memory");
		*pend = g;
		struct pending *p = &g[(*npend)++];
		memset(p, 0, sizeof *p);
		p->line = line;
		snprintf(p->label, sizeof p->label, "%s", label);
		p->cex = strdup(full);
		return p->cex ? 0 : sc_fail(why, len, path, line, "out of memory");
	}
	if (!strcmp(key, "expect") || !strcmp(key, "option")) {
		struct pending *g = realloc(*pend, (*npend + 1) * sizeof *g);
		if (!g)
			return sc_fail(why, len, path, line, "out of memory");
		*pend = g;
		struct pending *p = &g[(*npend)++];
		memset(p, 0, sizeof *p);
		p->line = line;
		if (key[0] == 'e')
			return parse_expect(path, line, rest, p, why, len);
		char *label = first_word(&rest);
		char *word = first_word(&rest);
		if (!*label || !*word)
			return sc_fail(why, len, path, line,
				       "option: want `option REVISION RUN-OPTION [VALUE]`, e.g. option mkdir-legacy --param form=try");
		if (word[0] != '-')
			return sc_fail(why, len, path, line, "option %s: '%s' is not a run option", label, word);
		snprintf(p->label, sizeof p->label, "%s", label);
		p->is_option = 1;
		return parse_opt(path, line, word, rest, &p->opt, why, len);
	}
	return sc_fail(why, len, path, line,
		       "unknown line '%s' (name, story, revision, expect, option, cex, seeds, a run option such as -w or --fault, "
		       "or # comment)", key);
}

struct scenario *scenario_load(const char *path, char *why, size_t len)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(why, len, "%s: %s", path, strerror(errno));
		return NULL;
	}
	struct scenario *sc = calloc(1, sizeof *sc);
	struct pending *pend = NULL;
	size_t npend = 0;
	char *buf = NULL;
	size_t cap = 0;
	int line = 0, rc = 0;
	if (!sc || !(sc->story = strdup(""))) {
		snprintf(why, len, "%s: out of memory", path);
		rc = -1;
		goto out;
	}
	snprintf(sc->path, sizeof sc->path, "%s", path);
	ssize_t got;
	while ((got = getline(&buf, &cap, f)) >= 0) {
		line++;
		if ((size_t)got != strlen(buf)) {
			rc = sc_fail(why, len, path, line, "a NUL byte: not a text file");
			goto out;
		}
		char *s = sc_trim(buf);
		if (!*s || *s == '#')
			continue;
		if ((rc = sc_line(sc, line, s, &pend, &npend, why, len)) != 0)
			goto out;
	}
	if (ferror(f)) {
		snprintf(why, len, "%s: %s", path, strerror(errno));
		rc = -1;
		goto out;
	}
	if (!sc->name[0]) {
		rc = sc_fail(why, len, path, line, "no `name` line");
		goto out;
	}
	if (!sc->nrev) {
		rc = sc_fail(why, len, path, line, "no `revision` line: name the protocol revision(s) to run");
		goto out;
	}
	for (size_t i = 0; i < npend; i++) {
		struct pending *p = &pend[i];
		struct sc_rev *r = find_rev(sc, p->label);
		if (!r) {
			rc = sc_fail(why, len, path, p->line, "%s names revision '%s', which no `revision` line declares",
				     p->cex ? "cex" : p->is_option ? "option" : "expect", p->label);
			goto out;
		}
		if (p->cex) {
			if (r->ncex == SC_MAX_CEX) {
				rc = sc_fail(why, len, path, p->line, "too many cex lines for %s (at most %d)", r->label,
					     SC_MAX_CEX);
				goto out;
			}
			r->cex[r->ncex++] = p->cex;
			p->cex = NULL;
			continue;
		}
		if (p->is_option) {
			if (r->nopt == SC_MAX_OPTS) {
				rc = sc_fail(why, len, path, p->line, "too many options for %s", r->label);
				goto out;
			}
			r->opt[r->nopt++] = p->opt;
			p->opt.word[0] = p->opt.word[1] = NULL;
			continue;
		}
		if (r->expect != SC_EXPECT_NONE) {
			rc = sc_fail(why, len, path, p->line, "a second `expect` for revision %s (line %d)", r->label,
				     r->expect_line);
			goto out;
		}
		r->expect = p->expect;
		r->inv_mask = p->mask;
		r->bound = p->bound;
		p->bound = NULL;
		r->expect_line = p->line;
	}
	for (unsigned i = 0; i < sc->nrev; i++)
		if (sc->rev[i].expect == SC_EXPECT_NONE) {
			rc = sc_fail(why, len, path, sc->rev[i].line,
				     "revision %s has no `expect` line (pass, fail INVARIANT.., or bound TEXT)",
				     sc->rev[i].label);
			goto out;
		}
	for (unsigned i = 0; i < sc->nrev; i++)
		if (sc->rev[i].ncex && sc->rev[i].expect != SC_EXPECT_FAIL) {
			rc = sc_fail(why, len, path, sc->rev[i].expect_line,
				     "revision %s has a cex line but does not expect fail: a counterexample shows a "
				     "violation", sc->rev[i].label);
			goto out;
		}
	rc = sc_validate(sc, why, len);
out:
	for (size_t i = 0; i < npend; i++) {
		opt_free(&pend[i].opt);
		free(pend[i].bound);
		free(pend[i].cex);
	}
	free(pend);
	free(buf);
	fclose(f);
	if (rc) {
		scenario_free(sc);
		return NULL;
	}
	return sc;
}

/* ---- where scenarios live ---- */

int scenario_dir(char *out, size_t len)
{
	const char *env = getenv("LOCKSTORM_SCENARIOS");
	if (env && *env) {
		snprintf(out, len, "%s", env);
		return is_dir(out) ? 0 : -1;
	}
	return fsutil_find_beside("scenarios", "scenarios", FSUTIL_DIR, out, len);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every DIR/x.scenario, sorted: a malloc'd array of malloc'd paths. */
char **sc_dir_files(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	char **v = NULL;
	*n = 0;
	if (!d)
		return NULL;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l <= 9 || strcmp(de->d_name + l - 9, ".scenario") || de->d_name[0] == '.')
			continue;
		char **g = realloc(v, (*n + 1) * sizeof *g);
		if (!g)
			break;
		v = g;
		if (asprintf(&v[*n], "%s/%s", dir, de->d_name) < 0)
			break;
		(*n)++;
	}
	closedir(d);
	if (*n > 1)
		qsort(v, *n, sizeof *v, cmp_str);
	return v;
}

void sc_free_files(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* NAME: a path (has a '/' or ends in .scenario), DIR/NAME.scenario, or the
 * library file whose `name` line says NAME.  0 with out set, else -1 with why. */
int sc_resolve(const char *arg, char *out, size_t len, char *why, size_t wlen)
{
	size_t l = strlen(arg);
	if (strchr(arg, '/') || (l > 9 && !strcmp(arg + l - 9, ".scenario"))) {
		snprintf(out, len, "%s", arg);
		if (sc_is_file(out))
			return 0;
		snprintf(why, wlen, "scenario file %s: no such file", arg);
		return -1;
	}
	char dir[PATH_MAX];
	if (scenario_dir(dir, sizeof dir)) {
		snprintf(why, wlen, "no scenarios directory (next to the binary, or %s/scenarios)", LS_SOURCE_DIR);
		return -1;
	}
	snprintf(out, len, "%s/%s.scenario", dir, arg);
	if (sc_is_file(out))
		return 0;
	size_t n;
	char **files = sc_dir_files(dir, &n);
	char known[1024] = "";
	size_t kn = 0;
	for (size_t i = 0; i < n; i++) {
		char w[1024];
		struct scenario *sc = scenario_load(files[i], w, sizeof w);
		if (!sc)
			continue;
		int hit = !strcmp(sc->name, arg);
		kn += (size_t)snprintf(known + kn, kn < sizeof known ? sizeof known - kn : 0, "%s%s",
				       kn ? ", " : "", sc->name);
		scenario_free(sc);
		if (hit) {
			snprintf(out, len, "%s", files[i]);
			sc_free_files(files, n);
			return 0;
		}
	}
	sc_free_files(files, n);
	snprintf(why, wlen, "unknown scenario '%s' (in %s: %s)", arg, dir, kn ? known : "none");
	return -1;
}

