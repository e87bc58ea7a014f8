// The official MCP TypeScript SDK client, run against a stdio server given on the command
// line (`node client.mjs CMD ARGS...`), directly or through `rpcscan proxy`. Prints one
// JSON object: how each step ended, reduced to what does not change between runs, so
// interop/run.sh can compare the two ways byte for byte.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  GetTaskResultSchema,
  ListRootsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [command, ...args] = process.argv.slice(2);
const client = new Client(
  { name: "rpcscan-interop", version: "1.0.0" },
  { capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } },
);
client.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
  role: "assistant",
  content: { type: "text", text: `sampled ${request.params.messages.length} message(s)` },
  model: "interop-fake",
  stopReason: "endTurn",
}));
client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "decline" }));
client.setRequestHandler(ListRootsRequestSchema, async () => ({
  roots: [{ uri: "file:///tmp/interop", name: "interop" }],
}));

const transport = new StdioClientTransport({ command, args, stderr: "ignore" });
const steps = {};
const texts = (result) =>
  (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text);

async function step(name, run) {
  try {
    steps[name] = { ok: await run() };
  } catch (e) {
    steps[name] = { error: e.code ?? e.name ?? "error" };
  }
}

await client.connect(transport);
steps.server = client.getServerVersion()?.name;

if (process.env.INTEROP_ONLY === "oversized") {
  // Through `rpcscan proxy --max-message-size 1K`: the image is bigger, so the call must be
  // answered at once by the proxy, with the request's own id.
  const started = Date.now();
  await step("oversized", async () =>
    texts(await client.callTool({ name: "get-tiny-image", arguments: {} })).length,
  );
  steps.answered_at_once = Date.now() - started < 3000;
  await client.close();
  process.stdout.write(JSON.stringify(steps) + "\n");
  process.exit(0);
}

// The same steps on either server: server-everything, or interop/server.py.
const everything = steps.server === "mcp-servers/everything";
const tool = everything
  ? {
      sum: "get-sum",
      slow: "trigger-long-running-operation",
      slowArgs: (n) => ({ duration: n / 10, steps: n }),
      sampling: ["trigger-sampling-request", { prompt: "hi", maxTokens: 10 }],
      elicitation: "trigger-elicitation-request",
      roots: "get-roots-list",
      resource: "demo://resource/dynamic/text/1",
      prompt: ["simple-prompt", undefined],
    }
  : {
      sum: "add",
      slow: "slow",
      slowArgs: (n) => ({ steps: n }),
      sampling: ["ask", { prompt: "hi" }],
      elicitation: "elicit",
      roots: "roots",
      resource: "greeting://ada",
      prompt: ["review", { code: "x = 1" }],
    };
const call = async (name, args) => {
  const result = await client.callTool({ name, arguments: args });
  // server-everything's texts hold timing and random bits; interop/server.py's do not.
  return everything ? result.isError ?? false : texts(result);
};

await step("tools", async () => (await client.listTools()).tools.map((t) => t.name).sort());
await step("echo", async () =>
  texts(await client.callTool({ name: "echo", arguments: { message: "héllo \u2028 \"x\"" } })),
);
await step("sum", async () => texts(await client.callTool({ name: tool.sum, arguments: { a: 2, b: 40 } })));
await step("progress", async () => {
  let updates = 0;
  const result = await client.callTool(
    { name: tool.slow, arguments: tool.slowArgs(4) },
    CallToolResultSchema,
    { onprogress: () => updates++ },
  );
  // How many arrive before the result is timing: that some do is the point.
  return { text: texts(result), progress: updates > 0 };
});
await step("sampling", async () => call(...tool.sampling));
await step("elicitation", async () => call(tool.elicitation, {}));
await step("roots", async () => call(tool.roots, {}));
await step("resources", async () => {
  const list = await client.listResources();
  const read = await client.readResource({ uri: tool.resource });
  return { listed: list.resources.length >= 0, read: read.contents.map((c) => c.uri) };
});
await step("prompts", async () => {
  const list = await client.listPrompts();
  const got = await client.getPrompt({ name: tool.prompt[0], arguments: tool.prompt[1] });
  return { names: list.prompts.map((p) => p.name).sort(), messages: got.messages.length };
});
if (everything) {
  await step("task", async () => {
    const created = await client.request(
      {
        method: "tools/call",
        params: { name: "simulate-research-query", arguments: { topic: "pipes" }, task: { ttl: 60000 } },
      },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    for (let i = 0; i < 200; i++) {
      const got = await client.request({ method: "tasks/get", params: { taskId } }, GetTaskResultSchema);
      if (!["working", "input_required"].includes(got.status)) {
        const result = await client.request({ method: "tasks/result", params: { taskId } }, CallToolResultSchema);
        return { status: got.status, isError: result.isError ?? false };
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    return "still working";
  });
}
await step("cancelled", async () => {
  const abort = new AbortController();
  const pending = client.callTool({ name: tool.slow, arguments: tool.slowArgs(30) }, CallToolResultSchema, {
    signal: abort.signal,
  });
  setTimeout(() => abort.abort("interop"), 300);
  await pending;
  return "completed despite the cancellation";
});
await step("in_flight", async () => {
  const calls = Array.from({ length: 12 }, (_, i) =>
    client.callTool({ name: tool.sum, arguments: { a: i, b: 1000 } }),
  );
  return (await Promise.all(calls)).map((r) => texts(r).join(""));
});
await step("ping", async () => client.ping());

await client.close();
process.stdout.write(JSON.stringify(steps, null, 1) + "\n");
