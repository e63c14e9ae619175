// A small mock of the Anthropic Messages API, enough for the real `claude` CLI to complete turns
// offline: point the CLI at it with ANTHROPIC_BASE_URL and any ANTHROPIC_API_KEY.
//
// What it answers is chosen by the last user message's text, so a test steers the model by what
// it types:
// - "write <file> <text...>": a Write tool use creating <file> (relative to the mock's `cwd`,
//   which a test may set once it knows its workspace) with the rest as its content; after the
//   tool result, "Wrote <file>.".
// - "edit <file> <old> => <new>": an Edit tool use replacing <old> with <new> in <file>.
// - "run <command>": a Bash tool use running <command>.
// - "slow <n>": <n> text deltas, 50 ms apart (a turn long enough to be cancelled).
// - "think": a thinking block, then text.
// - "fail": the API refuses the request (HTTP 400, invalid_request_error).
// - anything else: "You said: <text>" in three deltas.
// Requests that are not a streamed conversation turn (title generation, quota checks, token
// counts) get a short non-streaming answer. Every request is recorded in `requests`.

import http from "node:http";
import path from "node:path";

export async function startAnthropicMock({ cwd = process.cwd() } = {}) {
  const requests = [];
  const mock = { url: "", requests, cwd, close: () => new Promise((resolve) => server.close(resolve)) };
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      let json = {};
      try {
        json = body ? JSON.parse(body) : {};
      } catch {
        // A body that is not JSON is answered like any other non-turn request.
      }
      requests.push({ method: req.method, url: req.url, body: json });
      if (req.url.startsWith("/v1/messages/count_tokens")) {
        return sendJson(res, { input_tokens: 42 });
      }
      if (!req.url.startsWith("/v1/messages")) return sendJson(res, {});
      if (lastUser(json).text === "fail") {
        // A request the API refuses (not retried by the CLI, unlike an overload).
        res.writeHead(400, { "content-type": "application/json" });
        return res.end(
          JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: "The mock refuses this." } }),
        );
      }
      if (!json.stream) {
        return sendJson(res, message([{ type: "text", text: "Mock title" }], "end_turn"));
      }
      streamTurn(res, json, mock.cwd);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  mock.url = `http://127.0.0.1:${server.address().port}`;
  // Streams still open (a turn cancelled mid-stream) must not keep `close` waiting.
  mock.close = () => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  };
  return mock;
}

function sendJson(res, value) {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

function message(content, stopReason) {
  return {
    id: `msg_mock_${Date.now()}`,
    type: "message",
    role: "assistant",
    model: "claude-mock",
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 5 },
  };
}

// The text of the conversation's last user message, and whether it ends in a tool result. (The
// CLI may put a message of its own, role "system", after it.)
function lastUser(body) {
  const last = [...(body.messages ?? [])].reverse().find((message) => message.role === "user");
  if (!last) return { text: "", toolResult: false };
  const blocks = typeof last.content === "string" ? [{ type: "text", text: last.content }] : last.content;
  const toolResult = blocks.some((block) => block.type === "tool_result");
  // The CLI puts reminders in their own blocks before the person's text: the last text block is
  // what was typed.
  const texts = blocks.filter((block) => block.type === "text" && !block.text.startsWith("<system-reminder>"));
  return { text: texts.length ? texts[texts.length - 1].text.trim() : "", toolResult };
}

// The first user text of the conversation (what the turn was asked), for the answer after a tool.
function firstAsk(body) {
  for (const message of [...(body.messages ?? [])].reverse()) {
    if (message.role !== "user") continue;
    const blocks = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
    const text = blocks.find((block) => block.type === "text" && !block.text.startsWith("<system-reminder>"));
    if (text) return text.text.trim();
  }
  return "";
}

async function streamTurn(res, body, cwd) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  let closed = false;
  res.on("close", () => (closed = true));
  const send = (event, data) => {
    if (!closed) res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  };
  const { text, toolResult } = lastUser(body);
  send("message_start", { message: { ...message([], null), usage: { input_tokens: 10, output_tokens: 1 } } });
  let index = 0;
  const textBlock = async (deltas, pauseMs = 0) => {
    send("content_block_start", { index, content_block: { type: "text", text: "" } });
    for (const delta of deltas) {
      if (closed) return;
      send("content_block_delta", { index, delta: { type: "text_delta", text: delta } });
      if (pauseMs) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
    send("content_block_stop", { index });
    index += 1;
  };
  const asked = toolResult ? "" : text;
  const write = /^write (\S+) ([\s\S]*)$/.exec(asked);
  const edit = /^edit (\S+) ([\s\S]*?) => ([\s\S]*)$/.exec(asked);
  const run = /^run ([\s\S]+)$/.exec(asked);
  const toolUse = async (intro, name, input) => {
    await textBlock([intro]);
    send("content_block_start", {
      index,
      content_block: { type: "tool_use", id: `toolu_mock_${Date.now()}`, name, input: {} },
    });
    send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: JSON.stringify(input) } });
    send("content_block_stop", { index });
    index += 1;
  };
  let stopReason = "end_turn";
  if (toolResult) {
    const [verb, file] = firstAsk(body).split(" ");
    const done = { write: `Wrote ${file}.`, edit: `Edited ${file}.`, run: "Ran it." }[verb];
    await textBlock([done ?? "Done."]);
  } else if (write) {
    await toolUse("I will write the file.", "Write", { file_path: path.join(cwd, write[1]), content: `${write[2]}\n` });
    stopReason = "tool_use";
  } else if (edit) {
    const input = { file_path: path.join(cwd, edit[1]), old_string: edit[2], new_string: edit[3] };
    await toolUse("I will edit the file.", "Edit", input);
    stopReason = "tool_use";
  } else if (run) {
    await toolUse("I will run it.", "Bash", { command: run[1], description: "Run the command" });
    stopReason = "tool_use";
  } else if (/^slow (\d+)$/.test(text)) {
    const count = Number(/^slow (\d+)$/.exec(text)[1]);
    await textBlock(Array.from({ length: count }, (_, i) => `chunk ${i + 1} `), 50);
  } else if (text === "think") {
    send("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } });
    send("content_block_delta", { index, delta: { type: "thinking_delta", thinking: "Thinking it over." } });
    send("content_block_delta", { index, delta: { type: "signature_delta", signature: "mock-signature" } });
    send("content_block_stop", { index });
    index += 1;
    await textBlock(["Thought about it."]);
  } else {
    await textBlock(["You said: ", text.slice(0, 200), "."]);
  }
  send("message_delta", { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 12 } });
  send("message_stop", {});
  if (!closed) res.end();
}

// Run on its own (`node anthropic-mock.mjs [cwd]`), it prints its URL and serves until killed:
// handy for trying the CLI by hand.
if (import.meta.url === `file://${process.argv[1]}`) {
  const mock = await startAnthropicMock({ cwd: process.argv[2] ?? process.cwd() });
  console.log(mock.url);
  if (process.env.MOCK_DUMP) {
    const dump = mock.requests;
    process.on("SIGTERM", () => {
      console.error(JSON.stringify(dump));
      process.exit(0);
    });
  }
}
