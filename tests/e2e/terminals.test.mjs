// End to end: the agent's commands in a real VS Code. The scripted test agent runs its
// "terminals" scenario (crates/tether-test-agent/scenarios/terminals.toml): it runs commands
// through the client's terminal/* methods, which tetherd runs in real PTYs, waits for each to
// exit, reads its output, and reports both as chat text, so the tests see what the agent saw.
//
// Each command must show up as a VS Code terminal (read from the terminal's DOM: the settings
// turn GPU rendering off) and as a card in the chat with the same output and the exit status;
// Stop on the card must kill a long command and the agent must get the signal; what the person
// types into the terminal must reach the command.
//
// One VS Code serves every step, in order, each as its own subtest; a step that fails skips the
// rest. Every wait is for something to appear; none measures time.

import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";

import { orderedSteps, testAgent, withVSCode } from "./harness.mjs";

const TEST_TIMEOUT_MS = 10 * 60_000;

// The scenario runs its commands without asking first, as an agent whose own settings approved
// them would; the person's Bypass mode approves them here, so this test is about terminals (the
// card Tether shows for an unasked command in Ask mode is no-skipped-asks.test.mjs's).
const settings = {
  // Step (d) reloads the window: the new one must find tetherd, and the command, still running;
  // its extension host takes several seconds to start again on busy cores.
  "tether.sidecarGraceSeconds": 60,
  "tether.agents": [{ name: "Terminals", command: testAgent, args: ["--scenario", "terminals"] }],
  "tether.defaultAgent": "Terminals",
  "tether.permissions.defaultMode": "bypass",
};

