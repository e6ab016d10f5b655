// Claude Code's options the TypeScript Agent SDK's way (DEC-PROFILE-2,
// DEC-CLI-5, DEC-PERM-MODE), against the loopback model the test runs.
// tests/e2e/test_ts_sdk_options.py scripts the model's replies in the order
// of the cases below and asserts on the requests it received and on what
// this prints: one JSON object per line, {"step": ..., ...}.
//
//   node options.mjs AGENTX HOME WORK
import { query } from "@anthropic-ai/claude-agent-sdk";

const [agentx, home, work] = process.argv.slice(2);
const DEADLINE_MS = 30000;

function report(step, fields) {
  process.stdout.write(JSON.stringify({ step, ...fields }) + "\n");
}

function options(extra = {}) {
  return {
    pathToClaudeCodeExecutable: agentx,
    cwd: work,
    env: { ...process.env, AGENTX_HOME: home },
    stderr: (text) => process.stderr.write(text),
    ...extra,
  };
}

async function run(step, extra, prompt = "go") {
  const asked = [];
  async function canUseTool(toolName, input, context) {
    asked.push(toolName);
    return { behavior: "deny", message: "no", toolUseID: context.toolUseID };
  }
  const seen = [];
  const timer = setTimeout(() => {
    report("failed", { error: `${step}: no end in ${DEADLINE_MS} ms` });
    process.exit(1);
  }, DEADLINE_MS);
  for await (const message of query({ prompt, options: options({ canUseTool, ...extra }) })) {
    seen.push(message);
  }
  clearTimeout(timer);
  const init = seen.find((m) => m.type === "system" && m.subtype === "init");
  const result = seen.find((m) => m.type === "result");
  report(step, {
    asked,
    profile: init?.control_profile,
    permissionMode: init?.permissionMode,
    tools: init?.tools,
    result: result?.result,
    subtype: result?.subtype,
    denials: (result?.permission_denials ?? []).map((d) => d.tool_name),
  });
}

// Live: the permission mode set through the control channel before the prompt.
async function liveMode() {
  const asked = [];
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
                      message: { role: "user", content: "write" },
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
  async function canUseTool(toolName, input, context) {
    asked.push(toolName);
    return { behavior: "deny", message: "no", toolUseID: context.toolUseID };
  }
  const q = query({ prompt: prompts, options: options({ canUseTool }) });
  await q.setPermissionMode("acceptEdits");
  push();
  let result;
  for await (const message of q) {
    if (message.type === "result") {
      result = message;
      break;
    }
  }
  q.close?.();
  report("live_mode", { asked, result: result?.result, subtype: result?.subtype });
}

try {
  await run("plan", { permissionMode: "plan" });
  await run("disallowed", { disallowedTools: ["Bash", "Edit"] });
  await run("allowed", { allowedTools: ["Bash(echo hi:*)"] });
  await run("dont_ask", { permissionMode: "dontAsk" });
  await liveMode();
  report("done", {});
} catch (error) {
  report("failed", { error: String(error?.stack ?? error) });
  process.exitCode = 1;
}
