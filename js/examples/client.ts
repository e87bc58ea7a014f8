// The official MCP TypeScript SDK client against a stdio server given on the command line
// (`node dist-examples/client.js CMD ARGS...`): server-everything directly, or through
// examples/gateway.ts. Prints how each step ended, reduced to what does not change between
// runs, so that js/ci.sh can compare a direct session with one through the gateway.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

const [command, ...args] = process.argv.slice(2);
if (command === undefined) throw new Error("usage: client CMD [ARGS...]");
const client = new Client({ name: "rpcscan-js-example", version: "1.0.0" }, { capabilities: {} });
const transport = new StdioClientTransport({ command, args, stderr: "ignore" });
const steps: Record<string, unknown> = {};

type Content = { type: string; text?: string };
const texts = (result: object): string[] =>
  (((result as { content?: Content[] }).content ?? []) as Content[]).filter((c) => c.type === "text").map((c) => c.text ?? "");

async function step(name: string, run: () => Promise<unknown>): Promise<void> {
  try {
    steps[name] = { ok: await run() };
  } catch (e) {
    const err = e as { code?: unknown; name?: string };
    steps[name] = { error: err.code ?? err.name ?? "error" };
  }
}

await client.connect(transport);
steps.server = client.getServerVersion()?.name;
await step("tools", async () => (await client.listTools()).tools.map((t) => t.name).sort());
await step("echo", async () =>
  texts(await client.callTool({ name: "echo", arguments: { message: "héllo \u2028 \"x\" 😀" } })),
);
await step("sum", async () => texts(await client.callTool({ name: "get-sum", arguments: { a: 2, b: 40 } })));
await step("progress", async () => {
  let updates = 0;
  const result = await client.callTool(
    { name: "trigger-long-running-operation", arguments: { duration: 0.4, steps: 4 } },
    CallToolResultSchema,
    { onprogress: () => updates++ },
  );
  return { text: texts(result).length, progress: updates > 0 };
});
await step("resources", async () => {
  const read = await client.readResource({ uri: "demo://resource/dynamic/text/1" });
  return read.contents.map((c) => c.uri);
});
await step("prompts", async () => (await client.listPrompts()).prompts.map((p) => p.name).sort());
await step("in_flight", async () => {
  const calls = Array.from({ length: 12 }, (_, i) => client.callTool({ name: "get-sum", arguments: { a: i, b: 1000 } }));
  return (await Promise.all(calls)).map((r) => texts(r).join(""));
});
await step("unknown_tool", async () => texts(await client.callTool({ name: "no-such-tool", arguments: {} })));
await step("ping", async () => client.ping());
await client.close();
process.stdout.write(JSON.stringify(steps, null, 1) + "\n");
