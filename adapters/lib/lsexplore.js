'use strict';
/*
 * lsexplore.js - the Node side of `lockstorm explore -p ext:NAME`
 * (docs/external-workers.md, "Exploring your own library").  lockstorm.js
 * loads it when LOCKSTORM_EXPLORE=1, before the adapter requires its library,
 * so every fs call the library makes (callback, promise and sync APIs, also
 * through graceful-fs) and every timer it sets goes through the explorer:
 *
 *   adapter (fd 3)                        explorer (stdin)
 *     step K CALL PATH [PATH2]  --->        (a call waits to be granted)
 *     done K ok|ERRNO           --->  <---  go K T      run call K at virtual ms T
 *                                     <---  go K T ERRNO  fail it with ERRNO, not run
 *     done K ENOSPC             --->  <---  go K T short-write  a write: its first 10
 *                                           bytes land, then it fails with ENOSPC
 *     done K part               --->  <---  go K T split-write  a write: its first 10
 *     step K2 CALL PATH rest    --->        bytes land; the rest is a call of its own
 *     <ns> EVENT ...            --->  <---  time T      the clock is T: due timers fire
 *     next                      --->  <---  op N T | stop
 *     quiet T                   --->        settled; T: its earliest timer (-1 none)
 *
 * After each command the adapter settles: microtasks and nextTicks drain
 * (one turn of the real event loop: every call is made synchronously once
 * granted, so nothing else is in flight), due timers fire in (time, id)
 * order, then `quiet`.  Time is virtual: Date, Date.now, performance.now,
 * process.hrtime, setTimeout/setInterval/setImmediate; file times too: every
 * object a granted call creates or changes, and its folder, gets mtime = the
 * virtual clock, and stat reports ctime = mtime (npm's lockfile judges ctime).
 * Math.random is seeded from (LOCKSTORM_SEED, worker).  So the same grants
 * give the same calls: an execution replays exactly.
 */
const fs = require('fs');
const pathmod = require('path');

const env = process.env;
const EVENT_FD = Number(env.LOCKSTORM_EVENT_FD || 3);
const WORKER = Number(env.LOCKSTORM_WORKER || 0);
const PID = 2000 + WORKER; /* virtual, as the built-in explorer's */

let now = Number(env.LOCKSTORM_EXPLORE_T0 || 1700000000000); /* virtual ms */
const T0 = now;
let sub = 0, lastNow = now;

function ns() {
	if (now !== lastNow) {
		lastNow = now;
		sub = 0;
	}
	return BigInt(now - T0) * 1000000n + BigInt(++sub * 1000);
}

const writeSync = fs.writeSync;
function out(line) {
	writeSync(EVENT_FD, line + '\n');
}

/* ---- Math.random: seeded (xorshift128+) ---- */
{
	let s0 = BigInt.asUintN(64, BigInt(env.LOCKSTORM_SEED || 1) * 0x9e3779b97f4a7c15n + BigInt(WORKER + 1));
	let s1 = BigInt.asUintN(64, s0 ^ 0xda3e39cb94b95bdbn);
	Math.random = function random() {
		let x = s0;
		const y = s1;
		s0 = y;
		x = BigInt.asUintN(64, x ^ (x << 23n));
		s1 = BigInt.asUintN(64, x ^ y ^ (x >> 17n) ^ (y >> 26n));
		return Number(BigInt.asUintN(53, s1 + y)) / 9007199254740992;
	};
}

/* ---- virtual time ---- */
const RealDate = Date;
class VDate extends RealDate {
	constructor(...a) {
		if (a.length === 0)
			super(now);
		else
			super(...a);
	}
	static now() {
		return now;
	}
}
VDate.parse = RealDate.parse;
VDate.UTC = RealDate.UTC;
global.Date = VDate;
if (global.performance) {
	// Node 18's performance.now is a read-only accessor of the prototype: an
	// assignment throws, a property of the object's own shadows it
	Object.defineProperty(global.performance, 'now', {
		value: () => now - T0,
		writable: true,
		configurable: true,
	});
}
const realHrtime = process.hrtime;
process.hrtime = function hrtime(prev) {
	const t = now - T0;
	let s = Math.floor(t / 1000), n = (t % 1000) * 1e6;
	if (prev) {
		s -= prev[0];
		n -= prev[1];
		if (n < 0) {
			s--;
			n += 1e9;
		}
	}
	return [s, n];
};
process.hrtime.bigint = () => BigInt(now - T0) * 1000000n;
void realHrtime;

const realSetImmediate = global.setImmediate;
const timers = new Map();
let timerSeq = 0;

