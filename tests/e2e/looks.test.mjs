// End to end: how the chat looks in a real VS Code, in a light, a dark and a high-contrast
// theme. One turn of a scripted agent (scenarios/looks.toml) brings every kind of card; at each
// stage the window is photographed in the three themes (tests/artifacts/looks-<stage>-<theme>.png,
// for a person to review), and what would be wrong in a way a person notices is asserted: the
// chat not following the theme, the header taking more than one row, icons missing (the codicon
// font not loaded), a part of the chat wider than the view, a picker drawn by the browser.
//
// Every wait is for something to appear in the chat; none measures time.

import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";

import { ACTIVATION_TIMEOUT_MS, repoRoot, testAgent, withVSCode } from "./harness.mjs";

const TEST_TIMEOUT_MS = 15 * 60_000;

const scenario = path.join(repoRoot, "tests", "e2e", "scenarios", "looks.toml");

/** The themes photographed, with the class VS Code gives the webview's body in each. */
const THEMES = [
  { name: "light", label: "Light Modern", bodyClass: "vscode-light" },
  { name: "dark", label: "Dark Modern", bodyClass: "vscode-dark" },
  { name: "high-contrast", label: "Dark High Contrast", bodyClass: "vscode-high-contrast" },
];

const settings = {
  "tether.sidecarGraceSeconds": 5,
  "tether.agents": [{ name: "Looks", command: testAgent, args: ["--scenario", scenario] }],
  "tether.defaultAgent": "Looks",
  "workbench.colorTheme": "Default Light Modern",
};

const workspaceFiles = {
  "README.md": "# Demo project\n\nA small workspace for trying Tether.\n",
  "src/.keep": "",
};

test("the chat in light, dark and high-contrast themes: empty, streamed, permission, change, terminal, history", {
  timeout: TEST_TIMEOUT_MS,
}, async () => {
  await withVSCode({ name: "looks", settings, workspaceFiles }, async (vscode) => {
    await vscode.openTetherView();
    const chat = vscode.chatFrame();
    await chat.locator('.session-status[data-status="ready"]').waitFor({ timeout: ACTIVATION_TIMEOUT_MS });
    await chat.locator(".session-agent", { hasText: "Looks" }).waitFor();

    // In every theme: each stage photographed, and the chat checked as a person would see it.
    // `show` brings back what the theme picker closed (the history's list).
    const inEveryTheme = async (stage, show = async () => {}) => {
      for (const theme of THEMES) {
        await vscode.chooseColorTheme(theme.label);
        await chat.locator(`body.${theme.bodyClass}`).waitFor();
        await show();
        await assertLooksNative(chat, theme, stage);
        await vscode.screenshot(`looks-${stage}-${theme.name}.png`);
      }
    };

    await chat.locator("section.empty-state .empty-example").first().waitFor();
    await inEveryTheme("empty");

    // The keyboard shortcut puts the caret in the chat from anywhere.
    await vscode.openFile("README.md");
    await vscode.page.keyboard.press("Control+Alt+J");
    await chat.locator("textarea.composer-input:focus").waitFor();

    await vscode.sendPrompt("Show me every card");
    await chat.locator(".entry.agent pre", { hasText: "export function greet" }).waitFor();
    await chat.locator(".entry.agent table").waitFor();
    // The write waits for the person's review: the turn stops there until it is decided.
    const change = chat.locator(".file-change", { hasText: "greet.ts" }).first();
    await change.locator("button.change-keep-all").waitFor();
    await change.scrollIntoViewIfNeeded();
    await inEveryTheme("change");

    // The narrowest side bar VS Code allows: the changes bar's summary and Review all do not
    // run into each other (beside the button, the summary's longest word once ran under it).
    const width = (await vscode.page.locator(".part.sidebar").boundingBox()).width;
    const narrow = await vscode.resizeSideBar(170);
    assert.ok(narrow < 200, `the side bar could be made narrow (${narrow}px)`);
    const head = await chat.locator(".changes-head").evaluate((row) => {
      const text = row.querySelector(".changes-summary-text").getBoundingClientRect();
      const button = row.querySelector(".changes-open-all").getBoundingClientRect();
      const apart = text.right <= button.left || text.bottom <= button.top;
      return { apart, text: text.toJSON(), button: button.toJSON(), summary: row.textContent };
    });
    assert.ok(head.apart,
      `the changes summary (${head.summary}) at ${JSON.stringify(head.text)} is clear of Review all at ${JSON.stringify(head.button)}`);
    // The file's row still names the file (its state gives way first), and its buttons fit.
    const row = await chat.locator(".changes-row").first().evaluate((line) => ({
      name: line.querySelector(".changes-name").getBoundingClientRect().width,
      buttonsRight: Math.max(...[...line.querySelectorAll("button")].map((button) => button.getBoundingClientRect().right)),
      right: line.getBoundingClientRect().right,
    }));
    assert.ok(row.name >= 20, `the changed file's name is shown in the narrow side bar (${row.name}px wide)`);
    assert.ok(row.buttonsRight <= row.right + 0.5,
      `the changed file's buttons fit in its row (they end at ${row.buttonsRight}px, the row at ${row.right}px)`);
    await vscode.screenshot("looks-change-narrow.png");
    await vscode.resizeSideBar(width);
    await change.locator("button.change-keep-all").click();

    // Then the permission to run the checks.
    const run = chat.locator(".entry.tool-call", { hasText: "Run the checks" });
    await run.locator('.permission-card[data-state="waiting"]').waitFor();
    await inEveryTheme("permission");

    await run.locator('button.permission-option[data-option-id="allow-once"]').click();
    await chat.locator(".entry.agent", { hasText: "All done: the checks pass." }).waitFor();
    await chat.locator('.turn-state[data-state="ended"]').waitFor();
    await run.locator(".terminal-card", { hasText: "tests: 3 passed" }).waitFor();
    await run.scrollIntoViewIfNeeded();
    await inEveryTheme("terminal");

    // The code block of the answer, scrolled to, once the highlighter has had its turn.
    const code = chat.locator(".entry.agent pre", { hasText: "export function greet" });
    await code.scrollIntoViewIfNeeded();
    await inEveryTheme("answer");

    await inEveryTheme("history", async () => {
      await chat.locator("button.session-history").click();
      await vscode.quickPickLabels("Tether: History");
    });
    await vscode.dismissQuickInput();
  });
});

