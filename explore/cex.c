/*
 * cex.c - counterexample files: written, loaded, and the failure's signature (see xint.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../faults/fsx.h"
#include "../workloads/workload.h"
#include "../core/arena.h"
#include "../check/checker.h"
#include "../check/verdict.h"
#include "../workloads/config.h"
#include "../run/driver.h"
#include "../core/journal.h"
#include "../core/prng.h"
#include "../run/runcfg.h"
#include "../core/sched.h"
#include "xint.h"

/* A signature of the shrunk failure: invariant + the story's steps. */
uint64_t failure_sig(const struct explorer *ex, const struct xexec *x)
{
	unsigned char *keep = calloc(x->nstep + 1, 1);
	uint64_t h = point_hash(check_inv_name((enum inv_id)x->inv));
	if (!keep)
		return h;
	size_t upto = story_slice(ex, x, keep);
	for (size_t k = 0; k < upto; k++) {
		if (!keep[k])
			continue;
		char words[512];
		step_words(ex, &x->step[k], words, sizeof words);
		h = (h ^ point_hash(words)) * 0x100000001b3ULL;
	}
	free(keep);
	return h;
}

/* ---- where an execution ran ---- */

/* The directory the scratch directory was made in (--dir, or the default). */
void x_base_dir(const struct explorer *ex, char *buf, size_t len)
{
	snprintf(buf, len, "%s", ex->xdir);
	char *slash = strrchr(buf, '/');
	if (slash && slash != buf)
		*slash = '\0';
}

/* The file-system type of PATH by its magic number ("tmpfs", "ext4", ...; "fs 0x..." if unknown). */
void x_fs_type(const char *path, char *buf, size_t len)
{
	static const struct { unsigned long magic; const char *name; } known[] = {
		{ 0x01021994UL, "tmpfs" }, { 0xEF53UL, "ext4" }, { 0x58465342UL, "xfs" },
		{ 0x9123683EUL, "btrfs" }, { 0x6969UL, "nfs" }, { 0x794C7630UL, "overlay" },
		{ 0x65735546UL, "fuse" }, { 0xFF534D42UL, "cifs" }, { 0x2FC12FC1UL, "zfs" },
		{ 0x858458F6UL, "ramfs" }, { 0x01161970UL, "gfs2" }, { 0x73717368UL, "squashfs" },
	};
	struct statfs sf;
	if (statfs(path, &sf) != 0) {
		snprintf(buf, len, "unknown");
		return;
	}
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if ((unsigned long)sf.f_type == known[i].magic) {
			snprintf(buf, len, "%s", known[i].name);
			return;
		}
	snprintf(buf, len, "fs 0x%lx", (unsigned long)sf.f_type);
}

/* ---- counterexample files ---- */

