// AskUserQuestion and NotebookEdit the TypeScript Agent SDK's way
// (WIRE-PERM-042, DEC-PERM-MODE, DEC-PERM-PATH), against the loopback model
// the test runs. tests/e2e/test_ts_sdk_tools.py scripts the model's replies
// in the order of the cases below and asserts on the requests it received
// and on what this prints: one JSON object per line, {"step": ..., ...}.
//
//   node tools.mjs AGENTX HOME WORK
import { query } from "@anthropic-ai/claude-agent-sdk";

const [agentx, home, work] = process.argv.slice(2);
const DEADLINE_MS = 30000;

function report(step, fields) {
  process.stdout.write(JSON.stringify({ step, ...fields }) + "\n");
}

async function run(step, extra) {
  const asked = [];
  // The SDK's way to answer AskUserQuestion: allow with the answers in
  // updatedInput (question text -> the chosen label).
  async function canUseTool(toolName, input, context) {
    asked.push({ toolName, input });
    if (toolName === "AskUserQuestion") {
      const answers = Object.fromEntries(
        input.questions.map((q) => [q.question, q.options[q.options.length - 1].label]),
      );
      return { behavior: "allow", updatedInput: { ...input, answers } };
    }
    return { behavior: "deny", message: "no", toolUseID: context.toolUseID };
  }
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
    canUseTool,
    ...extra,
  };
  for await (const message of query({ prompt: "go", options })) {
    seen.push(message);
  }
  clearTimeout(timer);
  const init = seen.find((m) => m.type === "system" && m.subtype === "init");
  const result = seen.find((m) => m.type === "result");
  report(step, { asked, tools: init?.tools, result: result?.result, subtype: result?.subtype });
}

await run("ask", {});
await run("notebook", { permissionMode: "acceptEdits" });
report("done", {});
