// modern_client.mjs drives an mcp-actors Streamable HTTP endpoint with the
// official TypeScript client 2.x (@modelcontextprotocol/client, pinned in
// conformance/modern/package.json) at protocol revision 2026-07-28:
// stateless requests, server/discover, input_required rounds (Multi Round-Trip
// Requests) answered by the client's own handlers, subscriptions/listen.
//
//	conformance/modern/node_modules/.bin/node tests/interop/ts/modern_client.mjs http://127.0.0.1:PORT/mcp
//
// It prints one JSON line per check, {"check": name, "ok": bool, "detail": …},
// and exits 1 when any check failed (2 on a usage error or when the whole
// run overran). On failure, or with MCP_INTEROP_TRANSCRIPT set, the
// transcript (JSON-RPC messages, HTTP requests, transport errors) goes to
// stderr.
// tests/interop/ts_modern_test.go runs it against `mcp-actors serve`.

// ESM ignores NODE_PATH: the client is imported by path, from the
// conformance/modern/node_modules of this checkout; the file is the one the
// package's "exports" map gives for "import" of ".".
const clientDir = new URL("../../../conformance/modern/node_modules/@modelcontextprotocol/client/dist/", import.meta.url);
const { Client, StreamableHTTPClientTransport } = await import(new URL("index.mjs", clientDir).href);

const { assert, assertEqual, boundRun, check, dumpTranscript, finish, Inbox, record, recordingFetch, recordMessages, report, transcript } = await import(new URL("checks.mjs", import.meta.url).href);

const url = process.argv[2];
if (!url) {
	console.error("usage: modern_client.mjs URL");
	process.exit(2);
}

const PROTOCOL_VERSION = "2026-07-28";
const REQUEST_TIMEOUT = 10_000; // one request (each leg of a multi-round one), in ms
const WAIT_TIMEOUT = 10_000; // one wait for a notification, in ms
const RUN_TIMEOUT = 60_000; // the whole run, in ms

boundRun(RUN_TIMEOUT);

// What the client's handlers were asked: the input requests of
// input_required results, fulfilled by the client itself.
const roots = [{ uri: "file:///ts-root", name: "ts-root" }];
const elicited = []; // { message, fields, key }
const sampled = []; // { prompt, maxTokens, key }
const rootsAsked = []; // { key }
const listChanged = new Inbox();
const count = (list, pred) => list.filter(pred).length;

const client = new Client(
	{ name: "mcp-actors-interop-ts-modern", version: "0.0.1" },
	{
		capabilities: { elicitation: { form: {} }, sampling: {}, roots: { listChanged: true } },
		// Pin the revision: server/discover must offer it, no legacy fallback.
		versionNegotiation: { mode: { pin: PROTOCOL_VERSION } },
		// The default, spelled out: input_required results are answered by
		// the handlers below and the request retried, at most 5 rounds.
		inputRequired: { autoFulfill: true, maxRounds: 5 },
	},
);

// The elicitation handler answers each form the reference tools ask by its
// fields: test_elicitation's username and email (a message "who? N" gets
// username "ts-N", so concurrent calls can tell their answers apart), the
// name and colour of the multi-round tool, the prompt's context.
client.setRequestHandler("elicitation/create", (req, ctx) => {
	const { message, requestedSchema } = req.params;
	const fields = Object.keys(requestedSchema?.properties ?? {}).sort();
	elicited.push({ message, fields, key: ctx?.mcpReq?.id });
	const has = (f) => fields.includes(f);
	if (has("username") && has("email")) {
		const tag = message.startsWith("who? ") ? "-" + message.slice("who? ".length) : "";
		return { action: "accept", content: { username: "ts" + tag, email: "ts@example.com" } };
	}
	if (has("name")) return { action: "accept", content: { name: "Alice" } };
	if (has("color")) return { action: "accept", content: { color: "blue" } };
	if (has("context")) return { action: "accept", content: { context: "ctx" } };
	return { action: "decline" };
});
// The sampling handler answers "sampled" to the prompt "p", and
// "sampled N" to "p N".
client.setRequestHandler("sampling/createMessage", (req, ctx) => {
	const first = req.params.messages?.[0]?.content;
	const prompt = Array.isArray(first) ? first.find((c) => c.type === "text")?.text : first?.text;
	sampled.push({ prompt, maxTokens: req.params.maxTokens, key: ctx?.mcpReq?.id });
	const text = typeof prompt === "string" && prompt.startsWith("p ") ? "sampled " + prompt.slice(2) : "sampled";
	return { role: "assistant", content: { type: "text", text }, model: "interop-model", stopReason: "endTurn" };
});
client.setRequestHandler("roots/list", (_req, ctx) => {
	rootsAsked.push({ key: ctx?.mcpReq?.id });
	return { roots };
});
client.setNotificationHandler("notifications/tools/list_changed", () => listChanged.push(true));
client.onerror = (err) => record("error", String(err?.stack ?? err));

