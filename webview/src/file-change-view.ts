// A file change card (`.file-change`): one file the agent changed, with its hunks and the
// person's decisions on them.
//
// Two kinds of change reach the chat. A write the agent proposed (origin `write`) waits in
// phase `proposed` with nothing on disk: each hunk is kept or rejected. An edit already on disk
// (origin `agent`, or a write the mode or a rule let through) is in phase `applied`: each hunk is
// kept or reverted. A restore to a checkpoint (origin `restore`, see restore-view.ts) proposes
// each file's old text the same way, and the card says it is a restore rather than the agent's
// write. The engine decides what every decision means and what is written; the card
// shows the change as the host last sent it and sends intents. A click disables the buttons it
// decided until the host's next `replace` of the entry redraws the card, and the focus is put
// back on the matching button of the redrawn card, so deciding hunk after hunk from the keyboard
// does not lose the person's place.

import { diffBlock, diffStats, hiddenLinesNote } from "./diff-view";
import { element, icon } from "./element";
import type { ChangePhase, FileChangeKind, FileChangeView, HunkView, PostIntent, ReviewIntent } from "./protocol";
import { keepInTabOrder } from "./thread-keys";

const KIND_LABELS: Record<FileChangeKind, string> = {
  modified: "",
  created: "new file",
  deleted: "deleted",
};

/** The buttons whose focus is carried over a redraw; the first one left takes it otherwise. */
const DECISION_BUTTONS = ["hunk-keep", "hunk-reject", "change-keep-all", "change-reject-all", "change-retry", "change-open"];

export class FileChangeCard {
  readonly element: HTMLElement;

  constructor(
    index: number,
    private readonly post: PostIntent,
  ) {
    this.element = element("div", "entry file-change");
    this.element.dataset["index"] = String(index);
    this.element.setAttribute("role", "group");
    // A tool call's "Review in the change below" brings the focus here when no button is left.
    this.element.tabIndex = -1;
  }

  update(change: FileChangeView): void {
    const focused = this.focusedButton();
    const card = this.element;
    card.dataset["changeId"] = String(change.id);
    card.dataset["phase"] = change.phase.type;
    card.dataset["origin"] = change.origin;
    card.dataset["kind"] = change.kind;
    card.setAttribute("aria-label", `${change.origin === "restore" ? "Restore" : "File change"}: ${change.label}`);

    const decidable = isDecidable(change.phase);
    const children: HTMLElement[] = [this.header(change), phaseLine(change)];
    if (change.degraded) {
      const note = "Coarse diff: the file is too large to compare line by line in time, so hunks are bigger than they need be.";
      children.push(element("div", "change-degraded", note));
    }
    const actions = this.actions(change, decidable);
    if (actions !== null) children.push(actions);
    if (change.hunks.length > 0) {
      const hunks = element("div", "hunks");
      for (const hunk of change.hunks) hunks.append(this.hunk(change, hunk, decidable));
      children.push(hunks);
    }
    if (change.outcome !== null && change.outcome !== "") {
      const outcome = element("div", "change-outcome", change.outcome);
      outcome.title = change.origin === "restore" ? "What was written" : "What came of the change";
      children.push(outcome);
    }
    card.replaceChildren(...children);
    this.restoreFocus(focused);
  }

  private header(change: FileChangeView): HTMLElement {
    const header = element("div", "file-change-header");
    const label = element("button", "file-change-label", change.label);
    label.type = "button";
    label.title = `Open the diff of ${change.path}`;
    label.disabled = change.phase.type === "unreviewable";
    label.addEventListener("click", () => this.post({ type: "review", intent: { type: "open", change: change.id } }));
    header.append(label);
    // A restore's card sits among the agent's: the badge says whose change this is.
    if (change.origin === "restore") header.append(element("span", "file-change-kind file-change-origin", "restore"));
    const kind = KIND_LABELS[change.kind] ?? change.kind;
    if (kind !== "") header.append(element("span", "file-change-kind", kind));
    header.append(diffStats("file-change-stats", change.added, change.removed));
    return header;
  }

