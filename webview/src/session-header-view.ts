// The chat header (`header.session`): which agent, how its session stands (with Restart when the
// agent has exited and its session can be continued, and Stop while it may be hung: starting, or
// not ending a cancelled turn), the session actions (pick another agent,
// start a new session, open the history, export this session), and the permission controls: the
// mode picker, the agent's own mode, and the toggle of the rules panel. Below them: the session's
// title as the agent names it, and the agent's config options and context meter
// (`SessionControlsPanel`).
//
// The pickers show the host's choice; choosing sends an intent (`selectAgent`, `setMode`) and the
// host's next header patch says what actually happened, so each picker is set to the host's
// value on every update. Setting a select's value from code fires no `change` event, and only a
// `change` posts: drawing the host's state can never send an intent back (no UI → host → UI
// loop; see ARCHITECTURE.md, "webview/").
//
// In a workspace VS Code does not trust, nothing runs: the header says so in full, with a
// "Manage Workspace Trust" button (`manageTrust`) that opens VS Code's trust editor.
//
// A starting step says how long it has taken ("Initializing the agent… 7 s"): the host gives
// the step's `elapsedMs` as of its post and the header counts on with the webview's own clock,
// on a timer that runs only while a step is shown.

import { element } from "./element";
import type { Clock } from "./markdown-view";
import { MODES, modeLabel } from "./permission-labels";
import type { SessionControlsView } from "./protocol";
import { SessionControlsPanel } from "./session-controls-view";
import type { ExportFormat, Mode, PermissionsView, PostIntent, SessionStatus, SessionView } from "./protocol";
import { type Repeat, repeatWithInterval } from "./terminal-view";

const SVG_NAMESPACE = "http://www.w3.org/2000/svg";
const EXPORT_MENU_ID = "tether-export-menu";
/** A starting step's time is shown in whole seconds. */
const STEP_TICK_MS = 1000;

/** The Export menu's items, in its order. */
const EXPORT_CHOICES: ReadonlyArray<{ format: ExportFormat; label: string; description: string }> = [
  { format: "markdown", label: "Export as Markdown", description: "The conversation as a readable document" },
  { format: "jsonl", label: "Export log (JSONL)", description: "The session's event log, one message a line" },
];

export class SessionHeaderView {
  readonly element: HTMLElement;
  private readonly agent = element("span", "session-agent");
  private readonly status = element("span", "session-status");
  private readonly picker = element("select", "session-picker");
  private readonly newSession = element("button", "session-new", "New session");
  private readonly restart = element("button", "session-restart", "Restart agent");
  private readonly signIn = element("button", "session-sign-in", "Sign in");
  private readonly stop = element("button", "session-stop", "Stop");
  private readonly trustNotice = element("div", "session-trust-notice");
  private readonly trustText = element("p", "session-trust-text");
  private readonly manageTrust = element("button", "session-manage-trust", "Manage Workspace Trust");
  /** The starting step shown, with how long it had taken when it arrived and when that was. */
  private step: { text: string; elapsedMs: number; receivedAt: number } | null = null;
  private stopTicking: (() => void) | null = null;
  private readonly history = iconButton("session-history", "Session history", [
    // A clock whose rim turns back: the sessions before this one.
    "M2.5 8a5.5 5.5 0 1 0 1.6-3.9",
    "M3.6 1.8v2.6h2.6",
    "M8 5v3l2 1.5",
  ]);
  private readonly follow = iconButton("session-follow", "Follow the agent", [
    // An eye: watch where the agent works.
    "M1.5 8s2.4-4.5 6.5-4.5S14.5 8 14.5 8s-2.4 4.5-6.5 4.5S1.5 8 1.5 8z",
    "M8 6a2 2 0 1 0 0 4a2 2 0 1 0 0-4z",
  ]);
  private readonly exportMenu: ExportMenu;
  private readonly permissions = element("div", "session-permissions");
  private readonly modeSelect = element("select", "mode-select");
  private readonly agentMode = element("span", "agent-mode");
  private readonly agentModeField = element("label", "agent-mode-field");
  private readonly agentModeSelect = element("select", "agent-mode-select");
  private shownAgentModes = "";
  private readonly title = element("div", "session-title");
  private readonly controls: SessionControlsPanel;
  private readonly bypassWarning = element("div", "mode-warning", "⚠ Bypass: every request is approved");
  private shownProfiles = "";