// Every HTTP request and its status, and every message, go to the
// transcript too.
const httpFetch = recordingFetch(["mcp-method", "mcp-protocol-version", "mcp-session-id"], ["mcp-session-id"]);
const transport = recordMessages(new StreamableHTTPClientTransport(new URL(url), { fetch: httpFetch }));

const opts = { timeout: REQUEST_TIMEOUT };

// call calls a tool and returns its result, which must not be an error.
async function call(name, args, options = opts) {
	const res = await client.callTool({ name, arguments: args ?? {} }, options);
	assert(!res.isError, `${name} returned isError: ${JSON.stringify(res.content)}`);
	return res;
}

// textOf returns the text of a result made of one text block.
function textOf(res) {
	assert(res.content?.length === 1 && res.content[0].type === "text", `content: ${JSON.stringify(res.content)}`);
	return res.content[0].text;
}

// rounds returns, for the messages on the wire from index from on, the
// requests of method (and tool or prompt name) the client sent, and the
// input_required results the server answered them with.
function rounds(from, method, name) {
	const sent = transcript
		.slice(from)
		.filter((m) => m.dir === "client → server" && m.msg.method === method && m.msg.params?.name === name)
		.map((m) => m.msg);
	const ids = new Set(sent.map((r) => r.id));
	const answers = transcript.slice(from).filter((m) => m.dir === "server → client" && !m.msg.method && ids.has(m.msg.id)).map((m) => m.msg);
	const inputRequired = answers.filter((a) => a.result?.resultType === "input_required").map((a) => a.result);
	return { sent, answers, inputRequired };
}

// assertRounds checks that a request took n input_required rounds: the
// first request, then n retries, each with the inputResponses the round
// asked for and its requestState echoed, on a fresh id.
function assertRounds(from, method, name, n) {
	const { sent, answers, inputRequired } = rounds(from, method, name);
	assertEqual(inputRequired.length, n, `input_required results to ${method} ${name}`);
	assertEqual(sent.length, n + 1, `${method} ${name} requests (the first and one per round)`);
	assertEqual(answers.length, n + 1, `answers to ${method} ${name}`);
	assertEqual(new Set(sent.map((r) => r.id)).size, n + 1, `distinct ids of the ${method} ${name} requests`);
	assert(sent[0].params.inputResponses === undefined, "the first request carries inputResponses");
	for (let i = 0; i < n; i++) {
		const asked = Object.keys(inputRequired[i].inputRequests ?? {}).sort();
		const retry = sent[i + 1].params;
		assertEqual(Object.keys(retry.inputResponses ?? {}).sort(), asked, `round ${i + 1}: inputResponses keys`);
		assertEqual(retry.requestState, inputRequired[i].requestState, `round ${i + 1}: requestState echoed`);
	}
	return inputRequired.map((r) => Object.fromEntries(Object.entries(r.inputRequests).map(([k, v]) => [k, v.method])));
}

// noServerRequests checks that the server sent no JSON-RPC request from
// index from on: in 2026-07-28 it asks for input only in results.
function noServerRequests(from) {
	const reqs = transcript.slice(from).filter((m) => m.dir === "server → client" && m.msg.method && m.msg.id !== undefined);
	assertEqual(reqs.map((m) => m.msg.method), [], "server-to-client JSON-RPC requests");
}

