// Local UI state that survives a webview reload: the unsent composer text of each session open
// in the tabs, which thoughts the person opened, whether the rules panel is open, whether the
// changes bar shows its files, and the thread's last screen (`last-screen.ts`), drawn before the
// host's snapshot comes. It is the webview's own state (kept with `vscode.setState`), never sent
// to the host: the host's state arrives in the snapshot.
//
// The composer shows one session's draft at a time; the others wait here under their session's
// key until their tab is shown again, and go when their tab closes.

import type { ThoughtOpenState } from "./agent-message-view";
import { lastScreenOf } from "./last-screen";
import type { ChangeSet, ChatModel } from "./model";
import type { PromptAttachment, SessionKey, VsCodeApi } from "./protocol";

/** A session's unsent text, and what each "@label" in it stands for. */
interface Draft {
  composer: string;
  mentions: [string, PromptAttachment][];
}

interface SavedState extends Draft {
  /** The session the composer's draft is for (0: not known yet, as before the first session). */
  draftSession: SessionKey;
  /** The drafts of the other sessions open, by session key. */
  drafts: [SessionKey, Draft][];
  openThoughts: string[];
  rulesOpen: boolean;
  changesOpen: boolean;
  /** What `lastScreenOf` made of the thread at the last save (a `SavedScreen`), or null. */
  lastScreen: unknown;
}

/** Typing saves at most this often; `setState` crosses into the host. */
const SAVE_DELAY_MS = 300;
/**
 * A changing thread saves its last screen at most this often: each save writes up to
 * `MAX_CHARS` of JSON, and a screen a second old is replaced by the host's within seconds.
 */
const SCREEN_SAVE_DELAY_MS = 1_000;

/** Whether the rules panel is open: the panel's part of the UI state. */
export interface RulesPanelState {
  rulesOpen: boolean;
}

/** Whether the changes bar lists its files or only its summary line. */
export interface ChangesBarState {
  changesOpen: boolean;
}

export class UiState implements ThoughtOpenState, RulesPanelState, ChangesBarState {
  private composerText: string;
  private composerMentions: [string, PromptAttachment][];
  private draftSession: SessionKey;
  private readonly otherDrafts: Map<SessionKey, Draft>;
  /** The sessions open at the last `showSession`. */
  private openSessions = new Set<SessionKey>();
  /**
   * An agent was picked and the host has not answered yet: the draft goes to the session the
   * pick opens (see `draftFollowsPick`).
   */
  private picked = false;
  private readonly openThoughts: Set<string>;
  private rulesPanelOpen: boolean;
  private changesBarOpen: boolean;
  private saveTimer: ReturnType<typeof setTimeout> | null = null;
  /** The model whose end is saved, once the host's state has been drawn; null once saved. */
  private screenSource: ChatModel | null = null;
  /** When each terminal's view last arrived, by the wall clock (see `last-screen.ts`). */
  private readonly terminalsSeenAt = new Map<string, number>();
  /** The screen the last window saved: what this one draws first. */
  readonly savedScreen: unknown;
  /** The screen to save: the last window's until this one has drawn the host's state. */
  private screen: unknown;

  constructor(private readonly api: VsCodeApi) {
    const saved = readSaved(api.getState());
    this.savedScreen = saved.lastScreen;
    this.screen = saved.lastScreen;
    this.composerText = saved.composer;
    this.composerMentions = saved.mentions;
    this.draftSession = saved.draftSession;
    this.otherDrafts = new Map(saved.drafts);
    // A key saved before thoughts were kept per session is the first session's (see showSession).
    this.openThoughts = new Set(saved.openThoughts.map((key) => (key.includes("/") ? key : `0/${key}`)));
    this.rulesPanelOpen = saved.rulesOpen;
    this.changesBarOpen = saved.changesOpen;
  }

  get composer(): string {
    return this.composerText;
  }

  set composer(text: string) {
    this.composerText = text;
    this.saveSoon();
  }

