/*
 * xext_search.c - `lockstorm explore` and `lockstorm replay` for external
 * workers (see xext.h): random search with stalls drawn as the built-in
 * random strategy draws them, ddmin over the deviations of a failure, the
 * story in the library's own calls, the counterexample file, its replay.
 *
 * A counterexample file keeps the explore command's own arguments (so the
 * replay builds the same configuration by the same parser), the deviations,
 * and every step's words: the replay runs the deviations and compares.
 */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../check/checker.h"
#include "../check/verdict.h"
#include "../core/prng.h"
#include "../faults/fsx.h"
#include "../workloads/workload.h"
#include "xext.h"

#define XE_SCHEMA "lockstorm-xext-cex/1"
#define XE_MORE 12 /* schedules spent after a zombie write for a removal by name */

static int64_t xe_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- random, with at most one stall at a drawn decision ---- */

struct xe_rand {
	struct prng rng;
	const struct xext *xe;
	uint32_t stall_at;       /* in decisions made while somebody holds the lock */
	uint32_t holds;          /* such decisions so far */
	int stalled;             /* the worker stalled, -1 none */
	uint32_t others_until;   /* at most till this decision the others run first */
	uint64_t acq_at_stall;   /* acquisitions when it stalled */
	int waking;              /* another took the lock since: the stalled worker wakes soon */
	uint32_t wake_at, wake_until; /* then the stalled worker runs first, till wake_until */
};

/* Mostly the default (keep running the worker that ran last), now and then
 * another worker's call.  One stall, at a drawn decision among those made
 * while somebody holds the lock (a stall matters there), of a drawn worker;
 * then the others run first until one of them has taken the lock and a drawn
 * 0..3 decisions more (or 40), and then the stalled worker: a process
 * frozen past the stale age wakes while its lock is another's.  Few
 * deviations: ddmin is quick. */
static unsigned xe_choose_random(void *ctx, const struct xdec *d)
{
	struct xe_rand *r = ctx;
	int holding = 0;
	for (unsigned w = 0; w < r->xe->n; w++)
		holding |= r->xe->w[w].holding;
	/* the options: runs, then stalls and crashes, then errnos, then torn and
	 * split writes (those two kinds when asked for) */
	unsigned ne = 0, first = d->nopt, efirst = 0, nw = 0, wfirst = 0;
	for (unsigned i = d->nrun; i < d->nopt; i++) {
		unsigned kind = d->opt[i].kind;
		if ((kind == XK_ERRNO || kind == XK_SHORT || kind == XK_SPLIT) && first == d->nopt)
			first = i;
		if (kind == XK_ERRNO && !ne++)
			efirst = i;
		if ((kind == XK_SHORT || kind == XK_SPLIT) && !nw++)
			wfirst = i;
	}
	if (holding && r->holds++ == r->stall_at && first > d->nrun) { /* a stall or crash, never an errno or a write's */
		unsigned pick = d->nrun + (unsigned)prng_below(&r->rng, first - d->nrun);
		r->stalled = d->opt[pick].w;
		r->others_until = d->at + 40;
		r->acq_at_stall = r->xe->acquires;
		r->waking = 0;
		r->wake_until = 0;
		return pick;
	}
	if (r->stalled >= 0 && !r->waking && (r->xe->acquires > r->acq_at_stall || d->at >= r->others_until)) {
		r->waking = 1;
		r->wake_at = d->at + (uint32_t)prng_below(&r->rng, 4);
		r->wake_until = r->wake_at + 12;
	}
	if (r->stalled >= 0 && (!r->waking || d->at < r->wake_until)) {
		int others = !r->waking || d->at < r->wake_at;
		unsigned idx[X_MAX_OPTS], k = 0;
		for (unsigned i = 0; i < d->nrun; i++)
			if ((d->opt[i].w != r->stalled) == others)
				idx[k++] = i;
		if (k && !others && prng_unit(&r->rng) < 0.75) { /* its oldest call: the one it was frozen at */
			unsigned best = idx[0];
			for (unsigned i = 1; i < k; i++)
				if (d->opt[idx[i]].m < d->opt[best].m)
					best = idx[i];
			return best;
		}
		if (k)
			return idx[k == 1 ? 0 : prng_below(&r->rng, k)];
	}
	/* an errno now and then, when they are asked for (the loop offers them
	 * while the budget lasts; without them the draws below are as before) */
	if (ne && prng_unit(&r->rng) < 0.05)
		return efirst + (unsigned)prng_below(&r->rng, ne);
	/* a write torn or split now and then: a write is a decision or two of an
	 * op, so more often than an errno (without them, no draw is made) */
	if (nw && prng_unit(&r->rng) < 0.2)
		return wfirst + (unsigned)prng_below(&r->rng, nw);
	if (prng_unit(&r->rng) < 0.25)
		return (unsigned)prng_below(&r->rng, d->nrun);
	return 0;
}

