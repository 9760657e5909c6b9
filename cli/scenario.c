/*
 * scenario.c - `lockstorm scenario list | show | run | new` (see scenario.h
 * and docs/scenarios.md).
 *
 * `run` executes every revision of a scenario as a child
 * `/proc/self/exe run -p REV OPTIONS.. -q --json FILE` (no shell: the file's
 * options are argv words), reads the child's JSON report and compares the
 * verdict with the scenario's `expect` line.
 */
#include "scenario.h"

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
#include "../faults/fault.h"
#include "../workloads/workload.h"
#include "../check/checker.h"
#include "../workloads/config.h"
#include "../run/runcfg.h"

#ifndef LS_SOURCE_DIR
#define LS_SOURCE_DIR "."
#endif

#define SC_WRAP 100

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

static char *trim(char *s)
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

static int name_ok(const char *s, int allow_comma)
{
	if (!*s || strlen(s) >= SC_NAME_MAX || *s == '.' || *s == '-')
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '.' || *s == '_' || *s == '-' || *s == '+' || (allow_comma && *s == ',')))
			return 0;
	return 1;
}

static int is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int inv_index(const char *name)
{
	for (int i = 0; i < INV__COUNT; i++)
		if (!strcmp(check_inv_name((enum inv_id)i), name))
			return i;
	return -1;
}

static void inv_list(unsigned mask, char *out, size_t len)
{
	size_t n = 0;
	out[0] = '\0';
	for (int i = 0; i < INV__COUNT; i++)
		if (mask & (1u << i))
			n += (size_t)snprintf(out + n, n < len ? len - n : 0, "%s%s", n ? ", " : "",
					      check_inv_name((enum inv_id)i));
}

/* ---- run options ---- */

static const struct sc_optdef {
	const char *shrt, *lng;
	int arg;
	const char *refuse; /* why a scenario may not set it, or NULL */
} sc_optdefs[] = {
	{ "-p", "--protocol", 1, "protocols go on `revision` lines" },
	{ "-w", "--workload", 1, NULL },
	{ "-n", "--workers", 1, NULL },
	{ "-d", "--duration", 1, NULL },
	{ NULL, "--ops", 1, NULL },
	{ NULL, "--fault", 1, NULL },
	{ NULL, "--faults", 1, NULL },
	{ NULL, "--time-scale", 1, NULL },
	{ NULL, "--param", 1, NULL },
	{ "-s", "--seed", 1, NULL },
	{ NULL, "--respawn", 0, NULL },
	{ NULL, "--trace", 0, NULL },
	{ NULL, "--dir", 1, "scenario run picks the work directory" },
	{ "-o", "--out", 1, "keep runs with `scenario run -o OUTDIR`" },
	{ NULL, "--json", 1, "scenario run writes the JSON report itself" },
	{ NULL, "--junit", 1, "scenario run reads the JSON report" },
	{ NULL, "--keep", 0, "scenario run removes its work directories" },
	{ "-q", "--quiet", 0, "scenario run chooses the output" },
	{ "-v", "--verbose", 0, "scenario run chooses the output" },
	{ "-h", "--help", 0, "not a run option" },
	{ NULL, NULL, 0, NULL },
};

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
	const struct sc_optdef *d;
	for (d = sc_optdefs; d->lng; d++)
		if ((d->shrt && !strcmp(word, d->shrt)) || !strcmp(word, d->lng))
			break;
	if (!d->lng)
		return sc_fail(why, len, path, line,
			       "unknown run option '%s' (write it as `lockstorm run` spells it, one per line: "
			       "-w update, --ops 600, --fault SPEC)", word);
	if (d->refuse)
		return sc_fail(why, len, path, line, "'%s' is not allowed in a scenario: %s", word, d->refuse);
	value = unquote(value);
	if (d->arg && !*value)
		return sc_fail(why, len, path, line, "'%s' needs a value on the same line", word);
	if (!d->arg && (*value || eq))
		return sc_fail(why, len, path, line, "'%s' takes no value (got '%s')", word, value);
	o->word[0] = strdup(word); /* as written: `show` prints the file's own spelling */
	o->word[1] = d->arg ? strdup(value) : NULL;
	o->nword = d->arg ? 2 : 1;
	o->line = line;
	if (!o->word[0] || (d->arg && !o->word[1]))
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
			int i = inv_index(t);
			if (i < 0) {
				char known[256];
				inv_list((1u << INV__COUNT) - 1, known, sizeof known);
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
		if (!name_ok(rest, 0))
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
		if (!name_ok(label, 1))
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
		       "unknown line '%s' (name, story, revision, expect, option, a run option such as -w or --fault, "
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
		char *s = trim(buf);
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
				     p->is_option ? "option" : "expect", p->label);
			goto out;
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
	rc = sc_validate(sc, why, len);
