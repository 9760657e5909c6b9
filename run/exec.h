/*
 * exec.h - `lockstorm exec [--fault SPEC].. [-s SEED] [--log FILE] -- CMD [ARGS]`:
 * run any program under the preload fault shim (docs/preload.md).
 */
#ifndef LS_EXEC_H
#define LS_EXEC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* argv[0] is "exec".  Returns the program's exit status (128+signal if a
 * signal ended it), 2 on bad usage, 3 if the shim or the fork failed. */
int exec_main(int argc, char **argv);
/* The path of liblockstorm_preload.so (LOCKSTORM_PRELOAD, else next to
 * /proc/self/exe) in out: 0 when it is readable, else -1 with errno. */
int exec_find_shim(char *out, size_t len);
/* The same for any of lockstorm's libraries: $ENV, else NAME next to
 * /proc/self/exe, else in ../lib/lockstorm/ (an install). */
int exec_find_lib(const char *env, const char *name, char *out, size_t len);

#ifdef __cplusplus
}
#endif
#endif