/* ---- the story ---- */

/* The line the violation is in: the first whose records reach its seq. */
static size_t xe_cut(const struct xe_exec *x)
{
	uint64_t seq = 0;
	if (x->inv >= 0 && x->res.inv[x->inv].nex)
		seq = x->res.inv[x->inv].ex[0].seq[0];
	for (size_t i = 0; i < x->nline; i++)
		if (seq && x->line[i].rec_to >= seq)
			return i + 1;
	return x->nline;
}

/* What the steps in between did, in one line: "w1: 6 calls (mkdir state.json.lock: EEXIST, stat ...)". */
static void xe_meanwhile(const struct xe_exec *x, size_t from, size_t to, char *buf, size_t len)
{
	size_t used = 0;
	unsigned per[SCHED_MAX_WORKERS] = { 0 };
	const char *first[SCHED_MAX_WORKERS] = { NULL };
	int64_t t_end = -1;
	for (size_t i = from; i < to; i++) {
		const struct xe_line *l = &x->line[i];
		if (l->kind == XEL_TIME) {
			t_end = l->now_ms;
			continue;
		}
		if (!per[l->w]++)
			first[l->w] = l->text;
	}
	for (unsigned w = 0; w < SCHED_MAX_WORKERS; w++) {
		if (!per[w])
			continue;
		const char *t = first[w];
		const char *sp = strchr(t, ' ');
		used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%sw%u: %u call%s (%s%s)",
					 used ? "; " : "", w, per[w], per[w] == 1 ? "" : "s", sp ? sp + 1 : t,
					 per[w] > 1 ? ", ..." : "");
	}
	for (size_t i = to; i-- > from;)
		if (x->line[i].kind == XEL_TIME) {
			t_end = x->line[i].now_ms;
			break;
		}
	(void)t_end;
}

/* A whole op of one worker from line i, nobody else's step in it, ending in
 * its release before the cut (told as one line): its end, else 0. */
static size_t xe_whole_op(const struct xe_exec *x, size_t i, size_t cut)
{
	const struct xe_line *l = &x->line[i];
	if (l->kind != XEL_CALL || (i && x->line[i - 1].w == l->w && x->line[i - 1].kind == XEL_CALL &&
				    !strstr(x->line[i - 1].text, "released")))
		return 0;
	for (size_t j = i; j < cut; j++) {
		const struct xe_line *m = &x->line[j];
		if (m->kind != XEL_CALL || m->w != l->w || m->fault) /* a fault is told on its own line */
			return 0;
		if (strstr(m->text, "-> released") || strstr(m->text, ", released"))
			return j + 1 - i >= 3 && j + 1 < cut ? j + 1 : 0;
	}
	return 0;
}

/* The story: the calls that changed something or reported an event, the
 * stalls, and between them one line for the rest (failed retries, stats)
 * with the clock. */
