'use strict';
/*
 * npm's `lockfile` (pinned in adapters/node/package-lock.json) as a lockstorm
 * worker.  lock(LOCKSTORM_LOCK) creates the file with open(O_EXCL); a lock
 * whose ctime is older than `stale` ms is taken over through a second lock,
 * <lock>.STALE: stat, lock .STALE, stat again, unlink the lock, link .STALE
 * to it.  The holder never refreshes its lock; unlock() is an unlink by name.
 *
 * Parameters (LOCKSTORM_PARAM_*, already scaled by --time-scale):
 *   stale_ms  10000  lockfile `stale`
 *   wait_ms   10000  lockfile `wait` (total time lock() polls a live lock)
 *   poll_ms     100  lockfile `pollPeriod`
 *
 * lock() mutates its options object (start, stale): a fresh one per call.
 */
const ls = require('../lib/lockstorm');
const lockfile = ls.requireDep('lockfile');

const stale = ls.param('stale_ms', 10000);
const wait = ls.param('wait_ms', 10000);
const poll = ls.param('poll_ms', 100);

ls.serve({
	acquire() {
		return new Promise((resolve, reject) => {
			lockfile.lock(ls.LOCK, { stale, wait, pollPeriod: poll }, (err) => {
				if (!err)
					return resolve(true);
				/* EEXIST after the wait: somebody else holds it */
				if (err.code === 'EEXIST')
					return resolve(false);
				reject(err);
			});
		});
	},
	release() {
		/* best effort by design: unlock() reports no error */
		return new Promise((resolve) => lockfile.unlock(ls.LOCK, () => resolve()));
	},
});