  /** `rulesToggle` is the rules panel's own button; the header only gives it its place. */
  constructor(
    post: PostIntent,
    rulesToggle: HTMLElement,
    private readonly clock: Clock = () => performance.now(),
    private readonly repeat: Repeat = repeatWithInterval,
  ) {
    this.element = element("header", "session");
    const identity = element("div", "session-identity");
    this.restart.type = "button";
    this.restart.title = "Start the agent again and continue this session";
    this.stop.type = "button";
    this.signIn.type = "button";
    this.signIn.title = "Choose how to sign in to the agent";
    identity.append(this.agent, this.status, this.signIn, this.restart, this.stop);
    const actions = element("div", "session-actions");
    this.picker.setAttribute("aria-label", "Agent");
    this.picker.title = "Agent";
    this.newSession.type = "button";
    this.newSession.title = "Start a new session with the selected agent";
    this.exportMenu = new ExportMenu(post);
    this.follow.title = "Follow the agent: open each place its tool calls point at";
    this.follow.setAttribute("aria-pressed", "false");
    actions.append(this.picker, this.newSession, this.history, this.follow, this.exportMenu.element);

    this.modeSelect.setAttribute("aria-label", "Permission mode");
    this.modeSelect.replaceChildren(
      ...MODES.map((choice) => {
        const option = element("option", undefined, choice.label);
        option.value = choice.mode;
        option.title = choice.description;
        return option;
      }),
    );
    const modeField = element("label", "mode-field");
    modeField.append(element("span", "mode-field-label", "Mode"), this.modeSelect);
    this.bypassWarning.setAttribute("role", "note");
    this.agentModeSelect.setAttribute("aria-label", "Agent mode");
    this.agentModeSelect.title = "The agent's own mode; one that means one of Tether's modes moves Tether's with it";
    this.agentModeField.append(element("span", "mode-field-label", "Agent"), this.agentModeSelect);
    this.permissions.append(modeField, this.agentMode, this.agentModeField, rulesToggle);
    this.controls = new SessionControlsPanel(post);
    this.manageTrust.type = "button";
    this.manageTrust.title = "Open VS Code's workspace trust editor; trusting this workspace starts the session";
    this.trustNotice.setAttribute("role", "note");
    this.trustNotice.append(this.trustText, this.manageTrust);
    this.element.append(
      identity,
      this.trustNotice,
      this.title,
      actions,
      this.permissions,
      this.controls.element,
      this.bypassWarning,
    );
    this.manageTrust.addEventListener("click", () => post({ type: "manageTrust" }));

    this.picker.addEventListener("change", () => {
      post({ type: "selectAgent", name: this.picker.value });
    });
    this.newSession.addEventListener("click", () => post({ type: "newSession" }));
    this.history.addEventListener("click", () => post({ type: "showHistory" }));
    this.follow.addEventListener("click", () => {
      // The host's next header says whether it is on; the button shows what was asked meanwhile.
      const on = this.follow.getAttribute("aria-pressed") !== "true";
      this.follow.setAttribute("aria-pressed", String(on));
      post({ type: "setFollowAgent", on });
    });
    this.restart.addEventListener("click", () => {
      // One restart per offer: the button comes back only with the host's next header.
      this.restart.disabled = true;
      post({ type: "restart" });
    });
    this.signIn.addEventListener("click", () => {
      // One ask per offer, as for Restart.
      this.signIn.disabled = true;
      post({ type: "signIn" });
    });
    this.stop.addEventListener("click", () => {
      // One stop per offer, as for Restart.
      this.stop.disabled = true;
      post({ type: "stopAgent" });
    });
    this.modeSelect.addEventListener("change", () => {
      post({ type: "setMode", mode: this.modeSelect.value as Mode });
    });
    this.agentModeSelect.addEventListener("change", () => {
      post({ type: "setAgentMode", id: this.agentModeSelect.value });
    });
    this.render(null);
  }