let connected = false;
await check("connect", async () => {
	await client.connect(transport, opts);
	connected = true;
	const protocolVersion = client.getNegotiatedProtocolVersion();
	assertEqual(protocolVersion, PROTOCOL_VERSION, "negotiated protocol version");
	assertEqual(client.getProtocolEra(), "modern", "protocol era");
	assertEqual(transport.protocolVersion, PROTOCOL_VERSION, "the transport's protocol version");
	assertEqual(transport.sessionId, undefined, "Mcp-Session-Id (2026-07-28 is stateless)");
	const discover = transcript.find((m) => m.dir === "client → server" && m.msg.method === "server/discover");
	assert(discover, "no server/discover on the wire");
	assertEqual(discover.msg.params?._meta?.["io.modelcontextprotocol/protocolVersion"], PROTOCOL_VERSION, "server/discover _meta protocolVersion");
	assert(!transcript.some((m) => m.dir === "client → server" && m.msg.method === "initialize"), "the client sent initialize");
	const d = client.getDiscoverResult();
	assert(d?.supportedVersions?.includes(PROTOCOL_VERSION), `server/discover supportedVersions: ${JSON.stringify(d?.supportedVersions)}`);
	return {
		protocolVersion,
		sessionId: transport.sessionId ?? null,
		server: client.getServerVersion() ?? null,
		supportedVersions: d.supportedVersions,
		capabilities: client.getServerCapabilities(),
	};
});

