/* fuzz_runjson - an output folder's run.json (run/runcfg.c runcfg_load), as
 * `lockstorm check` and `scenario new --from-run` read it. */
#include "fuzz.h"

#include "core/num.h"
#include "run/runcfg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct run_config cfg;
	char why[1024] = "";
	int rc = runcfg_load(&cfg, fuzz_file(data, size), why, sizeof why);
	FUZZ_ASSERT(rc == 0 || why[0]);
	if (rc == 0) {
		FUZZ_ASSERT(cfg.workers >= 1 && cfg.workers <= CFG_MAX_WORKERS);
		FUZZ_ASSERT(cfg.duration_ms >= 0 && cfg.duration_ms <= NUM_MAX_MS);
		FUZZ_ASSERT(cfg.time_scale > 0 && cfg.time_scale <= 1000);
		for (unsigned w = 0; w < cfg.workers && w < 64; w++) {
			runcfg_stale_ms(&cfg, w);
			runcfg_budget_ms(&cfg, w);
		}
		runcfg_unload(&cfg);
	}
	return 0;
}