  render(session: SessionView | null): void {
    if (session === null) {
      this.agent.textContent = "Tether";
      this.agent.removeAttribute("title");
      this.showStatus({ type: "starting", step: "Connecting…", elapsedMs: 0 });
      this.picker.hidden = true;
      this.restart.hidden = true;
      this.signIn.hidden = true;
      this.stop.hidden = true;
      this.exportMenu.show(false);
      this.permissions.hidden = true;
      this.bypassWarning.hidden = true;
      this.showControls(null);
      delete this.element.dataset["mode"];
      return;
    }
    this.agent.textContent = session.agent;
    if (session.agentInfo !== null) this.agent.title = session.agentInfo;
    else this.agent.removeAttribute("title");
    this.showStatus(session.status);
    this.restart.hidden = !session.canRestart;
    this.restart.disabled = false;
    this.signIn.hidden = !session.canSignIn;
    this.signIn.disabled = false;
    this.showStop(session);
    this.follow.setAttribute("aria-pressed", String(session.followAgent));
    this.exportMenu.show(true);

    const profiles = JSON.stringify(session.profiles);
    if (profiles !== this.shownProfiles) {
      this.shownProfiles = profiles;
      this.picker.replaceChildren(
        ...session.profiles.map((name) => {
          const option = element("option", undefined, name);
          option.value = name;
          return option;
        }),
      );
    }
    this.picker.hidden = session.profiles.length === 0;
    this.picker.value = session.agent;
    this.showPermissions(session.permissions);
    this.showControls(session.controls);
  }

  private showControls(controls: SessionControlsView | null): void {
    const title = controls?.title ?? null;
    this.title.hidden = title === null;
    this.title.textContent = title ?? "";
    this.title.title = title ?? "";
    this.controls.render(controls);
  }

  private showPermissions(permissions: PermissionsView): void {
    const mode = permissions.mode;
    this.permissions.hidden = false;
    this.element.dataset["mode"] = mode;
    if (![...this.modeSelect.options].some((option) => option.value === mode)) {
      // A mode a newer host added: shown as it is rather than as whichever mode comes first.
      const option = element("option", undefined, modeLabel(mode));
      option.value = mode;
      this.modeSelect.append(option);
    }
    this.modeSelect.value = mode;
    this.modeSelect.title = MODES.find((choice) => choice.mode === mode)?.description ?? modeLabel(mode);
    this.bypassWarning.hidden = mode !== "bypass";
    // With the agent's list of modes, it picks from them; without, the header only says it.
    const modes = permissions.agentModes;
    this.agentModeField.hidden = modes.length === 0;
    const listed = JSON.stringify(modes);
    if (listed !== this.shownAgentModes) {
      this.shownAgentModes = listed;
      this.agentModeSelect.replaceChildren(
        ...modes.map((choice) => {
          const option = element("option", undefined, choice.name);
          option.value = choice.id;
          return option;
        }),
      );
    }
    if (permissions.agentModeId !== null) this.agentModeSelect.value = permissions.agentModeId;
    const agentMode = modes.length === 0 ? permissions.agentMode : null;
    this.agentMode.hidden = agentMode === null;
    this.agentMode.textContent = agentMode === null ? "" : `Agent mode: ${agentMode}`;
    this.agentMode.title = agentMode === null ? "" : "The agent's own mode; Tether sends it yours when they match";
  }

  /** Stop while the agent starts; Stop agent while it has not ended a cancelled turn. */
  private showStop(session: SessionView): void {
    const starting = session.status.type === "starting";
    this.stop.hidden = !session.canStop;
    this.stop.disabled = false;
    this.stop.textContent = starting ? "Stop" : "Stop agent";
    this.stop.title = starting
      ? "Stop the agent: it is taking long to start"
      : "The agent has not stopped since it was asked to cancel: stop its process";
  }

  private showStatus(status: SessionStatus): void {
    this.status.dataset["status"] = status.type;
    this.step = null;
    switch (status.type) {
      case "starting":
        // The host's own "…" is dropped so that the seconds follow a single one.
        this.step = { text: status.step.replace(/…$/, ""), elapsedMs: status.elapsedMs, receivedAt: this.clock() };
        this.showStep();
        break;
      case "ready":
        this.status.textContent = "Ready";
        break;
      case "failed":
      case "exited":
        this.status.textContent = status.message;
        break;
      case "untrusted":
        this.status.textContent = "Workspace not trusted";
        break;
    }
    this.trustNotice.hidden = status.type !== "untrusted";
    this.trustText.textContent = status.type === "untrusted" ? status.message : "";
    this.status.title = this.status.textContent ?? "";
    if (this.step !== null && this.stopTicking === null) {
      this.stopTicking = this.repeat(() => this.showStep(), STEP_TICK_MS);
    } else if (this.step === null && this.stopTicking !== null) {
      this.stopTicking();
      this.stopTicking = null;
    }
  }

  /** "Initializing the agent…", then "Initializing the agent… 7 s" once a second has passed. */
  private showStep(): void {
    if (this.step === null) return;
    const elapsedMs = this.step.elapsedMs + Math.max(0, this.clock() - this.step.receivedAt);
    const seconds = Math.floor(elapsedMs / 1000);
    this.status.textContent = seconds < 1 ? `${this.step.text}…` : `${this.step.text}… ${seconds} s`;
  }
}

