// The agent's plan (`aside.plan`): a checklist, hidden while the agent has none.

import { element } from "./element";
import type { PlanEntryView } from "./protocol";

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
        item.title = `${entry.status.replace("_", " ")}, ${entry.priority} priority`;
        return item;
      }),
    );
  }
}
