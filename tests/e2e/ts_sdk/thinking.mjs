// The thinking and model options the TypeScript Agent SDK's way (DEC-CLI-5):
// one query() per case against the loopback model the test runs. The SDK
// turns `thinking`, `maxThinkingTokens`, `effort`, `model`, `fallbackModel`
// and `betas` into command-line flags; tests/e2e/test_ts_sdk_thinking.py
// asserts on the requests the model received and on what this prints: one
// JSON object per line, {"step": ..., ...}.
//
//   node thinking.mjs AGENTX HOME WORK
import { query } from "@anthropic-ai/claude-agent-sdk";

const [agentx, home, work] = process.argv.slice(2);
const DEADLINE_MS = 60000;

const CASES = [
  ["adaptive", { thinking: { type: "adaptive" } }],
  ["enabled", { thinking: { type: "enabled", budgetTokens: 2048 } }],
  ["disabled", { thinking: { type: "disabled" } }],
  ["max_thinking_tokens", { maxThinkingTokens: 4096 }],
  ["effort", { effort: "max" }],
  ["model", { model: "opus" }],
  ["betas", { betas: ["context-1m-2025-08-07"] }],
  ["fallback", { model: "opus", fallbackModel: "sonnet" }],
];

function report(step, fields) {
  process.stdout.write(JSON.stringify({ step, ...fields }) + "\n");
}

async function run(step, extra) {
  const timer = setTimeout(() => {
    report("failed", { error: `${step}: no end in ${DEADLINE_MS} ms` });
    process.exit(1);
  }, DEADLINE_MS);
  const seen = [];
  const options = {
    pathToClaudeCodeExecutable: agentx,
    cwd: work,
    env: { ...process.env, AGENTX_HOME: home },
    stderr: (text) => process.stderr.write(text),
    ...extra,
  };
  for await (const message of query({ prompt: "hi", options })) {
    seen.push(message);
  }
  clearTimeout(timer);
  const init = seen.find((m) => m.type === "system" && m.subtype === "init");
  const result = seen.find((m) => m.type === "result");
  const assistant = seen.filter((m) => m.type === "assistant").at(-1);
  report(step, {
    model: init?.model,
    fallbackModel: init?.fallback_model,
    answeredBy: assistant?.message?.model,
    subtypes: seen.filter((m) => m.type === "system").map((m) => m.subtype),
    result: result?.result,
    subtype: result?.subtype,
  });
}

try {
  for (const [step, extra] of CASES) {
    await run(step, extra);
  }
  report("done", {});
} catch (error) {
  report("failed", { error: String(error?.stack ?? error) });
  process.exitCode = 1;
}
