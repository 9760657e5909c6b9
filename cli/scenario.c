/*
 * scenario.c - `lockstorm scenario list | show | run | new`: the dispatch
 * (see scenario.h and docs/scenarios.md).
 */
#include "scenario.h"

#include <stdio.h>
#include <string.h>

#include "scenario_new.h"
#include "scenario_run.h"

static const char sc_usage[] =
	"usage: lockstorm scenario list\n"
	"       lockstorm scenario show NAME\n"
	"       lockstorm scenario run NAME|FILE.. [-o OUTDIR] [-q]\n"
	"       lockstorm scenario run --all [-o OUTDIR] [-q]\n"
	"       lockstorm scenario new NAME --from-run OUTDIR [-o FILE]\n"
	"       lockstorm scenario help VERB   (or VERB --help): that verb's options\n"
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
	if (!strcmp(sub, "-h") || !strcmp(sub, "--help") || (!strcmp(sub, "help") && argc == 2)) {
		fputs(sc_usage, stdout);
		return 0;
	}
	if (!strcmp(sub, "help")) { /* scenario help VERB: VERB --help */
		char help[] = "--help";
		char *av[4] = { argv[0], argv[2], help, NULL };
		if (argc > 3) {
			fprintf(stderr, "lockstorm: scenario help: unexpected argument '%s'\n", argv[3]);
			return 2;
		}
		if (strcmp(argv[2], "list") && strcmp(argv[2], "show") && strcmp(argv[2], "run") && strcmp(argv[2], "new")) {
			fprintf(stderr, "lockstorm: scenario help: unknown subcommand '%s' (list, show, run, new)\n", argv[2]);
			return 2;
		}
		return scenario_main(3, av);
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