test("terminals: commands show in VS Code terminals and in the chat, can be stopped and typed into", {
  timeout: TEST_TIMEOUT_MS,
}, async (t) => {
  await withVSCode({ name: "terminals", settings }, async (vscode) => {
    const page = vscode.page;
    const { chat, prompt, turnEnded, agentSays } = await vscode.startChat();
    // The newest terminal card, and the VS Code terminal (its rows in the DOM) showing `text`.
    const card = () => chat.locator(".terminal-card").last();
    const terminalShowing = (text) => page.locator(".xterm-rows", { hasText: text }).last();
    // The terminal tabs (or the single terminal's title) name the command.
    const terminalNamed = (name) =>
      page.locator(".terminal-tabs-entry, .single-terminal-tab, .panel .composite-title", { hasText: name }).first();

    const step = orderedSteps(t, vscode);

    await step("(a) a command's output shows in a VS Code terminal and on its card, with the exit code", async () => {
      await prompt("Run the checks");
      await turnEnded();
      // The agent got the exit code and the output from tetherd.
      const report = agentSays("exited with code 3");
      await report.waitFor();
      const said = await report.innerText();
      for (const line of ["check one: ok", "check two: FAILED", "check three: ok"]) {
        assert.ok(said.includes(line), `the agent read "${line}" from terminal/output:\n${said}`);
      }

      // The VS Code terminal: named after the command, showing its output, then how it ended.
      await terminalNamed("Agent: printf").waitFor();
      const rows = terminalShowing("check three: ok");
      await rows.waitFor();
      await terminalShowing("[exited with code 3]").waitFor();
      const terminalText = await rows.innerText();
      const checks = ["check one: ok", "check two: FAILED", "check three: ok"];
      const positions = checks.map((line) => terminalText.indexOf(line));
      assert.ok(positions.every((at) => at >= 0), `every line is in the terminal:\n${terminalText}`);
      assert.deepEqual([...positions].sort((a, b) => a - b), positions, "in the order they were printed");

      // The card: the command line once (the title "Run printf …" says it, so the terminal's
      // line does not again), the same tail with the failing line in red, the exit code.
      const terminal = card();
      await terminal.locator('.terminal-status[data-outcome]', { hasText: "Failed (exit code 3)" }).waitFor();
      assert.equal(await terminal.getAttribute("data-state"), "exited");
      const toolCall = chat.locator(".entry.tool-call", { has: terminal });
      assert.match(await toolCall.locator(".tool-title").innerText(), /printf 'check one: ok/);
      assert.equal(await terminal.locator(".terminal-command").isVisible(), false, "not said twice");
      const output = await terminal.locator(".terminal-output").innerText();
      assert.deepEqual(
        output.split("\n").filter((line) => line.trim() !== ""),
        checks,
        "the card shows the command's output, escapes interpreted",
      );
      const red = terminal.locator(".terminal-line > span", { hasText: "check two: FAILED" });
      assert.match((await red.getAttribute("class")) ?? "", /term-fg-red/, "the red line keeps its colour");
      assert.equal(await terminal.locator(".terminal-stop").isVisible(), false, "no Stop once it ended");
      await vscode.screenshot("terminals-run.png");
    });

    await step("(b) Stop on the card kills a long-running command, and the agent gets the signal", async () => {
      await prompt("Start the long job");
      await terminalShowing("long job started").waitFor();
      const terminal = card();
      await terminal.locator(".terminal-output", { hasText: "long job started" }).waitFor();
      assert.equal(await terminal.getAttribute("data-state"), "running");
      await terminal.locator(".terminal-stop").click();

      await agentSays("was killed by signal SIGTERM").waitFor();
      await turnEnded();
      await terminal.locator(".terminal-status", { hasText: /Stopped|Killed/ }).waitFor();
      assert.equal(await terminal.getAttribute("data-state"), "exited");
      await terminalShowing("[stopped (SIGTERM)]").waitFor();
      const terminalText = await terminalShowing("long job started").innerText();
      assert.ok(!terminalText.includes("long job finished"), "the command did not run on");
    });

    await step("(c) what the person types into the VS Code terminal reaches the command", async () => {
      await prompt("Ask my name");
      const rows = terminalShowing("What is your name?");
      await rows.waitFor();
      // xterm.js reads keys from a hidden textarea; a widget layer covers the rows for clicks.
      await page.locator(".xterm", { has: rows }).locator("textarea.xterm-helper-textarea").focus();
      await page.keyboard.type("Ada");
      await page.keyboard.press("Enter");
      await agentSays("Hello, Ada.").waitFor();
      await turnEnded();
      await terminalShowing("Hello, Ada.").waitFor();
      await card().locator(".terminal-status", { hasText: "Finished" }).waitFor();
    });

    await step("(d) a command running across a window reload keeps its time, and its terminal comes back", async () => {
      await prompt("Start the long job once more");
      const running = card().locator(".terminal-output", { hasText: "long job started" });
      await running.waitFor();
      // Five seconds on its clock: a clock started again by the reload would show at most the
      // reload's own time after it, well short of this plus the reload.
      const elapsed = card().locator(".terminal-elapsed");
      await card().locator(".terminal-elapsed", { hasText: /^([5-9]\.\d|\d\d) s$/ }).waitFor();
      const before = parseElapsed(await elapsed.innerText());
      const reloadStarted = Date.now();
      await vscode.reloadWindow();
      await vscode.openTetherView();
      // The VS Code terminal went with the old window; the new one opens it again by itself,
      // with what the command printed before the reload.
      await terminalNamed("Agent: echo").waitFor();
      await terminalShowing("long job started").waitFor();
      // By then the engine has drawn the card again. The webview first shows the screen it kept
      // from before the reload, inert, with the card's time as it was then.
      await chat.locator("[inert]").first().waitFor({ state: "detached" });
      await running.waitFor();
      const after = parseElapsed(await elapsed.innerText());
      const reloadTook = (Date.now() - reloadStarted) / 1000;
      // A clock started again by the reloaded window would show at most the time since the
      // reload began; one that went on shows that plus the five seconds before it, less what the
      // reading lags (whole seconds past ten, redrawn once a second, and later still on a busy
      // machine: 2.7 s once in CI). Telling the two apart needs no closer bound than this.
      assert.ok(
        after > reloadTook,
        `the card's clock went on from its start: ${before} s before the reload, ${after} s after it, ` +
          `which took ${reloadTook.toFixed(1)} s`,
      );
      await vscode.screenshot("terminals-reloaded.png");

      await card().locator(".terminal-stop").click();
      await card().locator(".terminal-status", { hasText: /Stopped|Killed/ }).waitFor();
      await turnEnded();
    });
  });
});

/** Seconds from a card's elapsed time ("4.2 s", "37 s", "2 min 5 s", "1 h 3 min"). */
function parseElapsed(text) {
  let seconds = 0;
  for (const [, amount, unit] of text.matchAll(/([\d.]+)\s*(h|min|s)\b/g)) {
    seconds += Number(amount) * { h: 3600, min: 60, s: 1 }[unit];
  }
  return seconds;
}
