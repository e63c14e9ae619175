// The diff editor's side of file review. The engine registers each change it wants reviewed
// (`showReview`); this file serves the change's texts to VS Code's diff editor (a content
// provider for `tether-review:` URIs), opens the diff editor on them, puts Keep/Reject CodeLens
// above each pending hunk of the right side, and shows Keep All/Reject All in the editor title.
// Every decision goes back to the engine as a `review` command: what a decision does is the
// engine's business. Once a change is decided (Keep All, Reject All, or its last hunk), its diff
// editor closes: left open, its right side would go on showing a proposal that is no longer one.

import * as vscode from "vscode";

import { describeError } from "./errors";
import { fileKey } from "./fileAccess";
import type { HostCommand, ReviewDocument, ReviewHunk } from "./generated/protocol";

export const REVIEW_SCHEME = "tether-review";
export const HUNK_COMMAND = "tether.review.hunk";
export const KEEP_ALL_COMMAND = "tether.review.keepAll";
export const REJECT_ALL_COMMAND = "tether.review.rejectAll";
/** True while the active editor shows a change with hunks left to decide (package.json menus). */
export const REVIEW_ACTIVE_CONTEXT = "tether.reviewActive";

type Side = "original" | "proposed";

/**
 * The URI of one side of a change: the file's own path, so that the editor picks the language
 * from the file name and the multi-file diff view does not take the two sides for a rename, with
 * the change and the side in the query.
 */
export function reviewUri(review: ReviewDocument, side: Side): vscode.Uri {
  return vscode.Uri.from({
    scheme: REVIEW_SCHEME,
    path: vscode.Uri.file(review.path).path,
    query: `change=${review.change}&side=${side}`,
  });
}

function parseReviewUri(uri: vscode.Uri): { change: number; side: Side } | undefined {
  if (uri.scheme !== REVIEW_SCHEME) {
    return undefined;
  }
  const query = new URLSearchParams(uri.query);
  const change = Number(query.get("change"));
  const side = query.get("side");
  if (!Number.isSafeInteger(change) || (side !== "original" && side !== "proposed")) {
    return undefined;
  }
  return { change, side };
}

/** The right side of a change in the diff editor: its proposed text, or the file once on disk. */
function rightSideUri(review: ReviewDocument): vscode.Uri {
  return review.proposed === null ? vscode.Uri.file(review.path) : reviewUri(review, "proposed");
}

/** The changes the engine registered, and the diff editors opened on them. */
export class ReviewRegistry implements vscode.Disposable {
  private readonly reviews = new Map<number, ReviewDocument>();
  private readonly changed = new vscode.EventEmitter<void>();
  private readonly replaced = new vscode.EventEmitter<ReviewDocument>();
  /** A change was registered, replaced, updated, or all were forgotten. */
  readonly onDidChange = this.changed.event;
  /** A change's texts were registered or replaced: diff editors showing them must reload. */
  readonly onDidReplaceDocument = this.replaced.event;

  constructor(private readonly log: vscode.LogOutputChannel) {}

  /** Registers (or replaces) a change; `open` opens the diff editor on it. */
  show(review: ReviewDocument, open: boolean): void {
    const before = this.reviews.get(review.change);
    this.reviews.set(review.change, review);
    this.replaced.fire(review);
    this.changed.fire();
    if (open) {
      this.open([review.change], review.label);
    } else if (review.settled && before !== undefined && !before.settled) {
      this.closeDiffEditors(review.change);
    }
  }

  update(change: number, hunks: ReviewHunk[], settled: boolean): void {
    const review = this.reviews.get(change);
    if (review === undefined) {
      this.log.warn(`The engine updated change ${change}, which this window does not have.`);
      return;
    }
    this.reviews.set(change, { ...review, hunks, settled });
    this.changed.fire();
    if (settled && !review.settled) {
      this.closeDiffEditors(change);
    }
  }

