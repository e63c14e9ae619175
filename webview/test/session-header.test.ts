// The header's session actions: History, the Export menu and Restart, as the person
// reaches them with the mouse and the keyboard, and the intents they send.

import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import { patch, session, snapshot } from "./fixtures";
import { type Harness, harness } from "./support";

const exited = session({ status: { type: "exited", message: "Agent exited (code 1)" }, canRestart: true });

describe("session header actions", () => {
  let ui: Harness;
  beforeEach(() => {
    ui = harness();
  });

  const exportButton = () => ui.query<HTMLButtonElement>("header.session button.session-export-button");
  const exportMenu = () => ui.query("header.session .session-export-menu");
  const restartButton = () => ui.query<HTMLButtonElement>("header.session button.session-restart");
  const focused = () => ui.window.document.activeElement;

  it("asks the host for the session history", () => {
    ui.frame(snapshot([]));
    const history = ui.query<HTMLButtonElement>("header.session button.session-history");
    assert.equal(history.getAttribute("aria-label"), "Session history");
    assert.equal(history.title, "Session history");
    history.click();
    assert.deepEqual(ui.posted, [{ type: "showHistory" }]);
  });

  it("toggles following the agent, and shows what the host says", () => {
    ui.frame(snapshot([]));
    const follow = ui.query<HTMLButtonElement>("header.session button.session-follow");
    assert.equal(follow.getAttribute("aria-label"), "Follow the agent");
    assert.equal(follow.getAttribute("aria-pressed"), "false");
    follow.click();
    assert.deepEqual(ui.posted, [{ type: "setFollowAgent", on: true }]);
    assert.equal(follow.getAttribute("aria-pressed"), "true", "pressed at once");
    // The host's header has the last word: here it is on, then a command turned it off.
    ui.frame(patch([], session({ followAgent: true })));
    assert.equal(follow.getAttribute("aria-pressed"), "true");
    ui.frame(patch([], session({ followAgent: false })));
    assert.equal(follow.getAttribute("aria-pressed"), "false");
    follow.click();
    assert.deepEqual(ui.posted.at(-1), { type: "setFollowAgent", on: true });
  });

  for (const [label, format] of [
    ["Export as Markdown", "markdown"],
    ["Export log (JSONL)", "jsonl"],
  ] as const) {
    it(`exports with “${label}” and closes the menu`, () => {
      ui.frame(snapshot([]));
      assert.equal(exportMenu().hidden, true, "the menu starts closed");
      exportButton().click();
      assert.equal(exportMenu().hidden, false);
      assert.equal(exportButton().getAttribute("aria-expanded"), "true");
      assert.deepEqual(ui.posted, [], "opening the menu sends nothing");

      const item = ui.queryAll('.session-export-menu [role="menuitem"]').find((each) => each.textContent === label);
      assert.ok(item !== undefined, `no menu item “${label}”`);
      item.click();
      assert.deepEqual(ui.posted, [{ type: "exportSession", id: null, format }]);
      assert.equal(exportMenu().hidden, true);
      assert.equal(exportButton().getAttribute("aria-expanded"), "false");
      assert.equal(focused(), exportButton(), "the focus goes back to the Export button");
    });
  }

  it("walks the Export menu with the keyboard and leaves it with Escape", () => {
    ui.frame(snapshot([]));
    const items = ui.queryAll('.session-export-menu [role="menuitem"]');
    assert.deepEqual(
      items.map((item) => item.textContent),
      ["Export as Markdown", "Export log (JSONL)"],
    );
    exportButton().focus();
    ui.press("ArrowDown");
    assert.equal(exportMenu().hidden, false);
    const walk = [focused()?.textContent];
    for (const key of ["ArrowDown", "ArrowDown", "ArrowUp", "End", "Home"]) {
      ui.press(key);
      walk.push(focused()?.textContent);
    }
    assert.deepEqual(walk, [
      "Export as Markdown",
      "Export log (JSONL)",
      "Export as Markdown",
      "Export log (JSONL)",
      "Export log (JSONL)",
      "Export as Markdown",
    ]);
    ui.press("Escape");
    assert.equal(exportMenu().hidden, true);
    assert.equal(focused(), exportButton());
    assert.deepEqual(ui.posted, [], "leaving the menu exports nothing");
  });

  it("closes the Export menu when the person clicks elsewhere", () => {
    ui.frame(snapshot([]));
    exportButton().click();
    ui.query("main.thread").dispatchEvent(new ui.window.Event("pointerdown", { bubbles: true }));
    assert.equal(exportMenu().hidden, true);
    assert.deepEqual(ui.posted, []);
  });

  it("offers Export only once there is a session", () => {
    ui.frame();
    assert.equal(ui.query(".session-export").hidden, true, "nothing to export while connecting");
    ui.frame(snapshot([]));
    assert.equal(ui.query(".session-export").hidden, false);
  });

  it("offers Restart only while the host says the session can be continued", () => {
    ui.frame(snapshot([], { session: session({ status: { type: "exited", message: "Agent exited (code 1)" } }) }));
    assert.equal(ui.query(".session-status").textContent, "Agent exited (code 1)");
    assert.equal(restartButton().hidden, true, "hidden while canRestart is false");

    ui.frame(patch([], exited));
    assert.equal(restartButton().hidden, false);
    assert.equal(restartButton().textContent, "Restart agent", "its text is its accessible name");
    assert.equal(restartButton().tabIndex, 0, "reachable with Tab");
    assert.ok(
      ui.query(".session-identity").contains(restartButton()),
      "it stands beside the exited status",
    );

    ui.frame(patch([], session({ status: { type: "starting", step: "Starting the agent…", elapsedMs: 0 } })));
    assert.equal(restartButton().hidden, true);
  });

  it("offers Sign in while the agent waits for a sign-in, once per offer", () => {
    const signIn = () => ui.query<HTMLButtonElement>("header.session button.session-sign-in");
    const waiting = session({ status: { type: "starting", step: "Sign in needed", elapsedMs: 0 }, canSignIn: true });
    ui.frame(snapshot([]));
    assert.equal(signIn().hidden, true, "hidden while the host does not offer it");
    ui.frame(patch([], waiting));
    assert.equal(signIn().hidden, false);
    assert.equal(signIn().textContent, "Sign in");
    signIn().click();
    signIn().click();
    assert.deepEqual(ui.posted, [{ type: "signIn" }], "a second click sends nothing");
    ui.frame(patch([], waiting));
    assert.equal(signIn().disabled, false, "offered again with the host's next header");
    ui.frame(patch([], session({ status: { type: "ready" } })));
    assert.equal(signIn().hidden, true);
  });

  it("sends one restart per offer", () => {
    ui.frame(snapshot([], { session: exited }));
    restartButton().click();
    restartButton().click();
    assert.deepEqual(ui.posted, [{ type: "restart" }], "a second click sends nothing");
    assert.equal(restartButton().disabled, true);

    // The restart failed and the host offers it again.
    ui.frame(patch([], session({ status: { type: "failed", message: "Could not start the agent" }, canRestart: true })));
    assert.equal(restartButton().disabled, false);
    restartButton().click();
    assert.deepEqual(ui.posted, [{ type: "restart" }, { type: "restart" }]);
  });
});

