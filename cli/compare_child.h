/*
 * compare_child.h - one `lockstorm run` of a compare, as a child process.
 *
 * The child runs EXE run -p PLIST PASS.. -s SEED -q --json JSON -o OUTDIR,
 * stdout to /dev/null.  It dies with compare (PR_SET_PDEATHSIG SIGTERM: it
 * stops its own workers) and sits in a process group of its own, so a
 * terminal's ^C reaches it once, from us: when *INTERRUPTED turns non-zero
 * while it runs, it is sent one SIGTERM and ends INCOMPLETE (exit 4) with
 * its report.  Returns its exit code, 128 + a signal, or -1.
 */
#ifndef LS_COMPARE_CHILD_H
#define LS_COMPARE_CHILD_H

#include <signal.h>
#include <stdint.h>

#define COMPARE_MAX_PASS 256 /* run options passed through */

int compare_child_run(const char *exe, const char *plist, char *const *pass, unsigned npass, uint64_t seed,
		      const char *json, const char *outdir, volatile sig_atomic_t *interrupted);

#endif
