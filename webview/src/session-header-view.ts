// The chat header (`header.session`): which agent, how its session stands, and the two session
// actions (pick another agent, start a new session).
//
// The picker shows the host's choice; choosing sends `selectAgent` and the host's next header
// patch says what actually happened, so the picker is reset to the host's value on every update.

import { element } from "./element";
import type { PostIntent, SessionStatus, SessionView } from "./protocol";

export class SessionHeaderView {
  readonly element: HTMLElement;
  private readonly agent = element("span", "session-agent");
  private readonly status = element("span", "session-status");
  private readonly picker = element("select", "session-picker");
  private readonly newSession = element("button", "session-new", "New session");
  private shownProfiles = "";

  constructor(post: PostIntent) {
    this.element = element("header", "session");
    const identity = element("div", "session-identity");
    identity.append(this.agent, this.status);
    const actions = element("div", "session-actions");
    this.picker.setAttribute("aria-label", "Agent");
    this.picker.title = "Agent";
    this.newSession.type = "button";
    this.newSession.title = "Start a new session with the selected agent";
    actions.append(this.picker, this.newSession);
    this.element.append(identity, actions);

    this.picker.addEventListener("change", () => {
      post({ type: "selectAgent", name: this.picker.value });
    });
    this.newSession.addEventListener("click", () => post({ type: "newSession" }));
    this.render(null);
  }

  render(session: SessionView | null): void {
    if (session === null) {
      this.agent.textContent = "Tether";
      this.agent.removeAttribute("title");
      this.showStatus({ type: "starting", step: "Connecting…" });
      this.picker.hidden = true;
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
