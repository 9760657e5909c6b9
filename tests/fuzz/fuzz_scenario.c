/* fuzz_scenario - a *.scenario file (cli/scenario_file.c scenario_load), and
 * the run command lines it makes for each revision. */
#include "fuzz.h"

#include "cli/scenario_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[1024] = "";
	struct scenario *sc = scenario_load(fuzz_file(data, size), why, sizeof why);
	if (!sc) {
		FUZZ_ASSERT(why[0]);
		return 0;
	}
	for (unsigned i = 0; i < sc->nrev; i++) {
		int argc = 0;
		char **argv = scenario_run_argv(sc, &sc->rev[i], &argc);
		for (int k = 0; argv && k < argc; k++)
			FUZZ_ASSERT(argv[k] != NULL);
		free(argv); /* the strings belong to sc */
	}
	scenario_free(sc);
	return 0;
}