out:
	for (size_t i = 0; i < npend; i++) {
		opt_free(&pend[i].opt);
		free(pend[i].bound);
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
static char **dir_files(const char *dir, size_t *n)
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

static void free_files(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* NAME: a path (has a '/' or ends in .scenario), DIR/NAME.scenario, or the
 * library file whose `name` line says NAME.  0 with out set, else -1 with why. */
static int resolve(const char *arg, char *out, size_t len, char *why, size_t wlen)
{
	size_t l = strlen(arg);
	if (strchr(arg, '/') || (l > 9 && !strcmp(arg + l - 9, ".scenario"))) {
		snprintf(out, len, "%s", arg);
		if (is_file(out))
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
	if (is_file(out))
		return 0;
	size_t n;
	char **files = dir_files(dir, &n);
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
			free_files(files, n);
			return 0;
		}
	}
	free_files(files, n);
	snprintf(why, wlen, "unknown scenario '%s' (in %s: %s)", arg, dir, kn ? known : "none");
	return -1;
}

/* ---- printing ---- */

static void wrap(FILE *f, const char *text, int indent)
{
	const char *p = text;
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t plen = eol ? (size_t)(eol - p) : strlen(p);
		size_t col = 0;
		const char *q = p, *end = p + plen;
		fprintf(f, "%*s", indent, "");
		while (q < end) {
			while (q < end && *q == ' ')
				q++;
			const char *w = q;
			while (q < end && *q != ' ')
				q++;
			size_t wl = (size_t)(q - w);
			if (!wl)
				break;
			if (col && col + 1 + wl > (size_t)(SC_WRAP - indent)) {
				fprintf(f, "\n%*s", indent, "");
				col = 0;
			}
			fprintf(f, "%s%.*s", col ? " " : "", (int)wl, w);
			col += (col ? 1 : 0) + wl;
		}
		fputc('\n', f);
		p = eol ? eol + 1 : end;
		if (eol && *p)
			fputc('\n', f); /* a blank line between paragraphs */
	}
}

/* The first sentence of the story, for `list`. */
static void summary(const char *story, char *out, size_t len)
{
	size_t n = 0;
	while (story[n] && story[n] != '\n' && !(story[n] == '.' && (story[n + 1] == ' ' || !story[n + 1])))
		n++;
	if (story[n] == '.')
		n++;
	if (story[n] == '"')
		n++;
	if (n >= len)
		n = len - 1;
	memcpy(out, story, n);
	out[n] = '\0';
	if (n > 92) { /* one line in `list`: cut at a word */
		size_t cut = 88;
		while (cut > 40 && out[cut] != ' ')
			cut--;
		strcpy(out + cut, " ...");
	}
}

