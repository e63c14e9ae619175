// The agent's plan (`aside.plan`): a checklist, hidden while the agent has none. It is open
// while a turn runs and folds to its title and count when the turn ends, so that a finished (or
// cancelled) plan does not keep a quarter of a narrow sidebar; the person can open or fold it at
// any time, and their choice stands until the next turn starts or ends.

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
  private readonly details = element("details", "plan-details");
  private readonly count = element("span", "plan-count");
  private readonly list = element("ul", "plan-entries");
  /** Whether a turn ran at the last render (null before the first). */
  private running: boolean | null = null;

  constructor() {
    this.element = element("aside", "plan");
    this.element.setAttribute("aria-label", "Plan");
    const title = element("summary", "plan-title", "Plan");
    title.append(this.count);
    this.details.append(title, this.list);
    this.element.append(this.details);
    this.element.hidden = true;
  }

  /** Draws `entries`; `running`: a turn runs (the plan opens when one starts, folds when it ends). */
  render(entries: PlanEntryView[], running: boolean): void {
    this.element.hidden = entries.length === 0;
    if (running !== this.running) {
      this.details.open = running;
      this.running = running;
    }
    const done = entries.filter((entry) => entry.status === "completed").length;
    this.count.textContent = `${done}/${entries.length}`;
    this.count.title = `${done} of ${entries.length} steps done`;
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
