// End to end: a multi-root workspace. VS Code opens a `.code-workspace` of two folders, the
// workspace folder (where the agent runs) and `lib` beside it, and trusts them together, so both
// are inside. In Accept Edits mode the scripted test agent reads a file of `lib` (no card asks),
// writes one through the client (applied at once, named `lib/src/a.ts`), and writes another to
// disk by itself, as recent Claude and Codex adapters do: that one is found by `lib`'s own
// snapshot when the turn ends, shown for review and reverted. Before, only the first folder was
// inside: the read asked, the write waited for a review, and the agent's own edit was never shown.
//
// Then a third folder, `docs`, is added to the `.code-workspace` while the window is open (VS
// Code applies the file's change without restarting the extensions), and the next turn reads and
// edits a file there: it is inside at once, and its own snapshot finds the edit. Before, a folder
// added while the window was open counted only after a reload: the read asked.

import assert from "node:assert/strict";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { test } from "node:test";

import { demoWorkspaceFiles, findTetherLog, testAgent, waitForFile, withVSCode } from "./harness.mjs";

const TEST_TIMEOUT_MS = 5 * 60_000;

const readme = "# Lib\n\nShared code.\n";
const aBefore = "export const a = 1;\n";
const aAfter = "export const a = 2;\n";
const bBefore = "export const b = 1;\n";
const bAfter = "export const b = 2;\n";
const guideBefore = "# Guide\n\nRead lib first.\n";
const guideAfter = "# Guide\n\nRead lib first, then docs.\n";

/** The agent's turns, their paths absolute in `lib` and `docs` (folders beside the workspace folder). */
const scenario = (lib, docs) => `
description = "Reads and writes in the second folder of a multi-root workspace, then in a third."

[[prompt]]
match = "docs"
steps = [
  { read_file = { path = ${JSON.stringify(path.join(docs, "guide.md"))} } },
  { write_disk = { path = ${JSON.stringify(path.join(docs, "guide.md"))}, content = ${JSON.stringify(guideAfter)} } },
  { say = "Done in docs." },
]

[[prompt]]
steps = [
  { read_file = { path = ${JSON.stringify(path.join(lib, "README.md"))} } },
  { write_file = { path = ${JSON.stringify(path.join(lib, "src", "a.ts"))}, content = ${JSON.stringify(aAfter)} } },
  { write_disk = { path = ${JSON.stringify(path.join(lib, "src", "b.ts"))}, content = ${JSON.stringify(bAfter)} } },
  { say = "Done in lib." },
]
`;

test("every folder of a multi-root workspace is inside, one added while the window is open too: reads and writes go as in the first, and the agent's own edits are found", {
  timeout: TEST_TIMEOUT_MS,
}, async () => {
  await withVSCode(
    {
      name: "multi-root",
      settings: (root) => ({
        "tether.sidecarGraceSeconds": 5,
        "tether.permissions.defaultMode": "acceptEdits",
        "tether.agents": [{ name: "Folders", command: testAgent, args: ["--scenario", path.join(root, "folders.toml")] }],
        "tether.defaultAgent": "Folders",
      }),
      workspaceFiles: (root) => {
        const beside = fs.realpathSync(root);
        fs.writeFileSync(path.join(root, "folders.toml"), scenario(path.join(beside, "lib"), path.join(beside, "docs")));
        return demoWorkspaceFiles;
      },
      otherFolders: { lib: { "README.md": readme, "src/a.ts": aBefore, "src/b.ts": bBefore } },
    },
    async (vscode) => {
      const lib = vscode.folders.lib;
      const { chat, prompt, turnEnded, agentSays } = await vscode.startChat();
      await prompt("Work in lib");

      // The read went without a card: the agent says what it read.
      await agentSays("Shared code.").waitFor();
      // The write through the client is applied at once, and its card names the file by folder.
      await waitForFile(path.join(lib, "src", "a.ts"), (text) => text === aAfter);
      await chat.locator(".file-change", { hasText: "lib/src/a.ts" }).waitFor();

      await agentSays("Done in lib.").waitFor();
      await turnEnded();
      assert.equal(
        await chat.locator(".permission-card").count(),
        0,
        "nothing in the second folder asked: it is inside, as the first folder is",
      );

      // The agent's own edit, found by the second folder's snapshot, is reviewed and reverted.
      const own = chat.locator('.file-change[data-origin="agent"][data-phase="applied"]', { hasText: "lib/src/b.ts" });
      await own.waitFor();
      await vscode.screenshot("multi-root.png");
      assert.equal(await fsp.readFile(path.join(lib, "src", "b.ts"), "utf8"), bAfter);
      await own.locator("button.change-reject-all").click();
      await waitForFile(path.join(lib, "src", "b.ts"), (text) => text === bBefore);

      // Each folder's snapshots are kept in a store of its own, in the first folder's `.tether`.
      const stores = () => fs.readdirSync(path.join(vscode.workspace, ".tether")).filter((name) => name.startsWith("snapshot"));
      assert.equal(stores().length, 2, `one store per folder: ${stores().join(", ")}`);

      // The person adds a folder to the workspace while the window is open (here by editing the
      // workspace file, which VS Code watches; "Add Folder to Workspace..." writes the same).
      const docs = path.join(path.dirname(lib), "docs");
      await fsp.mkdir(docs, { recursive: true });
      await fsp.writeFile(path.join(docs, "guide.md"), guideBefore);
      const workspaceFile = JSON.parse(await fsp.readFile(vscode.workspaceFile, "utf8"));
      workspaceFile.folders.push({ path: docs });
      await fsp.writeFile(vscode.workspaceFile, JSON.stringify(workspaceFile, null, 2));
      // The engine says in Tether's log when it hears of the change: the prompt waits for that,
      // as VS Code applies the file's change a moment after it is written.
      await waitForFile(
        findTetherLog(vscode.userDataDir),
        (text) => text.includes("the workspace's folders are now") && text.includes(docs),
      );

      // The next turn reads there without asking, and its edit there is found by the new
      // folder's own snapshot.
      await prompt("Now the docs");
      await agentSays("Read lib first.").waitFor();
      await agentSays("Done in docs.").waitFor();
      await turnEnded();
      assert.equal(await chat.locator(".permission-card").count(), 0, "the added folder is inside: nothing asked");
      await chat.locator('.file-change[data-origin="agent"]', { hasText: "docs/guide.md" }).waitFor();
      assert.equal(stores().length, 3, `the added folder has a store of its own: ${stores().join(", ")}`);
    },
  );
});
