'use strict';
/*
 * lockstorm.js - the worker side of lockstorm's external-worker protocol, for
 * Node adapters (docs/external-workers.md).
 *
 *   const ls = require('../lib/lockstorm');
 *   ls.serve({ acquire, release });      // never returns: exits 0 on `stop`
 *   ls.serve({ acquire, release, update }); // with its own write step
 *
 *   acquire()  resolves true (held) or false (gave up within its own wait
 *              budget: `busy`); throws or rejects with anything at all
 *              (`acquire-error errno=<code> error=<its type name>`).
 *   release()  resolves once the library's unlock returned; throws or
 *              rejects (`release-error errno=<code> error=<type>`).
 *   update()   optional: the write step while the lock is held, in place of
 *              ls.updateState (read the state, revision+1, own counter+1,
 *              tmp + rename); it reports its own `read`, `commit-begin` and
 *              `commit` with ls.emit; a throw is `write-error`.
 *   ls.lost()  the library said the lock is no longer ours (proper-lockfile's
 *              onCompromised): `lost` while an op holds the lock, and the
 *              op does not begin a commit it has not begun yet.
 *
 * Per op: `next` on the event fd, one line from stdin (`op N` or `stop`),
 * then acquire; update: read the state, revision+1 and own counter+1, write
 * <state>.<pid>.tmp, rename it over the state (as workloads/update.c); hold:
 * sleep LOCKSTORM_HOLD_MS; release.  Every event line is one write(2) on the
 * event fd, stamped with CLOCK_MONOTONIC (process.hrtime.bigint()).
 *
 * The state is read and written with fs.promises: a holder gives the event
 * loop a turn between its steps, so the library's timers (proper-lockfile's
 * mtime updates) run in the middle of an update, as they do in a service.
 */
/* explore: fs and timers go through the explorer (loaded before any library) */
const X = process.env.LOCKSTORM_EXPLORE === '1' ? require('./lsexplore') : null;
const fs = require('fs');
const fsp = fs.promises;
const path = require('path');
const readline = require('readline');

const env = process.env;
const EVENT_FD = Number(env.LOCKSTORM_EVENT_FD || 3);
const WORKER = Number(env.LOCKSTORM_WORKER || 0);
const WORKERS = Number(env.LOCKSTORM_WORKERS || 1);
const STATE = env.LOCKSTORM_STATE || env.LOCKSTORM_RESOURCE;
const RESOURCE = env.LOCKSTORM_RESOURCE || STATE;
const LOCK = env.LOCKSTORM_LOCK || `${RESOURCE}.lock`;

/* One event line, one write(2). */
function emit(event, fields) {
	if (X)
		return X.out(`${X.ns()} ${event}${fields ? ' ' + fields : ''}`);
	const line = `${process.hrtime.bigint()} ${event}${fields ? ' ' + fields : ''}\n`;
	fs.writeSync(EVENT_FD, line);
}

/* The errno name of a library error: its code when that is an errno name
 * (EACCES, ...); a library's own code (proper-lockfile's ERELEASED,
 * ECOMPROMISED, ...) is logged and reported as ENOLCK; anything else is EIO. */
const ERRNOS = require('os').constants.errno;
function errnoName(err) {
	const code = err && err.code;
	if (typeof code === 'string' && Object.prototype.hasOwnProperty.call(ERRNOS, code))
		return code;
	if (typeof code === 'string' && /^E[A-Z0-9]+$/.test(code)) {
		emit('log', `library error ${code}: ${String(err.message).replace(/\s+/g, ' ')}`);
		return 'ENOLCK';
	}
	return 'EIO';
}

/* `errno=<name> error=<type>`: any thrown value, as event fields. */
function errorFields(err) {
	let type = typeof err;
	if (err && typeof err === 'object')
		type = (err.constructor && err.constructor.name) || 'Object';
	type = String(type).replace(/[^A-Za-z0-9_.:-]/g, '_').slice(0, 64) || 'unknown';
	if (err && err.code && typeof err.code === 'string')
		type += `:${err.code.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 32)}`;
	return `errno=${errnoName(err)} error=${type}`;
}

/* A LOCKSTORM_PARAM_<NAME> as a number (already scaled by --time-scale). */
function param(name, dflt) {
	const v = env['LOCKSTORM_PARAM_' + name.toUpperCase()];
	if (v === undefined || v === '')
		return dflt;
	const n = Number(v);
	if (!Number.isFinite(n)) {
		process.stderr.write(`lockstorm adapter: LOCKSTORM_PARAM_${name.toUpperCase()}=${v} is not a number\n`);
		process.exit(2);
	}
	return n;
}

