// End to end with the real `claude` CLI from npm (@anthropic-ai/claude-code, which `cargo xtask
// setup` installs into the tools cache, linked here into the extension's storage as "Install"
// would put it), driven directly as "Claude Code (direct)": its stream-json and control protocol,
// no ACP adapter. The CLI talks to this test's own mock of the Anthropic Messages API
// (anthropic-mock.mjs, through ANTHROPIC_BASE_URL), so its turns are complete and deterministic.
//
// In both process modes: a text turn; a second turn that resumes the first (a new CLI started
// with `--resume` in oneshot, the same CLI in persistent); a Write that asks in the chat with its
// diff before anything is written (in oneshot, what the CLI then wrote is also reviewed after the
// fact and rejected); Cancel during a streaming turn. In oneshot, a restart of VS Code, after
// which the session reopens from its log and goes on. In persistent, a window reload in the
// middle of a turn, which goes on in the reloaded window.
//
// Every wait is for something to appear; none measures time.

import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";

import { startAnthropicMock } from "./anthropic-mock.mjs";
import {
  ACTIVATION_TIMEOUT_MS,
  STEP_TIMEOUT_MS,
  findTetherLog,
  newestSessionLog,
  orderedSteps,
  waitForFile,
  withVSCode,
  pick,
  pickedValue,
  chosenItem,
} from "./harness.mjs";

const TEST_TIMEOUT_MS = 10 * 60_000;
const PROFILE = "Claude Code (direct)";

const toolsDir = process.env.TETHER_TOOLS_DIR ?? path.join(os.homedir(), ".cache", "tether-dev");
const cachedAgents = path.join(toolsDir, "agents");
const claudeCli = path.join(cachedAgents, "node_modules", "@anthropic-ai", "claude-code", "package.json");

// The extension's storage (publisher "tether", name "tether") gets the cache's install of the
// agents, where the built-in profile looks first.
function settingsFor(extra) {
  return (root) => {
    const storage = path.join(root, "user-data", "User", "globalStorage", "tether.tether");
    fs.mkdirSync(storage, { recursive: true });
    fs.symlinkSync(cachedAgents, path.join(storage, "agents"), "dir");
    return { "tether.defaultAgent": PROFILE, ...extra };
  };
}

// The CLI's environment: the mock instead of Anthropic, a key that is not one, and its settings
// and sessions inside the launch folder.
function cliEnv(mock) {
  return (root) => {
    const home = path.join(root, "claude-home");
    fs.mkdirSync(home, { recursive: true });
    return { ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: "sk-tether-e2e-not-a-key", CLAUDE_CONFIG_DIR: home };
  };
}

