// Opens the dev page in headless Chromium and checks the webview as a person would see it:
// the demo turn (screenshots before and after answering the permission request, the file
// changes it leaves for review before and after deciding some hunks, then the rules panel open
// filtered, the composer's MCP servers (one off this machine) and Bypass mode's warning,
// answered through the fake host), three sessions as tabs (one
// working, one waiting, a draft kept per tab), a restore to a checkpoint (its card, then Undo)
// and a stress
// stream (how long after the last chunk the reply is fully shown). Screenshots go to
// dist/dev/*.png. Needs `npm run build -- --dev` first (`npm run dev` does both).
//
// playwright-core is taken from this package or from tests/ (the end-to-end suite installs it);
// Chromium is Debian's /usr/bin/chromium (dev/chromium.mjs).

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { launchChromium, serveFolder } from "./chromium.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "dist", "dev");

const server = await serveFolder(root, "dev/index.html");
const { base } = server;
const chromium = await launchChromium();
const { browser } = chromium;
const failures = [];

async function openPage(query) {
  const page = await browser.newPage({ viewport: { width: 380, height: 820 } });
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") {
      failures.push(`console ${message.type()}: ${message.text()}`);
    }
  });
  page.on("pageerror", (error) => failures.push(`page error: ${error.message}`));
  await page.goto(`${base}/dev/index.html?${query}`);
  return page;
}

