// The server the conformance tests hold the proxy against: every tool, resource and
// prompt the official suite's server scenarios (@modelcontextprotocol/conformance
// 0.2.0-alpha.12, `list --requirements 2025-11-25` and `2026-07-28`) ask for, written
// from those scenarios' descriptions on the TypeScript SDK's 2.x line, which serves both
// revisions. No peer on the registries implements the scenarios' tools, and a proxied
// run means something only beside a direct run that passes.
//
//   node conformance-server.mjs          over stdio
//   node conformance-server.mjs --http   Streamable HTTP on 127.0.0.1 (`PORT <n>`, path
//                                        /mcp): 2026-07-28 requests stateless through
//                                        the SDK's handler, 2025-era ones in sessions
//                                        with resumable streams (`Last-Event-ID`), and
//                                        every request's Host checked (DNS rebinding)
import { randomUUID } from "node:crypto";
import {
  McpServer,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ResourceNotFoundError,
  WebStandardStreamableHTTPServerTransport,
  createMcpHandler,
  createRequestStateCodec,
  hostHeaderValidationResponse,
  inputRequired,
  isLegacyRequest,
  localhostAllowedHostnames,
} from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { serveFetch } from "./serve-fetch.mjs";

// A 1x1 PNG and a minimal WAV, as the scenarios' media checks want real data.
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

const text = (t) => ({ type: "text", text: t });
const reply = (...content) => ({ content });
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
const object = (properties = {}, required = []) => ({ type: "object", properties, required });
const asks = (message, properties, required) => ({
  message,
  requestedSchema: object(properties, required),
});
const elicit = (params) => ({ method: "elicitation/create", params });
const sample = (prompt, maxTokens) => ({
  method: "sampling/createMessage",
  params: { messages: [{ role: "user", content: text(prompt) }], maxTokens },
});
const listRoots = { method: "roots/list", params: {} };

// requestState is the client's to echo and an attacker's to alter: it is signed, and a
// state that fails the check is refused before any handler runs.
const state = createRequestStateCodec({ key: randomUUID() });

// What each multi-round tool asks first, and how it answers once every key came back.
const asking = {
  test_input_required_result_elicitation: {
    ask: { user_name: elicit(asks("What is your name?", { name: { type: "string" } }, ["name"])) },
    done: (got) => `Hello, ${got.user_name?.content?.name}!`,
  },
  test_input_required_result_sampling: {
    ask: { capital_question: sample("What is the capital of France?", 100) },
    done: (got) => `Sampling said: ${got.capital_question?.content?.text}`,
  },
  test_input_required_result_list_roots: {
    ask: { client_roots: listRoots },
    done: (got) => `Roots: ${(got.client_roots?.roots ?? []).map((root) => root.uri).join(", ")}`,
  },
  test_input_required_result_request_state: {
    ask: { confirm: elicit(asks("Please confirm", { ok: { type: "boolean" } }, ["ok"])) },
    signed: true,
    done: () => "Confirmed: state-ok",
  },
  test_input_required_result_multiple_inputs: {
    ask: {
      user_name: elicit(asks("What is your name?", { name: { type: "string" } }, ["name"])),
      greeting: sample("Generate a greeting", 50),
      client_roots: listRoots,
    },
    signed: true,
    done: (got) => `All three: ${got.user_name?.content?.name}`,
  },
  test_input_required_result_tampered_state: {
    ask: { confirm: elicit(asks("Please confirm", { ok: { type: "boolean" } }, ["ok"])) },
    signed: true,
    done: () => "State verified",
  },
};

