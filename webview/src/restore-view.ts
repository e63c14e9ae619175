// A restore card (`.entry.restore`): the person asked to put the files the agent changed back to
// how they were before a prompt (a checkpoint), or to undo such a restore.
//
// The engine reads the files and proposes one change per file; those follow this card in the
// thread as file change cards (origin `restore`), reviewed hunk by hunk like the agent's writes,
// so nothing is written until the person keeps it. This card is the summary above them: which
// prompt, where the restore stands, the files (each a link down to its change card), the files
// the person edited after the checkpoint (restoring reverts those edits too), and Undo once
// something was written. The engine replaces the entry as the state changes; the card is refilled
// in place so the focus on it survives.

import { element, icon } from "./element";
import { changeLink } from "./file-change-view";
import { pathLink } from "./path-link";
import type { PostIntent, RestoreFileView, RestoreState, RestoreView } from "./protocol";

/** Each state in words: what is happening, and what the person does next. */
const STATE_TEXT: Record<RestoreState, string> = {
  reading: "Reading the files…",
  planned: "Review each file's change below: nothing is written until you keep it.",
  decided: "Done: every file's change below is decided, and what you kept is written.",
  nothingToRestore: "Nothing to restore: the files are as they were then.",
  undone: "Undone.",
};

const CONFLICT_TEXT = "you edited it after this checkpoint; restoring reverts your edits too";

export class RestoreCard {
  readonly element: HTMLElement;
  private readonly title = element("span", "restore-title");
  private readonly glyph = element("span", "restore-icon");
  /** Kept across updates and live, so a screen reader hears the state change. */
  private readonly state = element("div", "restore-state");
  private readonly body = element("div", "restore-body");

  constructor(
    index: number,
    private readonly post: PostIntent,
  ) {
    this.element = element("div", "entry restore");
    this.element.dataset["index"] = String(index);
    this.element.setAttribute("role", "group");
    this.element.tabIndex = -1;
    this.state.setAttribute("role", "status");
    const header = element("div", "restore-header");
    header.append(this.glyph, this.title);
    this.element.append(header, this.state, this.body);
  }

  update(restore: RestoreView): void {
    const active = this.element.ownerDocument.activeElement;
    const hadUndoFocus = active !== null && this.element.contains(active) && active.classList.contains("restore-undo");
    const card = this.element;
    card.dataset["restoreId"] = String(restore.id);
    card.dataset["checkpoint"] = String(restore.checkpoint);
    card.dataset["state"] = restore.state;
    if (restore.undoes === null) delete card.dataset["undoes"];
    else card.dataset["undoes"] = String(restore.undoes);

    const title = restoreTitle(restore);
    this.title.textContent = title;
    card.setAttribute("aria-label", title);
    this.glyph.replaceChildren(icon(restore.undoes === null ? "history" : "discard"));
    const stateText = STATE_TEXT[restore.state] ?? restore.state;
    if (this.state.textContent !== stateText) this.state.textContent = stateText;

    const children: HTMLElement[] = [];
    if (restore.files.length > 0) {
      const files = element("ul", "restore-files");
      files.setAttribute("aria-label", "Files");
      files.append(...restore.files.map((file) => this.file(file)));
      children.push(files);
    }
    if (restore.undoable) children.push(this.undo(restore));
    this.body.replaceChildren(...children);
    this.body.hidden = children.length === 0;
    if (hadUndoFocus) (card.querySelector<HTMLButtonElement>("button.restore-undo:not(:disabled)") ?? card).focus({ preventScroll: true });
  }

  /** A file: a link down to its change card (or, with none, to the file), and what to know about it. */
  private file(file: RestoreFileView): HTMLElement {
    const item = element("li", "restore-file");
    item.dataset["path"] = file.path;
    item.dataset["conflict"] = String(file.conflict);
    if (file.change !== null) item.dataset["changeId"] = String(file.change);
    item.append(
      file.change !== null
        ? changeLink(this.element, file.change, file.label, "path-link restore-file-link", file.label)
        : pathLink("restore-file-link", this.post, file.path, file.label, null),
    );
    if (file.conflict) {
      const conflict = element("div", "restore-file-note restore-file-conflict");
      conflict.append(icon("warning"), element("span", undefined, CONFLICT_TEXT));
      item.append(conflict);
    }
    if (file.problem !== null && file.problem !== "") {
      const problem = element("div", "restore-file-note restore-file-problem");
      problem.append(icon("error"), element("span", undefined, file.problem));
      item.append(problem);
    }
    return item;
  }

  /** Undo: disabled once clicked, until the host's redraw says what became of it. */
  private undo(restore: RestoreView): HTMLElement {
    const button = element("button", "restore-undo", "Undo restore");
    button.type = "button";
    button.title = "Put the files back as they were before this restore: each file's change is proposed for review";
    button.addEventListener("click", () => {
      button.disabled = true;
      this.post({ type: "undoRestore", restore: restore.id });
    });
    const actions = element("div", "restore-actions");
    actions.append(button);
    return actions;
  }
}

/** The card's title: which prompt's checkpoint, and whether this undoes a restore. */
export function restoreTitle(restore: RestoreView): string {
  const prompt = restore.prompt.trim() === "" ? "that prompt" : `“${restore.prompt}”`;
  return restore.undoes === null ? `Restore the code to before ${prompt}` : `Undo the restore to before ${prompt}`;
}
