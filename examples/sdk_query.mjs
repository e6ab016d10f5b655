// One prompt through the stock TypeScript Agent SDK (@anthropic-ai/claude-agent-sdk),
// hosted by agentx. The SDK would start its own Claude Code binary when no
// executable is given, so this resolves `agentx` on PATH first and stops with a
// sentence when it is missing.
//
//   node examples/sdk_query.mjs "What is 2 + 2?"
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { query } from "@anthropic-ai/claude-agent-sdk";

function agentxPath() {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const candidate = join(dir, "agentx");
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this folder
    }
  }
  process.stderr.write(
    "agentx is not on PATH: install it (pip install agentx-host) or activate its " +
      "virtual environment; refusing to let the SDK start another host\n",
  );
  process.exit(1);
}

const prompt = process.argv[2] ?? "What is 2 + 2?";
for await (const message of query({
  prompt,
  options: { pathToClaudeCodeExecutable: agentxPath() },
})) {
  if (message.type === "result") console.log(message.result);
}