static void shell_word(FILE *f, const char *w)
{
	int plain = *w != '\0';
	for (const char *p = w; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-", *p))
			plain = 0;
	if (plain) {
		fputs(w, f);
		return;
	}
	fputc('\'', f);
	for (const char *p = w; *p; p++) {
		if (*p == '\'')
			fputs("'\\''", f);
		else
			fputc(*p, f);
	}
	fputc('\'', f);
}

static void expect_text(const struct sc_rev *r, char *out, size_t len)
{
	char invs[256];
	switch (r->expect) {
	case SC_EXPECT_PASS:
		snprintf(out, len, "PASS");
		break;
	case SC_EXPECT_FAIL:
		inv_list(r->inv_mask, invs, sizeof invs);
		snprintf(out, len, "FAIL (%s)", invs);
		break;
	default:
		snprintf(out, len, "bound");
		break;
	}
}

/* ---- list, show ---- */

static int load_all(const char *dir, struct scenario ***out, size_t *n)
{
	size_t nf;
	char **files = dir_files(dir, &nf);
	struct scenario **v = calloc(nf ? nf : 1, sizeof *v);
	*n = 0;
	if (!v) {
		free_files(files, nf);
		return 3;
	}
	for (size_t i = 0; i < nf; i++) {
		char why[1024];
		v[i] = scenario_load(files[i], why, sizeof why);
		if (!v[i]) {
			fprintf(stderr, "lockstorm: %s\n", why);
			for (size_t k = 0; k < i; k++)
				scenario_free(v[k]);
			free(v);
			free_files(files, nf);
			return 2;
		}
		*n = i + 1;
	}
	free_files(files, nf);
	*out = v;
	return 0;
}

static int sc_list(int argc, char **argv)
{
	if (argc != 1)
		return fprintf(stderr, "lockstorm: scenario list: unexpected argument '%s'\n", argv[1]), 2;
	char dir[PATH_MAX];
	if (scenario_dir(dir, sizeof dir)) {
		fprintf(stderr, "lockstorm: no scenarios directory (next to the binary, or %s/scenarios)\n",
			LS_SOURCE_DIR);
		return 2;
	}
	struct scenario **all;
	size_t n;
	int rc = load_all(dir, &all, &n);
	if (rc)
		return rc;
	int wn = 4;
	for (size_t i = 0; i < n; i++)
		if ((int)strlen(all[i]->name) > wn)
			wn = (int)strlen(all[i]->name);
	printf("%-*s  %s\n", wn, "NAME", "REVISIONS (expected)  -  SUMMARY");
	for (size_t i = 0; i < n; i++) {
		char revs[512] = "", sum[200];
		size_t k = 0;
		for (unsigned r = 0; r < all[i]->nrev; r++) {
			const struct sc_rev *rv = &all[i]->rev[r];
			k += (size_t)snprintf(revs + k, k < sizeof revs ? sizeof revs - k : 0, "%s%s %s", r ? ", " : "",
					      rv->label, rv->expect == SC_EXPECT_PASS ? "pass"
							 : rv->expect == SC_EXPECT_FAIL ? "fail" : "bound");
		}
		summary(all[i]->story, sum, sizeof sum);
		printf("%-*s  %s\n", wn, all[i]->name, revs);
		if (*sum)
			printf("%-*s    %s\n", wn, "", sum);
		scenario_free(all[i]);
	}
	free(all);
	printf("(%zu scenario%s in %s)\n", n, n == 1 ? "" : "s", dir);
	return 0;
}

static int sc_show(int argc, char **argv)
{
	if (argc != 2)
		return fprintf(stderr, "lockstorm: scenario show: usage: lockstorm scenario show NAME\n"), 2;
	char path[PATH_MAX], why[1024];
	if (resolve(argv[1], path, sizeof path, why, sizeof why))
		return fprintf(stderr, "lockstorm: %s\n", why), 2;
	struct scenario *sc = scenario_load(path, why, sizeof why);
	if (!sc)
		return fprintf(stderr, "lockstorm: %s\n", why), 2;
	printf("%s  (%s)\n", sc->name, sc->path);
	if (*sc->story)
		wrap(stdout, sc->story, 2);
	for (unsigned i = 0; i < sc->nrev; i++) {
		const struct sc_rev *r = &sc->rev[i];
		char ex[300];
		expect_text(r, ex, sizeof ex);
		printf("\nrevision %s: expect %s\n", r->label, ex);
		if (r->expect == SC_EXPECT_BOUND)
			wrap(stdout, r->bound, 4);
		int ac;
		char **av = scenario_run_argv(sc, r, &ac);
		if (!av)
			break;
		printf("  lockstorm");
		for (int k = 0; k < ac; k++) {
			fputc(' ', stdout);
			shell_word(stdout, av[k]);
		}
		printf("\n");
		free(av);
	}
	scenario_free(sc);
	return 0;
}

/* ---- run ---- */

struct observed {
	int ran;               /* a report was read */
	int status;            /* the child's exit code (128+signal) */
	int pass;
	unsigned viol;         /* violated invariants */
	char example[INV__COUNT][320];
	double ops_per_s;
	long long attempts, acquired, busy, errors;
	char err[512];         /* why it did not run */
};

static void last_line(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "r");
	char buf[1024];
	out[0] = '\0';
	if (!f)
		return;
	while (fgets(buf, sizeof buf, f)) {
		char *s = trim(buf);
		if (*s)
			snprintf(out, len, "%s", s);
	}
	fclose(f);
}