if (connected) {
	await check("tools_list", async () => {
		const { tools } = await client.listTools(undefined, opts);
		const names = tools.map((t) => t.name);
		for (const want of [
			"test_echo", "test_elicitation", "test_sampling", "test_roots", "test_tool_with_progress", "test_toggle_tool",
			"test_input_required_result_multi_round", "test_input_required_result_multiple_inputs",
		]) {
			assert(names.includes(want), `tools/list lacks ${want}: ${names}`);
		}
		assert(!names.includes("test_dynamic"), "test_dynamic listed before test_toggle_tool");
		return { tools: names.length };
	});

	await check("echo", async () => {
		assertEqual(textOf(await call("test_echo", { text: "hello" })), "hello", "test_echo");
		// Every request carries the envelope: the revision and the client's
		// capabilities.
		const req = transcript.findLast((m) => m.dir === "client → server" && m.msg.params?.name === "test_echo").msg;
		assertEqual(req.params._meta?.["io.modelcontextprotocol/protocolVersion"], PROTOCOL_VERSION, "_meta protocolVersion");
		assert(req.params._meta?.["io.modelcontextprotocol/clientCapabilities"]?.elicitation, `_meta clientCapabilities: ${JSON.stringify(req.params._meta)}`);
	});

	await check("elicitation", async () => {
		const from = transcript.length;
		const before = count(elicited, (e) => e.message === "who?");
		const text = textOf(await call("test_elicitation", { message: "who?" }));
		assert(text.includes("ts") && text.includes("ts@example.com"), `result ${JSON.stringify(text)}`);
		const prefix = "User response: action=accept, content=";
		assert(text.startsWith(prefix), `result ${JSON.stringify(text)}`);
		assertEqual(JSON.parse(text.slice(prefix.length)), { username: "ts", email: "ts@example.com" }, "content");
		assertEqual(count(elicited, (e) => e.message === "who?") - before, 1, "elicitation handler calls");
		assertEqual(elicited.at(-1).fields, ["email", "username"], "requested fields");
		const asked = assertRounds(from, "tools/call", "test_elicitation", 1);
		noServerRequests(from);
		return { result: text, rounds: asked };
	});

	await check("sampling", async () => {
		const from = transcript.length;
		const before = count(sampled, (s) => s.prompt === "p");
		assertEqual(textOf(await call("test_sampling", { prompt: "p" })), "LLM response: sampled", "result");
		assertEqual(count(sampled, (s) => s.prompt === "p") - before, 1, "sampling handler calls");
		assertEqual(sampled.at(-1).maxTokens, 100, "maxTokens");
		const asked = assertRounds(from, "tools/call", "test_sampling", 1);
		noServerRequests(from);
		return { rounds: asked };
	});

	await check("roots", async () => {
		const from = transcript.length;
		const before = rootsAsked.length;
		const res = await call("test_roots");
		assertEqual(rootsAsked.length - before, 1, "roots handler calls");
		assertEqual(JSON.parse(textOf(res)), { roots }, "text");
		assertEqual(res.structuredContent, { roots }, "structuredContent");
		const asked = assertRounds(from, "tools/call", "test_roots", 1);
		noServerRequests(from);
		return { rounds: asked };
	});

	await check("multi_round", async () => {
		const from = transcript.length;
		const before = elicited.length;
		assertEqual(textOf(await call("test_input_required_result_multi_round")), "Alice likes blue", "result");
		assertEqual(elicited.slice(before).map((e) => e.fields), [["name"], ["color"]], "forms asked, in order");
		const asked = assertRounds(from, "tools/call", "test_input_required_result_multi_round", 2);
		noServerRequests(from);
		return { rounds: asked };
	});

	await check("multiple_inputs", async () => {
		const from = transcript.length;
		const e0 = elicited.length, s0 = sampled.length, r0 = rootsAsked.length;
		const text = textOf(await call("test_input_required_result_multiple_inputs"));
		assertEqual([elicited.length - e0, sampled.length - s0, rootsAsked.length - r0], [1, 1, 1], "elicitation, sampling and roots handler calls");
		const asked = assertRounds(from, "tools/call", "test_input_required_result_multiple_inputs", 1);
		assertEqual(Object.values(asked[0]).sort(), ["elicitation/create", "roots/list", "sampling/createMessage"], "the round's input requests");
		for (const want of ["sampled", "Alice", "file:///ts-root"]) {
			assert(text.includes(want), `result ${JSON.stringify(text)} lacks ${want}`);
		}
		noServerRequests(from);
		return { result: text, rounds: asked };
	});

	await check("concurrent", async () => {
		const from = transcript.length;
		const calls = [];
		for (let i = 0; i < 20; i++) {
			switch (i % 3) {
				case 0:
					calls.push(call("test_echo", { text: `echo ${i}` }).then((r) => assertEqual(textOf(r), `echo ${i}`, `test_echo #${i}`)));
					break;
				case 1:
					calls.push(
						call("test_elicitation", { message: `who? ${i}` }).then((r) => {
							const prefix = "User response: action=accept, content=";
							const text = textOf(r);
							assert(text.startsWith(prefix), `test_elicitation #${i}: ${JSON.stringify(text)}`);
							assertEqual(JSON.parse(text.slice(prefix.length)), { username: `ts-${i}`, email: "ts@example.com" }, `test_elicitation #${i}`);
						}),
					);
					break;
				default:
					calls.push(call("test_sampling", { prompt: `p ${i}` }).then((r) => assertEqual(textOf(r), `LLM response: sampled ${i}`, `test_sampling #${i}`)));
			}
		}
		const settled = await Promise.allSettled(calls);
		const errors = settled.flatMap((s, i) => (s.status === "rejected" ? [`#${i}: ${s.reason?.message ?? s.reason}`] : []));
		assertEqual(errors, [], "failed calls");
		for (let i = 0; i < 20; i++) {
			if (i % 3 === 1) assertEqual(count(elicited, (e) => e.message === `who? ${i}`), 1, `elicitation handler calls for #${i}`);
			if (i % 3 === 2) assertEqual(count(sampled, (s) => s.prompt === `p ${i}`), 1, `sampling handler calls for #${i}`);
		}
		noServerRequests(from);
		return { calls: calls.length };
	});

	await check("progress", async () => {
		const seen = [];
		let atResult;
		const res = await client
			.callTool({ name: "test_tool_with_progress", arguments: {} }, { ...opts, onprogress: (p) => seen.push(p) })
			.then((r) => {
				atResult = seen.length;
				return r;
			});
		assert(!res.isError, `isError: ${JSON.stringify(res.content)}`);
		assertEqual(atResult, 3, "progress notifications before the result");
		assertEqual(seen.map((p) => [p.progress, p.total]), [[0, 100], [50, 100], [100, 100]], "progress");
		// On the wire: the three, before the result, with the token sent.
		const sent = transcript.findLastIndex((m) => m.dir === "client → server" && m.msg.params?.name === "test_tool_with_progress");
		const request = transcript[sent].msg;
		const done = transcript.findIndex((m, i) => i > sent && m.dir === "server → client" && m.msg.id === request.id && !m.msg.method);
		assert(done > sent, "no response to test_tool_with_progress on the wire");
		const notes = transcript.slice(sent + 1, done).filter((m) => m.dir === "server → client" && m.msg.method === "notifications/progress");
		assertEqual(notes.map((n) => n.msg.params.progressToken), Array(3).fill(request.params._meta.progressToken), "progress tokens before the result");
		return { result: res.content };
	});

	await check("prompt_input", async () => {
		const from = transcript.length;
		const before = count(elicited, (e) => e.fields.includes("context"));
		const res = await client.getPrompt({ name: "test_input_required_result_prompt" }, opts);
		const text = res.messages?.[0]?.content?.text;
		assert(typeof text === "string" && text.includes("ctx"), `prompt messages: ${JSON.stringify(res.messages)}`);
		assertEqual(count(elicited, (e) => e.fields.includes("context")) - before, 1, "elicitation handler calls");
		const asked = assertRounds(from, "prompts/get", "test_input_required_result_prompt", 1);
		noServerRequests(from);
		return { text, rounds: asked };
	});

	// subscriptions/listen: Client.listen opens the stream and resolves on
	// notifications/subscriptions/acknowledged; the change notifications it
	// carries go to the handlers registered with setNotificationHandler.
	await check("listen", async () => {
		const sub = await client.listen({ toolsListChanged: true }, opts);
		try {
			assertEqual(sub.honoredFilter?.toolsListChanged, true, `honored filter ${JSON.stringify(sub.honoredFilter)}`);
			assertEqual(textOf(await call("test_toggle_tool")), "added", "first toggle");
			await listChanged.next("notifications/tools/list_changed after adding");
			let names = (await client.listTools(undefined, { ...opts, cacheMode: "refresh" })).tools.map((t) => t.name);
			assert(names.includes("test_dynamic"), "test_dynamic not listed after adding");
			assertEqual(textOf(await call("test_toggle_tool")), "removed", "second toggle");
			await listChanged.next("notifications/tools/list_changed after removing");
			names = (await client.listTools(undefined, { ...opts, cacheMode: "refresh" })).tools.map((t) => t.name);
			assert(!names.includes("test_dynamic"), "test_dynamic listed after removing");
		} finally {
			await sub.close();
		}
		const how = await Promise.race([sub.closed, new Promise((resolve) => setTimeout(() => resolve("not closed"), WAIT_TIMEOUT))]);
		assertEqual(how, "local", "how the subscription ended");
		const notes = transcript.filter((m) => m.dir === "server → client" && m.msg.method === "notifications/tools/list_changed");
		return { honoredFilter: sub.honoredFilter, notifications: notes.length };
	});

	await check("close", async () => {
		await client.close();
		// Nothing to DELETE: there was no session.
		const deletes = transcript.filter((m) => m.dir === "http" && /^#\d+ DELETE/.test(m.msg));
		assertEqual(deletes.length, 0, "DELETE requests");
		const withSession = transcript.filter((m) => m.dir === "http" && /mcp-session-id=/.test(m.msg));
		assertEqual(withSession.map((m) => m.msg), [], "requests or responses with Mcp-Session-Id");
		// The transport must have had nothing to complain about on the way.
		const transportErrors = transcript.filter((m) => m.dir === "error").map((m) => m.msg);
		assertEqual(transportErrors, [], "transport errors");
		return { httpRequests: httpFetch.requests() };
	});
}

finish();