static size_t xe_story(FILE *out, const struct xe_exec *x, json_t *lines)
{
	size_t cut = xe_cut(x), k = 0, i = 0;
	while (i < cut) {
		const struct xe_line *l = &x->line[i];
		char buf[900];
		size_t e = xe_whole_op(x, i, cut);
		if (e) {
			const char *a = strchr(l->text, ' '), *b = strchr(x->line[e - 1].text, ' ');
			const char *ar = strstr(x->line[e - 1].text, " -> ");
			int alen = a ? (int)(strcspn(a + 1, ":") ) : 0, blen = b ? (int)(strcspn(b + 1, ":")) : 0;
			snprintf(buf, sizeof buf, "[%8.3f s] w%u: one whole op alone, %zu calls (%.*s ... %.*s)%s", (double)l->now_ms / 1000,
				 l->w, e - i, alen, a ? a + 1 : "", blen, b ? b + 1 : "", ar ? ar : "");
			i = e;
		} else if (l->kind == XEL_CALL && !l->mutates) {
			size_t j = i;
			while (j < cut && !(x->line[j].kind != XEL_TIME && x->line[j].mutates))
				j++;
			int64_t t = x->line[j - 1].now_ms;
			char mw[700];
			mw[0] = '\0';
			xe_meanwhile(x, i, j, mw, sizeof mw);
			if (!mw[0]) {
				i = j;
				continue;
			}
			snprintf(buf, sizeof buf, "[%8.3f s] %s", (double)t / 1000, mw);
			i = j;
		} else if (l->kind == XEL_TIME) {
			size_t j = i;
			while (j < cut && x->line[j].kind == XEL_TIME)
				j++;
			if (j < cut && x->line[j].kind == XEL_CALL && !x->line[j].mutates) {
				i = j; /* told with the calls after it */
				continue;
			}
			snprintf(buf, sizeof buf, "[%8.3f s] the clock moves to %.3f s", (double)x->line[j - 1].now_ms / 1000,
				 (double)x->line[j - 1].now_ms / 1000);
			i = j;
		} else {
			snprintf(buf, sizeof buf, "[%8.3f s] %s", (double)l->now_ms / 1000, l->text);
			i++;
		}
		k++;
		if (out)
			fprintf(out, "  %3zu  %s\n", k, buf);
		if (lines)
			json_array_append_new(lines, json_string(buf));
	}
	return k;
}

static void xe_violation(FILE *out, const struct xe_exec *x)
{
	if (x->inv < 0)
		return;
	const struct check_inv *ci = &x->res.inv[x->inv];
	fprintf(out, "  violated: %s: %s\n", ci->name, ci->nex ? ci->ex[0].text : "");
	for (int i = 0; i < INV__COUNT; i++)
		if (i != x->inv && x->res.inv[i].applicable && x->res.inv[i].violations)
			fprintf(out, "  also violated: %s: %s\n", x->res.inv[i].name,
				x->res.inv[i].nex ? x->res.inv[i].ex[0].text : "");
}

static json_t *xe_steps_json(const struct xe_exec *x)
{
	json_t *a = json_array();
	for (size_t i = 0; i < x->nline; i++) {
		char b[480];
		snprintf(b, sizeof b, "%lld %s", (long long)x->line[i].now_ms, x->line[i].text);
		json_array_append_new(a, json_string(b));
	}
	return a;
}

/* ---- shrink ---- */

struct xe_pred {
	struct xext *xe;
	struct xe_exec *x;
	int inv;
	unsigned runs;
};

static int xe_pred(void *ctx, const void *items, size_t n)
{
	struct xe_pred *p = ctx;
	if (x_interrupted || p->runs >= 400)
		return 0;
	p->runs++;
	struct xe_exec y = { 0 };
	int ok = xext_replay_dev(p->xe, &p->x->sh, items, n, &y) == 0 && y.outcome == XO_FAIL && y.inv == p->inv;
	xe_exec_free(&y);
	return ok;
}

static void xe_shrink(struct xext *xe, struct xe_exec *x)
{
	struct xchoice *dev = malloc((x->ndev + 1) * sizeof *dev);
	if (!dev)
		return;
	if (x->ndev) /* a NULL pointer even with a length of 0 is undefined */
		memcpy(dev, x->dev, x->ndev * sizeof *dev);
	struct xe_pred p = { xe, x, x->inv, 0 };
	size_t n = explore_ddmin(dev, x->ndev, sizeof *dev, xe_pred, &p);
	/* fewer ops: the same choices on a shorter run */
	for (unsigned w = 0; w < x->sh.n; w++)
		while (x->sh.ops[w] > 1) {
			x->sh.ops[w]--;
			if (!xe_pred(&p, dev, n)) {
				x->sh.ops[w]++;
				break;
			}
		}
	struct xe_exec y = { 0 };
	if (xext_replay_dev(xe, &x->sh, dev, n, &y) == 0 && y.outcome == XO_FAIL && y.inv == x->inv) {
		xe_exec_free(x);
		*x = y;
	} else {
		xe_exec_free(&y);
	}
	free(dev);
}

