// rewindFiles the TypeScript Agent SDK's way (DEC-PROFILE-2):
// enableFileCheckpointing sets the variable agentx reads; the replayed user
// messages carry the uuids rewindFiles takes. tests/e2e/test_ts_sdk_rewind.py
// scripts the model and asserts on the files and on what this prints: one
// JSON object per line, {"step": ..., ...}.
//
//   node rewind.mjs AGENTX HOME WORK
import { query } from "@anthropic-ai/claude-agent-sdk";

const [agentx, home, work] = process.argv.slice(2);
const DEADLINE_MS = 60000;

function report(step, fields) {
  process.stdout.write(JSON.stringify({ step, ...fields }) + "\n");
}

const timer = setTimeout(() => {
  report("failed", { error: `no end in ${DEADLINE_MS} ms` });
  process.exit(1);
}, DEADLINE_MS);

// Prompts are handed over one at a time, each when the SDK asks for the
// next one; the session stays open after them.
const waiting = [];
let asked;
let pulled = new Promise((resolve) => (asked = resolve));
async function send(text) {
  while (waiting.length === 0) await pulled;
  const next = waiting.shift();
  next({
    value: {
      type: "user",
      message: { role: "user", content: text },
      parent_tool_use_id: null,
      session_id: "",
    },
    done: false,
  });
}
const prompts = {
  [Symbol.asyncIterator]() {
    return {
      next: () =>
        new Promise((resolve) => {
          waiting.push(resolve);
          const wake = asked;
          pulled = new Promise((r) => (asked = r));
          wake();
        }),
      return: async () => ({ done: true }),
    };
  },
};

const q = query({
  prompt: prompts,
  options: {
    pathToClaudeCodeExecutable: agentx,
    cwd: work,
    env: { ...process.env, AGENTX_HOME: home },
    stderr: (text) => process.stderr.write(text),
    enableFileCheckpointing: true,
    extraArgs: { "replay-user-messages": null },
    permissionMode: "acceptEdits",
    allowedTools: ["Bash"],
  },
});

const iterator = q[Symbol.asyncIterator]();
async function turn(text) {
  await send(text);
  let uuid;
  for (;;) {
    const { value, done } = await iterator.next();
    if (done) throw new Error("the session ended early");
    if (value.type === "user" && value.uuid && JSON.stringify(value.message).includes(text)) {
      uuid ??= value.uuid;
    }
    if (value.type === "result") return { uuid, subtype: value.subtype };
  }
}

try {
  const first = await turn("change things");
  report("first", first);
  const second = await turn("change more");
  report("second", second);
  report("dry", { answer: await q.rewindFiles(first.uuid, { dryRun: true }) });
  report("rewound", { answer: await q.rewindFiles(first.uuid) });
  report("unknown_dry", { answer: await q.rewindFiles("nope", { dryRun: true }) });
  try {
    await q.rewindFiles("nope");
    report("unknown", { rejected: false });
  } catch (error) {
    report("unknown", { rejected: true, error: String(error?.message ?? error) });
  }
  report("done", {});
} catch (error) {
  report("failed", { error: String(error?.stack ?? error) });
  process.exitCode = 1;
} finally {
  clearTimeout(timer);
  q.close?.();
}
