'use strict';
/*
 * proper-lockfile (npm, pinned in adapters/node/package-lock.json) as a
 * lockstorm worker.  lock(resource) makes the directory <resource>.lock with
 * mkdir, keeps its mtime fresh every `update` ms, and takes a lock whose
 * mtime is older than `stale` ms by rmdir + mkdir.
 *
 * Parameters (LOCKSTORM_PARAM_*, already scaled by --time-scale):
 *   stale_ms  10000  proper-lockfile `stale` (the library raises it to >= 2000)
 *   update_ms  5000  proper-lockfile `update` (clamped by the library to 1000..stale/2)
 *   wait_ms   10000  total retry budget, as proper-lockfile's own `retries`
 *                    option: {retries: wait_ms / interval, factor 1,
 *                    minTimeout = maxTimeout = interval}, interval =
 *                    clamp(wait_ms / 10, 1, 50) ms
 *
 * realpath: false, so the resource need not exist yet (the update workload's
 * state file appears with the first commit).  onCompromised, whose default
 * throws from a timer, reports `lost` instead.
 */
const ls = require('../lib/lockstorm');
const lockfile = ls.requireDep('proper-lockfile');

const stale = ls.param('stale_ms', 10000);
const update = ls.param('update_ms', 5000);
const wait = ls.param('wait_ms', 10000);
const interval = Math.max(1, Math.min(50, Math.floor(wait / 10)));

let release = null;

ls.serve({
	async acquire() {
		try {
			release = await lockfile.lock(ls.RESOURCE, {
				stale,
				update,
				realpath: false,
				retries: { retries: Math.floor(wait / interval), factor: 1,
					   minTimeout: interval, maxTimeout: interval, randomize: false },
				onCompromised: (err) => ls.lost(err && err.message),
			});
			return true;
		} catch (e) {
			if (e.code === 'ELOCKED')
				return false;
			throw e;
		}
	},
	async release() {
		const r = release;
		release = null;
		await r();
	},
});
