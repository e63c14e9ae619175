// End to end: a person opens the Tether view in a real VS Code, sends a prompt, watches the
// answer stream in, and answers a permission card, first with the built-in Demo agent (the
// scripted test agent) and then with the real example agent of the official ACP SDK.
//
// Every wait is for something to appear in the chat; none measures time.

import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import path from "node:path";
import { test } from "node:test";

import { ACTIVATION_TIMEOUT_MS, demoWorkspaceFiles, pickerChoices, repoRoot, withVSCode } from "./harness.mjs";

// A whole test may take minutes on two busy cores (code-server start, activation, a turn); the
// limit is only there so a hang ends the run instead of blocking CI.
const TEST_TIMEOUT_MS = 10 * 60_000;

// tetherd normally outlives a window for 30 s so that a reload finds its sessions; a test has no
// reload, so a short grace is enough (teardown ends it anyway). Not zero: tetherd applies the
// grace before the first connection too, and would be gone before the extension connects.
const testSettings = { "tether.sidecarGraceSeconds": 5 };

test("Demo agent: streamed text, a completed tool call, and a permission card", {
  timeout: TEST_TIMEOUT_MS,
}, async () => {
  await withVSCode({ name: "chat-demo", settings: testSettings }, async (vscode) => {
    await vscode.openTetherView();
    const chat = vscode.chatFrame();
    await chat
      .locator('.session-status[data-status="ready"]')
      .waitFor({ timeout: ACTIVATION_TIMEOUT_MS });
    assert.equal((await chat.locator(".session-agent").innerText()).trim(), "Demo");
    // The agent picker says how the Demo stands and what it said it can do as it started.
    const demo = (await pickerChoices(chat.locator(".session-picker"))).find((choice) => choice.value === "Demo");
    assert.equal(demo.state, "running");
    assert.match(demo.description, /^Running · tether-test-agent [\d.]+ · images, file contents$/);

    await vscode.sendPrompt("Show me what you can do");
    await chat.locator(".entry.user", { hasText: "Show me what you can do" }).waitFor();
    await chat.locator('.turn-state[data-state="running"]').waitFor();
    await chat.locator(".entry.agent", { hasText: "Hello! I'm the Tether demo agent." }).waitFor();
    const read = chat.locator('.entry.tool-call[data-status="completed"]', { hasText: "Read README.md" });
    await read.waitFor();
    // The file reads relative to the workspace, and pressing it opens it in an editor.
    const readme = read.locator("button.tool-location");
    assert.equal((await readme.innerText()).trim(), "README.md");
    await readme.click();
    await vscode.activeEditorTab("README.md").waitFor();
    assert.equal((await read.locator(".tool-status").innerText()).trim(), "Finished");

    const edit = chat.locator(".entry.tool-call", { hasText: "Edit notes.md" });
    const card = edit.locator('.permission-card[data-state="waiting"]');
    await card.waitFor();
    assert.equal(await edit.getAttribute("data-status"), "waiting_for_confirmation");
    assert.deepEqual(await permissionOptions(card), [
      { id: "allow-once", kind: "allow_once", label: "Allow once" },
      { id: "allow-always", kind: "allow_always", label: "Always allow" },
      { id: "reject-once", kind: "reject_once", label: "Reject" },
      { id: "reject-always", kind: "reject_always", label: "Always reject" },
    ]);

    await card.locator('button.permission-option[data-option-id="allow-once"]').click();
    await edit
      .locator('.permission-card[data-state="answered"] .permission-outcome', {
        hasText: "Allowed once",
      })
      .waitFor();
    // Allowed, the agent edits notes.md itself (as the Claude and Codex adapters do), and Tether
    // finds the change on disk: a card with the hunk to keep or revert, and the file edited.
    await chat.locator(".entry.agent", { hasText: "Permission granted: I will add a line to notes.md." }).waitFor();
    const change = chat.locator('.file-change[data-origin="agent"][data-phase="applied"]', { hasText: "notes.md" });
    await change.waitFor();
    assert.equal(await change.locator(".hunk").count(), 1);
    assert.equal(
      await fsp.readFile(path.join(vscode.workspace, "notes.md"), "utf8"),
      `${demoWorkspaceFiles["notes.md"]}- Tether was here.\n`,
    );
    // The demo ends by running a command in a terminal, which it asks about first; allowed, the
    // command runs without a second question, the card shows its exit, and the agent read its
    // output (the workspace's files) back from the terminal.
    const run = chat.locator(".entry.tool-call", { hasText: "Run ls -la" });
    await run.locator('.permission-card[data-state="waiting"] button.permission-option[data-option-id="allow-once"]').click();
    await chat
      .locator('.terminal-card[data-state="exited"] .terminal-status', { hasText: "Finished" })
      .waitFor();
    await chat.locator(".entry.agent", { hasText: "ls -la exited with code 0" }).waitFor();
    assert.match(
      await chat.locator(".entry.agent", { hasText: "ls -la exited with code 0" }).innerText(),
      /README\.md/,
    );
    await chat.locator(".entry.agent", { hasText: "That was a full turn." }).waitFor();
    await chat.locator('.turn-state[data-state="ended"]').waitFor();
    assert.equal(await chat.locator("button.composer-send").isDisabled(), false);

    await vscode.screenshot("chat-demo.png");

    // tetherd appends every line the agent writes to the session's log in `.tether/`, one write
    // a line: VS Code's file watcher must not wake for each of them (thousands in one reply, each
    // passed on to every extension watching the workspace). VS Code's own exclusions stay.
    await fsp.access(path.join(vscode.workspace, ".tether", "sessions"));
    const unwatched = await vscode.settingPatterns("files.watcherExclude");
    assert.ok(unwatched.includes("**/.tether/**"), `Tether's folder is watched: ${unwatched.join(", ")}`);
    assert.ok(unwatched.some((pattern) => pattern.includes(".git/objects")), "VS Code's defaults are kept");
  });
});

