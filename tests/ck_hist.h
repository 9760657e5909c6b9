/*
 * ck_hist.h - what the checker's unit tests share: a hand-written history of
 * journal records, one ev() per record, seq in order, times in ms from a clock
 * far from 0.  Each test file derives its own Hist with the records its
 * invariants need (take, release, ...):  struct Hist : HistBase<Hist> { ... }.
 */
#ifndef LS_TEST_CK_HIST_H
#define LS_TEST_CK_HIST_H

#include <stdint.h>
#include <string.h>

#include <vector>

#include "core/journal.h"

constexpr uint64_t MS = 1000000;

template <class D> struct HistBase {
	std::vector<jrec> r;
	uint64_t seq = 1;

	D &ev(unsigned w, int type, uint32_t op, double at_ms, int64_t a = 0, int64_t b = 0, int64_t c = 0,
	      int err = 0)
	{
		jrec x;
		memset(&x, 0, sizeof x);
		x.type = (uint16_t)type;
		x.worker = (uint16_t)w;
		x.pid = 1000 + (int32_t)w;
		x.op = op;
		x.err = err;
		x.seq = seq++;
		x.ns = (uint64_t)(at_ms * (double)MS) + 1000 * MS; /* clock far from 0 */
		x.a = a;
		x.b = b;
		x.c = c;
		r.push_back(x);
		return static_cast<D &>(*this);
	}
	/* the record time of AT_MS, as ev() stamps it */
	static int64_t ns(double at_ms) { return (int64_t)(at_ms * (double)MS) + 1000 * (int64_t)MS; }
};

#endif
