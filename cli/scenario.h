/*
 * scenario.h - `lockstorm scenario list | show | run | new`: production
 * incidents and known bad interleavings stated as torture configurations
 * (scenarios/NAME.scenario), each run against the revisions it names, with the
 * verdict every revision is expected to reach.  docs/scenarios.md describes
 * the file format and the commands.
 *
 *   scenario_file.c   the file: parse, check whole, find (scenario_file.h)
 *   scenario_run.c    list, show, run (scenario_run.h)
 *   scenario_new.c    new NAME --from-run OUTDIR (scenario_new.h)
 *   scenario.c        the dispatch
 */
#ifndef LS_SCENARIO_H
#define LS_SCENARIO_H

#ifdef __cplusplus
extern "C" {
#endif

/* argv after "scenario".  Exit code: 0 every revision as expected, 1 a
 * revision that was not, 2 bad usage or a bad scenario file, 3 a revision
 * whose run failed (the harness, not a verdict). */
int scenario_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