describe("session header while the agent may be hung", () => {
  let ui: Harness;
  beforeEach(() => {
    ui = harness();
  });

  const status = () => ui.query(".session-status").textContent;
  const stopButton = () => ui.query<HTMLButtonElement>("header.session button.session-stop");
  const starting = (step: string, elapsedMs: number) =>
    session({ status: { type: "starting", step, elapsedMs }, canStop: true });

  it("counts a slow step's seconds on from what the host said, and stops counting when it ends", () => {
    ui.frame(snapshot([], { session: starting("Initializing the agent", 7_400) }));
    assert.equal(status(), "Initializing the agent… 7 s");
    ui.advance(1_000);
    assert.equal(status(), "Initializing the agent… 8 s");

    // The next step counts from its own start.
    ui.frame(patch([], starting("Creating the session", 0)));
    assert.equal(status(), "Creating the session…", "no seconds before the first one has passed");
    ui.advance(1_000);
    ui.advance(1_000);
    assert.equal(status(), "Creating the session… 2 s");

    ui.frame(patch([], session()));
    assert.equal(status(), "Ready");
    assert.equal(ui.timers(), 0, "no timer runs once nothing counts");
  });

  it("offers Stop while the agent starts, and sends one stop per offer", () => {
    ui.frame(snapshot([], { session: starting("Initializing the agent", 0) }));
    assert.equal(stopButton().hidden, false);
    assert.equal(stopButton().textContent, "Stop");
    assert.ok(ui.query(".session-identity").contains(stopButton()), "it stands beside the status");
    stopButton().click();
    stopButton().click();
    assert.deepEqual(ui.posted, [{ type: "stopAgent" }], "a second click sends nothing");
    assert.equal(stopButton().disabled, true);

    ui.frame(patch([], session({ status: { type: "exited", message: "The agent was stopped" }, canRestart: true })));
    assert.equal(stopButton().hidden, true, "gone once the agent is");
    assert.equal(ui.query<HTMLButtonElement>("header.session button.session-restart").hidden, false);
  });

  it("offers Stop agent while a cancelled turn has not ended", () => {
    ui.frame(snapshot([], { session: session(), turn: { type: "running" } }));
    assert.equal(stopButton().hidden, true, "not while the turn runs normally");
    ui.frame(patch([], session({ canStop: true })));
    assert.equal(stopButton().hidden, false);
    assert.equal(stopButton().textContent, "Stop agent");
    stopButton().click();
    assert.deepEqual(ui.posted, [{ type: "stopAgent" }]);
  });
});