// The example agent shipped in @agentclientprotocol/sdk@1.9.0 (dist/examples/agent.js) streams a
// sentence, runs "Reading project files" to completion, streams another sentence, then asks
// permission for "Modifying critical configuration file" with two options, "Allow this change"
// (allow) and "Skip this change" (reject); once allowed it completes that tool call and says so.
// It sleeps a second between steps.
const sdkExampleAgent = path.join(
  repoRoot, "tests", "node_modules", "@agentclientprotocol", "sdk", "dist", "examples", "agent.js",
);

test("SDK example agent: a real ACP agent's turn, with its permission request", {
  timeout: TEST_TIMEOUT_MS,
}, async () => {
  const settings = {
    ...testSettings,
    "tether.agents": [
      // process.execPath: the Node running this test, so the agent needs no node on PATH.
      { name: "SDK example", command: process.execPath, args: [sdkExampleAgent] },
      // Not a profile: the engine drops it, says why, and the agent above still runs.
      { name: "Broken" },
    ],
    "tether.defaultAgent": "SDK example",
  };
  await withVSCode({ name: "chat-sdk-example", settings }, async (vscode) => {
    await vscode.openTetherView();
    const chat = vscode.chatFrame();
    await chat
      .locator('.session-status[data-status="ready"]')
      .waitFor({ timeout: ACTIVATION_TIMEOUT_MS });
    assert.equal((await chat.locator(".session-agent").innerText()).trim(), "SDK example");
    await vscode.page
      .locator(".notification-toast", { hasText: 'Tether: tether.agents[1] was ignored: "Broken" has no "command".' })
      .waitFor();

    await vscode.sendPrompt("Improve the configuration");
    await chat
      .locator(".entry.agent", { hasText: "I'll help you with that. Let me start by reading" })
      .waitFor();
    const read = chat.locator(".entry.tool-call", { hasText: "Reading project files" });
    await read.waitFor();
    assert.equal(await read.getAttribute("data-kind"), "read");
    await chat
      .locator('.entry.tool-call[data-status="completed"]', { hasText: "Reading project files" })
      .waitFor();
    await chat
      .locator(".entry.agent", { hasText: "Now I understand the project structure." })
      .waitFor();

    const edit = chat.locator(".entry.tool-call", {
      hasText: "Modifying critical configuration file",
    });
    const card = edit.locator('.permission-card[data-state="waiting"]');
    await card.waitFor();
    assert.equal(await edit.getAttribute("data-kind"), "edit");
    assert.deepEqual(await permissionOptions(card), [
      { id: "allow", kind: "allow_once", label: "Allow this change" },
      { id: "reject", kind: "reject_once", label: "Skip this change" },
    ]);

    await card.locator('button.permission-option[data-option-id="allow"]').click();
    await edit.locator('.permission-card[data-state="answered"]').waitFor();
    await chat
      .locator('.entry.tool-call[data-status="completed"]', {
        hasText: "Modifying critical configuration file",
      })
      .waitFor();
    await chat
      .locator(".entry.agent", { hasText: "I've successfully updated the configuration." })
      .waitFor();
    await chat.locator('.turn-state[data-state="ended"]').waitFor();

    await vscode.screenshot("chat-sdk-example.png");
  });
});

// The options a permission card offers, in the order shown.
async function permissionOptions(card) {
  return card.locator("button.permission-option").evaluateAll((buttons) =>
    buttons.map((button) => ({
      id: button.dataset.optionId,
      kind: button.dataset.kind,
      label: button.textContent.trim(),
    })),
  );
}