class Timer {
	constructor(id) {
		this._id = id;
	}
	ref() { return this; }
	unref() { return this; }
	hasRef() { return true; }
	refresh() {
		const t = timers.get(this._id);
		if (t)
			t.at = now + t.delay;
		return this;
	}
	close() {
		timers.delete(this._id);
		return this;
	}
	[Symbol.toPrimitive]() {
		return this._id;
	}
}

function addTimer(fn, delay, args, repeat, immediate) {
	if (typeof fn !== 'function')
		throw new TypeError('The "callback" argument must be of type function');
	let d = Number(delay);
	if (!(d >= 1 && d <= 2147483647))
		d = 1;
	d = Math.floor(d);
	const id = ++timerSeq;
	timers.set(id, { id, at: immediate ? now : now + d, delay: d, fn, args, repeat });
	return new Timer(id);
}

function clearTimer(t) {
	if (t === null || t === undefined)
		return;
	timers.delete(typeof t === 'object' ? t._id : Number(t));
}

global.setTimeout = (fn, d, ...a) => addTimer(fn, d, a, false, false);
global.setInterval = (fn, d, ...a) => addTimer(fn, d, a, true, false);
global.setImmediate = (fn, ...a) => addTimer(fn, 0, a, false, true);
global.clearTimeout = clearTimer;
global.clearInterval = clearTimer;
global.clearImmediate = clearTimer;
{
	const tm = require('timers');
	tm.setTimeout = global.setTimeout;
	tm.setInterval = global.setInterval;
	tm.setImmediate = global.setImmediate;
	tm.clearTimeout = tm.clearInterval = tm.clearImmediate = clearTimer;
}

function dueTimer() {
	let best = null;
	for (const t of timers.values())
		if (t.at <= now && (!best || t.at < best.at || (t.at === best.at && t.id < best.id)))
			best = t;
	return best;
}

function nextTimerAt() {
	let at = -1;
	for (const t of timers.values())
		if (at < 0 || t.at < at)
			at = t.at;
	return at;
}

/* ---- the calls ---- */
const real = {};
const pending = new Map(); /* id -> { call, paths, run, deliver } */
let stepSeq = 0;
let exiting = false;
const fdPath = new Map();

/* How many leading arguments are paths (fd calls: one fd). */
const CALLS = {
	access: 1, appendFile: 1, chmod: 1, chown: 1, copyFile: 2, link: 2, lstat: 1, mkdir: 1, mkdtemp: 1,
	open: 1, readdir: 1, readFile: 1, readlink: 1, realpath: 1, rename: 2, rm: 1, rmdir: 1, stat: 1,
	symlink: 2, truncate: 1, unlink: 1, utimes: 1, writeFile: 1,
	close: -1, fstat: -1, fsync: -1, fdatasync: -1, ftruncate: -1, futimes: -1, read: -1, write: -1,
};
const MUTATES = new Set(['appendFile', 'copyFile', 'link', 'mkdir', 'mkdtemp', 'open', 'rename', 'rm', 'rmdir',
	'symlink', 'truncate', 'unlink', 'writeFile', 'ftruncate', 'write']);

function show(p) {
	if (typeof p === 'number')
		return fdPath.get(p) || `fd${p}`;
	if (Buffer.isBuffer(p))
		p = p.toString();
	if (p instanceof URL)
		p = p.pathname;
	return String(p).replace(/\s/g, '_');
}

function vstamp(p) {
	const t = now / 1000;
	try {
		if (typeof p === 'number')
			real.futimesSync(p, t, t);
		else
			real.utimesSync(p, t, t);
	} catch (e) {
		/* gone already */
	}
}

function fixStat(st) {
	if (st && typeof st === 'object' && 'mtimeMs' in st) {
		const m = st.mtime;
		for (const k of ['ctime', 'birthtime'])
			Object.defineProperty(st, k, { value: new RealDate(m.getTime()), writable: true, configurable: true });
		for (const k of ['ctimeMs', 'birthtimeMs'])
			Object.defineProperty(st, k, { value: st.mtimeMs, writable: true, configurable: true });
	}
	return st;
}

/* The call, made for real, then the virtual times of what it changed. */
function perform(name, args) {
	const r = real[name + 'Sync'](...args);
	if (name === 'open')
		fdPath.set(r, show(args[0]));
	if (name === 'close')
		fdPath.delete(args[0]);
	if (MUTATES.has(name)) {
		const n = CALLS[name];
		if (n < 0) {
			vstamp(args[0]);
		} else {
			const last = n === 2 ? args[1] : args[0];
			const p = show(last);
			if (!['rmdir', 'unlink', 'rm', 'rename'].includes(name) && !(name === 'open' && !/[wa+]/.test(String(args[1] || 'r'))))
				vstamp(p);
			vstamp(pathmod.dirname(p));
			if (n === 2 && name === 'rename')
				vstamp(pathmod.dirname(show(args[0])));
		}
	}
	if (name === 'stat' || name === 'lstat' || name === 'fstat')
		fixStat(r);
	return r;
}

