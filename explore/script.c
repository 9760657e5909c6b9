/*
 * script.c - scripted executions for tests (explore_script, explore.h): a
 * body run by each worker under the scheduler with a given choice list, and
 * the steps it took in words.  Above the engine and the strategies: it
 * drives one execution through x_replay.
 */
#include <stdlib.h>
#include <string.h>

#include "../run/runcfg.h"
#include "xint.h"

/* ---- scripted executions (tests) ---- */

int explore_script(const struct explore_script *sc, char ***lines, size_t *n, char *why, size_t len)
{
	*lines = NULL;
	*n = 0;
	if (!sc->workers || sc->workers > SCHED_MAX_WORKERS || !sc->body)
		return runcfg_fail(why, len, "explore_script: 1 to %d workers and a body", SCHED_MAX_WORKERS);
	static struct xcfg cfg;
	xcfg_defaults(&cfg);
	char w[256];
	if (runcfg_set_protocols(&cfg.run, "none", w, sizeof w) || runcfg_resolve(&cfg.run, w, sizeof w))
		return runcfg_fail(why, len, "%s", w);
	cfg.run.workers = sc->workers;
	cfg.stallv[0] = sc->stall > 0 ? sc->stall : 1.5;
	cfg.nstallv = 1;
	cfg.pauses = 1;
	cfg.max_stalls = cfg.max_crashes = 16;
	static struct explorer ex;
	if (explorer_open(&ex, &cfg, why, len) != 0) {
		explorer_close(&ex);
		return -1;
	}
	ex.body = sc->body;
	ex.body_arg = sc->arg;
	for (unsigned i = 0; i < SCHED_MAX_WORKERS; i++)
		ex.stall_base[i] = sc->stale_ms > 0 ? sc->stale_ms : 10000;
	struct xexec x = { 0 };
	const struct xshape sh = shape_even(sc->workers, 1);
	int rc = x_replay(&ex, &sh, sc->choices, sc->nchoices, &x);
	if (rc != 0) {
		snprintf(why, len, "%s", x.why);
	} else if (!(*lines = calloc(x.nstep + 1, sizeof **lines))) {
		rc = runcfg_fail(why, len, "out of memory");
	} else {
		for (size_t k = 0; k < x.nstep; k++) {
			char words[512];
			step_words(&ex, &x.step[k], words, sizeof words);
			(*lines)[k] = strdup(words);
		}
		*n = x.nstep;
	}
	xexec_free(&x);
	explorer_close(&ex);
	return rc;
}

void explore_lines_free(char **lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
}
