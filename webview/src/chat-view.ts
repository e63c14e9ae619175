// The whole chat UI inside `#app`, redrawn from the model once per frame.
//
// Besides placing the parts, it owns what spans them: the focus and the screen reader
// announcement when a permission request appears or a turn ends, the keys 1 to 9, which answer
// the oldest request still waiting with its first to ninth option wherever the focus is, unless
// the person is typing in a field, and the focus going to the composer when the view itself is
// focused ("Tether: Focus Chat", or clicking into the view), and Ctrl+F (Cmd+F), which opens the
// find bar above the thread (find-bar-view.ts): VS Code gives a webview view no find widget, and
// the thread is virtualized, so the browser's own find could not see most of it anyway.
//
// Before the first prompt the thread gives its place to the empty state (`EmptyStateView`).
//
// With more than one session open, their tabs (`SessionTabsView`) sit between the header and
// the thread. The host sends a snapshot when another session is shown, so the thread simply
// redraws; what is the webview's own follows the session shown: the composer's draft and where
// the thread was scrolled.
//
// The thread draws only the entries near what the person sees (thread-view.ts), so what spans
// the whole thread reads the model rather than the DOM: the keys 1 to 9 find the oldest request
// waiting in the model's entries, and answer it through its card when it is drawn, directly
// otherwise.
//
// The thread is one tab stop, its entries reached with the arrow keys (thread-keys.ts); Escape on
// an entry gives the focus back to the composer.

import { ChangesBarView } from "./changes-bar-view";
import { ComposerView } from "./composer-view";
import { element } from "./element";
import { EmptyStateView } from "./empty-state-view";
import { FindBarView } from "./find-bar-view";
import type { MarkdownRenderer } from "./markdown";
import type { Clock } from "./markdown-view";
import type { ChangeSet, ChatModel } from "./model";
import { PlanView } from "./plan-view";
import type { HostToWebview, PermissionKey, PermissionView, PostIntent, SessionView } from "./protocol";
import { RulesPanelView } from "./rules-panel-view";
import { SessionControlsPanel } from "./session-controls-view";
import { SessionHeaderView } from "./session-header-view";
import { SessionTabsView } from "./session-tabs-view";
import { type Repeat, TerminalCards, repeatWithInterval } from "./terminal-view";
import { ThreadKeys } from "./thread-keys";
import { ThreadView } from "./thread-view";
import { TurnView, turnAnnouncement } from "./turn-view";
import type { UiState } from "./ui-state";

export class ChatView {
  private readonly header: SessionHeaderView;
  private readonly tabs: SessionTabsView;
  private readonly rules: RulesPanelView;
  private readonly thread: ThreadView;
  private readonly threadKeys: ThreadKeys;
  private readonly terminals: TerminalCards;
  private readonly plan = new PlanView();
  private readonly turn = new TurnView();
  private readonly changesBar: ChangesBarView;
  private readonly composer: ComposerView;
  private readonly controls: SessionControlsPanel;
  private readonly empty: EmptyStateView;
  private readonly findBar: FindBarView;
  /** The thread with the find bar over it. */
  private readonly threadArea = element("div", "thread-area");
  /** The model of the last frame: what the keys read between frames. */
  private model: ChatModel | null = null;
  private shownTurn = "idle";
  private readonly answered = new Set<PermissionKey>();
  /** Polite: a new request is announced once the screen reader finishes what it is saying. */
  private readonly announcer = element("div", "permission-announcement");
  private focusAfterFrame: HTMLElement | null = null;
  private announceAfterFrame: string[] = [];

