// The system prompt the TypeScript Agent SDK's way (DEC-PROFILE-2,
// DEC-COMPAT-4): the SDK carries systemPrompt, appendSystemPrompt and
// excludeDynamicSections in initialize. tests/e2e/test_ts_sdk_prompt.py
// answers each query() from the loopback model and asserts on the system
// prompt and the first user message the model received.
//
//   node prompt.mjs AGENTX HOME WORK
import { query } from "@anthropic-ai/claude-agent-sdk";

const [agentx, home, work] = process.argv.slice(2);
const DEADLINE_MS = 30000;

function report(step, fields) {
  process.stdout.write(JSON.stringify({ step, ...fields }) + "\n");
}

async function run(step, extra) {
  const timer = setTimeout(() => {
    report("failed", { error: `${step}: no end in ${DEADLINE_MS} ms` });
    process.exit(1);
  }, DEADLINE_MS);
  let result;
  for await (const message of query({
    prompt: "go",
    options: {
      pathToClaudeCodeExecutable: agentx,
      cwd: work,
      env: { ...process.env, AGENTX_HOME: home },
      stderr: (text) => process.stderr.write(text),
      ...extra,
    },
  })) {
    if (message.type === "result") result = message;
  }
  clearTimeout(timer);
  report(step, { result: result?.result, subtype: result?.subtype });
}

try {
  await run("custom", { systemPrompt: "You are the TS custom prompt." });
  await run("append", {
    systemPrompt: { type: "preset", preset: "claude_code", append: "TS appended text." },
  });
  await run("exclude", {
    systemPrompt: { type: "preset", preset: "claude_code", excludeDynamicSections: true },
  });
  report("done", {});
} catch (error) {
  report("failed", { error: String(error?.stack ?? error) });
  process.exitCode = 1;
}
