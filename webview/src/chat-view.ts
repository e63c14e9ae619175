// The whole chat UI inside `#app`, redrawn from the model once per frame.

import { ComposerView } from "./composer-view";
import { FollowBottom } from "./follow-bottom";
import type { MarkdownRenderer } from "./markdown";
import type { Clock } from "./markdown-view";
import type { ChangeSet, ChatModel } from "./model";
import { PlanView } from "./plan-view";
import type { PermissionKey, PostIntent } from "./protocol";
import { SessionHeaderView } from "./session-header-view";
import { ThreadView } from "./thread-view";
import { TurnView } from "./turn-view";
import type { UiState } from "./ui-state";

export class ChatView {
  private readonly header: SessionHeaderView;
  private readonly thread: ThreadView;
  private readonly plan = new PlanView();
  private readonly turn = new TurnView();
  private readonly composer: ComposerView;
  private readonly follow: FollowBottom;
  private readonly answered = new Set<PermissionKey>();
  private focusAfterFrame: HTMLElement | null = null;

  constructor(
    root: HTMLElement,
    renderer: MarkdownRenderer,
    post: PostIntent,
    private readonly uiState: UiState,
    clock: Clock = () => performance.now(),
  ) {
    this.header = new SessionHeaderView(post);
    this.thread = new ThreadView(renderer, uiState, {
      renderer,
      post,
      answered: this.answered,
      permissionShown: (button) => {
        this.focusAfterFrame = button;
      },
    }, clock);
    this.composer = new ComposerView(post, uiState);
    root.replaceChildren(
      this.header.element,
      this.thread.element,
      this.plan.element,
      this.turn.element,
      this.composer.element,
    );
    this.follow = new FollowBottom(this.thread.element);
  }

  /** Draws one frame; returns true when another frame is needed to finish showing new text. */
  render(model: ChatModel, changes: ChangeSet): boolean {
    if (changes.reset) this.uiState.forgetEntriesFrom(model.entries.length);
    if (changes.reset || changes.session) this.header.render(model.session);
    if (changes.reset || changes.plan) this.plan.render(model.plan);
    if (changes.reset || changes.turn) this.turn.render(model.turn);
    if (changes.reset || changes.session || changes.turn) {
      this.composer.render(model.session?.status.type === "ready", model.turn.type === "running");
    }
    const textWaiting = this.thread.render(model, changes);
    this.follow.pin();
    this.focusPermission();
    return textWaiting;
  }

  /**
   * Moves the focus to a permission request that just appeared, unless the person is in the
   * middle of writing a prompt: the focus must never take keystrokes away from them.
   */
  private focusPermission(): void {
    const target = this.focusAfterFrame;
    this.focusAfterFrame = null;
    if (target === null || !target.isConnected) return;
    const typing =
      document.activeElement === this.composer.input && this.composer.input.value.trim() !== "";
    if (!typing) target.focus({ preventScroll: true });
  }
}