/* ---- counterexample files ---- */

static json_t *xe_cex(const struct xext *xe, const struct xe_exec *x, int argc, char **argv, uint64_t sched)
{
	json_t *args = json_array(), *ch = json_array(), *story = json_array();
	for (int i = 1; i < argc; i++)
		json_array_append_new(args, json_string(argv[i]));
	for (size_t i = 0; i < x->ndev; i++)
		json_array_append_new(ch, json_pack("{s:i,s:s,s:i,s:i}", "at", (json_int_t)x->dev[i].at, "do",
						    kind_names[x->dev[i].kind], "w", x->dev[i].w, "m", x->dev[i].m));
	xe_story(NULL, x, story);
	json_t *ops = json_array();
	for (unsigned w = 0; w < x->sh.n; w++)
		json_array_append_new(ops, json_integer(x->sh.ops[w]));
	return json_pack("{s:s,s:s,s:o,s:i,s:o,s:o,s:s,s:I,s:o,s:o}", "schema", XE_SCHEMA, "protocol",
			 xe->cfg->run.proto[0]->name, "args", args, "workers", x->sh.n, "ops", ops, "choices", ch,
			 "invariant", x->inv >= 0 ? check_inv_name((enum inv_id)x->inv) : "", "schedule",
			 (json_int_t)sched, "story", story, "steps", xe_steps_json(x));
}

int xext_is_cex(const char *path)
{
	json_t *root = json_load_file(path, 0, NULL);
	const char *s = json_string_value(json_object_get(root, "schema"));
	int is = s && !strcmp(s, XE_SCHEMA);
	json_decref(root);
	return is;
}

/* ---- explore ---- */

static void xe_on_interrupt(int sig)
{
	(void)sig;
	x_interrupted = 1;
}

