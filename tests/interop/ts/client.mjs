// client.mjs drives an mcp-actors Streamable HTTP endpoint with the official
// TypeScript SDK client (@modelcontextprotocol/sdk, pinned in
// conformance/package.json) through the core flows of the reference set.
//
//	conformance/node_modules/.bin/node tests/interop/ts/client.mjs http://127.0.0.1:PORT/mcp
//
// It prints one JSON line per check, {"check": name, "ok": bool, "detail": …},
// and exits 1 when any check failed (2 on a usage error or when the whole
// run overran). On failure, or with MCP_INTEROP_TRANSCRIPT set, the
// transcript (JSON-RPC messages, HTTP requests, transport errors) goes to
// stderr.
// tests/interop/ts_test.go runs it against a fresh `mcp-actors serve`.

// ESM ignores NODE_PATH: the SDK is imported by path, from the
// conformance/node_modules of this checkout. These are the files the
// package's "exports" map gives for "import".
const sdkDir = new URL("../../../conformance/node_modules/@modelcontextprotocol/sdk/dist/esm/", import.meta.url);
const { Client } = await import(new URL("client/index.js", sdkDir).href);
const { StreamableHTTPClientTransport } = await import(new URL("client/streamableHttp.js", sdkDir).href);
const {
	CreateMessageRequestSchema,
	ElicitRequestSchema,
	ListRootsRequestSchema,
	LoggingMessageNotificationSchema,
	ToolListChangedNotificationSchema,
	ResourceUpdatedNotificationSchema,
} = await import(new URL("types.js", sdkDir).href);

const { assert, assertEqual, boundRun, check, dumpTranscript, finish, Inbox, record, recordingFetch, recordMessages, report, transcript } = await import(new URL("checks.mjs", import.meta.url).href);

const url = process.argv[2];
if (!url) {
	console.error("usage: client.mjs URL");
	process.exit(2);
}

const REQUEST_TIMEOUT = 10_000; // one request, in ms
const WAIT_TIMEOUT = 10_000; // one wait for a notification, in ms
// MCP_INTEROP_FAILOVER, when set, is a URL the test serves: POSTing the
// session's ID to it kills the node that owns the session (see the
// "failover" check); the run then may take a lease longer.
const FAILOVER = process.env.MCP_INTEROP_FAILOVER;
const FAILOVER_TIMEOUT = 60_000; // a request right after the loss of its session's node, in ms
const RUN_TIMEOUT = FAILOVER ? 180_000 : 90_000; // the whole run, in ms

boundRun(RUN_TIMEOUT);

const roots = [
	{ uri: "file:///work/zeta", name: "zeta" },
	{ uri: "file:///work/alpha", name: "alpha" },
];
const sampled = new Inbox();
const elicited = new Inbox();
const rootsAsked = new Inbox();
const logs = new Inbox();
const listChanged = new Inbox();
const updated = new Inbox();

const client = new Client(
	{ name: "mcp-actors-interop-ts", version: "0.0.1" },
	{ capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } },
);
client.setRequestHandler(CreateMessageRequestSchema, (req) => {
	sampled.push(req.params);
	return {
		role: "assistant",
		content: { type: "text", text: "Hello from the TypeScript SDK client" },
		model: "interop-model",
		stopReason: "endTurn",
	};
});
client.setRequestHandler(ElicitRequestSchema, (req) => {
	elicited.push(req.params);
	return { action: "accept", content: { username: "alice", email: "alice@example.com" } };
});
client.setRequestHandler(ListRootsRequestSchema, () => {
	rootsAsked.push(true);
	return { roots };
});
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
client.setNotificationHandler(ToolListChangedNotificationSchema, () => listChanged.push(true));
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updated.push(n.params.uri));
client.onerror = (err) => record("error", String(err));
// Progress goes to each request's onprogress: the SDK's own handler of
// notifications/progress routes it there.

// Every HTTP request and its status, and every message, go to the
// transcript too.
const transport = recordMessages(new StreamableHTTPClientTransport(new URL(url), { fetch: recordingFetch(["last-event-id"]) }));

