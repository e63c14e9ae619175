// The chat header (`header.session`), one row: which agent (a picker of the agent profiles, each
// with how it stands and what it can do), how its session stands (a dot, with words when it is
// not simply ready, and Sign in, Restart or Stop when they apply), the session's title as the
// agent names it, and the session actions: New session, History, and a "More Actions" menu
// (follow the agent, the permission rules, export, the agent settings). The permission mode, the
// agent's own mode and its config options are the composer's (`SessionControlsPanel`), as in the
// peers' chats.
//
// The picker shows the host's choice; choosing sends an intent (`selectAgent`) and the host's
// next header patch says what actually happened. Drawing the host's state never sends an
// intent back (no UI → host → UI loop; see ARCHITECTURE.md, "webview/").
//
// In a workspace VS Code does not trust, nothing runs: the header says so in full, with a
// "Manage Workspace Trust" button (`manageTrust`) that opens VS Code's trust editor.
//
// A starting step says how long it has taken ("Initializing the agent… 7 s"): the host gives
// the step's `elapsedMs` as of its post and the header counts on with the webview's own clock,
// on a timer that runs only while a step is shown. A step that takes longer than
// `SLOW_STEP_MS` gets a note under the row: what the agent last wrote to its stderr (the host's
// `agentSaid`: an agent waiting for a sign-in or a download usually says so), and "Show log"
// (`showLog`), Tether's log, which has everything it wrote. Not while the agent waits for the
// person to choose how to sign in: that wait is theirs, and Sign in is beside the status.

import { element, icon, iconButton } from "./element";
import type { Clock } from "./markdown-view";
import { MenuButton } from "./menu-view";
import { Picker } from "./picker-view";
import type { ExportFormat, PostIntent, SessionStatus, SessionView } from "./protocol";
import { type Repeat, repeatWithInterval } from "./terminal-view";

/** A starting step's time is shown in whole seconds. */
const STEP_TICK_MS = 1000;

/** A step that has taken this long gets the slow-start note: most agents start in a few
 * seconds, and a person who has waited 15 wants to know what for. */
const SLOW_STEP_MS = 15_000;

/** The Export items of the menu, in its order. */
const EXPORT_CHOICES: ReadonlyArray<{ format: ExportFormat; label: string; description: string }> = [
  { format: "markdown", label: "Export as Markdown", description: "The conversation as a readable document" },
  { format: "jsonl", label: "Export log (JSONL)", description: "The session's event log, one message a line" },
];

export class SessionHeaderView {
  readonly element: HTMLElement;
  private readonly picker: Picker;
  private readonly status = element("span", "session-status");
  private readonly statusText = element("span", "session-status-text");
  /** A starting step's seconds, apart from its words so that a narrow row cuts the words and
   * keeps the count, which is what says the agent is still being waited for. */
  private readonly statusSeconds = element("span", "session-status-seconds");
  private readonly newSession = iconButton("session-new", "New session", "add");
  private readonly restart = element("button", "session-restart", "Restart agent");
  /** In Restart's place for a built-in agent that is not installed: picks it again, which the
   * host answers with its install offer (the "…" says a question follows). */
  private readonly install = element("button", "session-install");
  private readonly signIn = element("button", "session-sign-in", "Sign in");
  private readonly stop = element("button", "session-stop", "Stop");
  private readonly trustNotice = element("div", "session-trust-notice");
  private readonly trustText = element("p", "session-trust-text");
  private readonly manageTrust = element("button", "session-manage-trust", "Manage Workspace Trust");
  private readonly slowNotice = element("div", "session-slow-notice");
  private readonly slowText = element("p", "session-slow-text");
  private readonly showLog = element("button", "session-show-log", "Show log");
  /** The starting step shown, with how long it had taken when it arrived and when that was, and
   * whether a slow one gets the note (see `SLOW_STEP_MS`). */
  private step: { text: string; elapsedMs: number; receivedAt: number; noteWhenSlow: boolean } | null = null;
  private stopTicking: (() => void) | null = null;
  private readonly history = iconButton("session-history", "Session history", "history");
  private readonly more = new MenuButton("session-more", "More actions", "ellipsis");
  private readonly follow = element("button", "session-follow", "Follow the agent");
  private readonly exportItems: HTMLButtonElement[];
  private readonly settings = element("button", "session-agent-settings", "Agent settings…");
  private readonly title = element("div", "session-title");

