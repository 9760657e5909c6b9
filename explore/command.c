/*
 * command.c - `lockstorm explore`: its options, then one of the three searches
 * (explore.h):
 *
 *   an external adapter   the library itself under the scheduler (xext_search.c)
 *   -j N                  N explorer processes, their findings merged (parallel.c)
 *   otherwise             the search in this process (search.c)
 */
#include <stdio.h>

#include "../protocols/lock.h"
#include "explore.h"
#include "xext.h"
#include "xint.h"

int explore_main(int argc, char **argv)
{
	static struct xcfg c;
	char why[1024];
	xcfg_defaults(&c);
	int r = xcfg_parse(&c, argc, argv, why, sizeof why);
	if (r == 1)
		return 0;
	if (r != 0) {
		fprintf(stderr, "lockstorm: %s\n", why);
		return 2;
	}
	if (c.run.proto[0]->flags & LOCK_EXTERNAL)
		return xext_main(&c, argc, argv); /* the library itself: explore/xext_search.c */
	if (c.jobs > 1)
		return parallel_explore(&c);
	return explore_search(&c);
}