  /** The whole change's buttons; none once there is nothing left to do but look. */
  private actions(change: FileChangeView, decidable: boolean): HTMLElement | null {
    const buttons: HTMLButtonElement[] = [];
    const id = change.id;
    if (decidable && hasPending(change)) {
      const applied = change.phase.type === "applied";
      buttons.push(
        this.decisionButton("change-keep-all", "Keep all", "Keep every change still waiting for a decision", () => ({
          type: "all",
          change: id,
          keep: true,
        })),
        this.decisionButton(
          "change-reject-all",
          applied ? "Revert all" : "Reject all",
          applied ? "Put back the old text of every hunk still waiting" : "Write none of the hunks still waiting",
          () => ({ type: "all", change: id, keep: false }),
        ),
      );
    } else if (change.phase.type === "conflict" || change.phase.type === "failed") {
      buttons.push(
        this.decisionButton("change-retry", "Review again", "Show this change against the file as it is now", () => ({
          type: "retry",
          change: id,
        })),
      );
      // Dropping a conflicted change is only possible while nothing of it is on disk; a change
      // the agent made itself is on disk from the start.
      if (change.phase.type === "conflict" && !change.applied) {
        buttons.push(
          this.decisionButton("change-reject-all", "Reject", "Drop this change: nothing is written", () => ({
            type: "all",
            change: id,
            keep: false,
          })),
        );
      }
    }
    if (change.phase.type !== "unreviewable") {
      const open = element("button", "change-open", "Open diff");
      open.type = "button";
      open.title = "Open this change in the diff editor";
      open.addEventListener("click", () => this.post({ type: "review", intent: { type: "open", change: id } }));
      // While the change waits for a decision, looking at it is part of answering.
      if (buttons.length > 0) keepInTabOrder(open);
      buttons.push(open);
    }
    if (buttons.length === 0) return null;
    const actions = element("div", "change-actions");
    actions.append(...buttons);
    return actions;
  }

  private hunk(change: FileChangeView, hunk: HunkView, decidable: boolean): HTMLElement {
    const node = element("div", "hunk");
    node.dataset["hunkIndex"] = String(hunk.index);
    node.dataset["state"] = hunk.state;
    const head = element("div", "hunk-head");
    const where = element("span", "hunk-header", hunkLines(hunk));
    // The unified diff's own header, for whoever reads diffs that way.
    where.title = `@@ -${hunk.oldLine},${hunk.oldCount} +${hunk.newLine},${hunk.newCount} @@`;
    head.append(where);
    if (hunk.state !== "pending") {
      head.append(element("span", "hunk-state", hunkStateLabel(change, hunk)));
    } else if (decidable) {
      const applied = change.phase.type === "applied";
      const number = hunk.index + 1;
      const keep = this.decisionButton("hunk-keep", "Keep", `Keep hunk ${number}`, () => ({
        type: "hunk",
        change: change.id,
        hunk: hunk.index,
        keep: true,
      }));
      const reject = this.decisionButton(
        "hunk-reject",
        applied ? "Revert" : "Reject",
        applied ? `Put back the old text of hunk ${number}` : `Do not write hunk ${number}`,
        () => ({ type: "hunk", change: change.id, hunk: hunk.index, keep: false }),
      );
      keep.setAttribute("aria-label", `Keep hunk ${number}`);
      reject.setAttribute("aria-label", `${applied ? "Revert" : "Reject"} hunk ${number}`);
      const buttons = element("span", "hunk-buttons");
      buttons.append(keep, reject);
      head.append(buttons);
    }
    node.append(head);
    if (hunk.lines.length > 0) node.append(diffBlock("hunk-lines", hunk.lines));
    if (hunk.hiddenLines > 0) node.append(hiddenLinesNote(hunk.hiddenLines));
    return node;
  }

  /**
   * A button that sends one review intent. Once clicked, it and the buttons deciding the same
   * thing (its hunk's, or every decision button for a whole-change one) are disabled: the host's
   * redraw of the card is what says the decision was taken.
   */
  private decisionButton(
    className: string,
    text: string,
    title: string,
    intent: () => ReviewIntent,
  ): HTMLButtonElement {
    const button = element("button", className, text);
    button.type = "button";
    button.title = title;
    // A question waiting for the person: Tab reaches it without going through the thread's entries.
    keepInTabOrder(button);
    button.addEventListener("click", () => {
      const scope = className.startsWith("hunk-") ? button.closest(".hunk") : this.element;
      for (const other of scope?.querySelectorAll<HTMLButtonElement>("button:not(.change-open):not(.file-change-label)") ?? []) {
        other.disabled = true;
      }
      button.classList.add("chosen");
      this.post({ type: "review", intent: intent() });
    });
    return button;
  }

  /** Which decision button has the focus inside this card, to find its match after a redraw. */
  private focusedButton(): { className: string; hunk: number | null } | null {
    const active = this.element.ownerDocument.activeElement;
    if (active === null || !this.element.contains(active)) return null;
    const className = DECISION_BUTTONS.find((name) => active.classList.contains(name));
    if (className === undefined) return null;
    const hunk = active.closest<HTMLElement>(".hunk")?.dataset["hunkIndex"];
    return { className, hunk: hunk === undefined ? null : Number(hunk) };
  }

  /**
   * Puts the focus on the same button if it is still there, else on the same button of the next
   * hunk still pending (the one a person going down the list decides next), else on the first
   * decision button the card still has.
   */
  private restoreFocus(focused: { className: string; hunk: number | null } | null): void {
    if (focused === null) return;
    const buttons = (className: string) => [...this.element.querySelectorAll<HTMLButtonElement>(`button.${className}`)];
    const hunkOf = (button: HTMLElement) => Number(button.closest<HTMLElement>(".hunk")?.dataset["hunkIndex"] ?? -1);
    const same = buttons(focused.className);
    const from = focused.hunk ?? -1;
    const target =
      same.find((button) => hunkOf(button) === from) ??
      same.find((button) => hunkOf(button) > from) ??
      same[0] ??
      DECISION_BUTTONS.flatMap(buttons)[0];
    target?.focus({ preventScroll: true });
  }
}

