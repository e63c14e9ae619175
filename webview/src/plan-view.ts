// The agent's plan (`aside.plan`): a checklist, hidden while the agent has none.

import { element } from "./element";
import type { PlanEntryView } from "./protocol";

/** How a plan step's status reads (ACP's ids are not words). */
const PLAN_STATUS_LABELS: Record<string, string> = {
  pending: "To do",
  in_progress: "In progress",
  completed: "Done",
};

const PRIORITY_LABELS: Record<string, string> = {
  high: "high priority",
  medium: "medium priority",
  low: "low priority",
};

export class PlanView {
  readonly element: HTMLElement;
  private readonly list = element("ul", "plan-entries");

  constructor() {
    this.element = element("aside", "plan");
    this.element.setAttribute("aria-label", "Plan");
    this.element.append(element("div", "plan-title", "Plan"), this.list);
    this.element.hidden = true;
  }

  render(entries: PlanEntryView[]): void {
    this.element.hidden = entries.length === 0;
    this.list.replaceChildren(
      ...entries.map((entry) => {
        const item = element("li", "plan-entry");
        item.dataset["status"] = entry.status;
        item.dataset["priority"] = entry.priority;
        item.append(element("span", "plan-mark"), element("span", "plan-text", entry.content));
        item.title = `${PLAN_STATUS_LABELS[entry.status] ?? "To do"}, ${PRIORITY_LABELS[entry.priority] ?? "normal priority"}`;
        return item;
      }),
    );
  }
}