try {
  // The demo turn, driven through the UI.
  const demo = await openPage("scenario=demo");
  await demo.waitForSelector('.session-status[data-status="ready"]');
  await demo.screenshot({ path: join(out, "demo-empty.png") });
  await demo.fill("textarea.composer-input", "Show me what a turn looks like.");
  await demo.press("textarea.composer-input", "Enter");
  const allow = demo.locator('button.permission-option[data-option-id="allow-once"]');
  await allow.waitFor();
  await demo.screenshot({ path: join(out, "demo-permission.png") });
  console.log(`focused on the card: ${await demo.evaluate(() => document.activeElement?.textContent)}`);
  await demo.click("details.thought > summary");
  await allow.click();
  await demo.waitForSelector('.turn-state[data-state="ended"]');
  await demo.waitForFunction(() => document.body.textContent?.includes("That was a full turn."));
  await demo.screenshot({ path: join(out, "demo-done.png") });
  await demo.waitForSelector('.changes-row[data-change-id="2"]');
  await demo.locator('.file-change[data-change-id="2"]').screenshot({ path: join(out, "review-card.png") });
  await demo.click('.file-change[data-change-id="2"] .hunk[data-hunk-index="0"] button.hunk-reject');
  await demo.waitForSelector('.file-change[data-change-id="2"] .hunk[data-hunk-index="0"][data-state="rejected"]');
  await demo.click('.changes-row[data-change-id="1"] button.changes-keep-all');
  await demo.waitForSelector('.file-change[data-change-id="1"][data-phase="settled"]');
  await demo.screenshot({ path: join(out, "review-decided.png") });
  await demo.evaluate(() => {
    document.querySelector("main.thread").scrollTop = 0;
  });
  await demo.screenshot({ path: join(out, "demo-top.png") });
  await demo.click(".session-more button.menu-button");
  await demo.click("button.rules-toggle");
  await demo.waitForSelector("section.rules-panel .rule");
  await demo.fill('form.rule-add input[name="pattern"]', "cargo *");
  await demo.check('form.rule-add input[name="kind"][value="execute"]');
  await demo.click("form.rule-add button.rule-add-submit");
  await demo.waitForSelector('.rule .rule-description >> text=Allow execute matching “cargo *”');
  await demo.screenshot({ path: join(out, "rules-panel.png") });
  await demo.fill("section.rules-panel input.rules-filter", "cargo");
  await demo.locator("section.rules-panel").screenshot({ path: join(out, "rules-filter.png") });
  await demo.fill("section.rules-panel input.rules-filter", "");
  await demo.click("footer.composer button.mcp-button");
  await demo.screenshot({ path: join(out, "mcp-servers.png") });
  await demo.click("footer.composer button.mcp-button");
  await demo.click(".session-picker button.picker-button");
  await demo.screenshot({ path: join(out, "agent-picker.png") });
  await demo.keyboard.press("Escape");
  await demo.click(".mode-select button.picker-button");
  await demo.click('.mode-select [role="option"][data-value="bypass"]');
  await demo.waitForSelector('.session-controls[data-mode="bypass"] .mode-warning:visible');
  await demo.screenshot({ path: join(out, "mode-bypass.png") });
  await demo.setViewportSize({ width: 260, height: 820 });
  await demo.screenshot({ path: join(out, "demo-narrow.png") });
  console.log(`demo: turn state "${await demo.textContent(".turn-state")}", ` +
    `outcome "${await demo.textContent(".permission-outcome")}"`);
  console.log(`demo: intents ${JSON.stringify(await demo.evaluate(() => window.tetherDev.posted))}`);
  const demoViolations = await demo.evaluate(() => window.tetherDev.cspViolations);
  if (demoViolations.length > 0) failures.push(`CSP violations (demo): ${demoViolations.join(", ")}`);

  // Three sessions as tabs: the strip, a waiting tab in the background, a draft kept per tab.
  const tabs = await openPage("scenario=tabs");
  await tabs.waitForSelector('.session-tab[data-key="3"][data-activity="waiting"]');
  await tabs.fill("textarea.composer-input", "A draft for the notes");
  await tabs.screenshot({ path: join(out, "tabs.png") });
  await tabs.click('.session-tab[data-key="3"]');
  await tabs.waitForSelector('.session-tab[data-key="3"][aria-selected="true"]');
  await tabs.waitForSelector("button.permission-option");
  await tabs.screenshot({ path: join(out, "tabs-waiting.png") });
  const otherDraft = await tabs.inputValue("textarea.composer-input");
  await tabs.click('.session-tab[data-key="1"]');
  await tabs.waitForSelector('.session-tab[data-key="1"][aria-selected="true"]');
  const keptDraft = await tabs.inputValue("textarea.composer-input");
  if (otherDraft !== "" || keptDraft !== "A draft for the notes") {
    failures.push(`tabs: the draft did not stay with its tab ("${otherDraft}" in tab 3, "${keptDraft}" back in tab 1)`);
  }
  await tabs.setViewportSize({ width: 260, height: 820 });
  await tabs.screenshot({ path: join(out, "tabs-narrow.png") });
  await tabs.click('.session-tab[data-key="2"] button.session-tab-close');
  await tabs.waitForFunction(() => document.querySelectorAll(".session-tab").length === 2);
  console.log(`tabs: intents ${JSON.stringify(await tabs.evaluate(() => window.tetherDev.posted.filter((message) => message.type.endsWith("Session"))))}`);
  const tabsViolations = await tabs.evaluate(() => window.tetherDev.cspViolations);
  if (tabsViolations.length > 0) failures.push(`CSP violations (tabs): ${tabsViolations.join(", ")}`);
  await tabs.close();

  // A restore to the first prompt: the card with a file the person edited since, then Undo.
  const restore = await openPage("scenario=restore");
  await restore.waitForSelector('.entry.restore[data-state="planned"] button.restore-undo');
  await restore.locator(".entry.restore").scrollIntoViewIfNeeded();
  await restore.screenshot({ path: join(out, "restore.png") });
  await restore.locator(".entry.restore").screenshot({ path: join(out, "restore-card.png") });
  await restore.hover(".entry.user >> nth=0");
  await restore.locator(".entry.user >> nth=0").screenshot({ path: join(out, "restore-action.png") });
  await restore.click('.restore-file[data-change-id="11"] button.restore-file-link');
  const focusedCard = await restore.evaluate(() => document.activeElement?.closest(".file-change")?.dataset.changeId);
  if (focusedCard !== "11") failures.push(`restore: the file link focused change ${focusedCard}, not 11`);
  await restore.click(".entry.restore button.restore-undo");
  await restore.waitForSelector('.entry.restore[data-undoes="1"]');
  await restore.screenshot({ path: join(out, "restore-undone.png") });
  console.log(`restore: intents ${JSON.stringify(await restore.evaluate(() => window.tetherDev.posted.filter((message) => message.type !== "ready")))}`);
  const restoreViolations = await restore.evaluate(() => window.tetherDev.cspViolations);
  if (restoreViolations.length > 0) failures.push(`CSP violations (restore): ${restoreViolations.join(", ")}`);
  await restore.close();

  // The stress stream: how long after the last chunk was posted is the whole reply shown?
  const runs = [
    [1000, "blocks"],
    [5000, "blocks"],
    [20000, "blocks"],
    [5000, "paragraph"],
    [5000, "code"],
    [5000, "blocks", "scroll up while it streams"],
  ];
  for (const [chunks, shape, scrollUp] of runs) {
    const page = await openPage(`scenario=stress&chunks=${chunks}&shape=${shape}`);
    await page.waitForFunction(() => window.tetherDev.finalMarker !== null);
    if (scrollUp) {
      // The person scrolls up to read: the stream must not pull them back down.
      await page.waitForFunction(() => document.querySelector("main.thread").scrollTop > 200);
      await page.evaluate(() => {
        document.querySelector("main.thread").scrollTop = 100;
      });
    }
    const marker = await page.evaluate(() => window.tetherDev.finalMarker);
    await page.waitForFunction(
      (text) => document.querySelector(".entry.agent")?.textContent?.includes(text),
      marker,
      { timeout: 120_000, polling: "raf" },
    );
    const timing = await page.evaluate(() => ({
      shownAt: performance.now(),
      first: window.tetherDev.firstChunkAt,
      last: window.tetherDev.lastChunkAt,
      length: document.querySelector(".entry.agent")?.textContent?.length,
      longTasks: window.tetherDev.longTasks,
      scrollTop: document.querySelector("main.thread").scrollTop,
      atBottom: (() => {
        const thread = document.querySelector("main.thread");
        return thread.scrollTop + thread.clientHeight >= thread.scrollHeight - 24;
      })(),
    }));
    console.log(
      `stress ${chunks} chunks (${shape}${scrollUp ? `, ${scrollUp}` : ""}): posted in ${Math.round(timing.last - timing.first)} ms, ` +
        `fully shown ${Math.round(timing.shownAt - timing.last)} ms after the last chunk ` +
        `(${timing.length} characters, scrolled to the end: ${timing.atBottom}); ` +
        `tasks over 50 ms: ${JSON.stringify(timing.longTasks)}`,
    );
    if (scrollUp && Math.round(timing.scrollTop) !== 100) {
      failures.push(`the stream moved a reader who scrolled up (scrollTop ${timing.scrollTop})`);
    }
    if (chunks === 5000 && shape === "blocks" && !scrollUp) await page.screenshot({ path: join(out, "stress-5000.png") });
    const violations = await page.evaluate(() => window.tetherDev.cspViolations);
    if (violations.length > 0) failures.push(`CSP violations (stress): ${violations.join(", ")}`);
    await page.close();
  }
} finally {
  await chromium.close();
  server.close();
}

if (failures.length > 0) {
  console.error(failures.join("\n"));
  process.exit(1);
}
console.log(`screenshots in ${out}`);