  /** `rulesToggle` is the rules panel's own button; the header only gives it its place. */
  constructor(
    post: PostIntent,
    rulesToggle: HTMLButtonElement,
    private readonly clock: Clock = () => performance.now(),
    private readonly repeat: Repeat = repeatWithInterval,
  ) {
    this.element = element("header", "session");
    this.picker = new Picker("session-picker", "Agent", (name) => post({ type: "selectAgent", name }));
    this.picker.element.querySelector(".picker-label")?.classList.add("session-agent");
    this.status.setAttribute("role", "status");
    this.status.append(element("span", "session-status-dot"), this.statusText, this.statusSeconds);
    this.restart.type = "button";
    this.restart.title = "Start the agent again and continue this session";
    this.install.type = "button";
    this.install.title = "Install the agent into Tether's own storage, then start it";
    this.stop.type = "button";
    this.signIn.type = "button";
    this.signIn.title = "Choose how to sign in to the agent";
    this.newSession.title = "New session with the selected agent";

    this.follow.title = "Open each place the agent's tool calls point at";
    this.follow.setAttribute("aria-checked", "false");
    this.more.add(this.follow, null, true);
    this.more.add(rulesToggle, null, true);
    this.more.addSeparator();
    this.exportItems = EXPORT_CHOICES.map((choice) => {
      const item = element("button", "session-export-item", choice.label);
      item.title = choice.description;
      item.dataset["format"] = choice.format;
      item.addEventListener("click", () => post({ type: "exportSession", id: null, format: choice.format }));
      this.more.add(item, choice.format === "markdown" ? "markdown" : "json");
      return item;
    });
    this.more.addSeparator();
    this.settings.title = "Open the settings where agents are added and configured";
    this.more.add(this.settings, "settings-gear");

    const row = element("div", "session-row");
    const actions = element("div", "session-actions");
    actions.append(this.newSession, this.history, this.more.element);
    row.append(this.picker.element, this.status, this.title, this.signIn, this.restart, this.install, this.stop, actions);

    this.manageTrust.type = "button";
    this.manageTrust.title = "Open VS Code's workspace trust editor; trusting this workspace starts the session";
    this.trustNotice.setAttribute("role", "note");
    this.trustNotice.append(icon("workspace-untrusted"), this.trustText, this.manageTrust);
    this.showLog.type = "button";
    this.showLog.title = "Open Tether's log, which has everything the agent wrote to its stderr";
    // A status: a screen reader says it once when it appears, as a sighted person sees it come.
    this.slowNotice.setAttribute("role", "status");
    this.slowNotice.hidden = true;
    this.slowNotice.append(icon("watch"), this.slowText, this.showLog);
    this.element.append(row, this.trustNotice, this.slowNotice);
    this.manageTrust.addEventListener("click", () => post({ type: "manageTrust" }));
    this.showLog.addEventListener("click", () => post({ type: "showLog" }));

    this.newSession.addEventListener("click", () => post({ type: "newSession" }));
    this.history.addEventListener("click", () => post({ type: "showHistory" }));
    this.settings.addEventListener("click", () => post({ type: "openAgentSettings" }));
    this.follow.addEventListener("click", () => {
      // The host's next header says whether it is on; the item shows what was asked meanwhile.
      const on = this.follow.getAttribute("aria-checked") !== "true";
      this.follow.setAttribute("aria-checked", String(on));
      post({ type: "setFollowAgent", on });
    });
    this.install.addEventListener("click", () => {
      // One offer per click, as for Restart: the host's next header brings the button back.
      this.install.disabled = true;
      post({ type: "selectAgent", name: this.install.dataset["agent"] ?? "" });
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
    this.render(null);
  }

  render(session: SessionView | null): void {
    if (session === null) {
      this.picker.setChoices([]);
      this.picker.setValue("Tether");
      this.picker.setTooltip("Agent");
      this.showStatus({ type: "starting", step: "Connecting…", elapsedMs: 0 }, false);
      this.restart.hidden = true;
      this.install.hidden = true;
      this.signIn.hidden = true;
      this.stop.hidden = true;
      this.title.hidden = true;
      for (const item of this.exportItems) item.disabled = true;
      return;
    }
    // Each agent with how it stands here and what it said it can do (the engine's words).
    this.picker.setChoices(
      session.profiles.map((profile) => ({
        value: profile.name,
        label: profile.name,
        description: profile.description,
        state: profile.state,
      })),
    );
    this.picker.setValue(session.agent);
    this.picker.setTooltip(session.agentInfo ?? `Agent: ${session.agent}`);
    this.showStatus(session.status, !session.canSignIn);
    // The host says a session can be restarted while its agent is being started again (a lost
    // tetherd, another agent picked), so that the composer takes a prompt for it meanwhile; the
    // button would offer what is already under way.
    this.restart.hidden = !session.canRestart || session.status.type === "starting";
    this.restart.disabled = false;
    this.install.hidden = !session.canInstall;
    this.install.disabled = false;
    this.install.textContent = `Install ${session.agent}…`;
    this.install.dataset["agent"] = session.agent;
    this.signIn.hidden = !session.canSignIn;
    this.signIn.disabled = false;
    this.showStop(session);
    this.follow.setAttribute("aria-checked", String(session.followAgent));
    for (const item of this.exportItems) item.disabled = false;
    const title = session.controls.title;
    this.title.hidden = title === null;
    this.title.textContent = title ?? "";
    this.title.title = title ?? "";
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

  /** `noteWhenSlow`: a slow starting step gets the note (see `SLOW_STEP_MS`). */
  private showStatus(status: SessionStatus, noteWhenSlow: boolean): void {
    this.status.dataset["status"] = status.type;
    this.step = null;
    this.statusSeconds.textContent = "";
    switch (status.type) {
      case "starting":
        // The host's own "…" is dropped so that the seconds follow a single one.
        this.step = {
          text: status.step.replace(/…$/, ""),
          elapsedMs: status.elapsedMs,
          receivedAt: this.clock(),
          noteWhenSlow,
        };
        this.sayInSlowNote(status.agentSaid);
        this.showStep();
        break;
      case "ready":
        this.statusText.textContent = "Ready";
        break;
      case "failed":
      case "exited":
        this.statusText.textContent = status.message;
        break;
      case "untrusted":
        this.statusText.textContent = "Workspace not trusted";
        break;
    }
    if (this.step === null) this.slowNotice.hidden = true;
    this.trustNotice.hidden = status.type !== "untrusted";
    this.trustText.textContent = status.type === "untrusted" ? status.message : "";
    this.status.title = this.statusText.textContent ?? "";
    if (this.step !== null && this.stopTicking === null) {
      this.stopTicking = this.repeat(() => this.showStep(), STEP_TICK_MS);
    } else if (this.step === null && this.stopTicking !== null) {
      this.stopTicking();
      this.stopTicking = null;
    }
  }

  /** The slow-start note's words, with what the agent last said when it said anything. Written
   * only when they change: the note is a live region, and each header the host posts while the
   * agent starts would have it read out again. */
  private sayInSlowNote(agentSaid: string | undefined): void {
    const note =
      agentSaid === undefined
        ? "This is taking longer than usual. Tether's log may say why."
        : `This is taking longer than usual. The agent last said: “${agentSaid}”`;
    if (this.slowText.textContent !== note) this.slowText.textContent = note;
  }

  /** "Initializing the agent…", then "Initializing the agent… 7 s" once a second has passed. */
  private showStep(): void {
    if (this.step === null) return;
    const elapsedMs = this.step.elapsedMs + Math.max(0, this.clock() - this.step.receivedAt);
    const seconds = Math.floor(elapsedMs / 1000);
    this.statusText.textContent = `${this.step.text}…`;
    this.statusSeconds.textContent = seconds < 1 ? "" : ` ${seconds} s`;
    this.slowNotice.hidden = !this.step.noteWhenSlow || elapsedMs < SLOW_STEP_MS;
  }
}
