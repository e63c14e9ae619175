// The header's session actions: New, History, the More Actions menu (follow the agent, the rules,
// export, the agent settings) and Restart, as the person reaches them with the mouse and the
// keyboard, and the intents they send.

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

  const moreButton = () => ui.query<HTMLButtonElement>("header.session .session-more button.menu-button");
  const moreMenu = () => ui.query('header.session .session-more [role="menu"]');
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

  it("toggles following the agent from the menu, and shows what the host says", () => {
    ui.frame(snapshot([]));
    const follow = ui.query<HTMLButtonElement>("header.session button.session-follow");
    assert.equal(follow.getAttribute("role"), "menuitemcheckbox");
    assert.equal(follow.textContent, "Follow the agent");
    assert.equal(follow.getAttribute("aria-checked"), "false");
    moreButton().click();
    follow.click();
    assert.deepEqual(ui.posted, [{ type: "setFollowAgent", on: true }]);
    assert.equal(follow.getAttribute("aria-checked"), "true", "checked at once");
    assert.equal(moreMenu().hidden, true, "choosing closes the menu");
    // The host's header has the last word: here it is on, then a command turned it off.
    ui.frame(patch([], session({ followAgent: true })));
    assert.equal(follow.getAttribute("aria-checked"), "true");
    ui.frame(patch([], session({ followAgent: false })));
    assert.equal(follow.getAttribute("aria-checked"), "false");
    follow.click();
    assert.deepEqual(ui.posted.at(-1), { type: "setFollowAgent", on: true });
  });

  it("opens the agent settings from the menu", () => {
    ui.frame(snapshot([]));
    moreButton().click();
    ui.query<HTMLButtonElement>("header.session button.session-agent-settings").click();
    assert.deepEqual(ui.posted, [{ type: "openAgentSettings" }]);
  });

  it("keeps everything in one row: agent, status, title, actions", () => {
    ui.frame(snapshot([], { session: session({ controls: { ...session().controls, title: "Fix the parser" } }) }));
    const rows = ui.queryAll("header.session > *").filter((child) => !child.hidden);
    assert.equal(rows.length, 1, "one row while nothing needs saying");
    const row = rows[0]!;
    for (const part of [".session-picker", ".session-status", ".session-title", "button.session-new", "button.session-history", ".session-more"]) {
      assert.ok(row.querySelector(part) !== null, `${part} in the row`);
    }
    assert.equal(ui.queryAll("header.session .mode-select").length, 0, "the mode picker is the composer's");
  });

  for (const [label, format] of [
    ["Export as Markdown", "markdown"],
    ["Export log (JSONL)", "jsonl"],
  ] as const) {
    it(`exports with “${label}” and closes the menu`, () => {
      ui.frame(snapshot([]));
      assert.equal(moreMenu().hidden, true, "the menu starts closed");
      moreButton().click();
      assert.equal(moreMenu().hidden, false);
      assert.equal(moreButton().getAttribute("aria-expanded"), "true");
      assert.deepEqual(ui.posted, [], "opening the menu sends nothing");

      const item = ui.queryAll('.session-more [role="menuitem"]').find((each) => each.textContent === label);
      assert.ok(item !== undefined, `no menu item “${label}”`);
      item.click();
      assert.deepEqual(ui.posted, [{ type: "exportSession", id: null, format }]);
      assert.equal(moreMenu().hidden, true);
      assert.equal(moreButton().getAttribute("aria-expanded"), "false");
      assert.equal(focused(), moreButton(), "the focus goes back to the menu's button");
    });
  }

  it("walks the menu with the keyboard and leaves it with Escape", () => {
    ui.frame(snapshot([]));
    const items = ui.queryAll('.session-more [role^="menuitem"]');
    assert.deepEqual(
      items.map((item) => item.textContent),
      ["Follow the agent", "Permission rules (0)", "Export as Markdown", "Export log (JSONL)", "Agent settings…"],
    );
    moreButton().focus();
    ui.press("ArrowDown");
    assert.equal(moreMenu().hidden, false);
    const walk = [focused()?.textContent];
    for (const key of ["ArrowDown", "ArrowDown", "ArrowUp", "End", "ArrowDown", "Home"]) {
      ui.press(key);
      walk.push(focused()?.textContent);
    }
    assert.deepEqual(walk, [
      "Follow the agent",
      "Permission rules (0)",
      "Export as Markdown",
      "Permission rules (0)",
      "Agent settings…",
      "Follow the agent",
      "Follow the agent",
    ]);
    ui.press("Escape");
    assert.equal(moreMenu().hidden, true);
    assert.equal(focused(), moreButton());
    assert.deepEqual(ui.posted, [], "leaving the menu does nothing");
  });

  it("closes the menu when the person clicks elsewhere", () => {
    ui.frame(snapshot([]));
    moreButton().click();
    ui.query("main.thread").dispatchEvent(new ui.window.Event("pointerdown", { bubbles: true }));
    assert.equal(moreMenu().hidden, true);
    assert.deepEqual(ui.posted, []);
  });

  it("offers Export only once there is a session", () => {
    ui.frame();
    const exports = () => ui.queryAll<HTMLButtonElement>("button.session-export-item");
    assert.deepEqual(exports().map((item) => item.disabled), [true, true], "nothing to export while connecting");
    ui.frame(snapshot([]));
    assert.deepEqual(exports().map((item) => item.disabled), [false, false]);
  });

  it("offers Restart only while the host says the session can be continued", () => {
    ui.frame(snapshot([], { session: session({ status: { type: "exited", message: "Agent exited (code 1)" } }) }));
    assert.equal(ui.query(".session-status").textContent, "Agent exited (code 1)");
    assert.equal(restartButton().hidden, true, "hidden while canRestart is false");

    ui.frame(patch([], exited));
    assert.equal(restartButton().hidden, false);
    assert.equal(restartButton().textContent, "Restart agent", "its text is its accessible name");
    assert.equal(restartButton().tabIndex, 0, "reachable with Tab");
    assert.equal(
      ui.query(".session-status").nextElementSibling?.nextElementSibling?.nextElementSibling,
      restartButton(),
      "it stands beside the exited status (after the title's place and Sign in's)",
    );

    ui.frame(patch([], session({ status: { type: "starting", step: "Starting the agent…", elapsedMs: 0 } })));
    assert.equal(restartButton().hidden, true);

    // A start under way is not offered again, though the host says the session can be
    // restarted (which keeps the composer open for a prompt meanwhile): tetherd being started
    // again after it was lost, or an agent just picked.
    ui.frame(patch([], session({ status: { type: "starting", step: "Starting tetherd", elapsedMs: 0 }, canRestart: true })));
    assert.equal(restartButton().hidden, true, "no Restart while the agent is being started");
  });

  it("offers to install an agent that is not installed, in Restart's place, once per offer", () => {
    const install = () => ui.query<HTMLButtonElement>("header.session button.session-install");
    const notInstalled = session({
      agent: "Codex",
      status: { type: "failed", message: "Codex is not installed" },
      canInstall: true,
    });
    ui.frame(snapshot([], { session: exited }));
    assert.equal(install().hidden, true, "an agent that exited is restarted, not installed");
    ui.frame(patch([], notInstalled));
    assert.equal(install().hidden, false);
    assert.equal(restartButton().hidden, true, "Restart would only fail again");
    assert.equal(install().textContent, "Install Codex…", "its text is its accessible name; a question follows");
    install().click();
    install().click();
    // The host answers a pick of an agent that is not installed with its install offer.
    assert.deepEqual(ui.posted, [{ type: "selectAgent", name: "Codex" }], "a second click sends nothing");
    ui.frame(patch([], notInstalled));
    assert.equal(install().disabled, false, "offered again with the host's next header");
    ui.frame(patch([], session({ agent: "Codex", status: { type: "ready" } })));
    assert.equal(install().hidden, true);
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

  const slowNote = () => ui.query(".session-slow-notice");

  it("says what the agent said last once a step is slow, and offers its log", async () => {
    ui.frame(snapshot([], { session: starting("Initializing the agent", 13_500) }));
    assert.equal(slowNote().hidden, true, "not while the step is still short");
    ui.advance(1_000);
    assert.equal(slowNote().hidden, true, "14.5 s");
    ui.advance(1_000);
    assert.equal(slowNote().hidden, false, "15.5 s");
    assert.equal(slowNote().getAttribute("role"), "status");
    assert.equal(
      ui.query(".session-slow-text").textContent,
      "This is taking longer than usual. Tether's log may say why.",
    );

    // The agent says something: the note has its words at once.
    const said = session({
      status: {
        type: "starting",
        step: "Initializing the agent",
        elapsedMs: 16_000,
        agentSaid: "Open https://example.com/device and enter WXYZ-1234",
      },
      canStop: true,
    });
    ui.frame(patch([], said));
    assert.equal(
      ui.query(".session-slow-text").textContent,
      "This is taking longer than usual. The agent last said: “Open https://example.com/device and enter WXYZ-1234”",
    );
    ui.query<HTMLButtonElement>("button.session-show-log").click();
    assert.deepEqual(ui.posted, [{ type: "showLog" }]);
    // The same words posted again are not written again: the note is a live region, which a
    // screen reader would read out at each write.
    const writes: MutationRecord[] = [];
    const observer = new ui.window.MutationObserver((records) => writes.push(...records));
    observer.observe(ui.query(".session-slow-text"), { childList: true, characterData: true, subtree: true });
    ui.frame(patch([], said));
    await Promise.resolve();
    observer.disconnect();
    assert.equal(writes.length, 0);

    // The next step starts its own count: no note until it is slow too.
    ui.frame(patch([], starting("Creating the session", 0)));
    assert.equal(slowNote().hidden, true);
    ui.frame(patch([], session()));
    assert.equal(slowNote().hidden, true, "gone once the session is ready");
    assert.equal(ui.timers(), 0);
  });

  it("leaves out the note while the agent waits for the person to choose how to sign in", () => {
    const waiting = session({
      status: { type: "starting", step: "Sign in needed", elapsedMs: 60_000, agentSaid: "Not signed in" },
      canSignIn: true,
    });
    ui.frame(snapshot([], { session: waiting }));
    ui.advance(1_000);
    assert.equal(slowNote().hidden, true);
  });

  it("offers Stop while the agent starts, and sends one stop per offer", () => {
    ui.frame(snapshot([], { session: starting("Initializing the agent", 0) }));
    assert.equal(stopButton().hidden, false);
    assert.equal(stopButton().textContent, "Stop");
    assert.equal(ui.query(".session-status").parentElement, stopButton().parentElement, "it stands beside the status");
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

describe("agent picker", () => {
  let ui: Harness;
  beforeEach(() => {
    ui = harness();
  });

  const listed = () =>
    ui.queryAll('.session-picker [role="option"]').map((option) => ({
      name: option.querySelector(".picker-item-label")?.textContent,
      says: option.querySelector(".picker-item-description")?.textContent,
      state: option.dataset["state"],
    }));

  it("lists each agent with how it stands and what it can do, as the host says, and follows the host's changes", () => {
    ui.frame(snapshot([]));
    assert.deepEqual(listed(), [
      { name: "Demo", says: "Running · tether-test-agent 0.1.0", state: "running" },
      { name: "Claude Code", says: "Not installed: choosing it offers to install it", state: "notInstalled" },
    ]);

    const failed = 'Could not start the agent "Claude Code": cannot start "claude-code-acp"';
    const profiles = [session().profiles[0]!, { name: "Claude Code", state: "failed" as const, description: failed }];
    ui.frame(patch([], session({ profiles })));
    assert.deepEqual(listed()[1], { name: "Claude Code", says: failed, state: "failed" });
    const option = ui.queryAll('.session-picker [role="option"]')[1]!;
    assert.equal(option.title, failed, "the whole of it in the tooltip, however narrow the list");
    assert.deepEqual(ui.posted, [], "drawing the host's list sends nothing");
  });
});