  /**
   * Closes the diff editors of a change that has just been decided (its left side is the
   * change's original). One whose right side is the file with unsaved edits stays: closing it
   * could ask the person to save, and it shows the file as it is, not an empty side.
   */
  private closeDiffEditors(change: number): void {
    const tabs = vscode.window.tabGroups.all
      .flatMap((group) => group.tabs)
      .filter(
        (tab) =>
          tab.input instanceof vscode.TabInputTextDiff &&
          parseReviewUri(tab.input.original)?.change === change &&
          !tab.isDirty,
      );
    if (tabs.length === 0) {
      return;
    }
    vscode.window.tabGroups.close(tabs).then(undefined, (error: unknown) => {
      this.log.warn(`Could not close the diff editor of change ${change}: ${describeError(error)}`);
    });
  }

  /** Forgets the changes of session `session` (a closed session's), or every change. */
  clear(session?: number): void {
    if (session === undefined) {
      this.reviews.clear();
    } else {
      for (const [change, review] of this.reviews) {
        if (review.session === session) {
          this.reviews.delete(change);
        }
      }
    }
    this.changed.fire();
  }

  get(change: number): ReviewDocument | undefined {
    return this.reviews.get(change);
  }

  all(): ReviewDocument[] {
    return [...this.reviews.values()];
  }

  /**
   * The change whose right side `uri` is: its proposed text, or the file of a change already on
   * disk. When several changes of one file are on disk, the newest one still waiting for a
   * decision: its hunks are the ones that fit the file.
   */
  rightSideOf(uri: vscode.Uri): ReviewDocument | undefined {
    const parsed = parseReviewUri(uri);
    if (parsed !== undefined) {
      const review = this.reviews.get(parsed.change);
      return parsed.side === "proposed" && review?.proposed !== null ? review : undefined;
    }
    if (uri.scheme !== "file") {
      return undefined;
    }
    let newest: ReviewDocument | undefined;
    for (const review of this.reviews.values()) {
      const fits = review.proposed === null && !review.settled && fileKey(review.path) === uri.fsPath;
      if (fits && (newest === undefined || review.change > newest.change)) {
        newest = review;
      }
    }
    return newest;
  }

  /** The change an editor on `uri` shows, on either side of the diff. */
  shownIn(uri: vscode.Uri): ReviewDocument | undefined {
    const parsed = parseReviewUri(uri);
    return parsed !== undefined ? this.reviews.get(parsed.change) : this.rightSideOf(uri);
  }

  /** Opens changes: one in the diff editor, several in the multi-file diff view. */
  open(changes: number[], title: string): void {
    const reviews: ReviewDocument[] = [];
    for (const change of changes) {
      const review = this.reviews.get(change);
      if (review === undefined) {
        this.log.warn(`Cannot open change ${change}: this window does not have it.`);
      } else {
        reviews.push(review);
      }
    }
    const [first] = reviews;
    if (first === undefined) {
      return;
    }
    const opened =
      reviews.length === 1
        ? vscode.commands.executeCommand(
            "vscode.diff",
            reviewUri(first, "original"),
            rightSideUri(first),
            `${first.label} (Tether review)`,
            { preview: false },
          )
        : vscode.commands.executeCommand(
            "vscode.changes",
            title,
            reviews.map((review) => [vscode.Uri.file(review.path), reviewUri(review, "original"), rightSideUri(review)]),
          );
    opened.then(undefined, (error: unknown) => {
      const message = `Tether could not open the diff editor: ${describeError(error)}`;
      this.log.error(message);
      void vscode.window.showErrorMessage(message);
    });
  }

  dispose(): void {
    this.changed.dispose();
    this.replaced.dispose();
  }
}

/** Serves each side's text of a registered change to the diff editor. */
export class ReviewContentProvider implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  private readonly subscription: vscode.Disposable;
  readonly onDidChange = this.changed.event;

  constructor(private readonly registry: ReviewRegistry) {
    this.subscription = registry.onDidReplaceDocument((review) => {
      this.changed.fire(reviewUri(review, "original"));
      this.changed.fire(reviewUri(review, "proposed"));
    });
  }

  provideTextDocumentContent(uri: vscode.Uri): string | Thenable<string> {
    const parsed = parseReviewUri(uri);
    const review = parsed === undefined ? undefined : this.registry.get(parsed.change);
    if (parsed === undefined || review === undefined) {
      // A diff editor left open after its change was forgotten (a new session) shows nothing.
      return "";
    }
    if (parsed.side === "original") {
      return review.original;
    }
    if (review.proposed !== null) {
      return review.proposed;
    }
    // The change is in the file now (kept, or made by the agent itself): a view still showing
    // its proposal (the multi-file diff view, which is not closed with it) shows the file as it
    // is, never an empty side as if the agent had emptied it. A file that is gone (a created file
    // reverted) is empty.
    return vscode.workspace.openTextDocument(vscode.Uri.file(review.path)).then(
      (document) => document.getText(),
      () => "",
    );
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}

