// Runs the same MCP session against URL (argv[2]) with the official TypeScript SDK client
// over Streamable HTTP and prints a normalized transcript (interop/http.sh compares the
// direct run with the one through `rpcscan gateway`).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  GetTaskResultSchema,
} from "@modelcontextprotocol/sdk/types.js";

const url = new URL(process.argv[2]);
const out = [];
const log = (step, value) => out.push([step, value]);
const client = new Client({ name: "interop", version: "1.0.0" }, { capabilities: { sampling: {}, elicitation: {} } });
client.setRequestHandler(CreateMessageRequestSchema, async () => ({
  model: "test", role: "assistant", content: { type: "text", text: "sampled" },
}));
client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "decline" }));
const transport = new StreamableHTTPClientTransport(url);
await client.connect(transport);
log("session", typeof transport.sessionId);
const tools = await client.listTools();
log("tools", tools.tools.map((t) => t.name).sort());
log("echo", await client.callTool({ name: "echo", arguments: { message: "h\u00e9llo" } }));
log("sum", await client.callTool({ name: "get-sum", arguments: { a: 2, b: 3 } }));
let progress = 0;
log("long", (await client.callTool({ name: "trigger-long-running-operation", arguments: { duration: 1, steps: 3 } },
  undefined, { onprogress: () => progress++ })).content.length);
log("progress", progress);
log("sampling", (await client.callTool({ name: "trigger-sampling-request", arguments: { prompt: "hi" } })).content.length);
log("elicitation", (await client.callTool({ name: "trigger-elicitation-request", arguments: {} })).content.length);
const resources = await client.listResources();
log("resources", resources.resources.length);
log("read", (await client.readResource({ uri: resources.resources[0].uri })).contents.length);
const prompts = await client.listPrompts();
log("prompts", prompts.prompts.map((p) => p.name).sort());
// A task-augmented call, followed to its end with tasks/get and tasks/result.
const created = await client.request(
  { method: "tools/call", params: { name: "simulate-research-query", arguments: { topic: "pipes" }, task: { ttl: 60000 } } },
  CreateTaskResultSchema,
);
let task = "still working";
for (let i = 0; i < 200; i++) {
  const got = await client.request({ method: "tasks/get", params: { taskId: created.task.taskId } }, GetTaskResultSchema);
  if (!["working", "input_required"].includes(got.status)) {
    const result = await client.request({ method: "tasks/result", params: { taskId: created.task.taskId } }, CallToolResultSchema);
    task = { status: got.status, isError: result.isError ?? false };
    break;
  }
  await new Promise((r) => setTimeout(r, 100));
}
log("task", task);
const many = await Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map((i) => client.callTool({ name: "get-sum", arguments: { a: i, b: i } })));
log("concurrent", many.map((r) => r.content[0].text));
const controller = new AbortController();
const cancelled = client.callTool({ name: "trigger-long-running-operation", arguments: { duration: 5, steps: 5 } }, undefined, { signal: controller.signal });
setTimeout(() => controller.abort("stop"), 200);
log("cancel", await cancelled.then(() => "completed", (e) => "cancelled"));
await transport.terminateSession();
log("terminated", transport.sessionId === undefined);
await client.close();
console.log(JSON.stringify(out, null, 1));
