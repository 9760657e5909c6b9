/* fuzz_num - core/num.h: whole numbers, reals and durations.  The first byte
 * picks the function and its flags; the rest is the text.  Checks what num.h
 * promises: a result within its bounds, a one-line reason otherwise. */
#include "fuzz.h"

#include <math.h>

#include "core/num.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned pick = data[0] & 3, flags = (data[0] >> 2) & 15;
	char *s = fuzz_cstr(data + 1, size - 1);
	char why[256] = "";
	int rc;
	switch (pick) {
	case 0: {
		uint64_t v, lo = flags, hi = flags & 8 ? UINT64_MAX : 1000u * (flags + 1);
		rc = num_u64(s, lo, hi, &v, why, sizeof why);
		FUZZ_ASSERT(rc != 0 || (v >= lo && v <= hi));
		break;
	}
	case 1: {
		double v, lo = flags & NUM_SIGNED ? -1000 : 0, hi = 1000;
		rc = num_real(s, lo, hi, flags & (NUM_SIGNED | NUM_ABOVE), &v, why, sizeof why);
		FUZZ_ASSERT(rc != 0 || (isfinite(v) && v >= lo && v <= hi));
		FUZZ_ASSERT(rc != 0 || !(flags & NUM_ABOVE) || v > lo);
		break;
	}
	case 2: {
		struct num_dur d;
		rc = num_duration(s, flags & (NUM_SIGNED | NUM_STALE | NUM_BARE_MS), &d, why, sizeof why);
		if (rc == 0 && d.is_stale)
			FUZZ_ASSERT((flags & NUM_STALE) && isfinite(d.stale) && d.stale >= 0 && d.stale <= NUM_MAX_STALE);
		else if (rc == 0)
			FUZZ_ASSERT(d.ms <= NUM_MAX_MS && d.ms >= ((flags & NUM_SIGNED) ? -NUM_MAX_MS : 0));
		break;
	}
	default: {
		int64_t ms;
		rc = num_ms(s, flags & (NUM_SIGNED | NUM_BARE_MS), &ms, why, sizeof why);
		FUZZ_ASSERT(rc != 0 || (ms <= NUM_MAX_MS && ms >= ((flags & NUM_SIGNED) ? -NUM_MAX_MS : 0)));
		break;
	}
	}
	FUZZ_ASSERT(rc == 0 || rc == -1);
	FUZZ_ASSERT(rc == 0 || why[0]);
	free(s);
	return 0;
}