static int read_report(const char *path, struct observed *o)
{
	json_error_t err;
	json_t *root = json_load_file(path, 0, &err);
	if (!root) {
		snprintf(o->err, sizeof o->err, "no report (%s: %s)", path, err.text);
		return -1;
	}
	const char *v = json_string_value(json_object_get(root, "verdict"));
	size_t i;
	json_t *inv;
	o->pass = v && !strcmp(v, "pass");
	json_array_foreach(json_object_get(root, "invariants"), i, inv) {
		const char *name = json_string_value(json_object_get(inv, "name"));
		int k = name ? inv_index(name) : -1;
		if (k < 0 || !json_is_true(json_object_get(inv, "applicable")) ||
		    json_integer_value(json_object_get(inv, "violations")) <= 0)
			continue;
		o->viol |= 1u << k;
		const char *t = json_string_value(
			json_object_get(json_array_get(json_object_get(inv, "examples"), 0), "text"));
		snprintf(o->example[k], sizeof o->example[k], "%s", t ? t : "");
	}
	o->ops_per_s = json_number_value(json_object_get(json_object_get(root, "throughput"), "ops_per_s"));
	json_t *tot = json_object_get(root, "totals");
	o->attempts = json_integer_value(json_object_get(tot, "attempts"));
	o->acquired = json_integer_value(json_object_get(tot, "acquired"));
	o->busy = json_integer_value(json_object_get(tot, "busy"));
	o->errors = json_integer_value(json_object_get(tot, "errors"));
	o->ran = 1;
	json_decref(root);
	return 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* fork + exec /proc/self/exe ARGV, stdout and stderr to LOG.  Exit code or 128+signal, -1. */
static int spawn_run(char **argv, const char *log)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int nul = open("/dev/null", O_RDONLY);
		if (fd < 0 || nul < 0)
			_exit(127);
		dup2(nul, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

struct run_opts {
	const char *outdir; /* -o, or NULL */
	char tmp[PATH_MAX]; /* without -o: reports and logs, removed at the end */
	int quiet;
	int wname, wlabel, wexpect;
	unsigned revs, bad, errors;
	char first_bad[600];
};

static void run_revision(const struct scenario *sc, const struct sc_rev *r, struct run_opts *ro,
			 struct observed *o)
{
	char dir[PATH_MAX + 80], log[PATH_MAX + 160], json[PATH_MAX + 160];
	memset(o, 0, sizeof *o);
	int argc;
	char **base = scenario_run_argv(sc, r, &argc);
	char **argv = base ? calloc((size_t)argc + 6, sizeof *argv) : NULL;
	if (!argv) {
		free(base);
		snprintf(o->err, sizeof o->err, "out of memory");
		return;
	}
	argv[0] = "lockstorm";
	memcpy(argv + 1, base, (size_t)argc * sizeof *argv);
	int n = argc + 1;
	argv[n++] = "-q";
	if (ro->outdir) {
		snprintf(dir, sizeof dir, "%s/%s", ro->outdir, sc->name);
		if (mkdir(dir, 0777) && errno != EEXIST) {
			snprintf(o->err, sizeof o->err, "%s: %s", dir, strerror(errno));
			free(base);
			free(argv);
			return;
		}
		snprintf(log, sizeof log, "%s/%s.log", dir, r->label);
		snprintf(dir, sizeof dir, "%s/%s/%s", ro->outdir, sc->name, r->label);
		snprintf(json, sizeof json, "%s/report.json", dir);
		argv[n++] = "-o";
		argv[n++] = dir;
	} else {
		snprintf(log, sizeof log, "%s/%s.%s.log", ro->tmp, sc->name, r->label);
		snprintf(json, sizeof json, "%s/%s.%s.json", ro->tmp, sc->name, r->label);
		argv[n++] = "--json";
		argv[n++] = json;
	}
	argv[n] = NULL;
	unlink(json);
	o->status = spawn_run(argv, log);
	free(base);
	free(argv);
	if (o->status < 0) {
		snprintf(o->err, sizeof o->err, "cannot run /proc/self/exe: %s", strerror(errno));
		return;
	}
	if (o->status != 0 && o->status != 1) {
		char last[400];
		last_line(log, last, sizeof last);
		snprintf(o->err, sizeof o->err, "lockstorm run exited %d: %s", o->status,
			 *last ? last : "(no output)");
	} else if (read_report(json, o) == 0 && o->pass != (o->status == 0)) {
		snprintf(o->err, sizeof o->err, "exit %d disagrees with the report's verdict", o->status);
		o->ran = 0;
	}
	if (!ro->outdir) {
		unlink(json);
		if (o->ran)
			unlink(log);
	}
}

/* 1 as expected, 0 not (why says which invariant), -1 no verdict. */
static int judge(const struct sc_rev *r, const struct observed *o, char *why, size_t len)
{
	char invs[256];
	why[0] = '\0';
	if (!o->ran) {
		snprintf(why, len, "%s", o->err);
		return -1;
	}
	switch (r->expect) {
	case SC_EXPECT_PASS:
		if (o->pass)
			return 1;
		inv_list(o->viol, invs, sizeof invs);
		snprintf(why, len, "expected every invariant to hold; %s broke", invs);
		return 0;
	case SC_EXPECT_FAIL: {
		unsigned held = r->inv_mask & ~o->viol;
		char want[256];
		if (!held)
			return 1;
		inv_list(r->inv_mask, want, sizeof want);
		inv_list(held, invs, sizeof invs);
		snprintf(why, len, "expected %s to break; %s held", want, invs);
		return 0;
	}
	default:
		return 1;
	}
}

static void got_text(const struct observed *o, char *out, size_t len)
{
	char invs[256];
	if (!o->ran)
		snprintf(out, len, "no verdict");
	else if (o->pass)
		snprintf(out, len, "PASS");
	else {
		inv_list(o->viol, invs, sizeof invs);
		snprintf(out, len, "FAIL (%s)", invs);
	}
}

static void run_scenario(const struct scenario *sc, struct run_opts *ro)
{
	if (!ro->quiet) {
		printf("\n%s  (%s)\n", sc->name, sc->path);
		if (*sc->story)
			wrap(stdout, sc->story, 2);
		fflush(stdout);
	}
	for (unsigned i = 0; i < sc->nrev; i++) {
		const struct sc_rev *r = &sc->rev[i];
		struct observed *o = malloc(sizeof *o);
		char ex[300], got[300], why[600];
		if (!o) {
			ro->errors++;
			continue;
		}
		double t0 = now_s();
		run_revision(sc, r, ro, o);
		double dt = now_s() - t0;
		int j = judge(r, o, why, sizeof why);
		expect_text(r, ex, sizeof ex);
		got_text(o, got, sizeof got);
		if (r->expect == SC_EXPECT_BOUND && o->ran) {
			size_t l = strlen(got);
			/* no verdict can show a bound: what the run did instead */
			snprintf(got + l, sizeof got - l, "; %lld attempts: %lld acquired, %lld busy, %lld errors; %.0f ops/s",
				 o->attempts, o->acquired, o->busy, o->errors, o->ops_per_s);
		}
		ro->revs++;
		printf("%-*s  %-*s  %-8s %5.1fs  expect %-*s  got %s\n", ro->wname, sc->name, ro->wlabel, r->label,
		       j > 0 ? "ok" : j == 0 ? "MISMATCH" : "ERROR", dt, ro->wexpect, ex, got);
		if (j <= 0) {
			printf("    %s\n", why);
			if (j == 0) {
				ro->bad++;
				unsigned show = r->expect == SC_EXPECT_PASS ? o->viol : 0;
				for (int k = 0; k < INV__COUNT; k++)
					if (show & (1u << k))
						printf("    %s: %s\n", check_inv_name((enum inv_id)k), o->example[k]);
			} else {
				ro->errors++;
			}
			if (!ro->first_bad[0])
				snprintf(ro->first_bad, sizeof ro->first_bad, "%s %s: %s", sc->name, r->label, why);
		}
		if (r->expect == SC_EXPECT_BOUND && !ro->quiet)
			wrap(stdout, r->bound, 4);
		fflush(stdout);
		free(o);
	}
}

static void rm_tmp(const char *dir)
{
	size_t n = 0;
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char p[PATH_MAX + 300];
		snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
		unlink(p);
		n++;
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

static const char sc_run_usage[] =
	"usage: lockstorm scenario run NAME|FILE.. [-o OUTDIR] [-q]\n"
	"       lockstorm scenario run --all [-o OUTDIR] [-q]\n"
	"  -o OUTDIR   keep every revision's run as OUTDIR/SCENARIO/REVISION (journals, report.json)\n"
	"              and its output as OUTDIR/SCENARIO/REVISION.log\n"
	"  -q          one line per scenario and revision (no stories, no bound texts)\n"
	"exit: 0 every revision as expected, 1 one was not, 2 a bad scenario file, 3 a run failed\n";

static int sc_run(int argc, char **argv)
{
	struct run_opts ro;
	int all = 0;
	const char **names = calloc((size_t)argc, sizeof *names);
	size_t nnames = 0;
	memset(&ro, 0, sizeof ro);
	if (!names)
		return 3;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--all"))
			all = 1;
		else if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet"))
			ro.quiet = 1;
		else if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--out")) && i + 1 < argc)
			ro.outdir = argv[++i];
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(sc_run_usage, stdout);
			free(names);
			return 0;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "lockstorm: scenario run: unknown option '%s' (see scenario run --help)\n", argv[i]);
			free(names);
			return 2;
		} else
			names[nnames++] = argv[i];
	}
	if (all == (nnames > 0)) {
		fprintf(stderr, "lockstorm: scenario run: name scenarios or give --all (not both, not neither)\n");
		free(names);
		return 2;
	}

	/* load everything first: a bad file stops the run before anything ran */
	struct scenario **scs = NULL;
	size_t nsc = 0;
	int rc = 0;
	if (all) {
		char dir[PATH_MAX];
		if (scenario_dir(dir, sizeof dir)) {
			fprintf(stderr, "lockstorm: no scenarios directory (next to the binary, or %s/scenarios)\n",
				LS_SOURCE_DIR);
			free(names);
			return 2;
		}
		rc = load_all(dir, &scs, &nsc);
		if (rc) {
			free(names);
			return rc;
		}
		if (!nsc) {
			fprintf(stderr, "lockstorm: no *.scenario files in %s\n", dir);
			free(scs);
			free(names);
			return 2;
		}
	} else {
		scs = calloc(nnames, sizeof *scs);
		for (size_t i = 0; scs && i < nnames; i++) {
			char path[PATH_MAX], why[1024];
			if (resolve(names[i], path, sizeof path, why, sizeof why) ||
			    !(scs[i] = scenario_load(path, why, sizeof why))) {
				fprintf(stderr, "lockstorm: %s\n", why);
				rc = 2;
				break;
			}
			nsc = i + 1;
		}
		if (!scs)
			rc = 3;
	}
	free(names);
	if (rc)
		goto out;

	if (ro.outdir) {
		if (mkdir(ro.outdir, 0777) && errno != EEXIST) {
			fprintf(stderr, "lockstorm: scenario run -o %s: %s\n", ro.outdir, strerror(errno));
			rc = 2;
			goto out;
		}
	} else {
		const char *base = getenv("TMPDIR");
		snprintf(ro.tmp, sizeof ro.tmp, "%s/lockstorm-scenario.XXXXXX", base && *base ? base : "/tmp");
		if (!mkdtemp(ro.tmp)) {
			fprintf(stderr, "lockstorm: cannot make a temporary directory: %s\n", strerror(errno));
			rc = 3;
			goto out;
		}
	}
	ro.wname = ro.wlabel = 1;
	ro.wexpect = 4;
	for (size_t i = 0; i < nsc; i++) {
		if ((int)strlen(scs[i]->name) > ro.wname)
			ro.wname = (int)strlen(scs[i]->name);
		for (unsigned k = 0; k < scs[i]->nrev; k++) {
			char ex[300];
			expect_text(&scs[i]->rev[k], ex, sizeof ex);
			if ((int)strlen(scs[i]->rev[k].label) > ro.wlabel)
				ro.wlabel = (int)strlen(scs[i]->rev[k].label);
			if ((int)strlen(ex) > ro.wexpect && strlen(ex) <= 40)
				ro.wexpect = (int)strlen(ex);
		}
	}
	double t0 = now_s();
	for (size_t i = 0; i < nsc; i++)
		run_scenario(scs[i], &ro);
	printf("\n%zu scenario%s, %u revision%s, %.1f s: ", nsc, nsc == 1 ? "" : "s", ro.revs,
	       ro.revs == 1 ? "" : "s", now_s() - t0);
	if (!ro.bad && !ro.errors)
		printf("every revision as expected\n");
	else
		printf("%u not as expected, %u without a verdict; first: %s\n", ro.bad, ro.errors, ro.first_bad);
	rc = ro.errors ? 3 : ro.bad ? 1 : 0;
	if (ro.outdir && !ro.quiet)
		printf("runs kept in %s\n", ro.outdir);
	else if (!ro.outdir && (ro.bad || ro.errors))
		printf("(run it again with -o OUTDIR to keep every revision's journals and report)\n");
	if (!ro.outdir)
		rm_tmp(ro.tmp);
out:
	for (size_t i = 0; i < nsc; i++)
		scenario_free(scs[i]);
	free(scs);
	return rc;
}

