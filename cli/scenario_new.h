/*
 * scenario_new.h - `lockstorm scenario new NAME --from-run OUTDIR [-o FILE]`:
 * a scenario file made from a kept run (its run.json and report.json),
 * checked with the same parser `scenario run` uses before it is written.
 */
#ifndef LS_SCENARIO_NEW_H
#define LS_SCENARIO_NEW_H

#ifdef __cplusplus
extern "C" {
#endif

/* argv after "scenario" (argv[0] = "new").  0 written, 2 bad usage or input, 3 failed. */
int sc_new(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
