// End to end: what a person attaches to a prompt reaches the agent. In a real VS Code, with the
// Demo agent (which takes images and embedded files, as Claude's and Gemini's adapters do):
// "Tether: Mention Selection" adds the editor's selection to the composer, "@" lists the
// workspace's files and folders and picking one writes its mention, a pasted image shows as a
// thumbnail, and the prompt the agent receives (read back from the session's log) holds the
// selection's text, the mentioned file's text as the editor has it (unsaved edits included), a
// link to the mentioned folder and the image.
//
// Every wait is for something to appear; none measures time.

import assert from "node:assert/strict";
import { test } from "node:test";

import { ACTIVATION_TIMEOUT_MS, demoWorkspaceFiles, newestSessionLog, waitForFile, withVSCode } from "./harness.mjs";

const TEST_TIMEOUT_MS = 10 * 60_000;
const testSettings = { "tether.sidecarGraceSeconds": 5 };

// A one-pixel PNG.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

const workspaceFiles = {
  ...demoWorkspaceFiles,
  "src/greeting.ts": 'export function greet(name: string): string {\n  return `Hello, ${name}`;\n}\n',
};

test("a selection, an @-mentioned file and folder and a pasted image reach the agent with the prompt", {
  timeout: TEST_TIMEOUT_MS,
}, async () => {
  await withVSCode({ name: "mentions", settings: testSettings, workspaceFiles }, async (vscode) => {
    await vscode.openTetherView();
    const chat = vscode.chatFrame();
    await chat.locator('.session-status[data-status="ready"]').waitFor({ timeout: ACTIVATION_TIMEOUT_MS });
    const composer = chat.locator("textarea.composer-input");

    // An unsaved edit in notes.md: the mention must carry what the editor shows.
    await vscode.openFile("notes.md");
    await vscode.typeAtEndOfEditor("- An unsaved line.\n");

    // Select the first two lines of greeting.ts and mention them.
    await vscode.openFile("src/greeting.ts");
    await vscode.page.keyboard.press("Control+Home");
    await vscode.page.keyboard.press("Shift+ArrowDown");
    await vscode.page.keyboard.press("Shift+End");
    await vscode.runCommand("Tether: Mention Selection");
    await chat.locator("textarea.composer-input").waitFor();
    await waitForValue(composer, "@src/greeting.ts#L1-2 ");

    // "@" lists the workspace's files; typing narrows the list; Enter picks.
    await composer.press("End");
    await composer.pressSequentially("and @no");
    const firstItem = chat.locator(".composer-command").first();
    await chat.locator(".composer-command-name", { hasText: "@notes.md" }).waitFor();
    assert.equal((await firstItem.locator(".composer-command-name").innerText()).trim(), "@notes.md");
    await composer.press("Enter");
    await waitForValue(composer, "@src/greeting.ts#L1-2 and @notes.md ");

    // Folders are listed too: after the selection (always first when it matches), the folder
    // whose name starts with what was typed.
    await composer.pressSequentially("in @sr");
    await chat.locator(".composer-command-name", { hasText: /^@src\/greeting\.ts$/ }).waitFor();
    const names = await chat.locator(".composer-command-name").allInnerTexts();
    assert.deepEqual(names.slice(0, 2).map((name) => name.trim()), ["@src/greeting.ts#L1-2", "@src/"]);
    await composer.press("ArrowDown");
    await composer.press("Enter");
    await waitForValue(composer, "@src/greeting.ts#L1-2 and @notes.md in @src/ ");

    // Paste an image, as the clipboard would hand it over.
    await composer.evaluate((input, png) => {
      const bytes = Uint8Array.from(atob(png), (c) => c.charCodeAt(0));
      const transfer = new DataTransfer();
      transfer.items.add(new File([bytes], "pixel.png", { type: "image/png" }));
      input.dispatchEvent(new ClipboardEvent("paste", { clipboardData: transfer, bubbles: true, cancelable: true }));
    }, PNG);
    await chat.locator(".composer-image .composer-image-thumbnail").waitFor();

    await composer.pressSequentially("differ?");
    await composer.press("Enter");

    const sent = chat.locator(".entry.user", { hasText: "differ?" });
    await sent.waitFor();
    assert.deepEqual(await sent.locator(".user-attachment").allInnerTexts(), [
      "src/greeting.ts, lines 1-2",
      "notes.md",
      "src/",
      "Image (PNG, 1 KB)",
    ]);
    assert.equal(await chat.locator(".composer-image").count(), 0, "sent images leave the composer");

    // What the agent received.
    const log = await waitForFile(newestSessionLog(vscode.workspace), (text) => text.includes("differ?"));
    const prompt = JSON.parse(log.split("\n").find((line) => line.includes('"method":"session/prompt"')))
      .message.params.prompt;
    assert.deepEqual(
      prompt.map((block) => block.type),
      ["text", "resource", "resource", "resource_link", "image"],
      "the text, then each attachment in the order of the text",
    );
    assert.equal(prompt[0].text, "@src/greeting.ts#L1-2 and @notes.md in @src/ differ?");
    assert.equal(prompt[1].resource.text, "export function greet(name: string): string {\n  return `Hello, ${name}`;");
    assert.match(prompt[1].resource.uri, /^file:\/\/\/.*\/src\/greeting\.ts#L1:2$/);
    assert.equal(prompt[2].resource.text, `${demoWorkspaceFiles["notes.md"]}- An unsaved line.\n`);
    // A folder goes as a link for the agent to list, never embedded.
    assert.match(prompt[3].uri, /^file:\/\/\/.*\/src\/$/);
    assert.equal(prompt[3].mimeType, "inode/directory");
    assert.equal(prompt[4].mimeType, "image/png");
    assert.equal(prompt[4].data, PNG);

    await vscode.screenshot("mentions.png");
  });
});

/** Waits until the text area holds exactly `value` (checked once per animation frame). */
async function waitForValue(textarea, value) {
  await textarea.evaluate(
    (input, wanted) =>
      new Promise((resolve) => {
        const check = () => (input.value === wanted ? resolve() : requestAnimationFrame(check));
        check();
      }),
    value,
  );
}
