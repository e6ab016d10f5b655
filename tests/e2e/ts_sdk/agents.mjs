// Subagents the TypeScript Agent SDK's way (DEC-PROFILE-2, DEC-TURN-3): the
// `agents` option reaches agentx in `initialize`; the loopback model the
// test runs calls Agent, then answers the subagent's own requests.
// tests/e2e/test_ts_sdk_agents.py asserts on the requests it received and on
// what this prints: one JSON object per line, {"step": ..., ...}.
//
//   node agents.mjs AGENTX HOME WORK
import { query } from "@anthropic-ai/claude-agent-sdk";

const [agentx, home, work] = process.argv.slice(2);
const DEADLINE_MS = 30000;

function report(step, fields) {
  process.stdout.write(JSON.stringify({ step, ...fields }) + "\n");
}

try {
  const timer = setTimeout(() => {
    report("failed", { error: `no end in ${DEADLINE_MS} ms` });
    process.exit(1);
  }, DEADLINE_MS);
  const seen = [];
  const options = {
    pathToClaudeCodeExecutable: agentx,
    cwd: work,
    env: { ...process.env, AGENTX_HOME: home },
    stderr: (text) => process.stderr.write(text),
    allowedTools: ["Agent", "Read"],
    forwardSubagentText: true,
    agents: {
      reviewer: {
        description: "Reviews files",
        prompt: "You are the TS reviewer.",
        tools: ["Read"],
        model: "inherit",
      },
    },
  };
  for await (const message of query({ prompt: "review it", options })) {
    seen.push(message);
  }
  clearTimeout(timer);
  const result = seen.find((m) => m.type === "result");
  const nested = seen
    .filter((m) => (m.type === "assistant" || m.type === "user") && m.parent_tool_use_id)
    .map((m) => ({ type: m.type, parent: m.parent_tool_use_id }));
  const tasks = seen
    .filter((m) => m.type === "system" && m.subtype?.startsWith("task_"))
    .map((m) => ({ subtype: m.subtype, task_type: m.task_type, status: m.status }));
  report("agents", { result: result?.result, subtype: result?.subtype, nested, tasks });
  report("done", {});
} catch (error) {
  report("failed", { error: String(error?.stack ?? error) });
  process.exitCode = 1;
}