function errName(e) {
	return (e && typeof e.code === 'string' && /^E[A-Z0-9]+$/.test(e.code)) ? e.code : 'EIO';
}

function announce(name, args, sync) {
	const id = ++stepSeq;
	const n = CALLS[name];
	const paths = [show(args[0])];
	if (n === 2)
		paths.push(show(args[1]));
	out(`step ${id} ${name} ${paths.join(' ')}${sync ? ' sync' : ''}`);
	return id;
}

let performing = 0; // inside a granted call: the fs calls it makes are its own, no steps
/* The error Node would give CALL failing with CODE (the explorer's errno choice). */
function injected(code, p) {
	const errno = require('os').constants.errno[code] || 5;
	const path = show(p.args[0]);
	const e = new Error(`${code}: injected by lockstorm explore, ${p.name} '${path}'`);
	e.code = code;
	e.errno = -errno;
	e.syscall = p.name;
	e.path = path;
	return e;
}

const TEAR = 10; /* short and split writes: the bytes that land first (explore/xfaults.c) */

function bytesOf(data, enc) {
	if (typeof data === 'string')
		return Buffer.from(data, typeof enc === 'string' ? enc : 'utf8');
	if (ArrayBuffer.isView(data))
		return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
	return null;
}

/* A write the explorer may tear: its bytes, how a part of them is written
 * (in order: the first part as the call itself, the rest after it), and the
 * call's result once all are.  null: no write we can take apart. */
function tearable(p) {
	const a = p.args;
	if (p.name === 'writeFile' || p.name === 'appendFile') {
		const opts = a[2];
		const data = bytesOf(a[1], opts && typeof opts === 'object' ? opts.encoding : opts);
		if (!data)
			return null;
		return {
			data,
			part: (b, first) => (first ? perform(p.name, [a[0], b, opts]) : perform('appendFile', [a[0], b]), b.length),
			result: () => undefined,
		};
	}
	if (p.name !== 'write')
		return null;
	let data, pos; /* write(fd, buffer[, offset[, length[, position]]]) or (fd, buffer, options) or (fd, string[, position[, encoding]]) */
	if (typeof a[1] === 'string') {
		data = bytesOf(a[1], a[3]);
		pos = a[2];
	} else {
		const buf = bytesOf(a[1]);
		if (!buf)
			return null;
		let off = a[2], len = a[3];
		pos = a[4];
		if (off && typeof off === 'object')
			({ offset: off, length: len, position: pos } = off);
		off = off || 0;
		len = len === undefined || len === null ? buf.length - off : len;
		data = buf.subarray(off, off + len);
	}
	let at = typeof pos === 'number' || typeof pos === 'bigint' ? Number(pos) : null;
	return {
		data,
		part: (b) => {
			const n = perform('write', [a[0], b, 0, b.length, at]);
			if (at !== null)
				at += n;
			return n;
		},
		result: (n) => n,
	};
}

/* A granted step: the call, `done`, then the result to its caller.  With
 * INJECT (`go K T ERRNO`) the call is not made: it fails with that errno.
 * With `short-write` a write's first TEAR bytes land, then it fails with
 * ENOSPC; with `split-write` they land (`done K part`) and the rest is
 * announced as a call of its own (`step K2 CALL PATH rest`), granted later,
 * which then gives the caller its result.  True when the caller still waits
 * (the rest). */
function grant(id, inject) {
	const p = pending.get(id);
	if (!p)
		return false;
	pending.delete(id);
	let res, err = null, rest = null;
	performing++; // what the call does inside (Node 18's readFileSync calls fs.openSync ...) is this step's
	try {
		const tear = inject === 'short-write' || inject === 'split-write';
		const t = p.torn || (tear ? tearable(p) : null); /* p.torn: this is the rest of a split one */
		const data = p.torn ? p.data : t && t.data;
		if (tear && t && data.length > TEAR) {
			const n = t.part(data.subarray(0, TEAR), !p.torn);
			if (inject === 'short-write')
				err = injected('ENOSPC', p);
			else
				rest = { torn: t, data: data.subarray(TEAR), before: (p.before || 0) + n };
		} else if (inject && !tear) {
			err = injected(inject, p);
		} else if (p.torn) {
			res = t.result(p.before + p.torn.part(p.data, false));
		} else {
			res = perform(p.name, p.args); /* also a write too short to tear: it lands whole */
		}
	} catch (e) {
		err = e;
	} finally {
		performing--;
	}
	if (rest) {
		out(`done ${id} part`);
		const rid = ++stepSeq;
		out(`step ${rid} ${p.name} ${show(p.args[0])} rest${p.sync ? ' sync' : ''}`);
		pending.set(rid, Object.assign({}, p, rest));
		return true;
	}
	out(`done ${id} ${err ? errName(err) : 'ok'}`);
	p.deliver(err, res);
	return false;
}

