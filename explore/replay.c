/*
 * replay.c - `lockstorm replay` (see explore.h and docs/explore.md).
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
#include "xext.h"


static const char replay_usage[] =
	"usage: lockstorm replay CEXFILE [--full] [--trace] [--dir DIR] [--json FILE] [-q]\n"
	"\n"
	"Re-run a counterexample saved by `lockstorm explore` with the same choices, say whether the\n"
	"steps are the ones saved (or at which step and how they differ), print its story and verdict.\n"
	"\n"
	"  --full       the story with every step, not only those the violation depends on\n"
	"  --trace      every step as it is granted, with the clock and its result\n"
	"  --dir DIR    make the scratch directory under DIR (default: the directory the file records,\n"
	"               if it is here, else /dev/shm, else /tmp); the steps do not depend on it\n"
	"  --json FILE  the outcome as JSON (schema lockstorm-replay/1)\n"
	"  -q, --quiet  only the lines about the steps and the verdict\n"
	"\n"
	"exit: 0 the same steps as saved and the violation no longer happens (e.g. after a fix),\n"
	"      1 the same steps and the violation happens (again), 2 bad input,\n"
	"      3 the harness failed, 5 the steps diverged from the saved ones (an edited or truncated\n"
	"      file, or a changed model): the file no longer says what happens\n";

/* A usable base directory: exists, is a directory we may write into. */
static int dir_usable(const char *d)
{
	struct stat st;
	return d && d[0] && stat(d, &st) == 0 && S_ISDIR(st.st_mode) && access(d, W_OK | X_OK) == 0;
}

/* The file's choices the replay did not take (a worker that could not run there,
 * an option the model no longer offers): the first one, or SIZE_MAX. */
static size_t first_untaken(const struct xchoice *dev, size_t ndev, const struct xexec *x)
{
	size_t j = 0;
	for (size_t i = 0; i < ndev; i++) {
		while (j < x->ndev && x->dev[j].at < dev[i].at)
			j++;
		if (j == x->ndev || x->dev[j].at != dev[i].at || x->dev[j].kind != dev[i].kind ||
		    x->dev[j].w != dev[i].w || x->dev[j].m != dev[i].m)
			return i;
	}
	return SIZE_MAX;
}

