// MCP servers the TypeScript Agent SDK's way (DEC-PROFILE-2, DEC-SET-2):
// an in-process server from createSdkMcpServer (initialize's sdkMcpServers,
// reached with mcp_message) and a stdio server in options.mcpServers (its
// default delivery: initialize's mcpServers, with --await-initialize).
// tests/e2e/test_ts_sdk_mcp.py scripts the loopback model and asserts on the
// requests it received and on what this prints: one JSON line per case.
//
//   node mcp.mjs AGENTX HOME WORK PYTHON FAKE_MCP_SERVER
import { createSdkMcpServer, query, tool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";

const [agentx, home, work, python, fake] = process.argv.slice(2);
const DEADLINE_MS = 60000;

function report(step, fields) {
  process.stdout.write(JSON.stringify({ step, ...fields }) + "\n");
}

async function run(step, extra) {
  const seen = [];
  const timer = setTimeout(() => {
    report("failed", { error: `${step}: no end in ${DEADLINE_MS} ms` });
    process.exit(1);
  }, DEADLINE_MS);
  const options = {
    pathToClaudeCodeExecutable: agentx,
    cwd: work,
    env: { ...process.env, AGENTX_HOME: home },
    stderr: (text) => process.stderr.write(text),
    ...extra,
  };
  for await (const message of query({ prompt: "go", options })) {
    seen.push(message);
  }
  clearTimeout(timer);
  const init = seen.find((m) => m.type === "system" && m.subtype === "init");
  const result = seen.find((m) => m.type === "result");
  return { init, result };
}

// An in-process server: its tool runs here, in the SDK's process.
const ran = [];
const calc = createSdkMcpServer({
  name: "calc",
  version: "1.0.0",
  tools: [
    tool("add", "Add two numbers", { a: z.number(), b: z.number() }, async ({ a, b }) => {
      ran.push({ a, b });
      return { content: [{ type: "text", text: String(a + b) }] };
    }),
  ],
});
{
  const { init, result } = await run("sdk", {
    mcpServers: { calc },
    allowedTools: ["mcp__calc__add"],
  });
  report("sdk", { ran, servers: init?.mcp_servers, result: result?.result, subtype: result?.subtype });
}

// A stdio server sent in initialize (the SDK's default mcpServersDelivery).
{
  const { init, result } = await run("stdio", {
    mcpServers: { ext: { type: "stdio", command: python, args: [fake] } },
    allowedTools: ["mcp__ext__add"],
  });
  report("stdio", { servers: init?.mcp_servers, result: result?.result, subtype: result?.subtype });
}