json_t *cex_json(const struct explorer *ex, const struct xexec *x, const char *found_by, uint64_t schedule)
{
	const struct xcfg *cfg = ex->cfg;
	json_t *o = json_object(), *protos = json_array(), *params = json_array(), *ch = json_array();
	for (unsigned i = 0; i < cfg->run.nproto; i++)
		json_array_append_new(protos, json_string(cfg->run.proto[i]->name));
	for (unsigned i = 0; i < cfg->run.nkv; i++)
		json_array_append_new(params, json_string(cfg->run.kv[i]));
	for (size_t i = 0; i < x->ndev; i++) {
		json_t *c = json_pack("{s:i,s:s,s:i}", "at", (json_int_t)x->dev[i].at, "do", kind_names[x->dev[i].kind],
				      "w", (json_int_t)x->dev[i].w);
		if (x->dev[i].kind == XK_STALL || x->dev[i].kind == XK_PAUSE) /* how long: a multiple of the stale age */
			json_object_set_new(c, "stall", json_real(cfg->stallv[x->dev[i].m]));
		if (x->dev[i].kind == XK_ERRNO)
			json_object_set_new(c, "err", json_string(x_err_names[x->dev[i].m % X_NERRS]));
		if (x->dev[i].kind == XK_SKEW) /* ahead (+) or behind (-), in stale ages */
			json_object_set_new(c, "skew", json_real((x->dev[i].m & 1 ? -1 : 1) *
								 cfg->stallv[(x->dev[i].m / 2) % cfg->nstallv]));
		json_array_append_new(ch, c);
	}
	json_object_set_new(o, "schema", json_string("lockstorm-cex/1"));
	json_object_set_new(o, "protocols", protos);
	json_object_set_new(o, "workload", json_string(cfg->run.workload->name));
	json_object_set_new(o, "workers", json_integer(x->sh.n));
	int even = 1;
	for (unsigned i = 1; i < x->sh.n; i++)
		even &= x->sh.ops[i] == x->sh.ops[0];
	if (even) {
		json_object_set_new(o, "ops", json_integer(x->sh.ops[0]));
	} else {
		json_t *ops = json_array();
		for (unsigned i = 0; i < x->sh.n; i++)
			json_array_append_new(ops, json_integer(x->sh.ops[i]));
		json_object_set_new(o, "ops", ops);
	}
	json_object_set_new(o, "seed", json_integer((json_int_t)cfg->run.seed));
	json_object_set_new(o, "params", params);
	json_t *sv = json_array();
	for (unsigned i = 0; i < cfg->nstallv; i++)
		json_array_append_new(sv, json_real(cfg->stallv[i]));
	json_object_set_new(o, "stall", sv);
	json_object_set_new(o, "pauses", json_boolean(cfg->pauses));
	json_object_set_new(o, "points", json_boolean(cfg->points));
	json_object_set_new(o, "max_stalls", json_integer(cfg->max_stalls));
	json_object_set_new(o, "max_crashes", json_integer(cfg->max_crashes));
	json_object_set_new(o, "max_steps", json_integer(cfg->max_steps));
	json_t *mf = json_object();
	for (int k = XK_ERRNO; k < XK__COUNT; k++)
		json_object_set_new(mf, kind_names[k], json_integer(cfg->maxf[k]));
	json_object_set_new(o, "max_faults", mf);
	json_object_set_new(o, "choices", ch);
	json_object_set_new(o, "invariant", json_string(x->inv >= 0 ? check_inv_name((enum inv_id)x->inv) : ""));
	json_t *exs = json_array();
	if (x->inv >= 0)
		for (unsigned e = 0; e < x->res.inv[x->inv].nex; e++)
			json_array_append_new(exs, json_string(x->res.inv[x->inv].ex[e].text));
	if (x->why[0])
		json_array_append_new(exs, json_string(x->why));
	json_object_set_new(o, "examples", exs);
	json_t *story = json_array();
	story_print(NULL, ex, x, 0, story);
	json_object_set_new(o, "story", story);
	json_object_set_new(o, "steps", steps_json(ex, x));
	char base[PATH_MAX], fs[64];
	x_base_dir(ex, base, sizeof base);
	x_fs_type(base, fs, sizeof fs);
	json_object_set_new(o, "dir", json_string(base)); /* replay makes its scratch directory there too */
	json_object_set_new(o, "fs", json_string(fs));
	char pers[160];
	mfs_pers_format(&cfg->fs, pers, sizeof pers);
	json_object_set_new(o, "filesystem", json_string(pers)); /* what the workers saw: replay uses it */
	json_object_set_new(o, "found_by", json_pack("{s:s,s:I}", "strategy", found_by, "schedule",
						     (json_int_t)schedule));
	return o;
}

/* KEY as a whole number in [lo, hi], *out untouched when absent: 0, or -1 with why. */
static int cex_uint(json_t *o, const char *key, json_int_t lo, json_int_t hi, unsigned *out, const char *path,
		    char *why, size_t len)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
		return runcfg_fail(why, len, "%s: %s: want %lld to %lld", path, key, (long long)lo, (long long)hi);
	*out = (unsigned)json_integer_value(v);
	return 0;
}