/** Keep and Reject (or Revert, once on disk) above each pending hunk of a change's right side. */
export class ReviewCodeLensProvider implements vscode.CodeLensProvider {
  readonly onDidChangeCodeLenses: vscode.Event<void>;

  constructor(private readonly registry: ReviewRegistry) {
    this.onDidChangeCodeLenses = registry.onDidChange;
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const review = this.registry.rightSideOf(document.uri);
    if (review === undefined) {
      return [];
    }
    const rejectTitle = review.applied ? "Revert" : "Reject";
    const lastLine = Math.max(0, document.lineCount - 1);
    return review.hunks
      .filter((hunk) => hunk.state === "pending")
      .flatMap((hunk) => {
        // A pure deletion sits before line `newStart`, which is one past the end when the file's
        // last lines went.
        const line = Math.min(hunk.newStart, lastLine);
        const range = new vscode.Range(line, 0, line, 0);
        const decide = (title: string, keep: boolean) =>
          new vscode.CodeLens(range, { title, command: HUNK_COMMAND, arguments: [review.change, hunk.index, keep] });
        return [decide("Keep", true), decide(rejectTitle, false)];
      });
  }
}

/**
 * Registers the content provider, the CodeLens, the review commands and the context key that
 * shows Keep All/Reject All; decisions are sent to the engine with `send`.
 */
export function registerReviewUi(
  registry: ReviewRegistry,
  send: (command: HostCommand) => void,
  log: vscode.LogOutputChannel,
): vscode.Disposable {
  let reviewActive: boolean | undefined;
  const updateContext = () => {
    const uri = vscode.window.activeTextEditor?.document.uri;
    const review = uri === undefined ? undefined : registry.shownIn(uri);
    const active = review !== undefined && !review.settled;
    if (active !== reviewActive) {
      reviewActive = active;
      void vscode.commands.executeCommand("setContext", REVIEW_ACTIVE_CONTEXT, active);
    }
  };
  const decideAll = (keep: boolean) => (target?: unknown) => {
    // The editor title passes the URI of the editor its button is on; the palette passes nothing.
    const uri = target instanceof vscode.Uri ? target : vscode.window.activeTextEditor?.document.uri;
    const review = uri === undefined ? undefined : registry.shownIn(uri);
    if (review === undefined || review.settled) {
      void vscode.window.showInformationMessage("The active editor shows no Tether change waiting for a decision.");
      return;
    }
    send({ type: "review", intent: { type: "all", change: review.change, keep } });
  };
  const decideHunk = (change: unknown, hunk: unknown, keep: unknown) => {
    // Any extension can run a command: its arguments are checked like any other input.
    if (!isIndex(change) || !isIndex(hunk) || typeof keep !== "boolean") {
      log.warn(`Ignored ${HUNK_COMMAND} with arguments ${JSON.stringify([change, hunk, keep])}.`);
      return;
    }
    send({ type: "review", intent: { type: "hunk", change, hunk, keep } });
  };
  const contentProvider = new ReviewContentProvider(registry);
  const disposable = vscode.Disposable.from(
    contentProvider,
    vscode.workspace.registerTextDocumentContentProvider(REVIEW_SCHEME, contentProvider),
    vscode.languages.registerCodeLensProvider(
      [{ scheme: REVIEW_SCHEME }, { scheme: "file" }],
      new ReviewCodeLensProvider(registry),
    ),
    vscode.commands.registerCommand(HUNK_COMMAND, decideHunk),
    vscode.commands.registerCommand(KEEP_ALL_COMMAND, decideAll(true)),
    vscode.commands.registerCommand(REJECT_ALL_COMMAND, decideAll(false)),
    vscode.window.onDidChangeActiveTextEditor(updateContext),
    registry.onDidChange(updateContext),
  );
  updateContext();
  return disposable;
}

function isIndex(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}