int xext_main(struct xcfg *cfg, int argc, char **argv)
{
	static struct xext xe;
	char why[1024];
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = xe_on_interrupt; /* stop searching; the work directory is removed */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	int r = xext_open(&xe, cfg, why, sizeof why);
	if (r != 0) {
		fprintf(stderr, "lockstorm explore: %s\n", why);
		xext_close(&xe);
		return r;
	}
	const struct xshape sh = shape_even(cfg->run.workers, cfg->ops);
	if (!cfg->quiet)
		fprintf(stderr, "lockstorm explore: %s (the library itself, %s) / %s, %u workers x %u ops, strategy random, "
			"seed %llu, stalls <= %u (%.3g x stale), crashes <= %u, errnos <= %u, short writes <= %u, "
			"split writes <= %u\n", cfg->run.proto[0]->name,
			xe.cmd, cfg->run.workload->name, cfg->run.workers, cfg->ops, (unsigned long long)cfg->run.seed,
			cfg->max_stalls, cfg->stallv[0], cfg->crashes_named ? cfg->max_crashes : 0,
			xe_budget(cfg, XK_ERRNO), xe_budget(cfg, XK_SHORT), xe_budget(cfg, XK_SPLIT));
	int64_t t0 = xe_mono_ms(), found = 0;
	uint64_t k = 0, bounded = 0, found_k = 0;
	int rc = 0, more = -1;
	struct xe_exec x = { 0 }, best = { 0 };
	for (;;) {
		if (x_interrupted || (cfg->schedules && k >= cfg->schedules) || xe_mono_ms() - t0 >= cfg->budget_ms)
			break;
		struct xe_rand rnd;
		prng_seed(&rnd.rng, cfg->run.seed, 0x5eed, k);
		uint32_t kk = xe.khold ? xe.khold : 16;
		rnd.xe = &xe;
		rnd.holds = 0;
		rnd.stall_at = prng_unit(&rnd.rng) < 0.9 ? (uint32_t)prng_below(&rnd.rng, kk) : UINT32_MAX;
		rnd.stalled = -1;
		rnd.others_until = 0;
		k++;
		if (xext_exec(&xe, &sh, xe_choose_random, &rnd, &x) != 0) {
			fprintf(stderr, "lockstorm explore: schedule %llu: %s\n", (unsigned long long)k, x.why);
			rc = 3;
			break;
		}
		if (getenv("LOCKSTORM_XEXT_TRACE")) /* every execution's steps, for debugging a strategy */
			for (size_t i = 0; i < x.nline; i++)
				fprintf(stderr, "    %llu.%zu %lld %s\n", (unsigned long long)k, i, (long long)x.line[i].now_ms,
					x.line[i].text);
		if (rnd.holds > xe.khold)
			xe.khold = rnd.holds;
		bounded += x.outcome == XO_BOUND;
		if (cfg->verbose)
			fprintf(stderr, "schedule %llu: %u decisions, %s\n", (unsigned long long)k, x.decisions,
				x.outcome == XO_FAIL ? check_inv_name((enum inv_id)x.inv)
				: x.outcome == XO_BOUND ? "cut at the step bound" : "pass");
		if (x.outcome != XO_FAIL) {
			if (more >= 0 && ++more >= XE_MORE)
				break;
			continue;
		}
		int takeover = x.inv == INV_OWN_RELEASE || x.inv == INV_EXCLUSION;
		if (best.outcome != XO_FAIL || takeover) {
			xe_exec_free(&best);
			best = x;
			memset(&x, 0, sizeof x);
			found = xe_mono_ms();
			found_k = k;
		}
		/* a takeover race whose story shows the lock removed by name (own-release,
		 * exclusion) says more than its zombie write: a few more schedules for one */
		if (takeover || cfg->want)
			break;
		if (more < 0 && !cfg->quiet)
			fprintf(stderr, "schedule %llu: %s; up to %d more schedules for a removal by name\n",
				(unsigned long long)k, check_inv_name((enum inv_id)best.inv), XE_MORE);
		if (++more >= XE_MORE)
			break;
	}
	if (rc == 0 && best.outcome == XO_FAIL) {
		if (!cfg->quiet)
			fprintf(stderr, "schedule %llu: %s after %.1f s; shrinking %zu choices ...\n",
				(unsigned long long)found_k, check_inv_name((enum inv_id)best.inv),
				(double)(found - t0) / 1000, best.ndev);
		if (!cfg->no_shrink)
			xe_shrink(&xe, &best);
		printf("%s violated (schedule %llu, found in %.1f s, shrunk in %.1f s to %zu choices):\n",
		       check_inv_name((enum inv_id)best.inv), (unsigned long long)found_k, (double)(found - t0) / 1000,
		       (double)(xe_mono_ms() - found) / 1000, best.ndev);
		size_t n = xe_story(stdout, &best, NULL);
		xe_violation(stdout, &best);
		char file[PATH_MAX + 32];
		snprintf(file, sizeof file, "%s/cex-1.json", cfg->outdir);
		json_t *cj = xe_cex(&xe, &best, argc, argv, found_k);
		if (fsx_mkdir_p(cfg->outdir) != 0 || !cj || json_dump_file(cj, file, JSON_INDENT(1)) != 0) {
			fprintf(stderr, "lockstorm explore: cannot write %s: %s\n", file, strerror(errno));
			rc = 3;
		} else {
			printf("story: %zu steps; counterexample: %s (lockstorm replay %s)\n", n, file, file);
			rc = 1;
		}
		json_decref(cj);
	}
	xe_exec_free(&best);
	double el = (double)(xe_mono_ms() - t0) / 1000;
	if (rc == 0)
		printf("no violation: %llu schedules in %.1f s (%llu cut at the step bound), %llu executions of %s\n",
		       (unsigned long long)k, el, (unsigned long long)bounded, (unsigned long long)xe.execs,
		       cfg->run.proto[0]->name);
	xe_exec_free(&x);
	xext_close(&xe);
	return rc;
}

/* ---- replay ---- */