/** Whether the person can decide hunks now: a proposed write or a change on disk. */
function isDecidable(phase: ChangePhase): boolean {
  return phase.type === "proposed" || phase.type === "applied";
}

/**
 * Whether anything still waits for a decision. A change without hunks (an empty file created or
 * deleted) is decided as a whole, and the engine moves its phase on once it is.
 */
function hasPending(change: FileChangeView): boolean {
  return change.hunks.length === 0 || change.hunks.some((hunk) => hunk.state === "pending");
}

/** Where a hunk is, in words: the lines it gives the file, or the lines it takes out. */
function hunkLines(hunk: HunkView): string {
  const span = (first: number, count: number): string =>
    count <= 1 ? `Line ${first}` : `Lines ${first}–${first + count - 1}`;
  if (hunk.newCount === 0) return `${span(hunk.oldLine, hunk.oldCount)} removed`;
  return span(hunk.newLine, hunk.newCount);
}

/** Whether "rejected" meant putting back text that was already on disk. */
function wasOnDisk(change: FileChangeView): boolean {
  return change.origin === "agent" || change.phase.type === "applied";
}

function hunkStateLabel(change: FileChangeView, hunk: HunkView): string {
  if (hunk.state === "kept") return "Kept";
  return wasOnDisk(change) ? "Reverted" : "Rejected";
}

/** How a change already on disk came to be there, by its origin. */
const APPLIED_LINES: Record<string, string> = {
  agent: "Changed on disk by the agent",
  // Why it was written without review is the card's outcome line ("allowed by your … mode").
  write: "Written to disk, not reviewed yet",
  restore: "Restored on disk",
};

/** One short line saying where the change stands. */
function phaseLine(change: FileChangeView): HTMLElement {
  const phase = change.phase;
  switch (phase.type) {
    case "proposed":
      return element(
        "div",
        "change-phase",
        change.origin === "restore"
          ? "Restore waiting for your review — nothing written yet"
          : "Waiting for your review — nothing written yet",
      );
    case "applied":
      return element("div", "change-phase", APPLIED_LINES[change.origin] ?? "Changed on disk");
    case "writing":
      return element("div", "change-phase", "Writing…");
    case "settled": {
      if (change.hunks.length === 0) {
        return element("div", "change-phase", change.whole === "kept" ? "Kept" : wasOnDisk(change) ? "Reverted" : "Rejected");
      }
      const kept = change.hunks.filter((hunk) => hunk.state === "kept").length;
      const rejected = change.hunks.filter((hunk) => hunk.state === "rejected").length;
      return element("div", "change-phase", `Kept ${kept}, ${wasOnDisk(change) ? "reverted" : "rejected"} ${rejected}`);
    }
    case "conflict":
    case "failed": {
      const line = element("div", "change-phase change-message", phase.message);
      line.setAttribute("role", "alert");
      return line;
    }
    case "unreviewable":
      return element("div", "change-phase change-message", phase.reason);
  }
  // A phase a newer host added: the card still says something true.
  return element("div", "change-phase", "Changed");
}

/**
 * The event a link to a change card sends up the thread (its detail: the change's id) before it
 * looks for the card: the thread is virtualized, and draws the card first when it is out of sight.
 */
export const REVEAL_CHANGE_EVENT = "tether-reveal-change";

/**
 * A button that brings the person to the file change card of `change` (scrolled to, its first
 * control focused), from a card above it in the same thread: a tool call's diff, a restore's file.
 */
export function changeLink(
  from: HTMLElement,
  change: number,
  label: string,
  className = "tool-diff-change",
  text = "Review in the change below",
): HTMLButtonElement {
  const link = element("button", className);
  link.type = "button";
  link.append(icon("arrow-down"), text);
  link.title = `Go to the change to ${label}`;
  link.setAttribute("aria-label", `Go to the change to ${label}`);
  link.addEventListener("click", () => {
    // Read first: drawing the change card may take this card out of the thread's window.
    const thread = from.closest<HTMLElement>(".thread") ?? from.parentElement;
    const events = from.ownerDocument.defaultView;
    if (events !== null) from.dispatchEvent(new events.CustomEvent(REVEAL_CHANGE_EVENT, { bubbles: true, detail: change }));
    const target = thread?.querySelector<HTMLElement>(`.file-change[data-change-id="${change}"]`);
    if (target === null || target === undefined) return;
    target.scrollIntoView?.({ block: "nearest" });
    const first = target.querySelector<HTMLButtonElement>("button:not(:disabled)");
    (first ?? target).focus({ preventScroll: true });
  });
  return link;
}