const opts = { timeout: REQUEST_TIMEOUT };

// call calls a tool and returns its result, which must not be an error.
async function call(name, args, options = opts) {
	const res = await client.callTool({ name, arguments: args ?? {} }, undefined, options);
	assert(!res.isError, `${name} returned isError: ${JSON.stringify(res.content)}`);
	return res;
}

// callAgainWhenAsked calls a tool, and calls it again, until deadline,
// while the server answers that the session could not be reached and asks
// for the request again (its owner was just lost and the cluster's storage
// is still electing leaders, as it may on a loaded machine): what a client
// does when told so.
async function callAgainWhenAsked(name, args, options, deadline) {
	for (;;) {
		try {
			return await call(name, args, options);
		} catch (e) {
			if (Date.now() > deadline || !/send the request again/.test(String(e?.message))) throw e;
			record("note", { retry: name, after: String(e.message) });
			await new Promise((resolve) => setTimeout(resolve, 500));
		}
	}
}

// textOf returns the text of a result made of one text block.
function textOf(res) {
	assert(res.content?.length === 1 && res.content[0].type === "text", `content: ${JSON.stringify(res.content)}`);
	return res.content[0].text;
}

// duringCall returns the last tools/call of tool and the params of the
// server's messages named method between it and its response.
function duringCall(tool, method) {
	const sent = transcript.findLastIndex((m) => m.dir === "client → server" && m.msg.method === "tools/call" && m.msg.params?.name === tool);
	assert(sent >= 0, `no tools/call ${tool} on the wire`);
	const request = transcript[sent].msg;
	const done = transcript.findIndex((m, i) => i > sent && m.dir === "server → client" && m.msg.id === request.id && !m.msg.method);
	assert(done > sent, `no response to tools/call ${tool} on the wire`);
	const notes = transcript.slice(sent + 1, done).filter((m) => m.dir === "server → client" && m.msg.method === method).map((m) => m.msg.params);
	return { request, notes };
}

// received returns the params of what the server sent named method so
// far.
function received(method) {
	return transcript.filter((m) => m.dir === "server → client" && m.msg.method === method).map((m) => m.msg.params);
}

let connected = false;
await check("connect", async () => {
	await client.connect(transport, opts);
	connected = true;
	assert(transport.sessionId, "no Mcp-Session-Id");
	assertEqual(transport.protocolVersion, "2025-11-25", "negotiated protocol version");
	const server = client.getServerVersion();
	assertEqual(server?.name, "mcp-actors", "serverInfo.name");
	return { server, protocolVersion: transport.protocolVersion, sessionId: transport.sessionId };
});