  constructor(
    private readonly root: HTMLElement,
    renderer: MarkdownRenderer,
    private readonly post: PostIntent,
    private readonly uiState: UiState,
    clock: Clock = () => performance.now(),
    repeat: Repeat = repeatWithInterval,
    /** Asks for a frame outside the host's messages (the person scrolled the thread). */
    requestFrame: () => void = () => {},
  ) {
    this.terminals = new TerminalCards(post, clock, repeat);
    this.rules = new RulesPanelView(post, uiState);
    const headerPost: PostIntent = (intent) => {
      if (intent.type === "selectAgent") uiState.draftFollowsPick();
      post(intent);
    };
    this.header = new SessionHeaderView(headerPost, this.rules.toggle, clock, repeat);
    // The person's own prompt (from the composer, or a message edited and sent again) brings the
    // thread's end into sight, as in any chat, however far up they had scrolled.
    const promptPost: PostIntent = (intent) => {
      if (intent.type === "prompt") this.thread.followEnd();
      post(intent);
    };
    this.thread = new ThreadView(renderer, uiState, {
      renderer,
      post: promptPost,
      answered: this.answered,
      permissionShown: (button, title) => {
        this.focusAfterFrame = button;
        this.announceAfterFrame.push(`Permission needed: ${title}`);
      },
      // The clicked button is disabled, then gone: the focus goes on to the next question
      // waiting, else to the composer, not to the page (a keyboard user would start over from
      // the top of the view).
      permissionAnswered: () => {
        const next = this.thread.element.querySelector<HTMLButtonElement>(
          '.permission-card[data-state="waiting"] button.permission-option:not(:disabled)',
        );
        (next ?? this.composer.input).focus({ preventScroll: true });
      },
      terminals: this.terminals,
    }, clock, undefined, requestFrame);
    this.changesBar = new ChangesBarView(post, uiState);
    this.composer = new ComposerView(promptPost, uiState);
    this.tabs = new SessionTabsView(post, () => this.composer.input.focus());
    this.controls = new SessionControlsPanel(post);
    this.composer.controlsSlot.append(this.controls.element);
    this.empty = new EmptyStateView(post, (text) => this.composer.fill(text));
    this.findBar = new FindBarView(this.thread, () => this.composer.input.focus());
    this.threadKeys = new ThreadKeys(this.thread, () => this.composer.input.focus());
    this.threadArea.append(this.findBar.element, this.thread.element);
    this.announcer.setAttribute("aria-live", "polite");
    this.announcer.setAttribute("role", "status");
    root.replaceChildren(
      this.header.element,
      this.tabs.element,
      this.rules.element,
      this.empty.element,
      this.threadArea,
      this.plan.element,
      this.turn.element,
      this.changesBar.element,
      this.composer.element,
      this.announcer,
    );
    root.ownerDocument.addEventListener("keydown", (event) => {
      this.findByKey(event);
      this.answerByKey(event);
    });
    // The view focused as a whole (its focus command, a click on its tab) puts the caret in the
    // composer; a focus that lands on a control inside the view stays there.
    root.ownerDocument.defaultView?.addEventListener("focus", () => {
      const active = root.ownerDocument.activeElement;
      if (active === null || active === root.ownerDocument.body) this.composer.input.focus();
    });
  }

  /**
   * Handles a host message that is for the composer rather than the thread (the `@` list, a
   * mention to add, a prompt given back); returns whether it was one.
   */
  receive(message: unknown): boolean {
    if (typeof message !== "object" || message === null) return false;
    const candidate = message as Partial<HostToWebview>;
    if (candidate.type === "mentions" && "items" in candidate && Array.isArray(candidate.items)) {
      this.composer.setMentions(String(candidate.query), candidate.items);
      return true;
    }
    if (candidate.type === "addMention" && "mention" in candidate && typeof candidate.mention === "object") {
      this.composer.addMention(candidate.mention);
      return true;
    }
    if (candidate.type === "promptReturned" && "text" in candidate && typeof candidate.text === "string") {
      this.composer.giveBack(candidate.text, String(candidate.reason));
      return true;
    }
    return false;
  }

  /** Draws one frame; returns true when another frame is needed to finish showing new text. */
  render(model: ChatModel, changes: ChangeSet): boolean {
    if (changes.reset || changes.session) {
      if (model.session !== null) this.showSession(model.session);
      this.header.render(model.session);
      this.tabs.render(model.session);
      this.empty.render(model.session);
      this.controls.render(model.session?.permissions ?? null, model.session?.controls ?? null);
      this.composer.setAgentName(model.session?.agent ?? null);
      this.rules.render(model.session?.permissions ?? null);
      this.changesBar.render(model.session?.changes ?? []);
      this.composer.setCommands(model.session?.controls.commands ?? []);
      this.composer.setCapabilities(model.session?.controls.prompt ?? { image: false, embeddedContext: false });
    }
    // After the session shown is known: what is forgotten is its own.
    if (changes.reset) this.uiState.forgetEntriesFrom(model.entries.length);
    if (changes.reset || changes.plan || changes.turn) this.plan.render(model.plan, model.turn.type === "running");
    if (changes.reset || changes.turn) {
      this.turn.render(model.turn);
      this.announceTurn(model);
    }
    if (changes.reset || changes.session || changes.turn) {
      // A prompt also goes to an agent that has exited: the engine starts it again for it. A
      // restored screen's session is connecting (no prompt) and its turn is not this window's
      // to stop.
      const canPrompt = model.session?.status.type === "ready" || model.session?.canRestart === true;
      const agentReady = model.session?.status.type === "ready";
      this.composer.render(canPrompt, model.turn.type === "running" && !model.restored, agentReady);
    }
    if (changes.reset) this.showRestored(model.restored);
    this.model = model;
    // Before the thread is drawn: a thread shown from hidden has its height to lay out in.
    const empty = model.entries.length === 0;
    this.empty.element.hidden = !empty;
    this.threadArea.hidden = empty;
    this.thread.element.hidden = empty;
    if (empty) this.findBar.close();
    // Terminal cards first: tool calls drawn in this frame take their cards as they are now.
    this.terminals.render(model.terminals, changes);
    const textWaiting = this.thread.render(model, changes);
    this.threadKeys.frameDrawn(changes.reset);
    this.findBar.update(model.entries, changes);
    // The prompts for ↑/↓: gathered again only when a prompt is among the entries that changed,
    // so a streaming frame in a long thread does not walk the whole thread.
    if (changes.reset || [...changes.rebuilt].some((index) => model.entries[index]?.type === "user")) {
      this.composer.setHistory(
        model.entries.flatMap((entry) => (entry.type === "user" && entry.text.trim() !== "" ? [entry.text] : [])),
      );
    }
    this.terminals.pin();
    if (model.restored) {
      // A request on a restored screen is a picture of one: the host's snapshot draws it again,
      // and focuses and announces it then.
      this.focusAfterFrame = null;
      this.announceAfterFrame = [];
    }
    this.focusPermission();
    this.announcePermissions();
    // The screen a reload will show first: the end of what was just drawn.
    if (model.loaded && !changes.isEmpty) this.uiState.screenChanged(model, changes);
    return textWaiting;
  }