/* A dependency from adapters/node (npm ci --prefix adapters/node). */
function requireDep(name) {
	const dir = path.join(__dirname, '..', 'node', 'node_modules', name);
	try {
		return require(dir);
	} catch (e) {
		process.stderr.write(`lockstorm adapter: ${name} is not installed (${e.code || e.message}); ` +
			'run ./ci/setup or `npm ci --prefix adapters/node`\n');
		process.exit(2);
	}
}

/* ---- the update workload's state (workloads/update_state.c's shape rules) ---- */

function stateParse(text) {
	let root;
	try {
		root = JSON.parse(text);
	} catch (e) {
		return null;
	}
	const isInt = (v) => Number.isSafeInteger(v) && v >= 0;
	if (!root || typeof root !== 'object' || Array.isArray(root) || !isInt(root.revision))
		return null;
	if ('version' in root && !Number.isSafeInteger(root.version))
		return null;
	const c = root.counts;
	if (!c || typeof c !== 'object' || Array.isArray(c))
		return null;
	const counts = new Array(WORKERS).fill(0);
	for (const [k, v] of Object.entries(c)) {
		if (!/^[0-9]{1,9}$/.test(k) || !isInt(v))
			return null;
		if (Number(k) < WORKERS)
			counts[Number(k)] = v;
	}
	return { revision: root.revision, counts };
}

function stateFormat(st) {
	const counts = {};
	st.counts.forEach((c, w) => { if (c) counts[String(w)] = c; });
	return JSON.stringify({ version: 1, revision: st.revision, counts }) + '\n';
}

/* ---- one op ---- */

let holding = false;	/* between `acquired` and `release-begin` */
let lostNow = false;	/* the library said this op's lock is gone */

function lost(why) {
	if (holding && !lostNow) {
		lostNow = true;
		emit('lost');
	} else {
		emit('log', `lost outside a hold: ${String(why || '').replace(/\s+/g, ' ')}`);
	}
}

async function updateState() {
	let text = null;
	try {
		text = await fsp.readFile(STATE, 'utf8');
	} catch (e) {
		if (e.code !== 'ENOENT') {
			emit('read', `rev=-1 own=0 errno=${errnoName(e)}`);
			return;
		}
	}
	const st = text === null ? { revision: -1, counts: new Array(WORKERS).fill(0) } : stateParse(text);
	if (!st) {
		emit('read', 'rev=-1 own=0 errno=EBADMSG');
		return;
	}
	const readRev = st.revision, own = st.counts[WORKER] || 0;
	emit('read', `rev=${readRev} own=${own}`);
	st.revision = (readRev < 0 ? 0 : readRev) + 1;
	st.counts[WORKER] = own + 1;
	const tmp = `${STATE}.${X ? X.PID : process.pid}.tmp`;
	try {
		await fsp.writeFile(tmp, stateFormat(st));
	} catch (e) {
		emit('write-error', `errno=${errnoName(e)}`);
		return;
	}
	if (lostNow) {
		/* told before the commit began: what a careful caller does */
		await fsp.unlink(tmp).catch(() => {});
		return;
	}
	emit('commit-begin', `rev=${st.revision} own=${own + 1}`);
	try {
		await fsp.rename(tmp, STATE);
	} catch (e) {
		emit('write-error', `errno=${errnoName(e)}`);
		return;
	}
	emit('commit', `rev=${st.revision} own=${own + 1}`);
}

async function op(lib) {
	lostNow = false;
	emit('attempt', 'n=0');
	let held;
	try {
		held = await lib.acquire();
	} catch (e) {
		emit('acquire-error', errorFields(e));
		return;
	}
	if (!held) {
		emit('busy');
		return;
	}
	holding = true;
	emit('acquired');
	if (env.LOCKSTORM_WORKLOAD === 'hold') {
		const ms = Number(env.LOCKSTORM_HOLD_MS || 0);
		if (ms > 0)
			await new Promise((r) => setTimeout(r, ms));
	} else {
		try {
			await (lib.update || updateState)();
		} catch (e) {
			emit('write-error', errorFields(e));
		}
	}
	holding = false;
	emit('release-begin');
	try {
		await lib.release();
		emit('released');
	} catch (e) {
		emit('release-error', errorFields(e));
	}
}

/* The control loop: `next`, then `op N` or `stop` (EOF is stop). */
async function serve(lib) {
	if (X) {
		X.start();
		for (;;) {
			emit('next');
			await X.nextOp();
			await op(lib);
		}
	}
	const rl = readline.createInterface({ input: process.stdin, terminal: false });
	const lines = rl[Symbol.asyncIterator]();
	for (;;) {
		emit('next');
		const { value, done } = await lines.next();
		if (done || !/^op \d+/.test(value))
			break;
		await op(lib);
	}
	rl.close();
	process.exit(0);
}

module.exports = { emit, errnoName, errorFields, updateState, op, param, requireDep, serve, lost, stateParse, stateFormat, STATE, RESOURCE, LOCK, WORKER };