function cbResult(name, r) {
	if (name === 'read' || name === 'write')
		return [r, undefined];
	return [r];
}

for (const name of Object.keys(CALLS)) {
	if (typeof fs[name + 'Sync'] !== 'function')
		continue;
	real[name + 'Sync'] = fs[name + 'Sync'];
	const orig = fs[name];
	fs[name] = function (...args) {
		if (exiting || !serving || performing || (CALLS[name] < 0 && !fdPath.has(args[0])))
			return orig.apply(fs, args);
		const cb = typeof args[args.length - 1] === 'function' ? args.pop() : null;
		const id = announce(name, args, false);
		pending.set(id, { name, args, deliver: (err, r) => {
			if (!cb)
				return;
			if (err)
				process.nextTick(cb, err);
			else
				process.nextTick(cb, null, ...cbResult(name, r));
		} });
	};
	fs[name + 'Sync'] = function (...args) {
		if (exiting || !serving || performing || (CALLS[name] < 0 && !fdPath.has(args[0])))
			return real[name + 'Sync'](...args);
		const id = announce(name, args, true);
		let res, err = null, got = false;
		pending.set(id, { name, args, sync: true, deliver: (e, r) => { err = e; res = r; got = true; } });
		out(`quiet ${nextTimerAt()} sync`);
		while (!got) {
			const c = readCmd();
			if (c[0] === 'stop')
				stopNow();
			if (c[0] === 'go') {
				now = Number(c[2]);
				if (grant(Number(c[1]), c[3])) /* a split write: its rest is the next call */
					out(`quiet ${nextTimerAt()} sync`);
			}
		}
		if (err)
			throw err;
		return res;
	};
}
if (fs.promises) {
	for (const name of Object.keys(CALLS)) {
		if (CALLS[name] < 0 || typeof fs.promises[name] !== 'function' || !real[name + 'Sync'])
			continue;
		const orig = fs.promises[name];
		fs.promises[name] = function (...args) {
			if (exiting || !serving)
				return orig.apply(fs.promises, args);
			return new Promise((resolve, reject) => {
				const id = announce(name, args, false);
				pending.set(id, { name, args, deliver: (err, r) => (err ? reject(err) : resolve(r)) });
			});
		};
	}
}

/* ---- the command loop ---- */
let serving = false;
let opWaiter = null;
let inbuf = '';
const chunk = Buffer.alloc(4096);

function readCmd() {
	for (;;) {
		const nl = inbuf.indexOf('\n');
		if (nl >= 0) {
			const line = inbuf.slice(0, nl);
			inbuf = inbuf.slice(nl + 1);
			return line.trim().split(/\s+/);
		}
		let k;
		try {
			k = real.readSync ? real.readSync(0, chunk, 0, chunk.length, null) : fs.readSync(0, chunk, 0, chunk.length, null);
		} catch (e) {
			if (e.code === 'EAGAIN')
				continue;
			throw e;
		}
		if (k === 0)
			return ['stop'];
		inbuf += chunk.toString('utf8', 0, k);
	}
}

function stopNow() {
	exiting = true;
	process.exit(0);
}

function turn() {
	return new Promise((r) => realSetImmediate(r));
}

async function settle() {
	for (;;) {
		await turn();
		const t = dueTimer();
		if (!t)
			return;
		if (t.repeat)
			t.at = now + t.delay;
		else
			timers.delete(t.id);
		t.fn(...t.args);
	}
}

async function loop() {
	for (;;) {
		await settle();
		out(`quiet ${nextTimerAt()}`);
		const c = readCmd();
		switch (c[0]) {
		case 'stop':
			stopNow();
			break;
		case 'op':
			now = Number(c[2]);
			if (opWaiter) {
				const w = opWaiter;
				opWaiter = null;
				w(Number(c[1]));
			}
			break;
		case 'go':
			now = Number(c[2]);
			grant(Number(c[1]), c[3]);
			break;
		case 'time':
			now = Math.max(now, Number(c[1]));
			break;
		default:
			process.stderr.write(`lsexplore: unknown command ${c.join(' ')}\n`);
			process.exit(3);
		}
	}
}

/* The adapter's next op number, or -1 on stop (serve's loop calls it after `next`). */
function nextOp() {
	return new Promise((resolve) => {
		opWaiter = resolve;
	});
}

function start() {
	serving = true;
	loop().catch((e) => {
		process.stderr.write(`lsexplore: ${e && e.stack}\n`);
		process.exit(3);
	});
}

module.exports = { ns, out, nextOp, start, PID };
