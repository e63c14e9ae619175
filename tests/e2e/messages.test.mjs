// End to end: an agent's answer with a code block, in a real VS Code. The block is coloured by
// the highlighter once the turn has ended (coloured spans in the theme VS Code shows, and again
// in another when the person switches themes), the table is a table, the
// thought says how long it took, "Open in new file" opens an untitled editor holding the code in
// its language, "Insert at cursor" writes it into that editor, and Copy puts it on the clipboard
// through the host (read back from the workbench's own clipboard).
//
// Every wait is for something to appear; none measures time.

import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";

import { repoRoot, STEP_TIMEOUT_MS, testAgent, withVSCode } from "./harness.mjs";

const TEST_TIMEOUT_MS = 10 * 60_000;

const scenario = path.join(repoRoot, "tests", "e2e", "scenarios", "messages.toml");

/** The code block of scenarios/messages.toml, as the block holds it (with its last line break). */
const CODE = 'fn main() {\n    let name = "Tether";\n    println!("Hello, {name}!");\n}\n';

const settings = {
  "tether.sidecarGraceSeconds": 5,
  "tether.agents": [{ name: "Messages", command: testAgent, args: ["--scenario", scenario] }],
  "tether.defaultAgent": "Messages",
  "workbench.colorTheme": "Default Dark Modern",
};

/** The text of the active editor as drawn (every line of these short texts is on screen). */
async function activeEditorText(page) {
  const lines = page.locator(".editor-group-container.active .monaco-editor .view-lines");
  const text = await lines.evaluate((element) =>
    [...element.querySelectorAll(".view-line")]
      .map((line) => ({ top: Number.parseFloat(line.style.top), text: line.textContent ?? "" }))
      .sort((a, b) => a.top - b.top)
      .map((line) => line.text)
      .join("\n"),
  );
  // The editor draws spaces as no-break spaces.
  return text.replaceAll("\u00a0", " ");
}

test("a code block: highlighted once the turn ends, opened, inserted and copied through the host", {
  timeout: TEST_TIMEOUT_MS,
}, async () => {
  await withVSCode({ name: "messages", settings }, async (vscode) => {
    const page = vscode.page;
    // The host writes the clipboard through the workbench page, which reads it back below.
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
    const { prompt, turnEnded, agentSays } = await vscode.startChat();
    await prompt("Show me a small program");
    await turnEnded();
    const answer = agentSays("Run it with");

    // Coloured once the turn ended, in the colours of the theme VS Code shows.
    const code = answer.locator('.code-block[data-language="rust"] pre > code');
    await answer
      .locator('.code-block[data-language="rust"] pre > code[data-highlight="dark-plus"]')
      .waitFor({ timeout: STEP_TIMEOUT_MS });
    const colours = await code.evaluate((element) => [
      ...new Set([...element.querySelectorAll("span")].map((span) => span.style.color).filter((colour) => colour !== "")),
    ]);
    assert.ok(colours.length >= 3, `the code has several colours: ${colours.join(", ")}`);
    assert.equal(await code.textContent(), CODE, "colouring keeps the code as it was");
    assert.match(await answer.locator("details.thought > summary").innerText(), /^Thought for /);
    await vscode.screenshot("messages-highlighted.png");

    // The table of the answer is a table.
    assert.deepEqual(await answer.locator("table th").allInnerTexts(), ["Step", "Command"]);

    // Another theme: the block is coloured again in its colours, without a new turn.
    for (const [theme, colours] of [
      ["Light Modern", "light-plus"],
      ["Dark High Contrast", "github-dark-high-contrast"],
      ["Dark Modern", "dark-plus"],
    ]) {
      await vscode.chooseColorTheme(theme);
      await answer.locator(`pre > code[data-highlight="${colours}"]`).waitFor({ timeout: STEP_TIMEOUT_MS });
      await vscode.screenshot(`messages-${colours}.png`);
    }

    // The toolbar shows when the pointer is over the block.
    const block = answer.locator(".code-block");
    const action = (name) => block.locator(`.code-actions button[data-action="${name}"]`);

    await block.hover();
    await action("new-file").click();
    // An untitled editor's tab is named after its first line, with "Untitled-1" beside it.
    await page.locator(".tabs-container .tab.active", { hasText: "Untitled-1" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.locator("#status\\.editor\\.mode", { hasText: "Rust" }).waitFor();
    assert.equal(await activeEditorText(page), CODE);

    // The untitled editor was the last one used: the code goes in at its cursor (the start).
    await block.hover();
    await action("insert").click();
    await page
      .locator(".editor-group-container.active .monaco-editor .view-line", { hasText: "fn main() {" })
      .nth(1)
      .waitFor({ timeout: STEP_TIMEOUT_MS });
    assert.equal(await activeEditorText(page), CODE + CODE);

    await block.hover();
    await action("copy").click();
    // The host writes it after the click: wait until the workbench's clipboard holds the code.
    await page.waitForFunction(
      (expected) => navigator.clipboard.readText().then((text) => text === expected, () => false),
      CODE,
      { timeout: STEP_TIMEOUT_MS, polling: 100 },
    );
    await vscode.screenshot("messages-inserted.png");
  });
});