  /**
   * A restored screen (see `last-screen.ts`) takes no click, key or focus until the host's
   * snapshot replaces it: every part but the composer, where the person may start typing.
   */
  private showRestored(restored: boolean): void {
    const parts = [...this.root.children].filter((part) => part !== this.composer.element && part !== this.announcer);
    // The session's pickers sit in the composer's footer.
    for (const part of [...parts, this.controls.element]) part.toggleAttribute("inert", restored);
  }

  /**
   * Gives the composer and the thread's scrolling to the session shown, before its thread is
   * drawn (a no-op while it stays the same).
   */
  private showSession(session: SessionView): void {
    const open = session.tabs.map((tab) => tab.key);
    this.composer.showSession(session.shown, open);
    this.thread.showSession(session.shown, open);
  }

  /**
   * Moves the focus to a permission request that just appeared, unless the focus is where the
   * person types (the composer, empty or not, or any other text field): the focus must never take
   * keystrokes away from them, and a keystroke meant for the prompt must never answer a question
   * (a space would press "Run"). The question is announced, and a Tab away, either way.
   */
  private focusPermission(): void {
    const target = this.focusAfterFrame;
    this.focusAfterFrame = null;
    if (target === null || !target.isConnected) return;
    const active = document.activeElement;
    const typing = active instanceof HTMLElement && active.matches("textarea, input, [contenteditable]");
    if (!typing) target.focus({ preventScroll: true });
  }

  /** Says when a turn ends (and how), once, as the peers' chats do for screen readers. */
  private announceTurn(model: ChatModel): void {
    const state = model.turn.type;
    if (state === this.shownTurn) return;
    const wasRunning = this.shownTurn === "running";
    this.shownTurn = state;
    if (wasRunning && state !== "running") this.announceAfterFrame.push(turnAnnouncement(model.turn));
  }

  private announcePermissions(): void {
    if (this.announceAfterFrame.length === 0) return;
    this.announcer.textContent = this.announceAfterFrame.join(". ");
    this.announceAfterFrame = [];
  }

  /** Ctrl+F (Cmd+F on a Mac): the find bar, wherever the focus is in the chat. */
  private findByKey(event: KeyboardEvent): void {
    if (event.defaultPrevented || event.isComposing || event.altKey || event.shiftKey) return;
    if (!(event.ctrlKey || event.metaKey) || event.key.toLowerCase() !== "f") return;
    if (this.model === null || this.model.entries.length === 0 || this.model.restored) return;
    event.preventDefault();
    // Not VS Code's: the workbench hears the webview's keys, and has nothing to find here.
    event.stopPropagation();
    this.findBar.open();
  }

  /** 1 to 9: the option with that number of the oldest request the person has not answered. */
  private answerByKey(event: KeyboardEvent): void {
    if (event.defaultPrevented || event.isComposing || event.ctrlKey || event.altKey || event.metaKey) return;
    if (!/^[1-9]$/.test(event.key) || isTextField(document.activeElement)) return;
    if (this.model?.restored === true) return;
    let oldest: PermissionView | null = null;
    for (const entry of this.model?.entries ?? []) {
      const permission = entry.type === "toolCall" ? entry.permission : null;
      if (permission === null || permission.outcome !== null) continue;
      // A request answered here but not yet settled by the host is no longer the person's to answer.
      if (this.answered.has(permission.key)) continue;
      if (oldest === null || permission.key < oldest.key) oldest = permission;
    }
    if (oldest === null) return;
    const option = oldest.options[Number(event.key) - 1];
    if (option === undefined) return;
    event.preventDefault();
    const button = this.thread.element.querySelector<HTMLButtonElement>(
      `.permission-card[data-key="${oldest.key}"] button.permission-option[data-shortcut="${event.key}"]`,
    );
    if (button !== null) {
      if (!button.disabled) button.click();
      return;
    }
    // Its card is out of the thread's window: answered as its button would, and drawn answered.
    this.answered.add(oldest.key);
    this.post({ type: "answerPermission", key: oldest.key, optionId: option.id });
  }
}

/** Where a digit is text the person is typing: text inputs, text areas, selects, editables. */
function isTextField(target: Element | null): boolean {
  if (target === null) return false;
  if (target instanceof HTMLElement && target.isContentEditable) return true;
  switch (target.tagName) {
    case "TEXTAREA":
    case "SELECT":
      return true;
    case "INPUT":
      return !["checkbox", "radio", "button", "submit", "reset", "range", "color", "file"].includes(
        (target as HTMLInputElement).type,
      );
    default:
      return false;
  }
}
