/*
 * extline.h - the event lines an adapter writes on its fd 3
 * (docs/external-workers.md): "next", "<ns> log TEXT", "<ns> EVENT k=v ...".
 */
#ifndef LS_EXTLINE_H
#define LS_EXTLINE_H

#include <stddef.h>
#include <stdint.h>

#include "../protocols/external.h" /* enum ext_point: the driver's points PT_* */

#ifdef __cplusplus
extern "C" {
#endif

#define EXT_LINE_MAX 4096

/* One event line, parsed (exposed for the unit tests).  Returns 0 and fills
 * the record's type, a, b, err and ns (type EV_NONE for `next`; log = 1 for a
 * `log` line), or -1 with a reason in why. */
struct ext_event {
	int type;       /* EV_*; EV_NONE for `next` and `log` */
	int next;       /* the line was `next` */
	int log;        /* the line was `log TEXT` */
	int err;
	uint64_t ns;    /* 0 when the line had none (`next`) */
	int64_t a, b;
	const char *text; /* log: the text (points into the line) */
};
int ext_parse_line(const char *line, struct ext_event *ev, char *why, size_t len);
/* The driver's point (PT_*, protocols/external.h) after an event of this type; -1: none. */
int ext_point_of(int type);

#ifdef __cplusplus
}
#endif
#endif