/* ---- new --from-run ---- */

static void put_opt(FILE *f, const char *opt, const char *value)
{
	if (value)
		fprintf(f, "%s %s\n", opt, value);
	else
		fprintf(f, "%s\n", opt);
}

static void one_line(char *s)
{
	for (; *s; s++)
		if (*s == '\n' || *s == '\r' || *s == '\t')
			*s = ' ';
}

static int sc_new(int argc, char **argv)
{
	const char *name = NULL, *from = NULL, *outfile = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--from-run") && i + 1 < argc)
			from = argv[++i];
		else if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--out")) && i + 1 < argc)
			outfile = argv[++i];
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: lockstorm scenario new NAME --from-run OUTDIR [-o FILE]\n"
			       "  OUTDIR  a kept run (lockstorm run -o OUTDIR): its run.json and report.json\n"
			       "  -o FILE write the scenario there (refuses an existing file); default stdout\n");
			return 0;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "lockstorm: scenario new: unknown option '%s'\n", argv[i]);
			return 2;
		} else if (name) {
			fprintf(stderr, "lockstorm: scenario new: one NAME only (got '%s' too)\n", argv[i]);
			return 2;
		} else
			name = argv[i];
	}
	if (!name || !from) {
		fprintf(stderr, "lockstorm: scenario new: usage: lockstorm scenario new NAME --from-run OUTDIR [-o FILE]\n");
		return 2;
	}
	if (!name_ok(name, 0)) {
		fprintf(stderr, "lockstorm: scenario new: name '%s': letters, digits, '.', '_', '-', '+' only\n", name);
		return 2;
	}
	if (outfile && access(outfile, F_OK) == 0) {
		fprintf(stderr, "lockstorm: scenario new: %s exists: refusing to overwrite it\n", outfile);
		return 2;
	}

	char p[PATH_MAX + 32], why[1024];
	struct run_config *cfg = malloc(sizeof *cfg);
	if (!cfg)
		return 3;
	snprintf(p, sizeof p, "%s/run.json", from);
	if (!is_file(p)) {
		fprintf(stderr, "lockstorm: %s has no run.json: not a kept run (use run -o OUTDIR)\n", from);
		free(cfg);
		return 2;
	}
	if (runcfg_load(cfg, p, why, sizeof why)) {
		fprintf(stderr, "lockstorm: %s\n", why);
		free(cfg);
		return 2;
	}
	struct observed obs;
	memset(&obs, 0, sizeof obs);
	snprintf(p, sizeof p, "%s/report.json", from);
	if (read_report(p, &obs)) {
		fprintf(stderr, "lockstorm: %s has no readable report.json (%s)\n", from, obs.err);
		free(cfg);
		return 2;
	}

	char label[SC_NAME_MAX * 4] = "";
	size_t ln = 0;
	for (unsigned i = 0; i < cfg->nproto; i++)
		ln += (size_t)snprintf(label + ln, ln < sizeof label ? sizeof label - ln : 0, "%s%s", i ? "," : "",
				       cfg->proto[i]->name);
	if (!name_ok(label, 1)) {
		fprintf(stderr, "lockstorm: scenario new: the protocol list '%s' is too long for a revision label\n",
			label);
		free(cfg);
		return 2;
	}

	char *text = NULL;
	size_t tlen = 0;
	FILE *f = open_memstream(&text, &tlen);
	if (!f) {
		free(cfg);
		return 3;
	}
	char got[300], invs[256];
	got_text(&obs, got, sizeof got);
	inv_list(obs.viol, invs, sizeof invs);
	fprintf(f, "# Made by `lockstorm scenario new %s --from-run %s`.\n", name, from);
	fprintf(f, "# Say in the story what happened in production, add the fixed revision beside this one\n"
		   "# (revision LABEL PROTO, expect LABEL pass), then `lockstorm scenario run` it.\n");
	fprintf(f, "name %s\n", name);
	fprintf(f, "story Reproduces the kept run %s, verdict %s.\n", from, got);
	for (int k = 0; k < INV__COUNT; k++)
		if (obs.viol & (1u << k)) {
			one_line(obs.example[k]);
			fprintf(f, "story %s: %s\n", check_inv_name((enum inv_id)k), obs.example[k]);
		}
	fprintf(f, "\nrevision %s\n", label);
	if (obs.pass)
		fprintf(f, "expect %s pass\n", label);
	else {
		/* "a, b" -> "a,b" */
		char compact[256];
		size_t c = 0;
		for (const char *s = invs; *s && c + 1 < sizeof compact; s++)
			if (*s != ' ')
				compact[c++] = *s;
		compact[c] = '\0';
		fprintf(f, "expect %s fail %s\n", label, compact);
	}
	fprintf(f, "\n");
	char v[64];
	put_opt(f, "-w", cfg->workload->name);
	snprintf(v, sizeof v, "%u", cfg->workers);
	put_opt(f, "-n", v);
	if (cfg->ops) {
		snprintf(v, sizeof v, "%llu", (unsigned long long)cfg->ops);
		put_opt(f, "--ops", v);
	} else {
		snprintf(v, sizeof v, "%lldms", (long long)cfg->duration_ms);
		put_opt(f, "-d", v);
	}
	if (cfg->time_scale != 1.0) {
		/* the shortest form that reads back as the same number */
		for (int prec = 6; prec <= 17; prec++) {
			snprintf(v, sizeof v, "%.*g", prec, cfg->time_scale);
			if (strtod(v, NULL) == cfg->time_scale)
				break;
		}
		put_opt(f, "--time-scale", v);
	}
	snprintf(v, sizeof v, "%llu", (unsigned long long)cfg->seed);
	put_opt(f, "-s", v);
	for (unsigned i = 0; i < cfg->nkv; i++)
		put_opt(f, "--param", cfg->kv[i]);
	/* a profile's rules come back as --faults NAME; the others one by one */
	unsigned char from_profile[FAULT_MAX_RULES] = { 0 };
	if (cfg->faults.profile[0]) {
		static struct fault_plan prof;
		memset(&prof, 0, sizeof prof);
		if (fault_profile(&prof, cfg->faults.profile, why, sizeof why) == 0) {
			put_opt(f, "--faults", cfg->faults.profile);
			for (unsigned k = 0; k < prof.n; k++)
				for (unsigned i = 0; i < cfg->faults.n; i++)
					if (!from_profile[i] && !strcmp(cfg->faults.rule[i].spec, prof.rule[k].spec)) {
						from_profile[i] = 1;
						break;
					}
		}
	}
	for (unsigned i = 0; i < cfg->faults.n; i++)
		if (!from_profile[i])
			put_opt(f, "--fault", cfg->faults.rule[i].spec);
	if (cfg->respawn)
		put_opt(f, "--respawn", NULL);
	fclose(f);
	free(cfg);

	/* check what we made with the same parser `run` uses */
	char tmp[PATH_MAX];
	const char *base = getenv("TMPDIR");
	snprintf(tmp, sizeof tmp, "%s/lockstorm-new.XXXXXX", base && *base ? base : "/tmp");
	int fd = mkstemp(tmp);
	if (fd < 0 || write(fd, text, tlen) != (ssize_t)tlen) {
		fprintf(stderr, "lockstorm: scenario new: %s: %s\n", tmp, strerror(errno));
		if (fd >= 0)
			close(fd), unlink(tmp);
		free(text);
		return 3;
	}
	close(fd);
	struct scenario *sc = scenario_load(tmp, why, sizeof why);
	unlink(tmp);
	if (!sc) {
		fprintf(stderr, "lockstorm: scenario new: the scenario made from %s does not parse: %s\n", from, why);
		free(text);
		return 3;
	}
	scenario_free(sc);
	int rc = 0;
	if (outfile) {
		FILE *o = fopen(outfile, "wx");
		if (!o || fwrite(text, 1, tlen, o) != tlen) {
			fprintf(stderr, "lockstorm: scenario new: %s: %s\n", outfile, strerror(errno));
			rc = 2;
		}
		if (o && fclose(o) && !rc) {
			fprintf(stderr, "lockstorm: scenario new: %s: %s\n", outfile, strerror(errno));
			rc = 2;
		}
		if (!rc)
			fprintf(stderr, "lockstorm: wrote %s (run it: lockstorm scenario run %s)\n", outfile, outfile);
	} else {
		fwrite(text, 1, tlen, stdout);
	}
	free(text);
	return rc;
}

