// Structured output under the stock TypeScript Agent SDK (DEC-CLI-5, DEC-PROFILE-2):
// its outputFormat travels as initialize's jsonSchema. tests/e2e/test_ts_sdk.py
// runs it under node; it prints one JSON line: the result. Every wait has a deadline.
//
//   node structured.mjs AGENTX HOME WORK_DIR
import { query } from "@anthropic-ai/claude-agent-sdk";

const [agentx, home, work] = process.argv.slice(2);
const DEADLINE_MS = 60000;
const schema = {
  type: "object",
  properties: { name: { type: "string" } },
  required: ["name"],
  additionalProperties: false,
};

const timer = setTimeout(() => {
  process.stdout.write(JSON.stringify({ error: "deadline" }) + "\n");
  process.exit(3);
}, DEADLINE_MS);

const messages = [];
for await (const message of query({
  prompt: "who",
  options: {
    pathToClaudeCodeExecutable: agentx,
    cwd: work,
    env: { ...process.env, AGENTX_HOME: home },
    stderr: (text) => process.stderr.write(text),
    outputFormat: { type: "json_schema", schema },
  },
})) {
  messages.push(message);
}
clearTimeout(timer);
const result = messages.find((m) => m.type === "result");
process.stdout.write(
  JSON.stringify({
    subtype: result?.subtype ?? null,
    structured_output: result?.structured_output ?? null,
  }) + "\n",
);