  /** The mentions picked for the unsent text, by label. */
  get mentions(): [string, PromptAttachment][] {
    return this.composerMentions;
  }

  set mentions(mentions: [string, PromptAttachment][]) {
    this.composerMentions = mentions;
    this.saveSoon();
  }

  /**
   * Makes the composer's draft session `key`'s (one of `open`, the sessions in the tabs): the
   * draft shown so far stays with its own session and `key`'s comes back. Returns the session
   * whose draft was shown until now when the composer must show another, or null when the draft
   * shown stays: it is `key`'s already, or it carries over to `key` because it was written before
   * any session, or for a session that `key` replaced (another agent chosen, say), or `key` is the
   * session an agent picked since opened (`draftFollowsPick`). Key 0 is no
   * session: the draft waits for the first one. The drafts of closed sessions are dropped.
   */
  showSession(key: SessionKey, open: readonly SessionKey[]): SessionKey | null {
    if (key === 0) return null;
    const left = this.draftSession;
    // `key` replaced the session left when that one closed as `key` appeared, or was opened by
    // an agent picked since: either way it is the session the draft was being written for. The
    // host's first session update after a pick answers it (a pick it refused changes nothing).
    const opened = this.picked && !this.openSessions.has(key);
    this.picked = false;
    const replaced = opened || (!open.includes(left) && !this.openSessions.has(key));
    this.openSessions = new Set(open);
    for (const session of this.otherDrafts.keys()) {
      if (this.openSessions.has(session)) continue;
      this.otherDrafts.delete(session);
      this.saveSoon();
    }
    // The thoughts opened before any session are the first one's; a closed session's go with it.
    for (const thought of [...this.openThoughts]) {
      const session = Number(thought.split("/")[0]);
      if (session === 0 && left === 0) {
        this.openThoughts.delete(thought);
        this.openThoughts.add(`${key}/${thought.slice(thought.indexOf("/") + 1)}`);
      } else if (session !== 0 && !this.openSessions.has(session)) {
        this.openThoughts.delete(thought);
      }
    }
    if (left === key) return null;
    this.draftSession = key;
    if (left === 0 || (replaced && !this.otherDrafts.has(key))) {
      this.saveSoon();
      return null;
    }
    if (this.openSessions.has(left) && this.composerText !== "") {
      this.otherDrafts.set(left, { composer: this.composerText, mentions: this.composerMentions });
    }
    const draft = this.otherDrafts.get(key);
    this.otherDrafts.delete(key);
    this.composerText = draft?.composer ?? "";
    this.composerMentions = draft?.mentions ?? [];
    this.saveSoon();
    return left;
  }

  /**
   * An agent was picked in the header: the session it opens gets the draft, with whatever is
   * typed until the host shows that session, since the person typed it for the agent just
   * picked. (Without this, text typed in that moment stayed behind with the session shown
   * before, and the new session's composer came up empty.)
   */
  draftFollowsPick(): void {
    this.picked = true;
  }

  get rulesOpen(): boolean {
    return this.rulesPanelOpen;
  }

  set rulesOpen(open: boolean) {
    this.rulesPanelOpen = open;
    this.saveSoon();
  }

  get changesOpen(): boolean {
    return this.changesBarOpen;
  }

  set changesOpen(open: boolean) {
    this.changesBarOpen = open;
    this.saveSoon();
  }

  /** A thought's key (`<entry>:<chunk>`) in the session shown: each tab opens its own. */
  private thoughtKey(key: string): string {
    return `${this.draftSession}/${key}`;
  }

  isOpen(key: string): boolean {
    return this.openThoughts.has(this.thoughtKey(key));
  }

  setOpen(key: string, open: boolean): void {
    if (open) this.openThoughts.add(this.thoughtKey(key));
    else this.openThoughts.delete(this.thoughtKey(key));
    this.saveSoon();
  }

