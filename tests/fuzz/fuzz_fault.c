/* fuzz_fault - the --fault grammar (faults/fault.h fault_parse), then the
 * point matcher on what it parsed.  Several specs may be given, one a line. */
#include "fuzz.h"

#include "faults/fault.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fault_plan plan;
	char *s = fuzz_cstr(data, size), *save = NULL, why[512];
	memset(&plan, 0, sizeof plan);
	for (char *spec = strtok_r(s, "\n", &save); spec; spec = strtok_r(NULL, "\n", &save)) {
		why[0] = 0;
		if (fault_parse(&plan, spec, why, sizeof why) != 0) {
			FUZZ_ASSERT(why[0]);
			break;
		}
	}
	FUZZ_ASSERT(plan.n <= FAULT_MAX_RULES);
	for (unsigned i = 0; i < plan.n; i++) {
		fault_point_match(plan.rule[i].point, "fs/mkdir");
		fault_point_match(plan.rule[i].point, "mkdir-owner/attempt/after-lock-mkdir");
		fault_point_match(plan.rule[i].point, plan.rule[i].point);
	}
	free(s);
	return 0;
}
