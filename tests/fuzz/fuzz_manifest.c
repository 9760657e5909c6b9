/* fuzz_manifest - a user's adapter manifest (protocols/extmanifest.c
 * ext_manifest_parse), as -p ext:NAME reads NAME/adapter.json from a folder
 * on $LOCKSTORM_ADAPTERS.  The folder is named my-lock, as the seeds' "name". */
#include "fuzz.h"

#include "protocols/external.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ext_manifest m;
	int rc = ext_manifest_parse(fuzz_file(data, size), "/nonexistent-lockstorm-fuzz", "my-lock", &m);
	if (rc != 0) {
		FUZZ_ASSERT(fuzz_one_line(ext_manifest_error()));
		return 0;
	}
	FUZZ_ASSERT(m.name && !strcmp(m.name, "my-lock") && m.run && m.origin && m.summary);
	FUZZ_ASSERT(m.workloads >= 1 && m.workloads <= 3);
	int have = 0;
	unsigned n = 0;
	for (const struct param *p = m.params; p->name; p++, n++) {
		have |= !strcmp(p->name, "stale_ms") | !strcmp(p->name, "wait_ms") << 1;
		FUZZ_ASSERT(p->def >= 0 && p->help);
	}
	FUZZ_ASSERT(have == 3 && n < LS_MAX_PARAMS);
	ext_manifest_free(&m);
	return 0;
}
