// The chat header (`header.session`): which agent, how its session stands, the two session
// actions (pick another agent, start a new session), and the permission controls: the mode
// picker, the agent's own mode, and the toggle of the rules panel.
//
// The pickers show the host's choice; choosing sends an intent (`selectAgent`, `setMode`) and the
// host's next header patch says what actually happened, so each picker is set to the host's
// value on every update. Setting a select's value from code fires no `change` event, and only a
// `change` posts: drawing the host's state can never send an intent back (no UI → host → UI
// loop; see DESIGN.md, invariant 5).

import { element } from "./element";
import { MODES, modeLabel } from "./permission-labels";
import type { Mode, PermissionsView, PostIntent, SessionStatus, SessionView } from "./protocol";

export class SessionHeaderView {
  readonly element: HTMLElement;
  private readonly agent = element("span", "session-agent");
  private readonly status = element("span", "session-status");
  private readonly picker = element("select", "session-picker");
  private readonly newSession = element("button", "session-new", "New session");
  private readonly permissions = element("div", "session-permissions");
  private readonly modeSelect = element("select", "mode-select");
  private readonly agentMode = element("span", "agent-mode");
  private readonly bypassWarning = element("div", "mode-warning", "⚠ Bypass: every request is approved");
  private shownProfiles = "";

  /** `rulesToggle` is the rules panel's own button; the header only gives it its place. */
  constructor(post: PostIntent, rulesToggle: HTMLElement) {
    this.element = element("header", "session");
    const identity = element("div", "session-identity");
    identity.append(this.agent, this.status);
    const actions = element("div", "session-actions");
    this.picker.setAttribute("aria-label", "Agent");
    this.picker.title = "Agent";
    this.newSession.type = "button";
    this.newSession.title = "Start a new session with the selected agent";
    actions.append(this.picker, this.newSession);

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
    this.permissions.append(modeField, this.agentMode, rulesToggle);
    this.element.append(identity, actions, this.permissions, this.bypassWarning);

    this.picker.addEventListener("change", () => {
      post({ type: "selectAgent", name: this.picker.value });
    });
    this.newSession.addEventListener("click", () => post({ type: "newSession" }));
    this.modeSelect.addEventListener("change", () => {
      post({ type: "setMode", mode: this.modeSelect.value as Mode });
    });
    this.render(null);
  }

  render(session: SessionView | null): void {
    if (session === null) {
      this.agent.textContent = "Tether";
      this.agent.removeAttribute("title");
      this.showStatus({ type: "starting", step: "Connecting…" });
      this.picker.hidden = true;
      this.permissions.hidden = true;
      this.bypassWarning.hidden = true;
      delete this.element.dataset["mode"];
      return;
    }
    this.agent.textContent = session.agent;
    if (session.agentInfo !== null) this.agent.title = session.agentInfo;
    else this.agent.removeAttribute("title");
    this.showStatus(session.status);

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
    const agentMode = permissions.agentMode;
    this.agentMode.hidden = agentMode === null;
    this.agentMode.textContent = agentMode === null ? "" : `Agent mode: ${agentMode}`;
    this.agentMode.title = agentMode === null ? "" : "The agent's own mode; Tether sends it yours when they match";
  }

  private showStatus(status: SessionStatus): void {
    this.status.dataset["status"] = status.type;
    switch (status.type) {
      case "starting":
        this.status.textContent = status.step;
        break;
      case "ready":
        this.status.textContent = "Ready";
        break;
      case "failed":
      case "exited":
        this.status.textContent = status.message;
        break;
    }
    this.status.title = this.status.textContent ?? "";
  }
}
