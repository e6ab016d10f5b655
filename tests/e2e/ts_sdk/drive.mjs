// Drives the real agentx with the stock TypeScript Agent SDK (DEC-COMPAT-4).
// tests/e2e/test_ts_sdk.py runs it under node and asserts on what it prints:
// one JSON object per line, {"step": ..., ...}. Every wait has a deadline.
//
//   node drive.mjs AGENTX ECHO_HOME SCRIPTED_HOME WORK_DIR
import { query } from "@anthropic-ai/claude-agent-sdk";

const [agentx, echoHome, scriptedHome, work] = process.argv.slice(2);
const DEADLINE_MS = 30000;

function report(step, fields) {
  process.stdout.write(JSON.stringify({ step, ...fields }) + "\n");
}

function within(promise, what) {
  let timer;
  const expired = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${DEADLINE_MS} ms`)), DEADLINE_MS);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

function options(home, extra = {}) {
  return {
    pathToClaudeCodeExecutable: agentx,
    cwd: work,
    env: { ...process.env, AGENTX_HOME: home },
    stderr: (text) => process.stderr.write(text),
    ...extra,
  };
}

// A prompt stream the test feeds one user message at a time.
function promptStream() {
  const waiting = [];
  const queued = [];
  let closed = false;
  return {
    push(text) {
      const message = {
        type: "user",
        message: { role: "user", content: text },
        parent_tool_use_id: null,
        session_id: "",
      };
      if (waiting.length) waiting.shift()({ value: message, done: false });
      else queued.push(message);
    },
    close() {
      closed = true;
      while (waiting.length) waiting.shift()({ value: undefined, done: true });
    },
    [Symbol.asyncIterator]() {
      return {
        next: () => {
          if (queued.length) return Promise.resolve({ value: queued.shift(), done: false });
          if (closed) return Promise.resolve({ value: undefined, done: true });
          return new Promise((resolve) => waiting.push(resolve));
        },
      };
    },
  };
}

// Messages up to and including the next result.
async function untilResult(iterator, what) {
  const seen = [];
  for (;;) {
    const { value, done } = await within(iterator.next(), what);
    if (done) throw new Error(`${what}: the stream ended before a result`);
    seen.push(value);
    if (value.type === "result") return seen;
  }
}

async function oneShot() {
  const seen = [];
  for await (const message of query({ prompt: "hello ts sdk", options: options(echoHome) })) {
    seen.push(message);
  }
  const result = seen.find((m) => m.type === "result");
  report("one_shot", {
    types: seen.map((m) => (m.subtype ? `${m.type}/${m.subtype}` : m.type)),
    result: result?.result,
    subtype: result?.subtype,
  });
}

// DEC-PROFILE-2: the SDK starts agentx in the sdk profile; an initialize
// field agentx cannot apply (here agentProgressSummaries) ends the session with status 2
// and one stderr line, so query() fails instead of running the turn without it.
async function refusedField() {
  const stderr = [];
  const seen = [];
  const extra = {
    agentProgressSummaries: true,
    stderr: (text) => stderr.push(text),
  };
  let error = null;
  try {
    for await (const message of query({ prompt: "never run", options: options(echoHome, extra) })) {
      seen.push(message);
    }
  } catch (caught) {
    error = String(caught?.message ?? caught);
  }
  const lines = stderr.join("").split("\n").filter((line) => line.trim());
  report("refused_field", {
    error,
    types: seen.map((m) => (m.subtype ? `${m.type}/${m.subtype}` : m.type)),
    stderr: lines,
  });
}

async function session() {
  const asked = [];
  let releaseSecond;
  const secondHeld = new Promise((resolve) => (releaseSecond = resolve));
  let secondAsked;
  const secondSeen = new Promise((resolve) => (secondAsked = resolve));
  async function canUseTool(toolName, input, context) {
    asked.push({ toolName, file: input.file_path, toolUseID: context.toolUseID });
    if (asked.length === 2) {
      secondAsked();
      await secondHeld; // this prompt waits until the interrupt
    }
    return { behavior: "allow", updatedInput: input, toolUseID: context.toolUseID };
  }
  const prompts = promptStream();
  const q = query({ prompt: prompts, options: options(scriptedHome, { canUseTool }) });
  const iterator = q[Symbol.asyncIterator]();

  const init = await within(q.initializationResult(), "initializationResult");
  const commands = await within(q.supportedCommands(), "supportedCommands");
  const models = await within(q.supportedModels(), "supportedModels");
  const account = await within(q.accountInfo(), "accountInfo");
  report("control", {
    init_keys: Object.keys(init).sort(),
    commands: commands.map((c) => c.name),
    models: models.map((m) => m.value),
    account,
  });

  prompts.push("write it");
  const first = await untilResult(iterator, "first turn");
  report("first_turn", { result: first.at(-1).result, subtype: first.at(-1).subtype });

  prompts.push("write again");
  await within(secondSeen, "the second permission prompt");
  await within(q.interrupt(), "interrupt");
  releaseSecond();
  const second = await untilResult(iterator, "interrupted turn");
  report("interrupted_turn", { subtype: second.at(-1).subtype, is_error: second.at(-1).is_error });

  prompts.close();
  // DEC-CLI-6: the last turn ended in error (interrupted), so the process
  // exits 1 at the end of input, as Claude Code does, and the SDK says so.
  let ending = null;
  try {
    for (;;) {
      const { done } = await within(iterator.next(), "end of the session");
      if (done) break;
    }
  } catch (error) {
    ending = String(error?.message ?? error);
  }
  report("permissions", { asked, ending });
}

try {
  await oneShot();
  await refusedField();
  await session();
  report("done", {});
} catch (error) {
  report("failed", { error: String(error?.stack ?? error) });
  process.exitCode = 1;
}