/**
 * The header's Export button and its menu of formats. The menu follows the menu button pattern:
 * Enter, Space or a click opens it on its first item, the arrow keys move between items, and
 * Escape, choosing, or leaving it closes it (back to the button when closed from inside).
 */
class ExportMenu {
  readonly element = element("div", "session-export");
  private readonly button = iconButton("session-export-button", "Export session", [
    // A tray with an arrow leaving it.
    "M8 10.5V2",
    "M5 5l3-3 3 3",
    "M3 9v4.5h10V9",
  ]);
  private readonly menu = element("div", "session-export-menu");
  private readonly items: HTMLButtonElement[];

  constructor(post: PostIntent) {
    this.button.setAttribute("aria-haspopup", "menu");
    this.button.setAttribute("aria-controls", EXPORT_MENU_ID);
    this.menu.id = EXPORT_MENU_ID;
    this.menu.setAttribute("role", "menu");
    this.menu.setAttribute("aria-label", "Export session");
    this.items = EXPORT_CHOICES.map((choice) => {
      const item = element("button", "session-export-item", choice.label);
      item.type = "button";
      item.setAttribute("role", "menuitem");
      item.tabIndex = -1;
      item.title = choice.description;
      item.dataset["format"] = choice.format;
      item.addEventListener("click", () => {
        this.close(true);
        post({ type: "exportSession", id: null, format: choice.format });
      });
      return item;
    });
    this.menu.append(...this.items);
    this.element.append(this.button, this.menu);
    this.close(false);

    this.button.addEventListener("click", () => {
      if (this.menu.hidden) this.open(0);
      else this.close(true);
    });
    this.button.addEventListener("keydown", (event) => {
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        this.open(event.key === "ArrowDown" ? 0 : this.items.length - 1);
      }
    });
    this.menu.addEventListener("keydown", (event) => this.moveByKey(event));
    // Tabbing or clicking anywhere else closes the menu; the focus goes where the person sent it.
    // Both targets are nodes of this document (or null when the focus leaves the page).
    this.element.addEventListener("focusout", (event) => {
      if (!this.element.contains(event.relatedTarget as Node | null)) this.close(false);
    });
    this.element.ownerDocument.addEventListener("pointerdown", (event) => {
      if (!this.element.contains(event.target as Node | null)) this.close(false);
    });
  }

  /** Shows or hides the whole control; hidden, its menu is closed too. */
  show(shown: boolean): void {
    this.element.hidden = !shown;
    if (!shown) this.close(false);
  }

  private open(index: number): void {
    this.menu.hidden = false;
    this.button.setAttribute("aria-expanded", "true");
    this.items[index]?.focus();
  }

  private close(returnFocus: boolean): void {
    this.menu.hidden = true;
    this.button.setAttribute("aria-expanded", "false");
    if (returnFocus) this.button.focus();
  }

  private moveByKey(event: KeyboardEvent): void {
    const current = this.items.findIndex((item) => item === this.element.ownerDocument.activeElement);
    const last = this.items.length - 1;
    let next: number;
    switch (event.key) {
      case "Escape":
        event.preventDefault();
        this.close(true);
        return;
      case "ArrowDown":
        next = current >= last ? 0 : current + 1;
        break;
      case "ArrowUp":
        next = current <= 0 ? last : current - 1;
        break;
      case "Home":
        next = 0;
        break;
      case "End":
        next = last;
        break;
      default:
        return;
    }
    event.preventDefault();
    this.items[next]?.focus();
  }
}

/**
 * A toolbar button drawn as a 16px line icon, as VS Code's own view actions are. `label` is both
 * its tooltip and its accessible name, since the icon has no text.
 */
function iconButton(className: string, label: string, paths: readonly string[]): HTMLButtonElement {
  const button = element("button", `icon-button ${className}`);
  button.type = "button";
  button.title = label;
  button.setAttribute("aria-label", label);
  const icon = button.ownerDocument.createElementNS(SVG_NAMESPACE, "svg");
  icon.setAttribute("viewBox", "0 0 16 16");
  icon.setAttribute("aria-hidden", "true");
  icon.setAttribute("focusable", "false");
  for (const shape of paths) {
    const path = button.ownerDocument.createElementNS(SVG_NAMESPACE, "path");
    path.setAttribute("d", shape);
    icon.append(path);
  }
  button.append(icon);
  return button;
}
