/*
 * hist.h - a log-linear histogram of durations (HDR-style, 2 significant
 * digits): fixed memory whatever the number of samples, percentiles within
 * 1% of the exact nearest-rank sample, with no sorting.
 *
 * Values below 256 have a bucket each; above, every power of two is split
 * into 128 buckets (a bucket is at most 1/128 of its values wide).  Each
 * bucket also keeps the largest sample it took, and a percentile is that
 * sample of the bucket that holds its rank: always a value that was pushed,
 * and the exact one whenever the samples in that bucket are all equal.
 *
 *   hist_push(&h, v)        0, or -1 (ENOMEM) the first time it allocates
 *   hist_rank(&h, p)        the nearest-rank p-th percentile (p in 1..100)
 *   hist_free(&h)
 */
#ifndef LS_HIST_H
#define LS_HIST_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HIST_BUCKETS (256 + 56 * 128)
#define HIST_GROUPS 57 /* the 256 small values, then each power of two's 128 */

struct hist {
	uint64_t n;           /* samples */
	uint64_t max;         /* the largest */
	/* per group, NULL until it takes a sample (a check of a short run, as
	 * the explorer's of each execution, touches a few KiB, not 116): its
	 * counters, then the largest sample each bucket took */
	uint64_t *grp[HIST_GROUPS];
};

unsigned hist_bucket(uint64_t v);
int hist_push(struct hist *h, uint64_t v);
uint64_t hist_rank(const struct hist *h, unsigned pct);
void hist_free(struct hist *h);

#ifdef __cplusplus
}
#endif
#endif