int replay_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "full", no_argument, NULL, OPT_FULL },
		{ "trace", no_argument, NULL, OPT_TRACE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "dir", required_argument, NULL, OPT_DIR },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int full = 0, trace = 0, quiet = 0;
	const char *json_path = NULL;
	static struct xcfg cfg;
	xcfg_defaults(&cfg);
	optind = 1;
	opterr = 0;
	int ch;
	while ((ch = getopt_long(argc, argv, ":qh", longopts, NULL)) != -1) {
		switch (ch) {
		case OPT_FULL:
			full = 1;
			break;
		case OPT_TRACE:
			trace = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case OPT_DIR:
			if (strlen(optarg) >= sizeof cfg.dir - 64) {
				fprintf(stderr, "lockstorm: --dir: path too long\n");
				return 2;
			}
			snprintf(cfg.dir, sizeof cfg.dir, "%s", optarg);
			break;
		case OPT_JSON:
			json_path = optarg;
			break;
		case 'h':
			fputs(replay_usage, stdout);
			return 0;
		case ':':
			fprintf(stderr, "lockstorm: option %s needs a value\n", argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "lockstorm: unknown option '%s' (see lockstorm replay --help)\n", argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "lockstorm: replay wants one counterexample file (see lockstorm replay --help)\n");
		return 2;
	}
	const char *path = argv[optind];
	char why[1024];
	if (cfg.dir[0] && !dir_usable(cfg.dir)) {
		fprintf(stderr, "lockstorm: --dir %s: not a directory we can write into\n", cfg.dir);
		return 2;
	}
	if (xext_is_cex(path)) /* an external adapter's: explore/xext_search.c */
		return xext_replay_main(path, quiet, full, cfg.dir);
	struct xchoice *dev = NULL;
	size_t ndev = 0;
	json_t *root = NULL;
	if (cex_load(path, &cfg, &dev, &ndev, &root, why, sizeof why) != 0) {
		fprintf(stderr, "lockstorm: %s\n", why);
		free(dev);
		json_decref(root);
		return 2;
	}
	/* where it was found: honoured unless --dir says otherwise, and said either way */
	const char *rec_dir = json_string_value(json_object_get(root, "dir"));
	const char *rec_fs = json_string_value(json_object_get(root, "fs"));
	int rec_missing = 0;
	if (!cfg.dir[0] && rec_dir) {
		if (dir_usable(rec_dir) && strlen(rec_dir) < sizeof cfg.dir - 64)
			snprintf(cfg.dir, sizeof cfg.dir, "%s", rec_dir);
		else
			rec_missing = 1;
	}
	static struct explorer ex;
	if (explorer_open(&ex, &cfg, why, sizeof why) != 0) {
		fprintf(stderr, "lockstorm: %s\n", why);
		explorer_close(&ex);
		free(dev);
		json_decref(root);
		return 3;
	}
	char base[PATH_MAX], fs[64];
	x_base_dir(&ex, base, sizeof base);
	x_fs_type(base, fs, sizeof fs);
	struct xexec x = { 0 };
	int rc;
	json_t *jout = NULL;
	if (x_replay(&ex, &cfg.replay_sh, dev, ndev, &x) != 0) {
		fprintf(stderr, "lockstorm: replay: %s\n", x.why);
		rc = 3;
		goto out;
	}
	if (trace)
		for (size_t k = 0; k < x.nstep; k++) {
			char words[512];
			step_words(&ex, &x.step[k], words, sizeof words);
			printf("  [%10.6f s] %4zu  %s%s%s\n", (double)x.step[k].now_ns / 1e9, k + 1, words,
			       x.step[k].point ? "   after " : "", x.step[k].point ? x.step[k].point : "");
		}
	/* the same steps as saved? */
	json_t *saved = json_object_get(root, "steps");
	json_t *now = steps_json(&ex, &x);
	size_t diverge = SIZE_MAX, na = json_array_size(saved), nb = json_array_size(now);
	if (json_is_array(saved))
		for (size_t k = 0; k < (na > nb ? na : nb) && diverge == SIZE_MAX; k++) {
			const char *s1 = k < na ? json_string_value(json_array_get(saved, k)) : NULL;
			const char *s2 = k < nb ? json_string_value(json_array_get(now, k)) : NULL;
			if (!s1 || !s2 || strcmp(s1, s2))
				diverge = k;
		}
	size_t untaken = first_untaken(dev, ndev, &x);
	int diverged = diverge != SIZE_MAX || untaken != SIZE_MAX;
	const char *want = json_string_value(json_object_get(root, "invariant"));
	int fails = x.outcome == XO_FAIL;
	if (!quiet || fails) {
		char ops[128];
		shape_ops(&cfg.replay_sh, ops, sizeof ops);
		printf("replay %s: ", path);
		for (unsigned i = 0; i < cfg.run.nproto; i++)
			printf("%s%s", i ? "," : "", cfg.run.proto[i]->name);
		printf(" / %s, %u workers x %s ops, %zu choices\n", cfg.run.workload->name, cfg.run.workers, ops, ndev);
		if (fails && !diverged) {
			story_print(stdout, &ex, &x, full, NULL);
			violation_print(stdout, &x);
		}
	}
	if (!quiet) {
		printf("dir: %s (%s)", base, fs);
		if (rec_dir && rec_missing)
			printf("; recorded %s (%s) is not here", rec_dir, rec_fs ? rec_fs : "?");
		else if (rec_dir && (strcmp(rec_dir, base) || (rec_fs && strcmp(rec_fs, fs))))
			printf("; recorded %s (%s)", rec_dir, rec_fs ? rec_fs : "?");
		printf("\n");
	}
	char how[1400] = "";
	if (untaken != SIZE_MAX) {
		const struct xchoice *c = &dev[untaken];
		snprintf(how, sizeof how, "choice %zu (decision %u: %s w%u) could not be taken: the worker cannot %s there",
			 untaken + 1, c->at, kind_names[c->kind], c->w, c->kind == XK_RUN ? "run" : "be stopped");
	}
	if (!json_is_array(saved)) {
		printf("steps: the file has none to compare\n");
	} else if (diverge == SIZE_MAX) {
		printf("steps: the same %zu steps as saved\n", nb);
	} else {
		const char *s1 = diverge < na ? json_string_value(json_array_get(saved, diverge)) : NULL;
		const char *s2 = diverge < nb ? json_string_value(json_array_get(now, diverge)) : NULL;
		char d[1200];
		if (!s1)
			snprintf(d, sizeof d, "the saved steps end at step %zu; the replay goes on: %s", na, s2);
		else if (!s2)
			snprintf(d, sizeof d, "the replay ends after %zu steps; saved step %zu: %s", nb, diverge + 1, s1);
		else
			snprintf(d, sizeof d, "saved: %s; now: %s", s1, s2);
		printf("steps: DIVERGED at step %zu of %zu saved (%s)\n", diverge + 1, na, d);
		if (!how[0])
			snprintf(how, sizeof how, "step %zu differs (%s)", diverge + 1, d);
	}
	if (untaken != SIZE_MAX)
		printf("choices: %s\n", how);
	json_decref(now);
	struct verdict v; /* the file's invariant (--json lists every one the replay violates) */
	const char *got = fails ? check_inv_name((enum inv_id)x.inv) : NULL;
	rc = replay_judge(&v, fails, diverged, want, got);
	verdict_print(stdout, &v);
	if (json_path) {
		json_t *invs = json_array();
		for (int i = 0; i < INV__COUNT; i++)
			if ((x.res.inv[i].applicable && x.res.inv[i].violations) || (fails && x.inv == i))
				json_array_append_new(invs, json_string(check_inv_name((enum inv_id)i)));
		jout = json_pack("{s:s,s:s,s:s,s:s,s:b,s:o,s:s,s:o,s:s,s:i}", "schema", "lockstorm-replay/1", "file", path,
				 "dir", base, "fs", fs, "same_steps", !diverged,
				 "diverged_at", diverge == SIZE_MAX ? json_null() : json_integer((json_int_t)diverge + 1),
				 "how", how, "invariants", invs, "verdict", verdict_json(&v), "exit", rc);
		if (!jout || json_dump_file(jout, json_path, JSON_INDENT(1)) != 0) {
			fprintf(stderr, "lockstorm: cannot write %s: %s\n", json_path, strerror(errno));
			rc = 3;
		}
	}
out:
	json_decref(jout);
	xexec_free(&x);
	explorer_close(&ex);
	free(dev);
	json_decref(root);
	return rc;
}
