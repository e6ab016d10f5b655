// Sessions and the prompt the TypeScript Agent SDK's way (DEC-CLI-5,
// DEC-STORE-1, DEC-PROFILE-2): sessionStore (--session-mirror), resume with
// forkSession and resumeSessionAt, a resume from the store on an empty
// AGENTX_HOME, setModel between prompts, and verbatimPrompts
// (client_composed). tests/e2e/test_ts_sdk_sessions.py scripts the model's
// replies in the order of the steps and asserts on the requests it received
// and on what this prints: one JSON object per line, {"step": ..., ...}.
//
//   node sessions.mjs AGENTX HOME OTHER_HOME WORK CONFIG PROJECT_KEY
import { InMemorySessionStore, query } from "@anthropic-ai/claude-agent-sdk";

const [agentx, home, otherHome, work, config, projectKey] = process.argv.slice(2);
const DEADLINE_MS = 60000;
const store = new InMemorySessionStore();

function report(step, fields) {
  process.stdout.write(JSON.stringify({ step, ...fields }) + "\n");
}

function options(extra = {}, agentxHome = home) {
  return {
    pathToClaudeCodeExecutable: agentx,
    cwd: work,
    env: { ...process.env, AGENTX_HOME: agentxHome, CLAUDE_CONFIG_DIR: config },
    stderr: (text) => process.stderr.write(text),
    ...extra,
  };
}

async function run(step, prompt, extra, agentxHome) {
  const timer = setTimeout(() => {
    report("failed", { error: `${step}: no end in ${DEADLINE_MS} ms` });
    process.exit(1);
  }, DEADLINE_MS);
  const seen = [];
  for await (const message of query({ prompt, options: options(extra, agentxHome) })) {
    seen.push(message);
  }
  clearTimeout(timer);
  const result = seen.find((m) => m.type === "result");
  const assistants = seen.filter((m) => m.type === "assistant");
  report(step, {
    sessionId: result?.session_id,
    result: result?.result,
    subtype: result?.subtype,
    assistantUuids: assistants.map((m) => m.uuid),
    models: assistants.map((m) => m.message?.model),
  });
  return { result, assistants };
}

async function switched() {
  let push;
  const prompts = {
    [Symbol.asyncIterator]() {
      let sent = false;
      return {
        next: () =>
          sent
            ? new Promise(() => {})
            : new Promise((resolve) => {
                push = () => {
                  sent = true;
                  resolve({
                    value: {
                      type: "user",
                      message: { role: "user", content: "switched" },
                      parent_tool_use_id: null,
                      session_id: "",
                    },
                    done: false,
                  });
                };
              }),
      };
    },
  };
  const q = query({ prompt: prompts, options: options() });
  await q.setModel("model-y");
  push();
  let result;
  const models = [];
  for await (const message of q) {
    if (message.type === "assistant") models.push(message.message?.model);
    if (message.type === "result") {
      result = message;
      break;
    }
  }
  q.close?.();
  report("set_model", { result: result?.result, models });
}

try {
  const first = await run("mirror", "one", { sessionStore: store });
  const sessionId = first.result.session_id;
  await run("second_turn", "two", { resume: sessionId });
  const entries = store.getEntries({ projectKey, sessionId });
  report("stored", { types: entries.map((e) => e.type), count: entries.length });
  await run("resume_at", "again", {
    resume: sessionId,
    forkSession: true,
    resumeSessionAt: first.assistants[0].uuid,
  });
  await run("from_store", "three", { resume: sessionId, sessionStore: store }, otherHome);
  await switched();
  await run("verbatim", "look at @notes.txt", { verbatimPrompts: true });
  await run("expanded", "look at @notes.txt", {});
  report("done", {});
} catch (error) {
  report("failed", { error: String(error?.stack ?? error) });
  process.exitCode = 1;
}
