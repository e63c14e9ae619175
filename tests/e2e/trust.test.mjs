// End to end: a repository cannot make Tether run anything. The workspace is one a
// person cloned and does not trust: its `.vscode/settings.json` names a tetherd and an agent of
// its own (both a script that would leave a marker file if it ever ran), and it commits a
// `.tether/` folder with a session whose meta.json names that agent and the command to run it.
//
// 1. VS Code opens the folder in Restricted Mode; the Tether view starts nothing (checked in
//    /proc: no tetherd, no agent, no script of the repository's among code-server's processes,
//    and no marker file) and says why, with "Manage Workspace Trust".
// 2. That button opens VS Code's trust editor; trusting the folder starts tetherd and the
//    person's default agent from their own settings (Demo), not the repository's: the marker is
//    still absent, and the chat says the earlier session's agent is not configured.
// 3. Opening that session from the history shows its transcript and asks for an agent; nothing
//    runs from its log, and choosing Demo goes on in a new session.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";

import { orderedSteps, withVSCode, pick, pickerChoices } from "./harness.mjs";

const TEST_TIMEOUT_MS = 5 * 60_000;

const SESSION_TITLE = "Run the repository's agent";
const UNTRUSTED = "This workspace is not trusted, so Tether starts nothing in it";

// What the repository ships, with the paths of this launch: its "agent" and its "tetherd" are
// one script that records that it ran.
function repositoryFiles(root) {
  const workspace = path.join(root, "workspace");
  const script = path.join(workspace, "tools", "run-me.sh");
  const marker = path.join(root, "repository-code-ran");
  const session = ".tether/sessions/20261123-100000-1";
  const created = "2026-11-23T10:00:00.000Z";
  const prompt = {
    jsonrpc: "2.0",
    id: 2,
    method: "session/prompt",
    params: { sessionId: "s1", prompt: [{ type: "text", text: SESSION_TITLE }] },
  };
  return {
    "README.md": "# A repository someone else wrote\n",
    "tools/run-me.sh": `#!/bin/sh\necho "$0 $*" >> '${marker}'\nexec sleep 600\n`,
    ".vscode/settings.json": JSON.stringify({
      "tether.tetherdPath": script,
      "tether.agents": [{ name: "Repo agent", command: script, args: ["--acp"] }],
      "tether.defaultAgent": "Repo agent",
    }),
    [`${session}/meta.json`]: JSON.stringify({
      agent: "Repo agent",
      command: script,
      args: ["--acp"],
      cwd: workspace,
      created,
    }),
    [`${session}/events.jsonl`]:
      JSON.stringify({ seq: 1, time: created, event: "toAgent", message: prompt }) + "\n",
  };
}

test("an untrusted repository runs nothing, and trusting it starts the person's own agent", {
  timeout: TEST_TIMEOUT_MS,
}, async (t) => {
  await withVSCode(
    {
      name: "trust",
      untrustedWorkspace: true,
      workspaceFiles: repositoryFiles,
      // The person's own settings: the Demo agent is their default.
      settings: { "tether.sidecarGraceSeconds": 5, "tether.defaultAgent": "Demo" },
    },
    async (vscode) => {
      const marker = path.join(vscode.root, "repository-code-ran");
      const step = orderedSteps(t, vscode);
      const chat = vscode.chatFrame();
      // The launch's processes that are Tether's or the repository's.
      const started = () =>
        vscode
          .processes()
          .filter(({ exe, cmdline }) =>
            [exe, ...cmdline].some(
              (part) => part.includes("run-me.sh") || ["tetherd", "tether-test-agent"].includes(path.basename(part)),
            ),
          )
          .map(({ pid, cmdline }) => `${pid} ${cmdline.join(" ")}`);

      await step("1. in Restricted Mode the chat says why and nothing has started", async () => {
        await vscode.openTetherView();
        const notice = chat.locator(".session-trust-notice");
        await notice.waitFor();
        assert.match(await notice.innerText(), new RegExp(UNTRUSTED));
        await chat.locator('.session-status[data-status="untrusted"]').waitFor();
        assert.deepEqual(started(), [], "no tetherd, agent or script of the repository runs");
        assert.equal(fs.existsSync(marker), false, "the repository's script never ran");
        await vscode.screenshot("trust-untrusted.png");
      });

      await step("2. trusting the folder starts the person's Demo agent, not the repository's", async () => {
        await chat.locator("button.session-manage-trust").click();
        const editor = vscode.page.locator(".workspace-trust-editor");
        await editor.waitFor();
        await editor.getByRole("button", { name: /^Trust/ }).first().click();
        await editor.getByText("You trust this folder").waitFor();
        // The trust editor opens over the side bar; closed, the chat shows whole again.
        await vscode.runCommand("View: Close Editor");
        await editor.waitFor({ state: "hidden" });
        await chat.locator('.session-status[data-status="ready"]').waitFor();
        assert.equal((await chat.locator(".session-agent").innerText()).trim(), "Demo");
        await chat
          .locator(".entry.notice", {
            hasText: `The earlier session "${SESSION_TITLE}" used "Repo agent", which is not configured.`,
          })
          .waitFor();
        const options = await pickerChoices(chat.locator(".session-picker")).then((choices) => choices.map((choice) => choice.name));
        assert.ok(!options.includes("Repo agent"), `the repository's agent is not offered: ${options}`);
        const running = started();
        assert.ok(running.some((line) => line.includes("tether-test-agent")), `the Demo agent runs: ${running}`);
        assert.ok(!running.some((line) => line.includes("run-me.sh")), `nothing of the repository runs: ${running}`);
        assert.equal(fs.existsSync(marker), false, "the repository's script never ran");
        await vscode.screenshot("trust-trusted.png");
      });

      await step("3. the repository's session opens from the history read-only, and runs nothing", async () => {
        await vscode.runCommand("Tether: Show History");
        await vscode.chooseQuickPickItem("Tether: History", SESSION_TITLE);
        await chat.locator(".entry.user", { hasText: SESSION_TITLE }).waitFor();
        await chat
          .locator(".entry.notice", { hasText: 'This session used "Repo agent", which is not configured' })
          .waitFor();
        await chat.locator('.session-status[data-status="failed"]', { hasText: "choose an agent" }).waitFor();
        assert.equal(await chat.locator("button.session-restart").isHidden(), true, "no Restart for it");
        assert.ok(!started().some((line) => line.includes("run-me.sh")), "nothing of the repository runs");
        assert.equal(fs.existsSync(marker), false, "the repository's script never ran");
        await vscode.screenshot("trust-history.png");
        const picker = chat.locator(".session-picker");
        await pick(picker, "Demo");
        await chat.locator('.session-status[data-status="ready"]').waitFor();
        assert.equal((await chat.locator(".session-agent").innerText()).trim(), "Demo");
        assert.equal(fs.existsSync(marker), false, "the repository's script never ran");
      });
    },
  );
});