  /**
   * Forgets what belonged to entries past the shown session's thread once a new snapshot of it
   * arrives (call after `showSession`, so that it is that session's).
   */
  forgetEntriesFrom(entryCount: number): void {
    const prefix = `${this.draftSession}/`;
    for (const key of this.openThoughts) {
      if (!key.startsWith(prefix)) continue;
      if (Number(key.slice(prefix.length).split(":")[0]) >= entryCount) this.openThoughts.delete(key);
    }
    this.saveSoon();
  }

  /**
   * Saves the end of `model`'s thread soon: call after a frame drew `changes` of the host's
   * state. A frame drawing a restored screen does not call this: the saved screen is already
   * that one.
   */
  screenChanged(model: ChatModel, changes: ChangeSet): void {
    const now = Date.now();
    if (changes.reset) {
      this.terminalsSeenAt.clear();
      for (const id of model.terminals.keys()) this.terminalsSeenAt.set(id, now);
    } else {
      for (const id of changes.terminals) this.terminalsSeenAt.set(id, now);
    }
    this.screenSource = model;
    this.saveSoon(SCREEN_SAVE_DELAY_MS);
  }

  private saveSoon(delayMs = SAVE_DELAY_MS): void {
    if (this.saveTimer !== null) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = null;
      // A model out of sync waits for a snapshot: the screen saved before stays until then.
      if (this.screenSource?.loaded === true) {
        this.screen = lastScreenOf(this.screenSource, this.terminalsSeenAt);
        this.screenSource = null;
      }
      const state: SavedState = {
        composer: this.composerText,
        mentions: this.composerMentions,
        draftSession: this.draftSession,
        drafts: [...this.otherDrafts],
        openThoughts: [...this.openThoughts],
        rulesOpen: this.rulesPanelOpen,
        changesOpen: this.changesBarOpen,
        lastScreen: this.screen,
      };
      this.api.setState(state);
    }, delayMs);
  }
}

function readSaved(value: unknown): SavedState {
  // The changes bar starts open: the files an agent changed are what a person must not miss.
  const saved: SavedState = {
    composer: "",
    mentions: [],
    draftSession: 0,
    drafts: [],
    openThoughts: [],
    rulesOpen: false,
    changesOpen: true,
    lastScreen: null,
  };
  if (typeof value !== "object" || value === null) return saved;
  const candidate = value as Partial<Record<keyof SavedState, unknown>>;
  const draft = readDraft(candidate);
  saved.composer = draft.composer;
  saved.mentions = draft.mentions;
  // An older version saved one draft and no session: it goes to the first session shown.
  if (typeof candidate.draftSession === "number") saved.draftSession = candidate.draftSession;
  if (Array.isArray(candidate.drafts)) {
    saved.drafts = candidate.drafts.flatMap((entry): [SessionKey, Draft][] =>
      Array.isArray(entry) && typeof entry[0] === "number" && typeof entry[1] === "object" && entry[1] !== null
        ? [[entry[0], readDraft(entry[1] as Partial<Record<keyof Draft, unknown>>)]]
        : [],
    );
  }
  if (Array.isArray(candidate.openThoughts)) {
    saved.openThoughts = candidate.openThoughts.filter((key): key is string => typeof key === "string");
  }
  if (typeof candidate.rulesOpen === "boolean") saved.rulesOpen = candidate.rulesOpen;
  if (typeof candidate.changesOpen === "boolean") saved.changesOpen = candidate.changesOpen;
  // Read by `restoredScreen`, which checks it.
  saved.lastScreen = candidate.lastScreen ?? null;
  return saved;
}

function readDraft(candidate: Partial<Record<keyof Draft, unknown>>): Draft {
  const draft: Draft = { composer: "", mentions: [] };
  if (typeof candidate.composer === "string") draft.composer = candidate.composer;
  if (Array.isArray(candidate.mentions)) {
    // Saved by this webview; an entry of another shape (an older version's) is dropped.
    draft.mentions = candidate.mentions.filter(
      (entry): entry is [string, PromptAttachment] =>
        Array.isArray(entry) && typeof entry[0] === "string" && typeof entry[1] === "object" && entry[1] !== null,
    );
  }
  return draft;
}
