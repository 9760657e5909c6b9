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

static const char replay_usage[] =
	"usage: lockstorm replay CEXFILE [--full] [--trace] [-q]\n"
	"\n"
	"Re-run a counterexample saved by `lockstorm explore` with the same steps, print its story\n"
	"and verdict, and say whether the steps are the ones saved.\n"
	"\n"
	"  --full     the story with every step, not only those the violation depends on\n"
	"  --trace    every step as it is granted, with the clock and its result\n"
	"\n"
	"exit: 1 the violation happens (again), 0 it no longer does (e.g. after a fix),\n"
	"      2 bad input, 3 the harness failed\n";

int replay_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "full", no_argument, NULL, OPT_FULL },
		{ "trace", no_argument, NULL, OPT_TRACE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "dir", required_argument, NULL, OPT_DIR },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int full = 0, trace = 0, quiet = 0;
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
			snprintf(cfg.dir, sizeof cfg.dir, "%s", optarg);
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
	struct stat dst;
	if (cfg.dir[0] && (stat(cfg.dir, &dst) != 0 || !S_ISDIR(dst.st_mode))) {
		fprintf(stderr, "lockstorm: --dir %s: not a directory\n", cfg.dir);
		return 2;
	}
	struct xchoice *dev = NULL;
	size_t ndev = 0;
	json_t *root = NULL;
	if (cex_load(path, &cfg, &dev, &ndev, &root, why, sizeof why) != 0) {
		fprintf(stderr, "lockstorm: %s\n", why);
		free(dev);
		json_decref(root);
		return 2;
	}
	static struct explorer ex;
	if (explorer_open(&ex, &cfg, why, sizeof why) != 0) {
		fprintf(stderr, "lockstorm: %s\n", why);
		explorer_close(&ex);
		free(dev);
		json_decref(root);
		return 3;
	}
	struct xexec x = { 0 };
	int rc;
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
	size_t diverge = SIZE_MAX;
	if (json_is_array(saved)) {
		size_t a = json_array_size(saved), b = json_array_size(now);
		for (size_t k = 0; k < (a > b ? a : b) && diverge == SIZE_MAX; k++) {
			const char *s1 = k < a ? json_string_value(json_array_get(saved, k)) : NULL;
			const char *s2 = k < b ? json_string_value(json_array_get(now, k)) : NULL;
			if (!s1 || !s2 || strcmp(s1, s2))
				diverge = k;
		}
	}
	const char *want = json_string_value(json_object_get(root, "invariant"));
	int fails = x.outcome == XO_FAIL;
	if (!quiet || fails) {
		char ops[128];
		shape_ops(&cfg.replay_sh, ops, sizeof ops);
		printf("replay %s: %s / %s, %u workers x %s ops, %zu choices\n", path, cfg.run.proto[0]->name,
		       cfg.run.workload->name, cfg.run.workers, ops, ndev);
		if (fails) {
			story_print(stdout, &ex, &x, full, NULL);
			violation_print(stdout, &x);
		}
	}
	if (!json_is_array(saved))
		printf("steps: the file has none to compare\n");
	else if (diverge == SIZE_MAX)
		printf("steps: the same %zu steps as saved\n", json_array_size(now));
	else
		printf("steps: differ from the saved ones at step %zu (saved: %s; now: %s)\n", diverge + 1,
		       diverge < json_array_size(saved) ? json_string_value(json_array_get(saved, diverge)) : "(end)",
		       diverge < json_array_size(now) ? json_string_value(json_array_get(now, diverge)) : "(end)");
	json_decref(now);
	struct verdict v;
	verdict_init(&v);
	if (fails) {
		const char *got = check_inv_name((enum inv_id)x.inv);
		if (want && strcmp(want, got))
			printf("the file was saved with another invariant (%s)\n", want);
		verdict_fail(&v, NULL, got);
		rc = 1;
	} else {
		printf("the violation (%s) no longer happens\n", want ? want : "?");
		rc = 0;
	}
	verdict_print(stdout, &v);
out:
	xexec_free(&x);
	explorer_close(&ex);
	free(dev);
	json_decref(root);
	return rc;
}

