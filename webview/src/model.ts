// The webview's copy of the chat state, and the reducer that applies the host's messages to it.
//
// The host sends a `snapshot` (on `ready`, and when a session starts) and then `patch` messages
// that carry only what changed, keyed by entry index. Applying a message here is cheap and
// happens as soon as it arrives; the DOM is updated later, once per animation frame, from the
// model and the [`ChangeSet`] the reducer filled in. That split is what keeps thousands of
// chunks per second smooth: however many patches arrive in a frame, the view does one pass.
//
// The reducer never invents state: when a patch does not fit the model (an entry index that
// skips ahead, a chunk for an entry that is not an agent message), it records that the model is
// out of sync so the webview can ask the host for a fresh snapshot, rather than guessing.

import type {
  Entry,
  HostToWebview,
  PlanEntryView,
  SessionView,
  TerminalView,
  ThreadPatch,
  TurnState,
  ViewSnapshot,
} from "./protocol";

/**
 * An entry the host has not sent yet: a long thread's snapshot carries its last entries, and the
 * earlier ones follow in `earlierEntries` messages, the most recent first. Until then the thread
 * keeps its place (and an estimated height) for it, and search passes over it.
 */
export interface EntryNotLoaded {
  type: "notLoaded";
}

/** An entry of the model's thread: one the host sent, or the place of one still to come. */
export type ThreadEntry = Entry | EntryNotLoaded;

const NOT_LOADED: EntryNotLoaded = Object.freeze({ type: "notLoaded" });

export interface ChatModel {
  /**
   * False until the first snapshot, and again after a patch did not fit: patches then describe
   * a state this webview does not have, so they are ignored until the next snapshot.
   */
  loaded: boolean;
  /**
   * The state drawn is the screen an earlier window saved (`last-screen.ts`), not the host's:
   * shown, but not to be acted on, until the host's snapshot replaces it.
   */
  restored: boolean;
  session: SessionView | null;
  entries: ThreadEntry[];
  plan: PlanEntryView[];
  turn: TurnState;
  /** The terminals tool calls show, by id: kept apart from the entries, as they change often. */
  terminals: Map<string, TerminalView>;
}

/** What the view must redraw; filled in by [`applyHostMessage`], emptied by each frame. */
export class ChangeSet {
  /** Redraw everything (a snapshot arrived). */
  reset = false;
  session = false;
  plan = false;
  turn = false;
  /** Entries that are new or were replaced as a whole: their DOM is rebuilt. */
  readonly rebuilt = new Set<number>();
  /** Agent messages whose chunks grew: their DOM is extended, not rebuilt. */
  readonly grown = new Set<number>();
  /** Terminals whose view changed: only their cards are redrawn. */
  readonly terminals = new Set<string>();
  /** Why the model no longer matches the host's, if it does not. */
  outOfSync: string | null = null;

  get isEmpty(): boolean {
    return (
      !this.reset &&
      !this.session &&
      !this.plan &&
      !this.turn &&
      this.rebuilt.size === 0 &&
      this.grown.size === 0 &&
      this.terminals.size === 0
    );
  }
}

export function emptyModel(): ChatModel {
  return {
    loaded: false,
    restored: false,
    session: null,
    entries: [],
    plan: [],
    turn: { type: "idle" },
    terminals: new Map(),
  };
}

/**
 * Applies one message from the host. Messages of unknown shape are ignored (and reported through
 * the return value) rather than thrown on: a newer host must not break an older webview.
 */
export function applyHostMessage(model: ChatModel, message: unknown, changes: ChangeSet): boolean {
  if (!isHostMessage(message)) return false;
  if (message.type === "snapshot") {
    if (model.restored && isStillStarting(message.snapshot)) {
      // The host has no thread yet (it is connecting, or reading the session again): the
      // restored screen stays, under the host's header, which says what it is doing.
      model.session = message.snapshot.session;
      changes.session = true;
      return true;
    }
    applySnapshot(model, message.snapshot, changes);
    return true;
  }
  if (!model.loaded) {
    if (model.restored && message.type === "patch") {
      // Patches after a snapshot of a session still starting: its header is shown over the
      // restored screen, and a change to its thread means the host has one to show now.
      if (message.session !== null && message.session !== undefined) {
        model.session = message.session;
        changes.session = true;
      }
      if (message.thread.length > 0) changes.outOfSync = "the host's thread changed under the restored screen";
    }
    // Otherwise the snapshot that answers `ready` already contains whatever this patch changed.
    return true;
  }
  if (message.type === "earlierEntries") {
    applyEarlierEntries(model, message.from, message.entries, changes);
    return true;
  }
  if (message.session !== null && message.session !== undefined) {
    model.session = message.session;
    changes.session = true;
  }
  for (const patch of message.thread) {
    applyThreadPatch(model, patch, changes);
    if (changes.outOfSync !== null) {
      // Later patches build on the one that did not fit: wait for a snapshot instead.
      model.loaded = false;
      break;
    }
  }
  return true;
}