// The tools, in the order tools/list gives them (deterministic, as 2026-07-28 asks).
const noArgs = object();
const tools = [
  ["test_simple_text", "Answers with text", noArgs],
  ["test_image_content", "Answers with an image", noArgs],
  ["test_audio_content", "Answers with audio", noArgs],
  ["test_embedded_resource", "Answers with an embedded resource", noArgs],
  ["test_multiple_content_types", "Answers with text, an image and a resource", noArgs],
  ["test_tool_with_logging", "Logs three messages while it runs", noArgs],
  ["test_logging_tool", "Logs a message at the level the request asked for", noArgs],
  ["test_tool_with_progress", "Reports progress while it runs", noArgs],
  ["test_error_handling", "Always fails", noArgs],
  ["test_reconnection", "Closes its stream mid-call, then answers", noArgs],
  ["test_sampling", "Asks the client's model", object({ prompt: { type: "string" } }, ["prompt"])],
  ["test_elicitation", "Asks the user", object({ message: { type: "string" } }, ["message"])],
  ["test_elicitation_sep1034_defaults", "Asks with a default for every type", noArgs],
  ["test_elicitation_sep1330_enums", "Asks with every kind of enum", noArgs],
  ["test_missing_capability", "Needs the client's sampling capability", noArgs],
  ["test_streaming_elicitation", "Reports progress, then asks the user", noArgs],
  ["test_trigger_tool_change", "Changes the tool list", noArgs],
  ["test_trigger_prompt_change", "Changes the prompt list", noArgs],
  ...Object.keys(asking).map((name) => [name, "Asks the client for input first", noArgs]),
  ["test_input_required_result_multi_round", "Asks twice, one step at a time", noArgs],
  ["test_input_required_result_capabilities", "Asks only for what the client declared", noArgs],
].map(([name, description, inputSchema]) => ({ name, description, inputSchema }));

const enums = object({
  untitledSingle: { type: "string", enum: ["option1", "option2", "option3"] },
  titledSingle: {
    type: "string",
    oneOf: [
      { const: "value1", title: "First Option" },
      { const: "value2", title: "Second Option" },
      { const: "value3", title: "Third Option" },
    ],
  },
  legacyEnum: {
    type: "string",
    enum: ["opt1", "opt2", "opt3"],
    enumNames: ["Option One", "Option Two", "Option Three"],
  },
  untitledMulti: { type: "array", items: { type: "string", enum: ["option1", "option2", "option3"] } },
  titledMulti: {
    type: "array",
    items: {
      anyOf: [
        { const: "value1", title: "First Choice" },
        { const: "value2", title: "Second Choice" },
        { const: "value3", title: "Third Choice" },
      ],
    },
  },
});
const defaults = object({
  name: { type: "string", description: "User name", default: "John Doe" },
  age: { type: "integer", description: "User age", default: 30 },
  score: { type: "number", description: "User score", default: 95.5 },
  status: {
    type: "string",
    description: "User status",
    enum: ["active", "inactive", "pending"],
    default: "active",
  },
  verified: { type: "boolean", description: "Verification status", default: true },
});

// Whether a round brought an answer for every key `ask` asked.
const answered = (ask, got) => Object.keys(ask).every((key) => got?.[key] !== undefined);

// The client's declared capabilities: the 2026-07-28 envelope's, else initialize's.
const capabilitiesOf = (mcp, ctx) =>
  ctx.mcpReq.envelope?.["io.modelcontextprotocol/clientCapabilities"] ??
  mcp.server.getClientCapabilities() ??
  {};

async function askFirst(name, ctx) {
  const { ask, signed, done } = asking[name];
  const got = ctx.mcpReq.inputResponses;
  if (!answered(ask, got)) {
    const requestState = signed ? await state.mint({ tool: name }, ctx) : undefined;
    return inputRequired({ inputRequests: ask, requestState });
  }
  if (signed && (await ctx.mcpReq.requestState())?.tool !== name) {
    throw new ProtocolError(-32602, "requestState is missing or belongs to another call");
  }
  return reply(text(done(got)));
}

