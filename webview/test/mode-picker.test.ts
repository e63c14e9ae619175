// The permission mode pickers in the composer's footer: Tether's mode (which must never echo the
// host's mode back) and the agent's own mode, as the person meets them with the mouse and the
// keyboard.

import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import { patch, permissions, session, snapshot } from "./fixtures";
import { type Harness, harness } from "./support";

describe("mode picker", () => {
  let ui: Harness;
  beforeEach(() => {
    ui = harness();
  });

  const picker = (name: string) => ui.query(`footer.composer .${name}`);
  const options = (name: string) => [...picker(name).querySelectorAll<HTMLElement>('[role="option"]')];
  const controls = () => ui.query("footer.composer .session-controls");

  it("offers the four modes, each explained", () => {
    ui.frame(snapshot([]));
    assert.deepEqual(
      options("mode-select").map((option) => [option.dataset["value"], option.querySelector(".picker-item-label")!.textContent, option.title !== ""]),
      [
        ["ask", "Ask", true],
        ["acceptEdits", "Accept edits", true],
        ["plan", "Plan", true],
        ["bypass", "Bypass", true],
      ],
    );
    assert.equal(picker("mode-select").dataset["value"], "ask");
    assert.equal(picker("mode-select").querySelector("button")!.getAttribute("aria-label"), "Permission mode: Ask");
    assert.equal(controls().dataset["mode"], "ask");
    assert.equal(ui.query(".mode-warning").hidden, true);
    assert.equal(ui.query(".agent-mode").hidden, true);
  });

  it("follows the host's mode without ever posting it back", () => {
    ui.frame(snapshot([]));
    const shown: string[] = [];
    for (const mode of ["plan", "bypass", "acceptEdits", "ask", "bypass"] as const) {
      ui.frame(patch([], session({ permissions: permissions({ mode, agentMode: mode === "plan" ? "Plan" : null }) })));
      shown.push(
        `${picker("mode-select").dataset["value"]}/${controls().dataset["mode"]}/${ui.query(".mode-warning").hidden ? "-" : "warning"}`,
      );
    }
    ui.frame(snapshot([], { session: session({ permissions: permissions({ mode: "plan" }) }) }));
    shown.push(`${picker("mode-select").dataset["value"]}/${controls().dataset["mode"]}`);
    assert.deepEqual(shown, [
      "plan/plan/-",
      "bypass/bypass/warning",
      "acceptEdits/acceptEdits/-",
      "ask/ask/-",
      "bypass/bypass/warning",
      "plan/plan",
    ]);
    assert.deepEqual(ui.posted, [], "drawing the host's state sends nothing");
  });

  it("says the agent's own mode and warns in Bypass", () => {
    const bypass = permissions({ mode: "bypass", agentMode: "Bypass Permissions" });
    ui.frame(snapshot([], { session: session({ permissions: bypass }) }));
    assert.equal(ui.query(".agent-mode").textContent, "Agent mode: Bypass Permissions");
    assert.equal(ui.query(".mode-warning").textContent, "Bypass: every request is approved");
    assert.equal(ui.query(".mode-warning").hidden, false);
  });

  it("lists the agent's own modes and sends the person's pick as setAgentMode", () => {
    const claude = permissions({
      agentMode: "Default",
      agentModes: [
        { id: "default", name: "Default" },
        { id: "acceptEdits", name: "Accept Edits" },
        { id: "plan", name: "Plan Mode" },
        { id: "dontAsk", name: "Don't Ask" },
      ],
      agentModeId: "default",
    });
    ui.frame(snapshot([], { session: session({ permissions: claude }) }));
    assert.deepEqual(
      options("agent-mode-select").map((option) => option.textContent),
      ["Default", "Accept Edits", "Plan Mode", "Don't Ask"],
    );
    assert.equal(picker("agent-mode-select").dataset["value"], "default");
    assert.equal(ui.query(".agent-mode").hidden, true, "the picker says it; the label does not repeat it");
    options("agent-mode-select")[3]!.click();
    assert.deepEqual(ui.posted, [{ type: "setAgentMode", id: "dontAsk" }]);
    // The host's next header has the last word.
    ui.frame(patch([], session({ permissions: { ...claude, agentModeId: "plan" } })));
    assert.equal(picker("agent-mode-select").dataset["value"], "plan");
  });

  it("sends the person's choice as setMode, and picking the shown mode sends nothing", () => {
    ui.frame(snapshot([]));
    const button = picker("mode-select").querySelector<HTMLButtonElement>("button.picker-button")!;
    button.click();
    options("mode-select")[0]!.click();
    assert.deepEqual(ui.posted, [], "Ask was already the mode");
    button.click();
    options("mode-select")[2]!.click();
    assert.deepEqual(ui.posted, [{ type: "setMode", mode: "plan" }]);
  });

  it("moves to a mode by its first letter from the keyboard", () => {
    ui.frame(snapshot([]));
    picker("mode-select").querySelector<HTMLButtonElement>("button.picker-button")!.focus();
    ui.press("Enter");
    // Enter on a button is a click in a browser; jsdom does not turn keys into clicks.
    picker("mode-select").querySelector<HTMLButtonElement>("button.picker-button")!.click();
    ui.press("b");
    assert.equal((ui.window.document.activeElement as HTMLElement).dataset["value"], "bypass");
    ui.press("Enter");
    assert.deepEqual(ui.posted, [{ type: "setMode", mode: "bypass" }]);
  });
});
