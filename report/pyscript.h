/*
 * pyscript.h - the subcommands written in Python: `lockstorm report` and
 * `lockstorm merge`.
 *
 * The scripts live in report/ in the source tree; CMake copies them next to
 * the binary (BUILD_DIR/reports/).  They are found in this order:
 *   $LOCKSTORM_REPORTS (a directory), <dir of /proc/self/exe>/reports/,
 *   the source tree's report/ (LS_SOURCE_DIR, compiled in).
 * They run under $LOCKSTORM_PYTHON, else /usr/bin/python3 - Debian's python3,
 * which has python3-matplotlib and python3-numpy (a python3 earlier on PATH
 * may be another build without them).  The script gets the names only the C
 * code knows in its environment: LOCKSTORM_BIN (this binary),
 * LOCKSTORM_EV_TYPES (journal event types by number) and
 * LOCKSTORM_FAULT_KINDS (fault kinds by number).
 *
 * Exit codes pass through: 0 done, 1 (merge) a new failure, 2 bad usage or
 * input, 3 the script or its interpreter failed.
 */
#ifndef LS_PYSCRIPT_H
#define LS_PYSCRIPT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Path of reports/NAME into out; 0, or -1 when no copy is found. */
int pyscript_find(const char *name, char *out, size_t len);
/* Run reports/NAME with args (NULL-terminated, not counting the script);
 * returns its exit code (3 when it could not run or died by a signal). */
int pyscript_run(const char *name, char *const args[]);

/* `lockstorm report OUTDIR --html FILE [--markdown FILE] [--title T]` */
int report_main(int argc, char **argv);
/* `lockstorm merge [-o OUTDIR] DIR..`: join nightly shard folders into one report */
int merge_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