/* A stall multiple as --stall takes it: above 0, at most 1000. */
static int cex_stall_ok(json_t *v)
{
	return json_is_number(v) && json_number_value(v) > 0 && json_number_value(v) <= 1000;
}

/* The file system the workers saw.  A file from before the model was found
 * on the real one (its "fs" says which): it replays on the model playing that
 * one, so its verdict no longer depends on the host (tmpfs: numbers never
 * reused; ext4 and the rest: reused at once; a listing was one step). */
static int cex_fs(json_t *o, struct xcfg *cfg, const char *path, char *why, size_t len)
{
	json_t *j = json_object_get(o, "filesystem");
	const char *spec = json_string_value(j), *host = json_string_value(json_object_get(o, "fs"));
	char msg[512];
	if (j && !spec)
		return runcfg_fail(why, len, "%s: filesystem: want a string (real, model:...)", path);
	if (!spec)
		spec = host && !strcmp(host, "tmpfs") ? "model:tmpfs" : "model:ext4,readdir=snapshot";
	if (mfs_pers_parse(spec, &cfg->fs, msg, sizeof msg))
		return runcfg_fail(why, len, "%s: filesystem: %s", path, msg);
	return 0;
}

/* Every value is bounded as explore's options bound it: a file people edit and
 * share is refused with a reason, never replayed with numbers no option gives. */