if (connected) {
	await check("tools_list", async () => {
		const { tools } = await client.listTools(undefined, opts);
		const names = tools.map((t) => t.name);
		for (const want of [
			"test_simple_text", "test_echo", "test_sampling", "test_elicitation", "test_roots",
			"test_tool_with_progress", "test_tool_with_logging", "test_toggle_tool",
			"test_touch_watched", "test_slow", "test_reconnection", "json_schema_2020_12_tool",
		]) {
			assert(names.includes(want), `tools/list lacks ${want}: ${names}`);
		}
		assert(!names.includes("test_dynamic"), "test_dynamic listed before test_toggle_tool");
		return { tools: names.length };
	});

	await check("echo", async () => {
		const text = "héllo \"wörld\"\n\t<&> 🦀";
		assertEqual(textOf(await call("test_echo", { text })), text, "test_echo");
	});

	await check("sampling", async () => {
		const res = await call("test_sampling", { prompt: "hi" });
		assertEqual(textOf(res), "LLM response: Hello from the TypeScript SDK client", "result");
		const params = await sampled.next("sampling/createMessage");
		assertEqual(params.maxTokens, 100, "maxTokens");
		assertEqual(params.messages, [{ role: "user", content: { type: "text", text: "hi" } }], "messages");
	});

	await check("elicitation_accept", async () => {
		const message = "Please provide your username and email";
		const text = textOf(await call("test_elicitation", { message }));
		const prefix = "User response: action=accept, content=";
		assert(text.startsWith(prefix), `result ${JSON.stringify(text)}`);
		assertEqual(JSON.parse(text.slice(prefix.length)), { username: "alice", email: "alice@example.com" }, "content");
		const params = await elicited.next("elicitation/create");
		assertEqual(params.message, message, "message");
		assertEqual(Object.keys(params.requestedSchema.properties).sort(), ["email", "username"], "schema properties");
	});

	await check("roots", async () => {
		const res = await call("test_roots");
		await rootsAsked.next("roots/list");
		assertEqual(res.structuredContent, { roots }, "structuredContent");
		assertEqual(JSON.parse(textOf(res)), { roots }, "text");
	});

	await check("progress", async () => {
		const seen = [];
		const res = await call("test_tool_with_progress", {}, { ...opts, onprogress: (p) => seen.push(p) });
		assertEqual(seen.map((p) => [p.progress, p.total]), [[0, 100], [50, 100], [100, 100]], "progress");
		// On the wire: exactly those three, before the result, with the
		// token the SDK sent.
		const { request, notes } = duringCall("test_tool_with_progress", "notifications/progress");
		assertEqual(notes.map((n) => n.progressToken), Array(3).fill(request.params._meta.progressToken), "progress tokens before the result");
		return { result: res.content };
	});

	await check("logging", async () => {
		await client.setLoggingLevel("info", opts);
		const res = await call("test_tool_with_logging");
		const want = ["Tool execution started", "Tool processing data", "Tool execution completed"];
		const got = [];
		for (const _ of want) {
			const n = await logs.next("notifications/message");
			got.push([n.level, n.data]);
		}
		assertEqual(got, want.map((w) => ["info", w]), "log messages");
		assertEqual(logs.length, 0, "extra log messages");
		assertEqual(duringCall("test_tool_with_logging", "notifications/message").notes.map((n) => n.data), want, "log messages before the result");
		return { result: res.content };
	});

	await check("list_changed", async () => {
		assertEqual(textOf(await call("test_toggle_tool")), "added", "first toggle");
		await listChanged.next("notifications/tools/list_changed after adding");
		let names = (await client.listTools(undefined, opts)).tools.map((t) => t.name);
		assert(names.includes("test_dynamic"), "test_dynamic not listed after adding");
		assertEqual(textOf(await call("test_dynamic")), "dynamic", "test_dynamic");
		assertEqual(textOf(await call("test_toggle_tool")), "removed", "second toggle");
		await listChanged.next("notifications/tools/list_changed after removing");
		names = (await client.listTools(undefined, opts)).tools.map((t) => t.name);
		assert(!names.includes("test_dynamic"), "test_dynamic listed after removing");
	});

	await check("resources_read", async () => {
		const { resources } = await client.listResources(undefined, opts);
		assert(resources.some((r) => r.uri === "test://watched-resource"), "resources/list lacks test://watched-resource");
		const res = await client.readResource({ uri: "test://static-text" }, opts);
		assertEqual(res.contents, [{ uri: "test://static-text", mimeType: "text/plain", text: "This is the content of the static text resource." }], "contents");
		const tmpl = await client.readResource({ uri: "test://template/7/data" }, opts);
		assertEqual(JSON.parse(tmpl.contents[0].text), { id: "7", templateTest: true, data: "Data for ID: 7" }, "template contents");
	});

	await check("resources_subscribe", async () => {
		const uri = "test://watched-resource";
		const before = (await client.readResource({ uri }, opts)).contents[0].text;
		await client.subscribeResource({ uri }, opts);
		assertEqual(textOf(await call("test_touch_watched")), "touched", "test_touch_watched");
		assertEqual(await updated.next("notifications/resources/updated"), uri, "updated uri");
		const after = (await client.readResource({ uri }, opts)).contents[0].text;
		assert(after !== before, "test://watched-resource did not change");
		await client.unsubscribeResource({ uri }, opts);
		assertEqual(textOf(await call("test_touch_watched")), "touched", "test_touch_watched after unsubscribing");
		await client.ping(opts);
		assertEqual(received("notifications/resources/updated").length, 1, "resources/updated notifications");
	});

	await check("prompts_get", async () => {
		const res = await client.getPrompt({ name: "test_prompt_with_arguments", arguments: { arg1: "first", arg2: "second" } }, opts);
		assertEqual(res.messages, [{ role: "user", content: { type: "text", text: "Prompt with arguments: arg1='first', arg2='second'" } }], "messages");
		const simple = await client.getPrompt({ name: "test_simple_prompt" }, opts);
		assertEqual(simple.messages[0].content.text, "This is a simple prompt for testing.", "test_simple_prompt");
	});

	await check("abort", async () => {
		const controller = new AbortController();
		let first;
		const started = new Promise((resolve) => (first = resolve));
		const pending = client.callTool({ name: "test_slow", arguments: { seconds: 30 } }, undefined, {
			...opts,
			signal: controller.signal,
			onprogress: (p) => first(p),
		});
		const outcome = pending.then(
			(res) => ({ res }),
			(err) => ({ err }),
		);
		await Promise.race([
			started,
			new Promise((_, reject) => setTimeout(() => reject(new Error("no progress from test_slow")), WAIT_TIMEOUT)),
		]);
		controller.abort();
		const { res, err } = await outcome;
		assert(err, `the aborted call resolved: ${JSON.stringify(res)}`);
		const sent = transcript.filter((m) => m.dir === "client → server" && m.msg.method === "notifications/cancelled");
		assertEqual(sent.length, 1, "notifications/cancelled sent");
		// The session still works, and the aborted call stays unanswered.
		assertEqual(textOf(await call("test_echo", { text: "still serving" })), "still serving", "test_echo after the abort");
		assertEqual(textOf(await call("test_slow", { seconds: 0.5 })), "done", "test_slow after the abort");
		const id = sent[0].msg.params.requestId;
		const answered = transcript.filter((m) => m.dir === "server → client" && m.msg.id === id && !m.msg.method);
		assertEqual(answered.length, 0, "responses to the aborted request");
		return { error: String(err) };
	});

	await check("reconnection", async () => {
		const text = textOf(await call("test_reconnection"));
		assertEqual(text, "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.", "test_reconnection");
	});

	// The node that owns the session is killed; the session goes on on
	// another: a call, and an elicitation answered through the balancer.
	// The standalone stream may break with the node that held it: the
	// transport's errors from here on are reported, not failed.
	let errorsBefore = Infinity;
	if (FAILOVER) {
		await check("failover", async () => {
			errorsBefore = transcript.filter((m) => m.dir === "error").length;
			const res = await fetch(FAILOVER, { method: "POST", body: transport.sessionId });
			assertEqual(res.status, 200, `killing the session's node (${await res.text()})`);
			const long = { timeout: FAILOVER_TIMEOUT };
			const echoed = await callAgainWhenAsked("test_echo", { text: "after the loss" }, long, Date.now() + FAILOVER_TIMEOUT);
			assertEqual(textOf(echoed), "after the loss", "test_echo");
			const text = textOf(await call("test_elicitation", { message: "still there?" }, long));
			assert(text.startsWith("User response: action=accept"), `result ${JSON.stringify(text)}`);
			assertEqual((await elicited.next("elicitation/create")).message, "still there?", "message");
		});
	}

	await check("close", async () => {
		await transport.terminateSession();
		assertEqual(transport.sessionId, undefined, "session after DELETE");
		await client.close();
		// The transport must have had nothing to complain about on the way
		// (e.g. a stream it tried and failed to resume).
		const transportErrors = transcript.filter((m) => m.dir === "error").map((m) => m.msg);
		const before = transportErrors.slice(0, errorsBefore);
		assertEqual(before.length, 0, "transport errors: " + JSON.stringify(before));
		return { transportErrors };
	});
}

finish();
