/* fuzz_cex - the counterexample loader (explore/cex.c cex_load), as
 * `lockstorm replay FILE` calls it. */
#include "fuzz.h"

#include <jansson.h>

#include "explore/xint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct xcfg cfg;
	struct xchoice *dev = NULL;
	size_t ndev = 0;
	json_t *root = NULL;
	char why[1024] = "";
	xcfg_defaults(&cfg);
	int rc = cex_load(fuzz_file(data, size), &cfg, &dev, &ndev, &root, why, sizeof why);
	FUZZ_ASSERT(rc == 0 || why[0]);
	if (rc == 0) {
		FUZZ_ASSERT(cfg.run.workers >= 1 && cfg.run.workers <= SCHED_MAX_WORKERS);
		for (size_t i = 0; i < ndev; i++)
			FUZZ_ASSERT(dev[i].w < cfg.run.workers);
	}
	free(dev);
	json_decref(root);
	return 0;
}
