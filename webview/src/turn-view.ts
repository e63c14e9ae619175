// The turn state line (`.turn-state`): whether the agent is working, and how the last turn ended.

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
      return `Done (${turn.stopReason})`;
    case "failed":
      return `Failed: ${turn.message}`;
  }
}