async function multiRound(ctx) {
  const round = await ctx.mcpReq.requestState();
  const got = ctx.mcpReq.inputResponses ?? {};
  if (round?.step === 1 && got.step1 !== undefined) {
    const step2 = elicit(asks("Step 2: What is your favorite color?", { color: { type: "string" } }, ["color"]));
    const requestState = await state.mint({ step: 2, name: got.step1?.content?.name }, ctx);
    return inputRequired({ inputRequests: { step2 }, requestState });
  }
  if (round?.step === 2 && got.step2 !== undefined) {
    return reply(text(`${round.name} likes ${got.step2?.content?.color}`));
  }
  const step1 = elicit(asks("Step 1: What is your name?", { name: { type: "string" } }, ["name"]));
  return inputRequired({ inputRequests: { step1 }, requestState: await state.mint({ step: 1 }, ctx) });
}

// `changes` announces a change of lists: the HTTP handler's bus for 2026-07-28
// subscriptions; else the server's own notification (stdio, 2025-era sessions).
function factory(changes) {
  const mcp = new McpServer(
    { name: "reasons-conformance-server", version: "1.0.0" },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        logging: {},
        completions: {},
      },
      requestState: { verify: state.verify },
      cacheHints: {
        "tools/list": { ttlMs: 60000, cacheScope: "public" },
        "prompts/list": { ttlMs: 60000, cacheScope: "public" },
        "resources/list": { ttlMs: 60000, cacheScope: "public" },
        "resources/templates/list": { ttlMs: 60000, cacheScope: "public" },
        "resources/read": { ttlMs: 0, cacheScope: "private" },
      },
    },
  );
  const server = mcp.server;
  const changed = changes ?? {
    toolsChanged: () => mcp.sendToolListChanged(),
    promptsChanged: () => mcp.sendPromptListChanged(),
  };
  server.setRequestHandler("tools/list", async () => ({ tools }));
  server.setRequestHandler("tools/call", async (request, ctx) => {
    const { name, arguments: args = {} } = request.params;
    const token = ctx.mcpReq._meta?.progressToken;
    const progress = async (progress) => {
      if (token !== undefined) {
        await ctx.mcpReq.notify({
          method: "notifications/progress",
          params: { progressToken: token, progress, total: 100, message: `At ${progress} of 100` },
        });
      }
    };
    if (name in asking) return askFirst(name, ctx);
    switch (name) {
      case "test_simple_text":
        return reply(text("This is a simple text response for testing."));
      case "test_image_content":
        return reply({ type: "image", data: PNG, mimeType: "image/png" });
      case "test_audio_content":
        return reply({ type: "audio", data: WAV, mimeType: "audio/wav" });
      case "test_embedded_resource":
        return reply({
          type: "resource",
          resource: {
            uri: "test://embedded-resource",
            mimeType: "text/plain",
            text: "This is an embedded resource content.",
          },
        });
      case "test_multiple_content_types":
        return reply(
          text("Multiple content types test:"),
          { type: "image", data: PNG, mimeType: "image/png" },
          {
            type: "resource",
            resource: {
              uri: "test://mixed-content-resource",
              mimeType: "application/json",
              text: JSON.stringify({ test: "data", value: 123 }),
            },
          },
        );
      case "test_tool_with_logging":
        for (const [at, message] of ["Tool execution started", "Tool processing data", "Tool execution completed"].entries()) {
          if (at > 0) await sleep(50);
          await ctx.mcpReq.log("info", message);
        }
        return reply(text("Tool with logging executed successfully"));
      case "test_logging_tool":
        await ctx.mcpReq.log("info", "A message at info");
        return reply(text("Logged"));
      case "test_tool_with_progress":
        for (const at of [0, 50, 100]) {
          if (at > 0) await sleep(50);
          await progress(at);
        }
        return reply(text(String(token ?? "no progress token")));
      case "test_error_handling":
        return { ...reply(text("This tool intentionally returns an error for testing")), isError: true };
      case "test_reconnection":
        ctx.http?.closeSSE?.();
        await sleep(200);
        return reply(text("Reconnection test completed successfully."));
      case "test_sampling": {
        const answer = await ctx.mcpReq.requestSampling({
          messages: [{ role: "user", content: text(args.prompt) }],
          maxTokens: 100,
        });
        return reply(text(`LLM response: ${answer.content?.text ?? JSON.stringify(answer.content)}`));
      }
      case "test_elicitation": {
        const answer = await ctx.mcpReq.elicitInput({
          mode: "form",
          ...asks(
            args.message,
            {
              username: { type: "string", description: "User's response" },
              email: { type: "string", description: "User's email address" },
            },
            ["username", "email"],
          ),
        });
        return reply(text(`User response: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`));
      }
      case "test_elicitation_sep1034_defaults":
      case "test_elicitation_sep1330_enums": {
        const requestedSchema = name === "test_elicitation_sep1330_enums" ? enums : defaults;
        const answer = await ctx.mcpReq.elicitInput({ mode: "form", message: "Please fill in the form", requestedSchema });
        return reply(text(`Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`));
      }
      case "test_missing_capability":
        if (!capabilitiesOf(mcp, ctx).sampling) {
          throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { sampling: {} } });
        }
        return reply(text("The client can sample"));
      case "test_streaming_elicitation":
        await progress(50);
        return inputRequired({
          inputRequests: { answer: elicit(asks("Go on?", { go: { type: "boolean" } }, ["go"])) },
        });
      case "test_trigger_tool_change":
        changed.toolsChanged();
        return reply(text("The tool list changed"));
      case "test_trigger_prompt_change":
        changed.promptsChanged();
        return reply(text("The prompt list changed"));
      case "test_input_required_result_multi_round":
        return multiRound(ctx);
      case "test_input_required_result_capabilities": {
        const can = capabilitiesOf(mcp, ctx);
        const inputRequests = {};
        if (can.elicitation) inputRequests.user_name = elicit(asks("What is your name?", { name: { type: "string" } }, ["name"]));
        if (can.sampling) inputRequests.greeting = sample("Generate a greeting", 50);
        if (can.roots) inputRequests.client_roots = listRoots;
        if (Object.keys(inputRequests).length === 0 || answered(inputRequests, ctx.mcpReq.inputResponses)) {
          return reply(text("Nothing more to ask"));
        }
        return inputRequired({ inputRequests });
      }
    }
    throw new ProtocolError(-32602, `Unknown tool: ${name}`);
  });

  const resources = {
    "test://static-text": { name: "static-text", mimeType: "text/plain", text: "This is the content of the static text resource." },
    "test://static-binary": { name: "static-binary", mimeType: "image/png", blob: PNG },
    "test://watched-resource": { name: "watched-resource", mimeType: "text/plain", text: "Watched resource content" },
  };
  server.setRequestHandler("resources/list", async () => ({
    resources: Object.entries(resources).map(([uri, { name, mimeType }]) => ({
      uri,
      name,
      description: `The ${name} resource`,
      mimeType,
    })),
  }));
  server.setRequestHandler("resources/templates/list", async () => ({
    resourceTemplates: [
      {
        uriTemplate: "test://template/{id}/data",
        name: "template",
        description: "Data for an id",
        mimeType: "application/json",
      },
    ],
  }));
  server.setRequestHandler("resources/read", async (request) => {
    const { uri } = request.params;
    const id = /^test:\/\/template\/([^/]+)\/data$/.exec(uri)?.[1];
    if (id !== undefined) {
      const data = { id, templateTest: true, data: `Data for ID: ${id}` };
      return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify(data) }] };
    }
    const found = resources[uri];
    if (!found) throw new ResourceNotFoundError(uri);
    const { name, ...content } = found;
    return { contents: [{ uri, ...content }] };
  });
  server.setRequestHandler("resources/subscribe", async () => ({}));
  server.setRequestHandler("resources/unsubscribe", async () => ({}));

  const argument = (name) => ({ name, description: `The ${name}`, required: true });
  server.setRequestHandler("prompts/list", async () => ({
    prompts: [
      { name: "test_simple_prompt", description: "A prompt with no arguments" },
      { name: "test_prompt_with_arguments", description: "A prompt with two", arguments: [argument("arg1"), argument("arg2")] },
      { name: "test_prompt_with_embedded_resource", description: "A prompt with a resource", arguments: [argument("resourceUri")] },
      { name: "test_prompt_with_image", description: "A prompt with an image" },
      { name: "test_input_required_result_prompt", description: "A prompt that asks first" },
    ],
  }));
  server.setRequestHandler("prompts/get", async (request, ctx) => {
    const { name, arguments: args = {} } = request.params;
    const user = (content) => ({ role: "user", content });
    switch (name) {
      case "test_simple_prompt":
        return { messages: [user(text("This is a simple prompt for testing."))] };
      case "test_prompt_with_arguments":
        return { messages: [user(text(`Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'`))] };
      case "test_prompt_with_embedded_resource":
        return {
          messages: [
            user({
              type: "resource",
              resource: { uri: args.resourceUri, mimeType: "text/plain", text: "Embedded resource content for testing." },
            }),
            user(text("Please process the embedded resource above.")),
          ],
        };
      case "test_prompt_with_image":
        return {
          messages: [
            user({ type: "image", data: PNG, mimeType: "image/png" }),
            user(text("Please analyze the image above.")),
          ],
        };
      case "test_input_required_result_prompt": {
        const context = elicit(asks("What context should the prompt use?", { context: { type: "string" } }, ["context"]));
        const got = ctx.mcpReq.inputResponses;
        if (got?.user_context === undefined) return inputRequired({ inputRequests: { user_context: context } });
        return { messages: [user(text(`Use this context: ${got.user_context?.content?.context}`))] };
      }
    }
    throw new ProtocolError(-32602, `Unknown prompt: ${name}`);
  });
  server.setRequestHandler("completion/complete", async (request) => {
    const value = request.params.argument?.value ?? "";
    const values = ["paris", "park", "party"].filter((word) => word.startsWith(value));
    return { completion: { values, total: values.length, hasMore: false } };
  });
  server.setRequestHandler("logging/setLevel", async () => ({}));
  return mcp;
}

