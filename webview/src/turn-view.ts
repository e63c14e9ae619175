// The turn state line (`.turn-state`): whether the agent is working, and how the last turn ended,
// in the person's words ("Finished", "Cancelled", "Stopped: …"), never the protocol's ids.

import { element } from "./element";
import type { TurnState } from "./protocol";

export class TurnView {
  readonly element: HTMLElement;

  constructor() {
    this.element = element("div", "turn-state");
    this.element.setAttribute("role", "status");
    this.render({ type: "idle" });
  }

  render(turn: TurnState): void {
    this.element.dataset["state"] = turn.type;
    this.element.textContent = turnText(turn);
  }
}

export function turnText(turn: TurnState): string {
  switch (turn.type) {
    case "idle":
      return "";
    case "running":
      return "Working…";
    case "ended":
      return stopReasonText(turn.stopReason);
    case "failed":
      return `Failed: ${turn.message}`;
  }
}

/** What the screen reader says when a turn ends. */
export function turnAnnouncement(turn: TurnState): string {
  switch (turn.type) {
    case "ended":
      return `The agent's turn ended: ${stopReasonText(turn.stopReason)}`;
    case "failed":
      return `The agent's turn failed: ${turn.message}`;
    default:
      return turnText(turn);
  }
}

/**
 * An ACP stop reason in the person's words. A reason a newer agent sends is shown as it is
 * (underscores as spaces) rather than hidden.
 */
export function stopReasonText(reason: string): string {
  switch (reason) {
    case "end_turn":
      return "Finished";
    case "cancelled":
      return "Cancelled";
    case "max_tokens":
      return "Stopped: the answer reached its length limit (max tokens)";
    case "max_turn_requests":
      return "Stopped: too many requests in one turn";
    case "refusal":
      return "Stopped: the agent refused";
    default:
      return `Stopped: ${reason.replaceAll("_", " ")}`;
  }
}
