// SDK callback hooks under the stock TypeScript Agent SDK (DEC-PROFILE-2).
// tests/e2e/test_ts_sdk.py runs it under node; it prints one JSON line: the
// inputs every callback received and the result. Every wait has a deadline.
//
//   node hooks.mjs AGENTX HOME WORK_DIR
import { query } from "@anthropic-ai/claude-agent-sdk";

const [agentx, home, work] = process.argv.slice(2);
const DEADLINE_MS = 60000;
const seen = [];

function recorder(answer) {
  return async (input, toolUseID) => {
    seen.push({ event: input.hook_event_name, input, toolUseID: toolUseID ?? null });
    return typeof answer === "function" ? answer(input) : answer;
  };
}

let preCalls = 0;
let stopCalls = 0;
const hooks = {
  SessionStart: [{ hooks: [recorder({})] }],
  UserPromptSubmit: [
    {
      hooks: [
        recorder({
          hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: "TS-PROMPT-CONTEXT" },
        }),
      ],
    },
  ],
  PreToolUse: [
    {
      matcher: "Bash",
      hooks: [
        recorder(() => {
          preCalls += 1;
          const decision = preCalls === 1 ? "deny" : "allow";
          return {
            hookSpecificOutput: {
              hookEventName: "PreToolUse",
              permissionDecision: decision,
              permissionDecisionReason: `ts says ${decision}`,
            },
          };
        }),
      ],
    },
  ],
  PostToolUse: [
    {
      hooks: [
        recorder({
          hookSpecificOutput: {
            hookEventName: "PostToolUse",
            additionalContext: "TS-POST-CONTEXT",
            updatedToolOutput: "TS-REPLACED-OUTPUT",
          },
        }),
      ],
    },
  ],
  PostToolBatch: [
    { hooks: [recorder({ hookSpecificOutput: { hookEventName: "PostToolBatch", additionalContext: "TS-BATCH-CONTEXT" } })] },
  ],
  PermissionDenied: [{ matcher: "Bash", hooks: [recorder({ systemMessage: "TS-DENIAL-SEEN" })] }],
  Stop: [
    {
      hooks: [
        recorder(() => {
          stopCalls += 1;
          return stopCalls === 1 ? { decision: "block", reason: "TS-KEEP-GOING" } : {};
        }),
      ],
    },
  ],
};

const timer = setTimeout(() => {
  process.stdout.write(JSON.stringify({ error: "deadline" }) + "\n");
  process.exit(3);
}, DEADLINE_MS);

const messages = [];
for await (const message of query({
  prompt: "touch things",
  options: {
    pathToClaudeCodeExecutable: agentx,
    cwd: work,
    env: { ...process.env, AGENTX_HOME: home },
    stderr: (text) => process.stderr.write(text),
    hooks,
    includeHookEvents: true,
  },
})) {
  messages.push(message);
}
clearTimeout(timer);
const result = messages.find((m) => m.type === "result");
const hookRecords = messages.filter((m) => m.type === "system" && String(m.subtype).startsWith("hook_"));
process.stdout.write(
  JSON.stringify({
    seen,
    result: result ? { subtype: result.subtype, result: result.result, num_turns: result.num_turns } : null,
    hookRecords: hookRecords.map((m) => [m.subtype, m.hook_event]),
    informational: messages
      .filter((m) => m.type === "system" && m.subtype === "informational")
      .map((m) => [m.level, m.content]),
  }) + "\n",
);
