// checks.mjs is what the interop clients (client.mjs, modern_client.mjs)
// share: one JSON line per check on stdout, bounded waits, and the
// transcript that goes to stderr on failure (or with
// MCP_INTEROP_TRANSCRIPT set).

const WAIT_TIMEOUT = 10_000; // one wait for a notification, in ms

let failed = false;

// report prints one check's line.
export function report(check, ok, detail) {
	if (!ok) failed = true;
	process.stdout.write(JSON.stringify({ check, ok, detail: detail ?? null }) + "\n");
}

// check runs fn as one check: it passes when fn returns (its value is the
// detail) and fails with the message of what fn throws.
export async function check(name, fn) {
	try {
		report(name, true, (await fn()) ?? null);
	} catch (err) {
		report(name, false, err instanceof Error ? err.message : String(err));
	}
}

export function assert(cond, message) {
	if (!cond) throw new Error(message);
}

export function assertEqual(got, want, what) {
	const g = JSON.stringify(got);
	const w = JSON.stringify(want);
	if (g !== w) throw new Error(`${what}: got ${g}, want ${w}`);
}

// boundRun bounds the whole run: a hang prints what it has and fails.
export function boundRun(ms) {
	setTimeout(() => {
		report("run", false, `the run took longer than ${ms} ms`);
		dumpTranscript();
		process.exit(2);
	}, ms).unref();
}

// Inbox queues what a handler saw; next waits for the next item, bounded.
export class Inbox {
	#items = [];
	#waiters = [];
	push(item) {
		const w = this.#waiters.shift();
		if (w) w(item);
		else this.#items.push(item);
	}
	get length() {
		return this.#items.length;
	}
	next(what, ms = WAIT_TIMEOUT) {
		if (this.#items.length > 0) return Promise.resolve(this.#items.shift());
		return new Promise((resolve, reject) => {
			const timer = setTimeout(() => {
				this.#waiters = this.#waiters.filter((w) => w !== waiter);
				reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
			}, ms);
			const waiter = (item) => {
				clearTimeout(timer);
				resolve(item);
			};
			this.#waiters.push(waiter);
		});
	}
}

// The JSON-RPC transcript, in the order the transport sent and delivered
// messages.
export const transcript = [];

export function dumpTranscript() {
	for (const m of transcript) {
		console.error(`${m.at} ${m.dir} ${JSON.stringify(m.msg)}`);
	}
}

export function record(dir, msg) {
	transcript.push({ at: new Date().toISOString(), dir, msg });
}

// recordingFetch returns a fetch that records every HTTP request (its
// method and the request headers named, when present) and its status
// (content type and the response headers named) in the transcript; its
// requests() says how many it sent.
export function recordingFetch(requestHeaders, responseHeaders = []) {
	let requests = 0;
	const named = (headers, names) =>
		names.filter((h) => headers.get(h)).map((h) => `${h}=${headers.get(h)}`);
	const recording = async (input, init = {}) => {
		const n = ++requests;
		const what = [init.method ?? "GET", ...named(new Headers(init.headers), requestHeaders)];
		record("http", `#${n} ${what.join(" ")}`);
		try {
			const res = await fetch(input, init);
			const got = [res.headers.get("content-type") ?? "", ...named(res.headers, responseHeaders)];
			record("http", `#${n} → ${res.status} ${got.join(" ")}`);
			return res;
		} catch (err) {
			record("http", `#${n} → ${err}`);
			throw err;
		}
	};
	recording.requests = () => requests;
	return recording;
}

// recordMessages records every message a transport sends and every one it
// delivers to the onmessage the client installs.
export function recordMessages(transport) {
	const send = transport.send.bind(transport);
	transport.send = (msg, opts) => {
		record("client → server", msg);
		return send(msg, opts);
	};
	let onmessage;
	Object.defineProperty(transport, "onmessage", {
		get: () =>
			onmessage &&
			((msg, extra) => {
				record("server → client", msg);
				onmessage(msg, extra);
			}),
		set: (fn) => {
			onmessage = fn;
		},
	});
	return transport;
}

// finish prints the transcript when a check failed (or when asked), and
// exits 1 when one did.
export function finish() {
	if (failed || process.env.MCP_INTEROP_TRANSCRIPT) dumpTranscript();
	process.exit(failed ? 1 : 0);
}
