// The thread's last screen, kept in the webview's own state so that a reloaded window shows it at
// once, before the host has its state to send.
//
// After a window reload the host's engine folds the session's whole log again before it can
// answer `ready` with a snapshot: for a thread of 10,000 entries that is seconds of WebAssembly
// on a busy extension host, while a short thread's snapshot comes at once. What the person saw
// last is the end of the thread, and the webview can keep that much itself: VS Code keeps a
// webview view's `setState` across reloads (`ui-state.ts` saves it with the drafts). So the
// webview saves the end of the thread shown (at most `MAX_ENTRIES` entries and `MAX_CHARS` of
// JSON, the entries before it as places still to come, as in the host's own snapshot of a long
// thread), and at start draws it as the host would, with the header saying "Connecting…".
//
// A restored screen is only a picture of what was: until the host's snapshot replaces it, the
// model counts as not loaded (patches wait for the snapshot), and the chat view takes no answer,
// prompt or click on it (`ChatView` makes its parts inert). The host's snapshot then draws the
// live thread over it, as any snapshot does.
//
// A command still running keeps counting in the picture: its time is saved as of the save, by
// the wall clock (`Date.now()`, which goes on across a reload, unlike `performance.now()`), and
// the restored card adds the time since. Without that it showed the time it had at the last save
// for the second or two before the host's snapshot.

import { type ChangeSet, type ChatModel, applyRestoredScreen } from "./model";
import type { Entry, SessionView, TerminalView, ViewSnapshot } from "./protocol";

/** Entries kept: more than a tall view shows of the shortest ones. */
export const MAX_ENTRIES = 40;
/** The JSON kept at most: `setState` crosses into the workbench at every save. */
export const MAX_CHARS = 256 * 1024;
/**
 * The shape of what is saved. A webview of another version may read what this one saved: one
 * whose number differs leaves it alone rather than drawing entries it may misread.
 */
export const FORMAT = 1;

/** What the webview keeps of the thread shown, for the next window's first frame. */
export interface SavedScreen {
  format: number;
  snapshot: ViewSnapshot;
  /** When it was saved, by the wall clock: running commands' times are as of then. */
  savedAt: number;
}

/**
 * The end of the thread `model` holds, as a snapshot of it; null when there is nothing worth
 * keeping (no session yet, no entries, or a last entry larger than `MAX_CHARS` alone: a screen
 * without its last entry would not be the last screen). `seenAt` says when each terminal's view
 * arrived, by the wall clock, which reads `now`.
 */
export function lastScreenOf(
  model: ChatModel,
  seenAt: ReadonlyMap<string, number> = new Map(),
  now: number = Date.now(),
): SavedScreen | null {
  if (!model.loaded || model.session === null) return null;
  const kept: Entry[] = [];
  let chars = JSON.stringify(model.session).length + JSON.stringify(model.plan).length;
  const terminalIds = new Set<string>();
  for (let index = model.entries.length - 1; index >= 0 && kept.length < MAX_ENTRIES; index--) {
    const entry = model.entries[index];
    // A place still to come ends the screen: what is before it is not known here.
    if (entry === undefined || entry.type === "notLoaded") break;
    const ids = terminalsOf(entry).filter((id) => !terminalIds.has(id));
    const terminalChars = ids.reduce((sum, id) => sum + JSON.stringify(model.terminals.get(id) ?? null).length, 0);
    const entryChars = JSON.stringify(entry).length + terminalChars;
    if (chars + entryChars > MAX_CHARS) break;
    chars += entryChars;
    kept.push(entry);
    for (const id of ids) terminalIds.add(id);
  }
  if (kept.length === 0) return null;
  kept.reverse();
  const terminals = [...terminalIds].flatMap((id) => {
    const view = model.terminals.get(id);
    if (view === undefined) return [];
    const arrived = seenAt.get(id);
    return arrived === undefined ? [view] : [countedOn(view, now - arrived)];
  });
  return {
    format: FORMAT,
    savedAt: now,
    snapshot: {
      session: model.session,
      earlier: model.entries.length - kept.length,
      entries: kept,
      plan: model.plan,
      turn: model.turn,
      terminals,
    },
  };
}

/**
 * The snapshot to draw from what an earlier window saved (`value`, read back from the webview's
 * state, so of any shape), or null when it is not a screen this webview saved. The session is
 * shown as connecting, with none of its buttons: the agent's state is the host's to say. `now`
 * is the wall clock's time.
 */
export function restoredScreen(value: unknown, now: number = Date.now()): ViewSnapshot | null {
  if (typeof value !== "object" || value === null) return null;
  const saved = value as Partial<Record<keyof SavedScreen, unknown>>;
  if (saved.format !== FORMAT || typeof saved.snapshot !== "object" || saved.snapshot === null) return null;
  const snapshot = saved.snapshot as Partial<Record<keyof ViewSnapshot, unknown>>;
  if (
    typeof snapshot.session !== "object" ||
    snapshot.session === null ||
    !Number.isInteger(snapshot.earlier) ||
    (snapshot.earlier as number) < 0 ||
    !Array.isArray(snapshot.entries) ||
    !Array.isArray(snapshot.plan) ||
    typeof snapshot.turn !== "object" ||
    snapshot.turn === null ||
    !Array.isArray(snapshot.terminals)
  ) {
    return null;
  }
  const session: SessionView = {
    ...(snapshot.session as SessionView),
    status: { type: "starting", step: "Connecting…", elapsedMs: 0 },
    canRestart: false,
    canInstall: false,
    canStop: false,
    canSignIn: false,
  };
  return {
    session,
    earlier: snapshot.earlier as number,
    entries: snapshot.entries as Entry[],
    plan: snapshot.plan as ViewSnapshot["plan"],
    turn: snapshot.turn as ViewSnapshot["turn"],
    terminals: (snapshot.terminals as TerminalView[]).map((view) =>
      typeof saved.savedAt === "number" ? countedOn(view, now - saved.savedAt) : view,
    ),
  };
}

/** `view` as it reads `ms` later: a running command's time has gone on. */
function countedOn(view: TerminalView, ms: number): TerminalView {
  if (view.state.type !== "running" || !(ms > 0)) return view;
  return { ...view, elapsedMs: view.elapsedMs + ms };
}

/**
 * Puts the screen an earlier window saved (`saved`, the webview state's `savedScreen`) in the
 * model of a webview that has drawn nothing yet; returns whether there was one to draw.
 */
export function restoreLastScreen(saved: unknown, model: ChatModel, changes: ChangeSet): boolean {
  const snapshot = restoredScreen(saved);
  if (snapshot === null) return false;
  applyRestoredScreen(model, snapshot, changes);
  return true;
}

/** The terminals a tool call shows. */
function terminalsOf(entry: Entry): string[] {
  if (entry.type !== "toolCall") return [];
  return entry.content.flatMap((content) => (content.type === "terminal" ? [content.terminalId] : []));
}
