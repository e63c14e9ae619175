// End to end: `tether.defaultAgent` naming a built-in agent that is not installed. The session
// cannot start (the status and a card say the agent is not installed, with no error toast) and
// Tether offers to install the agent, as it does when the agent is picked in the header, and
// again from the header's "Install Codex…"; the agent picker and Select Agent say it is not
// installed. The
// offer is not taken here (installing needs the npm registry): the agent is then put where
// Install puts it, as a terminal could, and choosing it again runs it.
//
// Every wait is for something to appear; none measures time.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";

import { ACTIVATION_TIMEOUT_MS, exactText, findTetherLog, pickerChoices, waitForFile, withVSCode } from "./harness.mjs";

const TEST_TIMEOUT_MS = 10 * 60_000;

test("a default agent that is not installed is offered for install at start", { timeout: TEST_TIMEOUT_MS }, async () => {
  // Codex is found in the extension's storage or on PATH; this launch has neither.
  const settings = { "tether.sidecarGraceSeconds": 5, "tether.defaultAgent": "Codex" };
  await withVSCode({ name: "agent-install", settings }, async (vscode) => {
    await vscode.openTetherView();
    const chat = vscode.chatFrame();
    await chat.locator(".session-agent", { hasText: "Codex" }).waitFor({ timeout: ACTIVATION_TIMEOUT_MS });
    await chat.locator('.session-status[data-status="failed"]').waitFor({ timeout: ACTIVATION_TIMEOUT_MS });

    const offer = vscode.page.locator(".notification-toast", { hasText: "Codex is not installed." });
    await offer.waitFor({ timeout: ACTIVATION_TIMEOUT_MS });
    assert.match(await offer.innerText(), /@zed-industries\/codex-acp/);
    await offer.locator("a.monaco-button", { hasText: "Install Codex" }).waitFor();

    // The chat says the agent is not installed, and offers the install where it offered Restart
    // (which would only fail again). No error toast repeats it beside the offer: before, a red
    // "Could not start the agent" toast, an error card and Restart told of a missing program.
    const install = chat.locator("button.session-install");
    await install.waitFor();
    assert.equal(await install.innerText(), "Install Codex…");
    assert.equal(await chat.locator("button.session-restart").isHidden(), true, "no Restart");
    assert.equal(await chat.locator(".session-status").innerText(), "Codex is not installed");
    assert.match(
      await chat.locator(".entry.notice").innerText(),
      /Codex is not installed on this machine\. Choose Install Codex… above/,
    );
    assert.equal(
      await vscode.page.locator(".notification-toast", { hasText: "Could not start the agent" }).count(),
      0,
      "no error toast",
    );
    await vscode.screenshot("agent-install.png");

    // Dismissed, the offer comes back from the header's button.
    await offer.locator(".codicon-notifications-clear").click();
    await offer.waitFor({ state: "detached" });
    await install.click();
    await offer.locator("a.monaco-button", { hasText: "Install Codex" }).waitFor();
    await offer.locator(".codicon-notifications-clear").click();
    await offer.waitFor({ state: "detached" });

    // The agent picker says so too, before anyone chooses it again.
    const picker = chat.locator(".session-picker");
    const codex = (await pickerChoices(picker)).find((choice) => choice.value === "Codex");
    assert.deepEqual(
      { state: codex.state, description: codex.description },
      { state: "notInstalled", description: "Not installed: choosing it offers to install it" },
    );
    await picker.locator("button.picker-button").click();
    await picker.locator('[role="option"][data-state="notInstalled"]', { hasText: "Codex" }).waitFor();
    await vscode.screenshot("agent-picker.png");
    await picker.locator('[role="option"][aria-selected="true"]').press("Escape");

    // And so does "Tether: Select Agent" in the Command Palette, each agent with its line.
    await vscode.runCommand("Tether: Select Agent");
    const widget = await vscode.quickInput("Tether: Select Agent");
    const codexRow = widget
      .locator(".quick-input-list .monaco-list-row")
      .filter({ has: vscode.page.locator(".label-name", { hasText: exactText("Codex") }) });
    assert.deepEqual(await codexRow.locator(".label-name").allTextContents(), [
      "Codex",
      "Not installed: choosing it offers to install it",
    ]);
    await vscode.dismissQuickInput();

    // Codex installed meanwhile, as from a terminal (a stand-in that exits at once, where Install
    // puts Codex's binary): choosing it again finds it, and the engine runs the new command.
    const installed = path.join(
      vscode.userDataDir,
      "User",
      "globalStorage",
      "tether.tether",
      "agents",
      "node_modules",
      "@zed-industries",
      `codex-acp-${process.platform}-${process.arch}`,
      "bin",
      "codex-acp",
    );
    fs.mkdirSync(path.dirname(installed), { recursive: true });
    fs.writeFileSync(installed, "#!/bin/sh\nexit 3\n", { mode: 0o755 });
    await vscode.runCommand("Tether: Select Agent");
    await vscode.chooseQuickPickItem("Tether: Select Agent", "Codex");
    await waitForFile(findTetherLog(vscode.userDataDir), (text) => text.includes(`starting agent "Codex": ${installed}`));
    await picker.locator('[role="option"][data-value="Codex"]:not([data-state="notInstalled"])').waitFor({ state: "attached" });
  });
});
