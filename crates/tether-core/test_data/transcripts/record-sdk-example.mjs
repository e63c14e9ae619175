// Records a real ACP conversation with the example agent shipped in @agentclientprotocol/sdk@1.9.0,
// so that the framing and JSON-RPC tests run over bytes a real agent printed rather than bytes we
// imagined.
//
// Usage (from any directory):
//   npm install --prefix /tmp/acp-sdk @agentclientprotocol/sdk@1.9.0
//   node record-sdk-example.mjs /tmp/acp-sdk/node_modules/@agentclientprotocol/sdk/dist/examples/agent.js
//
// It writes, next to this script:
//   sdk-example.agent.ndjson   the agent's stdout, byte for byte, as it arrived;
//   sdk-example.client.ndjson  every line this script sent to the agent's stdin.
//
// The conversation: initialize, session/new, one session/prompt; every
// session/request_permission is answered with the first "allow" option; the script stops when the
// prompt's response arrives. The example agent sleeps one second between steps, so a run takes
// about five seconds.

import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const agentScript = process.argv[2];
if (!agentScript) {
  console.error("usage: node record-sdk-example.mjs <path to sdk dist/examples/agent.js>");
  process.exit(2);
}
const outputDir = dirname(fileURLToPath(import.meta.url));

const agent = spawn(process.execPath, [agentScript], { stdio: ["pipe", "pipe", "inherit"] });
const agentChunks = [];
const clientLines = [];

function send(message) {
  const line = JSON.stringify(message);
  clientLines.push(line);
  agent.stdin.write(line + "\n");
}

let nextId = 0;
const waiting = new Map();
function request(method, params) {
  const id = nextId++;
  send({ jsonrpc: "2.0", id, method, params });
  return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
}

function handleAgentMessage(message) {
  if ("method" in message && "id" in message) {
    if (message.method === "session/request_permission") {
      const allow = message.params.options.find((option) => option.kind.startsWith("allow"));
      const outcome = allow
        ? { outcome: "selected", optionId: allow.optionId }
        : { outcome: "cancelled" };
      send({ jsonrpc: "2.0", id: message.id, result: { outcome } });
    } else {
      send({
        jsonrpc: "2.0",
        id: message.id,
        error: { code: -32601, message: `Method not found: ${message.method}` },
      });
    }
  } else if ("id" in message) {
    const pending = waiting.get(message.id);
    waiting.delete(message.id);
    if (pending && "error" in message) pending.reject(new Error(JSON.stringify(message.error)));
    else if (pending) pending.resolve(message.result);
  }
}

// The recording keeps the raw bytes; parsing works on a separate line buffer so that the saved
// file is exactly what the agent printed, chunk boundaries and all.
let pendingText = "";
agent.stdout.on("data", (chunk) => {
  agentChunks.push(chunk);
  pendingText += chunk.toString("utf8");
  let newline;
  while ((newline = pendingText.indexOf("\n")) >= 0) {
    const line = pendingText.slice(0, newline).trim();
    pendingText = pendingText.slice(newline + 1);
    if (line) handleAgentMessage(JSON.parse(line));
  }
});

const timeout = setTimeout(() => {
  console.error("the agent did not finish the turn within 60 s");
  agent.kill();
  process.exit(1);
}, 60_000);

try {
  await request("initialize", {
    protocolVersion: 1,
    clientInfo: { name: "tether-transcript-recorder", version: "0.1.0" },
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  });
  const session = await request("session/new", { cwd: "/tmp/tether-transcript", mcpServers: [] });
  const prompt = await request("session/prompt", {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: "Please tidy up the project configuration." }],
  });
  console.error(`turn ended: ${prompt.stopReason}`);
} finally {
  clearTimeout(timeout);
  agent.stdin.end();
  agent.kill();
}

writeFileSync(join(outputDir, "sdk-example.agent.ndjson"), Buffer.concat(agentChunks));
writeFileSync(join(outputDir, "sdk-example.client.ndjson"), clientLines.map((l) => l + "\n").join(""));
console.error(`wrote ${agentChunks.length} chunks from the agent, ${clientLines.length} client lines`);