int cex_load(const char *path, struct xcfg *cfg, struct xchoice **dev, size_t *ndev, json_t **root,
		    char *why, size_t len)
{
	json_error_t jerr;
	*dev = NULL;
	*ndev = 0;
	json_t *o = json_load_file(path, 0, &jerr);
	if (!o)
		return runcfg_fail(why, len, "%s: %s (line %d)", path, jerr.text, jerr.line);
	*root = o;
	const char *schema = json_string_value(json_object_get(o, "schema"));
	if (!schema || strcmp(schema, "lockstorm-cex/1"))
		return runcfg_fail(why, len, "%s: not a lockstorm counterexample (schema lockstorm-cex/1)", path);
	json_t *protos = json_object_get(o, "protocols");
	if (!json_is_array(protos) || !json_array_size(protos))
		return runcfg_fail(why, len, "%s: no protocols", path);
	if (json_array_size(protos) > CFG_MAX_PROTOS)
		return runcfg_fail(why, len, "%s: protocols: at most %d", path, CFG_MAX_PROTOS);
	char list[CFG_MAX_PROTOS * 64] = "";
	size_t ln = 0;
	for (size_t i = 0; i < json_array_size(protos); i++) {
		const char *p = json_string_value(json_array_get(protos, i));
		size_t pl = p ? strlen(p) : 0;
		if (!p || !pl || pl >= 64 || strchr(p, ','))
			return runcfg_fail(why, len, "%s: protocols: want names", path);
		ln += (size_t)snprintf(list + ln, sizeof list - ln, "%s%s", i ? "," : "", p);
	}
	if (runcfg_set_protocols(&cfg->run, list, why, len) || builtin_only(&cfg->run, why, len))
		return -1;
	const char *wl = json_string_value(json_object_get(o, "workload"));
	if (!wl || runcfg_set_workload(&cfg->run, wl, why, len))
		return wl ? -1 : runcfg_fail(why, len, "%s: no workload", path);
	json_t *jn = json_object_get(o, "workers");
	json_int_t n = json_integer_value(jn);
	json_t *jops = json_object_get(o, "ops");
	if (!json_is_integer(jn) || n < 1 || n > SCHED_MAX_WORKERS ||
	    !(json_is_integer(jops) || json_array_size(jops) == (size_t)n))
		return runcfg_fail(why, len, "%s: workers (1-%d) and ops (a number, or one per worker) are required", path,
			     SCHED_MAX_WORKERS);
	cfg->run.workers = (unsigned)n;
	cfg->replay_sh.n = (unsigned)n;
	for (json_int_t i = 0; i < n; i++) {
		json_t *jv = json_is_integer(jops) ? jops : json_array_get(jops, (size_t)i);
		json_int_t v = json_integer_value(jv);
		if (!json_is_integer(jv) || v < 0 || v > 1000)
			return runcfg_fail(why, len, "%s: ops: want 0 to 1000 per worker", path);
		cfg->replay_sh.ops[i] = (unsigned)v;
	}
	cfg->ops = cfg->replay_sh.ops[0];
	json_t *jseed = json_object_get(o, "seed");
	if (jseed && !json_is_integer(jseed))
		return runcfg_fail(why, len, "%s: seed: want a whole number", path);
	cfg->run.seed = (uint64_t)json_integer_value(jseed);
	json_t *params = json_object_get(o, "params");
	if (params && (!json_is_array(params) || json_array_size(params) > CFG_MAX_KV))
		return runcfg_fail(why, len, "%s: params: want at most %d K=V strings", path, CFG_MAX_KV);
	/* one counterexample is loaded per process (replay): its params live here */
	static char kvbuf[CFG_MAX_KV][256];
	cfg->run.nkv = 0;
	for (size_t i = 0; i < json_array_size(params); i++) {
		const char *kv = json_string_value(json_array_get(params, i));
		if (!kv || strlen(kv) >= sizeof kvbuf[i] || !strchr(kv, '=') || kv[0] == '=')
			return runcfg_fail(why, len, "%s: params: want K=V strings (at most %zu bytes)", path,
				     sizeof kvbuf[i] - 1);
		snprintf(kvbuf[i], sizeof kvbuf[i], "%s", kv);
		cfg->run.kv[cfg->run.nkv++] = kvbuf[i];
	}
	cfg->pauses = json_is_true(json_object_get(o, "pauses"));
	cfg->points = json_is_true(json_object_get(o, "points"));
	json_t *jst = json_object_get(o, "stall");
	if (json_is_number(jst)) {
		if (!cex_stall_ok(jst))
			return runcfg_fail(why, len, "%s: bad stall multiple (want above 0, at most 1000)", path);
		cfg->stallv[0] = json_number_value(jst);
		cfg->nstallv = 1;
	} else if (json_is_array(jst) && json_array_size(jst) >= 1 && json_array_size(jst) <= X_MAX_STALLV) {
		cfg->nstallv = (unsigned)json_array_size(jst);
		for (unsigned i = 0; i < cfg->nstallv; i++) {
			if (!cex_stall_ok(json_array_get(jst, i)))
				return runcfg_fail(why, len, "%s: bad stall multiple (want above 0, at most 1000)", path);
			cfg->stallv[i] = json_number_value(json_array_get(jst, i));
		}
	} else if (jst) {
		return runcfg_fail(why, len, "%s: stall: want a multiple of the stale age, or 1 to %d of them", path,
			     X_MAX_STALLV);
	}
	if (cex_uint(o, "max_stalls", 0, 16, &cfg->max_stalls, path, why, len) ||
	    cex_uint(o, "max_crashes", 0, 16, &cfg->max_crashes, path, why, len) ||
	    cex_uint(o, "max_steps", 10, 1000000, &cfg->max_steps, path, why, len))
		return -1;
	if (cex_fs(o, cfg, path, why, len))
		return -1;
	/* the other kinds' budgets; a file from before them has none: they were not choices */
	json_t *mf = json_object_get(o, "max_faults");
	for (int k = XK_ERRNO; k < XK__COUNT; k++) {
		json_t *v = json_object_get(mf, kind_names[k]);
		json_int_t nv = json_integer_value(v);
		if (v && (!json_is_integer(v) || nv < 0 || nv > 16))
			return runcfg_fail(why, len, "%s: max_faults.%s: want 0 to 16", path, kind_names[k]);
		cfg->maxf[k] = (unsigned)nv;
	}
	cfg->maxf_set = 1;
	const char *inv = json_string_value(json_object_get(o, "invariant"));
	if (inv && inv[0] && parse_invariants(inv, &cfg->want, why, len))
		return -1;
	json_t *ch = json_object_get(o, "choices");
	if (!json_is_array(ch))
		return runcfg_fail(why, len, "%s: no choices", path);
	size_t nch = json_array_size(ch);
	*dev = calloc(nch + 1, sizeof **dev);
	if (!*dev)
		return runcfg_fail(why, len, "out of memory");
	*ndev = nch;
	for (size_t i = 0; i < nch; i++) {
		json_t *c = json_array_get(ch, i);
		const char *k = json_string_value(json_object_get(c, "do"));
		json_t *jat = json_object_get(c, "at"), *jw = json_object_get(c, "w");
		json_int_t at = json_integer_value(jat);
		json_int_t w = json_integer_value(jw);
		int kind = x_kind_parse(k);
		if (kind < 0 || !json_is_integer(jat) || !json_is_integer(jw) || at < 0 || at > UINT32_MAX || w < 0 ||
		    w >= n || (i && at <= (json_int_t)(*dev)[i - 1].at))
			return runcfg_fail(why, len, "%s: choice %zu: want {\"at\": increasing N, \"do\": run|stall|pause|crash|errno|..., "
				     "\"w\": a worker}", path, i + 1);
		unsigned m = 0;
		if ((kind == XK_STALL || kind == XK_PAUSE) && json_is_number(json_object_get(c, "stall"))) {
			double v = json_number_value(json_object_get(c, "stall"));
			for (m = 0; m < cfg->nstallv && fabs(cfg->stallv[m] - v) > 1e-9; m++)
				;
			if (m == cfg->nstallv)
				return runcfg_fail(why, len, "%s: choice %zu stalls %g x stale, not one of the file's \"stall\"",
					     path, i + 1, v);
		}
		if (kind == XK_ERRNO) {
			const char *e = json_string_value(json_object_get(c, "err"));
			for (m = 0; m < X_NERRS && (!e || strcmp(e, x_err_names[m])); m++)
				;
			if (m == X_NERRS)
				return runcfg_fail(why, len, "%s: choice %zu: errno without a known \"err\" (EPERM, EACCES, ...)",
					     path, i + 1);
		}
		if (kind == XK_SKEW) {
			double v = json_number_value(json_object_get(c, "skew"));
			for (m = 0; m < 2 * cfg->nstallv && fabs((m & 1 ? -1 : 1) * cfg->stallv[m / 2] - v) > 1e-9; m++)
				;
			if (m == 2 * cfg->nstallv)
				return runcfg_fail(why, len, "%s: choice %zu skews %g x stale, not one of the file's \"stall\"",
					     path, i + 1, v);
		}
		(*dev)[i] = (struct xchoice){ (uint32_t)at, (uint8_t)kind, (uint8_t)w, (uint8_t)m };
	}
	return runcfg_resolve(&cfg->run, why, len);
}

/* A replay's verdict and exit code once its steps were compared with the
 * saved ones (both explorers' replay): 5 when they diverged (INCOMPLETE
 * unless it still fails: a changed file or model says nothing of a fix),
 * 1 when a violation happens again, 0 when none does on the saved steps. */
int replay_judge(struct verdict *v, int fails, int diverged, const char *want, const char *got)
{
	verdict_init(v);
	if (fails)
		verdict_fail(v, NULL, got);
	if (diverged) {
		printf("the replay does not follow the saved counterexample (an edited or truncated file, or a changed "
		       "model): it says nothing about %s; %s\n", want && *want ? want : "the violation",
		       fails ? "the replayed schedule still violates it" : "the replayed schedule does not violate it");
		if (!fails)
			verdict_incomplete(v, "the steps diverged from the saved ones");
		return 5;
	}
	if (fails) {
		if (want && strcmp(want, got))
			printf("the file was saved with another invariant (%s)\n", want);
		return 1;
	}
	printf("the violation (%s) no longer happens on the saved steps\n", want ? want : "?");
	return 0;
}
