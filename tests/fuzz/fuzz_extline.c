/* fuzz_extline - an adapter's event lines (run/extline.h ext_parse_line), one
 * a line as the driver splits them, at most EXT_LINE_MAX bytes each. */
#include "fuzz.h"

#include "core/journal.h"
#include "run/extline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size), *save = NULL, why[512];
	for (char *line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strlen(line) > EXT_LINE_MAX)
			line[EXT_LINE_MAX] = 0;
		struct ext_event ev;
		why[0] = 0;
		if (ext_parse_line(line, &ev, why, sizeof why) != 0) {
			FUZZ_ASSERT(why[0]);
			continue;
		}
		FUZZ_ASSERT(ev.type >= EV_NONE && ev.type < EV__COUNT);
		ext_point_of(ev.type);
	}
	free(s);
	return 0;
}