/**
 * Asserts what a person would see wrong: a chat that does not take the theme's colours, a header
 * of more than one row, icons that did not load, something wider than the view, a browser-drawn
 * `<select>`.
 */
async function assertLooksNative(chat, theme, stage) {
  const where = `${stage}, ${theme.name}`;
  const seen = await chat.locator("body").evaluate(async (body) => {
    const style = getComputedStyle(body);
    const box = document.querySelector(".composer-box");
    const row = document.querySelector("header.session .session-row");
    const header = document.querySelector("header.session");
    await document.fonts.ready;
    return {
      bodyBackground: style.backgroundColor,
      sideBarBackground: style.getPropertyValue("--vscode-sideBar-background").trim(),
      boxBackground: getComputedStyle(box).backgroundColor,
      inputBackground: style.getPropertyValue("--vscode-input-background").trim(),
      rowHeight: row.getBoundingClientRect().height,
      agentNameWidth: document.querySelector(".session-agent").getBoundingClientRect().width,
      headerHeight: header.getBoundingClientRect().height,
      trustShown: !document.querySelector(".session-trust-notice").hidden,
      codicons: document.fonts.check("16px codicon"),
      overflowing: document.documentElement.scrollWidth - document.documentElement.clientWidth,
      selects: document.querySelectorAll("select").length,
      // Diff lines that nothing marks as added or removed: neither a background nor a bar in a
      // colour (a High Contrast theme gives them no background).
      unmarkedDiffLines: [...document.querySelectorAll(".diff-added, .diff-removed")].filter((line) => {
        const lineStyle = getComputedStyle(line);
        const transparent = (colour) => colour === "" || colour === "transparent" || /^rgba\(.*, 0\)$/.test(colour);
        const shadowColour = lineStyle.boxShadow === "none" ? "" : lineStyle.boxShadow.replace(/\)\s.*$/, ")");
        return transparent(lineStyle.backgroundColor) && transparent(shadowColour);
      }).length,
      diffLines: document.querySelectorAll(".diff-added, .diff-removed").length,
    };
  });
  assert.equal(sameColour(seen.bodyBackground, seen.sideBarBackground), true,
    `${where}: the chat's background ${seen.bodyBackground} is the side bar's ${seen.sideBarBackground}`);
  assert.equal(sameColour(seen.boxBackground, seen.inputBackground), true,
    `${where}: the composer ${seen.boxBackground} is drawn like the theme's inputs ${seen.inputBackground}`);
  assert.ok(seen.rowHeight <= 30, `${where}: the header is one row (${seen.rowHeight}px)`);
  assert.ok(seen.agentNameWidth > 0, `${where}: the agent's name is shown`);
  assert.ok(seen.trustShown || seen.headerHeight <= seen.rowHeight + 12, `${where}: nothing under the header row`);
  assert.equal(seen.codicons, true, `${where}: the codicon font is loaded`);
  assert.ok(seen.overflowing <= 0, `${where}: nothing is wider than the view (${seen.overflowing}px over)`);
  assert.equal(seen.selects, 0, `${where}: no browser-drawn <select>`);
  if (stage === "change") assert.ok(seen.diffLines > 0, `${where}: the change's diff is drawn`);
  assert.equal(seen.unmarkedDiffLines, 0, `${where}: every added and removed line is marked as such`);
}

/** Whether a computed `rgb(…)`/`rgba(…)` colour and a theme variable's `#rrggbb[aa]` are one colour. */
function sameColour(computed, variable) {
  const channels = computed.match(/[\d.]+/g).map(Number);
  const hex = variable.replace("#", "");
  const expanded = hex.length <= 4 ? [...hex].map((digit) => digit + digit).join("") : hex;
  const wanted = [0, 2, 4].map((at) => parseInt(expanded.slice(at, at + 2), 16));
  return wanted.every((value, index) => Math.abs(value - channels[index]) <= 1);
}