if (process.argv[2] === "--http") {
  const allowed = localhostAllowedHostnames();
  const modern = createMcpHandler(() => factory(modern.notify), { legacy: "reject" });
  // 2025-era clients keep a session: server-to-client requests, resumable streams.
  const sessions = new Map();
  const events = [];
  const eventStore = {
    async storeEvent(streamId, message) {
      const eventId = `${streamId}::${String(events.length).padStart(8, "0")}`;
      events.push({ eventId, streamId, message });
      return eventId;
    },
    async replayEventsAfter(lastEventId, { send }) {
      const streamId = lastEventId.split("::")[0];
      for (const event of events) {
        if (event.streamId === streamId && event.eventId > lastEventId) await send(event.eventId, event.message);
      }
      return streamId;
    },
  };
  const legacy = async (request) => {
    const id = request.headers.get("mcp-session-id");
    if (id !== null) {
      const session = sessions.get(id);
      if (!session) return new Response("no such session", { status: 404 });
      return session.handleRequest(request);
    }
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => sessions.set(id, transport),
      onsessionclosed: (id) => sessions.delete(id),
      eventStore,
      retryInterval: 100,
    });
    await factory().connect(transport);
    return transport.handleRequest(request);
  };
  serveFetch(async (request) => {
    const refused = hostHeaderValidationResponse(request, allowed);
    if (refused) return refused;
    const body = request.method === "POST" ? await request.clone().text() : "";
    let parsed;
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = undefined;
    }
    return (await isLegacyRequest(request.clone(), parsed)) ? legacy(request) : modern.fetch(request);
  });
} else {
  serveStdio(() => factory());
}
