// The changes bar (`section.changes-bar`), above the composer: the files the agent changed this
// turn and any earlier change still waiting for a decision, each with its +/− and where its
// review stands. A row opens its file's diff; "Review all" opens every change in one multi-file
// diff view; a row's Keep all / Reject all (icon buttons, ✓ and ↶, named for screen readers)
// decide what is still pending in that file. Compact: one line per file.
//
// Like the rules panel, it shows the host's list and sends intents, and is only redrawn when the
// list changed, so a patch does not take the focus away from a row. Whether the rows are shown
// is the webview's own UI state; the summary line is the toggle and is always visible.

import { diffStats } from "./diff-view";
import { element, icon, iconButton } from "./element";
import type { ChangePhase, ChangedFileView, PostIntent } from "./protocol";
import type { ChangesBarState } from "./ui-state";

const LIST_ID = "tether-changes-list";

export class ChangesBarView {
  readonly element = element("section", "changes-bar");
  private readonly summary = element("button", "changes-summary");
  private readonly summaryText = element("span", "changes-summary-text");
  private readonly openAll = element("button", "changes-open-all", "Review all");
  private readonly list = element("ul", "changes-list");
  private shown = "";

  constructor(
    private readonly post: PostIntent,
    private readonly state: ChangesBarState,
  ) {
    this.element.setAttribute("aria-label", "Files changed");
    this.list.id = LIST_ID;
    this.summary.type = "button";
    this.summary.setAttribute("aria-controls", LIST_ID);
    this.summary.append(icon("chevron-right"), this.summaryText);
    this.summary.addEventListener("click", () => {
      this.state.changesOpen = !this.state.changesOpen;
      this.showOpen();
    });
    this.openAll.type = "button";
    this.openAll.title = "Open every changed file in one diff view";
    this.openAll.addEventListener("click", () => this.post({ type: "review", intent: { type: "openAll" } }));
    const head = element("div", "changes-head");
    head.append(this.summary, this.openAll);
    this.element.append(head, this.list);
    this.showOpen();
    this.render([]);
  }

  render(changes: ChangedFileView[]): void {
    const signature = JSON.stringify(changes);
    if (signature === this.shown) return;
    this.shown = signature;
    this.element.hidden = changes.length === 0;
    const text = summaryText(changes);
    this.summaryText.textContent = text;
    // The line is cut to the sidebar's width: its tooltip has all of it.
    this.summary.title = `${text}. Show or hide the changed files`;
    this.list.replaceChildren(...changes.map((change) => this.row(change)));
  }

  private showOpen(): void {
    const open = this.state.changesOpen;
    this.list.hidden = !open;
    this.summary.setAttribute("aria-expanded", String(open));
  }

  private row(change: ChangedFileView): HTMLElement {
    const row = element("li", "changes-row");
    row.dataset["changeId"] = String(change.change);
    row.dataset["origin"] = change.origin;
    row.dataset["phase"] = change.phase.type;
    row.dataset["kind"] = change.kind;
    const open = (): void => this.post({ type: "review", intent: { type: "open", change: change.change } });
    // The file's name first, then its folder, dimmed, as VS Code's Source Control lists files:
    // cut to a narrow sidebar's width, a path lost its end, which is the name ("src/compone…").
    const slash = change.label.lastIndexOf("/");
    const label = element("button", "changes-label");
    label.append(element("span", "changes-name", change.label.slice(slash + 1)));
    if (slash > 0) label.append(element("span", "changes-folder", change.label.slice(0, slash)));
    label.type = "button";
    label.title = `Open the diff of ${change.label}`;
    label.setAttribute("aria-label", change.label);
    const state = element("span", "changes-state", stateText(change));
    // A narrow side bar cuts the state short: its tooltip has it whole.
    state.title = stateText(change);
    if ("message" in change.phase) state.title = change.phase.message;
    else if ("reason" in change.phase) state.title = change.phase.reason;
    row.append(label, diffStats("changes-stats", change.added, change.removed), state);
    if (change.pending > 0 && (change.phase.type === "proposed" || change.phase.type === "applied")) {
      const applied = change.phase.type === "applied";
      const keep = iconButton("changes-keep-all", `Keep all: keep every change still waiting in ${change.label}`, "check");
      keep.addEventListener("click", () =>
        this.post({ type: "review", intent: { type: "all", change: change.change, keep: true } }),
      );
      const reject = iconButton(
        "changes-reject-all",
        applied
          ? `Revert all: put back the old text of every hunk still waiting in ${change.label}`
          : `Reject all: write none of the hunks still waiting in ${change.label}`,
        "discard",
      );
      reject.addEventListener("click", () =>
        this.post({ type: "review", intent: { type: "all", change: change.change, keep: false } }),
      );
      const buttons = element("span", "changes-buttons");
      buttons.append(keep, reject);
      row.append(buttons);
    }
    // The whole row opens the diff (the label is its keyboard target); its own buttons do not.
    row.addEventListener("click", (event) => {
      const target = event.target instanceof HTMLElement ? event.target.closest("button") : null;
      if (target === null || target === label) open();
    });
    return row;
  }
}

function summaryText(changes: ChangedFileView[]): string {
  // A file changed by the agent and then by a restore is one file, in two rows.
  const count = new Set(changes.map((change) => change.label)).size;
  const files = count === 1 ? "1 file changed" : `${count} files changed`;
  const waiting = changes.filter((change) => change.pending > 0).length;
  return waiting === 0 ? files : `${files}, ${waiting} waiting for review`;
}

function stateText(change: ChangedFileView): string {
  const state = change.pending > 0 ? `${change.pending} to review` : (PHASE_LABELS[change.phase.type] ?? change.phase.type);
  // A restore's row beside the agent's change to the same file says which it is.
  return change.origin === "restore" ? `Restore: ${state}` : state;
}

const PHASE_LABELS: Record<ChangePhase["type"], string> = {
  proposed: "Proposed",
  applied: "On disk",
  writing: "Writing…",
  settled: "Reviewed",
  conflict: "Conflict",
  failed: "Failed",
  unreviewable: "Not reviewable",
};
