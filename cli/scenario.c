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

