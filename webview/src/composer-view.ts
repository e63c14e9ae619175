// The composer (`footer.composer`): where the person writes a prompt.
//
// Enter sends and Shift+Enter starts a new line (Enter while an input method is composing
// belongs to the input method). Send is disabled while a turn runs or the session is not ready;
// Cancel is offered only while a turn runs, and Escape does the same from the text area.

import { element } from "./element";
import type { PostIntent } from "./protocol";
import type { UiState } from "./ui-state";

export class ComposerView {
  readonly element: HTMLElement;
  readonly input = element("textarea", "composer-input");
  private readonly send = element("button", "composer-send", "Send");
  private readonly cancel = element("button", "composer-cancel", "Cancel");
  private canSend = false;
  private running = false;

  constructor(
    private readonly post: PostIntent,
    private readonly uiState: UiState,
  ) {
    this.element = element("footer", "composer");
    this.input.rows = 3;
    this.input.placeholder = "Ask the agent… (Enter to send, Shift+Enter for a new line)";
    this.input.setAttribute("aria-label", "Prompt");
    this.input.value = uiState.composer;
    this.send.type = "button";
    this.cancel.type = "button";
    this.cancel.title = "Cancel the running turn (Escape)";
    const buttons = element("div", "composer-buttons");
    buttons.append(this.cancel, this.send);
    this.element.append(this.input, buttons);

    this.input.addEventListener("input", () => {
      this.uiState.composer = this.input.value;
    });
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.submit();
      } else if (event.key === "Escape" && this.running) {
        event.preventDefault();
        this.post({ type: "cancel" });
      }
    });
    this.send.addEventListener("click", () => this.submit());
    this.cancel.addEventListener("click", () => this.post({ type: "cancel" }));
    this.render(false, false);
  }

  render(sessionReady: boolean, turnRunning: boolean): void {
    this.running = turnRunning;
    this.canSend = sessionReady && !turnRunning;
    this.send.disabled = !this.canSend;
    this.send.title = turnRunning
      ? "The agent is working"
      : sessionReady
        ? "Send (Enter)"
        : "The session is not ready";
    this.cancel.hidden = !turnRunning;
    this.cancel.disabled = !turnRunning;
  }

  private submit(): void {
    const text = this.input.value;
    if (!this.canSend || text.trim() === "") return;
    this.post({ type: "prompt", text });
    this.input.value = "";
    this.uiState.composer = "";
  }
}