// The session's log as the CLI's wire: what Tether wrote to it and what it printed, in order.
function cliWire(workspace) {
  return fs
    .readFileSync(newestSessionLog(workspace), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

const initializes = (wire) =>
  wire.filter((entry) => entry.event === "toAgent" && entry.message?.request?.subtype === "initialize").length;

// The text of the last streamed conversation turn the mock was asked for.
const lastTurnSent = (mock) => JSON.stringify(mock.requests.filter((request) => request.body.stream).at(-1)?.body.messages);

// A Write the CLI asks for: the card shows the new text, nothing is on disk until "Allow", then
// the CLI writes it and the tool call completes.
async function writeAskedThenAllowed(vscode, chat, file) {
  await vscode.sendPrompt(`write ${file} Made by the CLI`);
  const write = chat.locator(".entry.tool-call", { hasText: `Write ${file}` }).last();
  const card = write.locator('.permission-card[data-state="waiting"]');
  await card.waitFor({ timeout: STEP_TIMEOUT_MS });
  assert.match(await write.innerText(), /Made by the CLI/);
  const written = path.join(vscode.workspace, file);
  assert.equal(fs.existsSync(written), false, "nothing is written while the card waits");
  await card.locator('button.permission-option[data-option-id="allow_once"]').click();
  await chat.locator(".entry.agent", { hasText: `Wrote ${file}.` }).waitFor({ timeout: STEP_TIMEOUT_MS });
  assert.equal(fs.readFileSync(written, "utf8"), "Made by the CLI\n");
  await chat.locator('.entry.tool-call[data-status="completed"]', { hasText: `Write ${file}` }).waitFor();
  // The turn ends once the CLI's result comes, a moment after its last words: the next prompt
  // waits for it, as a person's does (Enter while a turn runs sends nothing).
  await chat.locator('.turn-state[data-state="ended"]').waitFor({ timeout: STEP_TIMEOUT_MS });
}

// Cancel while the CLI streams: Tether interrupts it, the turn ends cancelled, the rest of the
// stream never comes.
async function cancelledMidStream(vscode, chat) {
  await vscode.sendPrompt("slow 400");
  const reply = chat.locator(".entry.agent", { hasText: "chunk 3 " }).last();
  await reply.waitFor({ timeout: STEP_TIMEOUT_MS });
  await chat.locator("button.composer-cancel").click();
  await chat.locator('.turn-state[data-state="ended"]', { hasText: /cancel/i }).waitFor({ timeout: STEP_TIMEOUT_MS });
  // Text content, not inner text: a long line's pieces out of sight are not laid out, and inner
  // text leaves out what is not laid out.
  assert.doesNotMatch(await reply.textContent(), /chunk 400 /);
  const wire = cliWire(vscode.workspace);
  assert.ok(
    wire.some((entry) => entry.event === "toAgent" && entry.message?.request?.subtype === "interrupt"),
    "Tether interrupted the CLI",
  );
}

async function waitForGone(file) {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  while (fs.existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`${file} is still there`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function openChat(vscode) {
  await vscode.openTetherView();
  const chat = vscode.chatFrame();
  await chat.locator('.session-status[data-status="ready"]').waitFor({ timeout: ACTIVATION_TIMEOUT_MS });
  assert.equal((await chat.locator(".session-agent").innerText()).trim(), PROFILE);
  return chat;
}

test("Claude Code (direct), one CLI per turn: a text turn, a resumed second turn, a Write asked with its diff, Cancel, and a restart of VS Code", {
  timeout: TEST_TIMEOUT_MS,
}, async (t) => {
  assert.ok(fs.existsSync(claudeCli), `${claudeCli} is missing: run \`cargo xtask setup\``);
  const mock = await startAnthropicMock();
  t.after(() => mock.close());
  await withVSCode(
    { name: "claude-direct-oneshot", settings: settingsFor({}), env: cliEnv(mock) },
    async (vscode) => {
      mock.cwd = vscode.workspace;
      const step = orderedSteps(t, vscode);
      let chat;

      await step("a text turn streams in and ends with the cost in the meter", async () => {
        chat = await openChat(vscode);
        await vscode.sendPrompt("hello there");
        await chat.locator(".entry.agent", { hasText: "You said: hello there." }).waitFor({ timeout: STEP_TIMEOUT_MS });
        await chat.locator('.turn-state[data-state="ended"]').waitFor();
        // The result's cost, context and duration are in the meter. The mock's few tokens cost
        // less than a cent, which reads "<$0.01" (not "$0.00", as if free).
        assert.match(await chat.locator(".context-meter").innerText(), /^\d+% · <?\$\d+\.\d\d · [\d.]+ s$/);
        // The slash commands came from the CLI's answer to Tether's initialize.
        const wire = cliWire(vscode.workspace);
        assert.ok(
          wire.some((entry) => entry.event === "fromAgent" && entry.message?.response?.response?.commands),
          "the CLI answered initialize with its commands",
        );
        // Tether's MCP server reached the CLI (--mcp-config, the token from tetherd in its
        // environment): connected, its tools among the CLI's, and offered to the model.
        const init = wire.find((entry) => entry.message?.subtype === "init")?.message;
        const tether = init?.mcp_servers?.find((server) => server.name === "tether");
        assert.equal(tether?.status, "connected", JSON.stringify(init?.mcp_servers));
        for (const tool of ["mcp__tether__search_text", "mcp__tether__get_selection", "mcp__tether__lsp_definition"]) {
          assert.ok(init.tools.includes(tool), `${tool} is one of the CLI's tools: ${init.tools.join(", ")}`);
        }
        // The CLI may defer MCP tools behind its ToolSearch tool: they are named to the model
        // either way, as tools or in the list ToolSearch loads from.
        const asked = JSON.stringify(mock.requests.find((request) => request.body.stream)?.body ?? {});
        assert.ok(asked.includes("mcp__tether__search_text"), "the model is told of Tether's tools");
      });

      await step("the second turn resumes the first in a new CLI (--resume)", async () => {
        await vscode.sendPrompt("second turn");
        await chat.locator(".entry.agent", { hasText: "You said: second turn." }).waitFor({ timeout: STEP_TIMEOUT_MS });
        await chat.locator('.turn-state[data-state="ended"]').last().waitFor();
        // The model was sent the first turn too: the CLI resumed the conversation.
        assert.match(lastTurnSent(mock), /hello there/);
        const sessionId = cliWire(vscode.workspace).find((entry) => entry.message?.subtype === "init")?.message.session_id;
        assert.match(sessionId ?? "", /^[0-9a-f-]{36}$/);
        const tetherLog = await waitForFile(findTetherLog(vscode.userDataDir), (text) => text.includes(`--resume=${sessionId}`));
        assert.match(tetherLog, /starting Claude Code: .* --print --input-format stream-json/);
        // Oneshot: two CLIs, the first ended (its input closed after its result) before the second.
        const wire = cliWire(vscode.workspace);
        assert.equal(initializes(wire), 2);
        const exited = wire.findIndex((entry) => entry.event === "exited");
        const second = wire.findLastIndex((entry) => entry.message?.request?.subtype === "initialize");
        assert.ok(exited >= 0 && exited < second, "the first CLI exited before the second started");
        assert.equal(wire[exited].code, 0);
      });

      await step("a Write asks in the chat with its diff, and nothing is written before it is allowed", async () => {
        await writeAskedThenAllowed(vscode, chat, "created.txt");
        await vscode.screenshot("claude-direct-write-asks.png");
      });

      await step("what the CLI wrote is reviewed after the fact: rejected, the file goes", async () => {
        const change = chat.locator(".file-change", { hasText: "created.txt" }).last();
        await change.and(chat.locator('[data-origin="agent"][data-phase="applied"]')).waitFor({ timeout: STEP_TIMEOUT_MS });
        await change.locator("button.change-reject-all").click();
        await change.and(chat.locator('[data-phase="settled"]')).waitFor();
        await waitForGone(path.join(vscode.workspace, "created.txt"));
      });

      await step("Cancel interrupts a streaming turn: it ends cancelled, the rest never comes", async () => {
        await cancelledMidStream(vscode, chat);
        await vscode.screenshot("claude-direct-oneshot.png");
      });

      await step("after a restart of VS Code (tetherd too), the session reopens from its log and the next prompt resumes it", async () => {
        const lastInit = cliWire(vscode.workspace).findLast((entry) => entry.message?.subtype === "init");
        const sessionId = lastInit?.message.session_id;
        assert.match(sessionId ?? "", /^[0-9a-f-]{36}$/);
        await vscode.restart();
        chat = await openChat(vscode);
        // The conversation as it was, once each, read back from the session's log.
        await chat.locator(".entry.agent", { hasText: "You said: second turn." }).waitFor({ timeout: ACTIVATION_TIMEOUT_MS });
        assert.equal(await chat.locator(".entry.user", { hasText: "hello there" }).count(), 1);
        assert.equal(await chat.locator(".entry.agent", { hasText: "You said: hello there." }).count(), 1);
        await vscode.sendPrompt("after the restart");
        await chat.locator(".entry.agent", { hasText: "You said: after the restart." }).waitFor({ timeout: STEP_TIMEOUT_MS });
        // A new CLI went on with the CLI's own session: the model was sent the earlier turns.
        assert.match(lastTurnSent(mock), /hello there/);
        await waitForFile(findTetherLog(vscode.userDataDir), (text) => text.includes(`--resume=${sessionId}`));
      });
    },
  );
});

test("Claude Code (direct), one CLI kept alive: the second turn goes to the same CLI, and a window reload mid-turn keeps the turn", {
  timeout: TEST_TIMEOUT_MS,
}, async (t) => {
  assert.ok(fs.existsSync(claudeCli), `${claudeCli} is missing: run \`cargo xtask setup\``);
  const mock = await startAnthropicMock();
  t.after(() => mock.close());
  const settings = settingsFor({ "tether.claudeCode.processMode": "persistent", "tether.sidecarGraceSeconds": 60 });
  await withVSCode({ name: "claude-direct-persistent", settings, env: cliEnv(mock) }, async (vscode) => {
    mock.cwd = vscode.workspace;
    const step = orderedSteps(t, vscode);
    let chat;

    await step("two turns, one CLI", async () => {
      chat = await openChat(vscode);
      await vscode.sendPrompt("hello there");
      await chat.locator(".entry.agent", { hasText: "You said: hello there." }).waitFor({ timeout: STEP_TIMEOUT_MS });
      // The composer takes the next prompt once the turn has ended (the CLI's result).
      await chat.locator('.turn-state[data-state="ended"]').waitFor({ timeout: STEP_TIMEOUT_MS });
      await vscode.sendPrompt("second turn");
      await chat.locator(".entry.agent", { hasText: "You said: second turn." }).waitFor({ timeout: STEP_TIMEOUT_MS });
      assert.match(lastTurnSent(mock), /hello there/);
      const wire = cliWire(vscode.workspace);
      assert.equal(initializes(wire), 1, "one CLI served both turns");
      assert.equal(wire.filter((entry) => entry.event === "exited").length, 0, "the CLI is still running");
      assert.doesNotMatch(fs.readFileSync(findTetherLog(vscode.userDataDir), "utf8"), /--resume=/);
    });

    await step("the header's mode and model pickers reach the running CLI as control requests", async () => {
      await pick(chat.locator(".mode-select"), "acceptEdits");
      const models = chat.locator('.config-option-select[data-config-id="model"]');
      await pick(models, "opus");
      const sent = (subtype, key, value) => (text) =>
        text
          .split("\n")
          .filter(Boolean)
          .map((line) => JSON.parse(line))
          .some((entry) => entry.event === "toAgent" && entry.message?.request?.subtype === subtype && entry.message.request[key] === value);
      await waitForFile(newestSessionLog(vscode.workspace), sent("set_permission_mode", "mode", "acceptEdits"));
      await waitForFile(newestSessionLog(vscode.workspace), sent("set_model", "model", "opus"));
      // Both answered by the CLI: the pickers keep the choices.
      await chosenItem(chat.locator(".agent-mode-select"), "Accept Edits").waitFor({ state: "attached" });
      assert.equal(await pickedValue(models), "opus");
      // Back to asking, for the Write that follows.
      await pick(chat.locator(".mode-select"), "ask");
      await waitForFile(newestSessionLog(vscode.workspace), sent("set_permission_mode", "mode", "default"));
    });

    await step("a Write asks in the chat with its diff, and lands once allowed; Cancel interrupts a streaming turn", async () => {
      await writeAskedThenAllowed(vscode, chat, "kept.txt");
      await cancelledMidStream(vscode, chat);
      // Still one CLI for every turn.
      assert.equal(initializes(cliWire(vscode.workspace)), 1);
    });

    await step("a window reload in the middle of a turn: the reloaded chat shows it and it finishes", async () => {
      await vscode.sendPrompt("slow 60");
      await chat.locator(".entry.agent", { hasText: "chunk 2 " }).waitFor({ timeout: STEP_TIMEOUT_MS });
      await vscode.reloadWindow();
      await vscode.openTetherView();
      chat = vscode.chatFrame();
      await chat.locator(".entry.user", { hasText: "slow 60" }).waitFor({ timeout: ACTIVATION_TIMEOUT_MS });
      await chat.locator(".entry.agent", { hasText: "chunk 60 " }).waitFor({ timeout: STEP_TIMEOUT_MS });
      await chat.locator('.turn-state[data-state="ended"]').last().waitFor({ timeout: STEP_TIMEOUT_MS });
      // The earlier turns are there too, and the chunks came once each.
      await chat.locator(".entry.agent", { hasText: "You said: hello there." }).waitFor();
      const reply = await chat.locator(".entry.agent", { hasText: "chunk 60 " }).innerText();
      assert.equal(reply.match(/chunk 30 /g)?.length, 1, reply);
      // The same CLI finished the turn: the reloaded window took it over, it started no other.
      assert.equal(initializes(cliWire(vscode.workspace)), 1);
      await vscode.screenshot("claude-direct-persistent.png");
    });
  });
});