/* ---- dispatch ---- */

static const char sc_usage[] =
	"usage: lockstorm scenario list\n"
	"       lockstorm scenario show NAME\n"
	"       lockstorm scenario run NAME|FILE.. [-o OUTDIR] [-q]\n"
	"       lockstorm scenario run --all [-o OUTDIR] [-q]\n"
	"       lockstorm scenario new NAME --from-run OUTDIR [-o FILE]\n"
	"\n"
	"A scenario (scenarios/*.scenario, docs/scenarios.md) states an incident or a known bad\n"
	"interleaving as `lockstorm run` options, the revisions to run it against, and the verdict\n"
	"each should reach.  `run` runs every revision and exits 0 only when each behaved as expected.\n"
	"exit: 0 as expected, 1 a revision was not, 2 bad usage or a bad scenario file, 3 a run failed\n";

int scenario_main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(sc_usage, stderr);
		return 2;
	}
	const char *sub = argv[1];
	if (!strcmp(sub, "-h") || !strcmp(sub, "--help") || !strcmp(sub, "help")) {
		fputs(sc_usage, stdout);
		return 0;
	}
	if (!strcmp(sub, "list"))
		return sc_list(argc - 1, argv + 1);
	if (!strcmp(sub, "show"))
		return sc_show(argc - 1, argv + 1);
	if (!strcmp(sub, "run"))
		return sc_run(argc - 1, argv + 1);
	if (!strcmp(sub, "new"))
		return sc_new(argc - 1, argv + 1);
	fprintf(stderr, "lockstorm: scenario: unknown subcommand '%s' (list, show, run, new)\n", sub);
	return 2;
}