/**
 * Draws the screen an earlier window saved (see `last-screen.ts`) as a snapshot would, but keeps
 * the model not loaded: the host's patches describe its state, not this picture of it, so they
 * wait for its snapshot.
 */
export function applyRestoredScreen(model: ChatModel, snapshot: ViewSnapshot, changes: ChangeSet): void {
  applySnapshot(model, snapshot, changes);
  model.loaded = false;
  model.restored = true;
}

function applySnapshot(model: ChatModel, snapshot: ViewSnapshot, changes: ChangeSet): void {
  model.loaded = true;
  model.restored = false;
  model.session = snapshot.session;
  model.entries =
    snapshot.earlier === 0
      ? snapshot.entries
      : [...new Array<EntryNotLoaded>(snapshot.earlier).fill(NOT_LOADED), ...snapshot.entries];
  model.plan = snapshot.plan;
  model.turn = snapshot.turn;
  model.terminals = new Map(snapshot.terminals.map((view) => [view.id, view]));
  changes.reset = true;
  changes.outOfSync = null;
  changes.rebuilt.clear();
  changes.grown.clear();
  changes.terminals.clear();
}

/** A snapshot of a session that is starting and has no thread to show yet. */
function isStillStarting(snapshot: ViewSnapshot): boolean {
  return snapshot.session.status.type === "starting" && snapshot.entries.length === 0 && snapshot.earlier === 0;
}

/** Puts the entries a snapshot left out in their places (entries the host replaced since win). */
function applyEarlierEntries(model: ChatModel, from: number, entries: Entry[], changes: ChangeSet): void {
  if (!Number.isInteger(from) || from < 0 || from + entries.length > model.entries.length) {
    changes.outOfSync = `entries ${from} to ${from + entries.length} sent, but the thread has ${model.entries.length}`;
    model.loaded = false;
    return;
  }
  entries.forEach((entry, offset) => {
    const index = from + offset;
    if (model.entries[index]?.type !== "notLoaded") return;
    model.entries[index] = entry;
    markRebuilt(changes, index);
  });
}

function applyThreadPatch(model: ChatModel, patch: ThreadPatch, changes: ChangeSet): void {
  switch (patch.op) {
    case "push":
      if (patch.index > model.entries.length) {
        changes.outOfSync = `entry ${patch.index} pushed after ${model.entries.length} entries`;
        return;
      }
      // A push at an index that exists can only be a repeat of what a snapshot already held.
      model.entries[patch.index] = patch.entry;
      markRebuilt(changes, patch.index);
      return;
    case "replace":
      if (patch.index >= model.entries.length) {
        changes.outOfSync = `entry ${patch.index} replaced but only ${model.entries.length} exist`;
        return;
      }
      model.entries[patch.index] = patch.entry;
      markRebuilt(changes, patch.index);
      return;
    case "appendChunk": {
      const entry = model.entries[patch.index];
      if (entry === undefined || entry.type !== "agent") {
        changes.outOfSync = `chunk appended to entry ${patch.index}, which is not an agent message`;
        return;
      }
      const last = entry.chunks[entry.chunks.length - 1];
      if (last !== undefined && last.kind === patch.kind) {
        last.text += patch.text;
      } else {
        entry.chunks.push({ kind: patch.kind, text: patch.text });
      }
      if (!changes.rebuilt.has(patch.index)) changes.grown.add(patch.index);
      return;
    }
    case "thoughtEnded": {
      // How long a thought took: its message's summary says so.
      const entry = model.entries[patch.index];
      const thought = entry?.type === "agent" ? entry.chunks[patch.chunk] : undefined;
      if (thought === undefined) {
        changes.outOfSync = `thought ${patch.chunk} of entry ${patch.index} ended, but there is no such chunk`;
        return;
      }
      thought.durationMs = patch.durationMs;
      if (!changes.rebuilt.has(patch.index)) changes.grown.add(patch.index);
      return;
    }
    case "plan":
      model.plan = patch.entries;
      changes.plan = true;
      return;
    case "turn":
      model.turn = patch.state;
      changes.turn = true;
      return;
    case "terminal":
      // A terminal the model does not know yet is new: tool calls may already be waiting for it.
      model.terminals.set(patch.view.id, patch.view);
      changes.terminals.add(patch.view.id);
      return;
  }
}

function markRebuilt(changes: ChangeSet, index: number): void {
  changes.grown.delete(index);
  changes.rebuilt.add(index);
}

/** The messages that carry the session's state (the others are for the composer). */
type StateMessage = Extract<HostToWebview, { type: "snapshot" | "earlierEntries" | "patch" }>;

function isHostMessage(message: unknown): message is StateMessage {
  if (typeof message !== "object" || message === null) return false;
  const candidate = message as { type?: unknown; snapshot?: unknown; thread?: unknown; entries?: unknown };
  if (candidate.type === "snapshot") {
    return typeof candidate.snapshot === "object" && candidate.snapshot !== null;
  }
  if (candidate.type === "earlierEntries") return Array.isArray(candidate.entries);
  return candidate.type === "patch" && Array.isArray(candidate.thread);
}