int xext_replay_main(const char *path, int quiet, int full, const char *dir)
{
	(void)full;
	json_error_t je;
	json_t *root = json_load_file(path, 0, &je);
	if (!root) {
		fprintf(stderr, "lockstorm replay: %s: %s\n", path, je.text);
		return 2;
	}
	json_t *args = json_object_get(root, "args"), *ch = json_object_get(root, "choices");
	if (!json_is_array(args) || !json_is_array(ch) || json_array_size(args) > 120) {
		fprintf(stderr, "lockstorm replay: %s: not an external counterexample (args, choices)\n", path);
		json_decref(root);
		return 2;
	}
	char *argv[128];
	int argc = 0;
	argv[argc++] = (char *)"explore";
	for (size_t i = 0; i < json_array_size(args); i++) {
		const char *s = json_string_value(json_array_get(args, i));
		if (s)
			argv[argc++] = (char *)s;
	}
	argv[argc] = NULL;
	static struct xcfg cfg;
	char why[1024];
	xcfg_defaults(&cfg);
	if (xcfg_parse(&cfg, argc, argv, why, sizeof why) != 0) {
		fprintf(stderr, "lockstorm replay: %s: %s\n", path, why);
		json_decref(root);
		return 2;
	}
	if (dir && *dir)
		snprintf(cfg.dir, sizeof cfg.dir, "%s", dir);
	size_t ndev = json_array_size(ch);
	struct xchoice *dev = calloc(ndev + 1, sizeof *dev);
	for (size_t i = 0; i < ndev && dev; i++) {
		json_t *c = json_array_get(ch, i);
		const char *kind = json_string_value(json_object_get(c, "do"));
		dev[i].at = (uint32_t)json_integer_value(json_object_get(c, "at"));
		int kk = x_kind_parse(kind);
		dev[i].kind = (uint8_t)(kk == XK_STALL || kk == XK_CRASH || kk == XK_ERRNO || kk == XK_SHORT ||
					kk == XK_SPLIT ? kk : XK_RUN);
		dev[i].w = (uint8_t)json_integer_value(json_object_get(c, "w"));
		dev[i].m = (uint8_t)json_integer_value(json_object_get(c, "m"));
	}
	struct xshape sh = shape_even(cfg.run.workers, cfg.ops);
	json_t *ops = json_object_get(root, "ops");
	for (unsigned w = 0; w < sh.n && w < json_array_size(ops); w++)
		sh.ops[w] = (unsigned)json_integer_value(json_array_get(ops, w));
	static struct xext xe;
	int rc = xext_open(&xe, &cfg, why, sizeof why);
	struct xe_exec x = { 0 };
	if (rc != 0) {
		fprintf(stderr, "lockstorm replay: %s\n", why);
		goto out;
	}
	if (!dev || xext_replay_dev(&xe, &sh, dev, ndev, &x) != 0) {
		fprintf(stderr, "lockstorm replay: %s\n", dev ? x.why : "out of memory");
		rc = 3;
		goto out;
	}
	json_t *saved = json_object_get(root, "steps"), *now = xe_steps_json(&x);
	size_t na = json_array_size(saved), nb = json_array_size(now), diverge = SIZE_MAX;
	for (size_t k = 0; k < (na > nb ? na : nb) && diverge == SIZE_MAX; k++) {
		const char *s1 = k < na ? json_string_value(json_array_get(saved, k)) : NULL;
		const char *s2 = k < nb ? json_string_value(json_array_get(now, k)) : NULL;
		if (!s1 || !s2 || strcmp(s1, s2))
			diverge = k;
	}
	const char *want = json_string_value(json_object_get(root, "invariant"));
	int fails = x.outcome == XO_FAIL;
	if (!quiet || fails) {
		printf("replay %s: %s / %s, %u workers, %zu choices\n", path, cfg.run.proto[0]->name,
		       cfg.run.workload->name, sh.n, ndev);
		if (fails && diverge == SIZE_MAX) {
			xe_story(stdout, &x, NULL);
			xe_violation(stdout, &x);
		}
	}
	if (diverge == SIZE_MAX) {
		printf("steps: the same %zu steps as saved\n", nb);
	} else {
		const char *s1 = diverge < na ? json_string_value(json_array_get(saved, diverge)) : "(none)";
		const char *s2 = diverge < nb ? json_string_value(json_array_get(now, diverge)) : "(none)";
		printf("steps: DIVERGED at step %zu of %zu saved (saved: %s; now: %s)\n", diverge + 1, na, s1, s2);
	}
	json_decref(now);
	struct verdict v;
	rc = replay_judge(&v, fails, diverge != SIZE_MAX, want, fails ? check_inv_name((enum inv_id)x.inv) : NULL);
	verdict_print(stdout, &v);
out:
	xe_exec_free(&x);
	xext_close(&xe);
	free(dev);
	json_decref(root);
	return rc;
}
