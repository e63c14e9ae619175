// The composer (`footer.composer`): where the person writes a prompt.
//
// Enter sends and Shift+Enter starts a new line (Enter while an input method is composing
// belongs to the input method). Send is disabled while a turn runs or the session is not ready;
// Cancel is offered only while a turn runs, and Escape does the same from the text area.
//
// When the text starts with "/", the agent's slash commands that match what follows are listed
// above the text area (a listbox the text area points at with `aria-activedescendant`): the arrow
// keys move through it, Enter or Tab picks (the text becomes "/name "), Escape closes it, and a
// click picks too. While the list is open, Enter picks rather than sends.

import { element } from "./element";
import type { PostIntent, SlashCommandView } from "./protocol";
import type { UiState } from "./ui-state";

export class ComposerView {
  readonly element: HTMLElement;
  readonly input = element("textarea", "composer-input");
  private readonly send = element("button", "composer-send", "Send");
  private readonly cancel = element("button", "composer-cancel", "Cancel");
  private readonly suggestions = element("ul", "composer-commands");
  private canSend = false;
  private running = false;
  private commands: SlashCommandView[] = [];
  private matches: SlashCommandView[] = [];
  private active = 0;
  /** Escape closed the list for this text; typing opens it again. */
  private dismissed = false;

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
    this.suggestions.id = "tether-composer-commands";
    this.suggestions.setAttribute("role", "listbox");
    this.suggestions.setAttribute("aria-label", "Slash commands");
    this.suggestions.hidden = true;
    this.element.append(this.suggestions, this.input, buttons);

    this.input.addEventListener("input", () => {
      this.uiState.composer = this.input.value;
      this.dismissed = false;
      this.showSuggestions();
    });
    this.input.addEventListener("keydown", (event) => {
      if (this.pickByKey(event)) return;
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

  /** The agent's slash commands, offered when the text starts with "/". */
  setCommands(commands: SlashCommandView[]): void {
    this.commands = commands;
    this.showSuggestions();
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

  /** The commands the text so far names: all of them after "/", then those it starts. */
  private showSuggestions(): void {
    const text = this.input.value;
    const typed = /^\/(\S*)$/.exec(text)?.[1];
    const previous = this.matches[this.active]?.name;
    this.matches =
      typed === undefined || this.dismissed
        ? []
        : this.commands.filter((command) => command.name.toLowerCase().startsWith(typed.toLowerCase()));
    const kept = this.matches.findIndex((command) => command.name === previous);
    this.active = kept >= 0 ? kept : 0;
    this.suggestions.replaceChildren(
      ...this.matches.map((command, index) => {
        const item = element("li", "composer-command");
        item.id = `tether-composer-command-${index}`;
        item.setAttribute("role", "option");
        item.append(element("span", "composer-command-name", `/${command.name}`));
        if (command.inputHint !== null) item.append(element("span", "composer-command-hint", command.inputHint));
        item.append(element("span", "composer-command-description", command.description));
        // Picking with the mouse must not take the focus from the text area first.
        item.addEventListener("mousedown", (event) => event.preventDefault());
        item.addEventListener("click", () => this.pick(command));
        return item;
      }),
    );
    const open = this.matches.length > 0;
    this.suggestions.hidden = !open;
    if (open) {
      this.input.setAttribute("aria-controls", this.suggestions.id);
      this.input.setAttribute("aria-autocomplete", "list");
    }
    this.input.setAttribute("aria-expanded", String(open));
    this.highlight();
  }

  private highlight(): void {
    [...this.suggestions.children].forEach((item, index) => {
      item.setAttribute("aria-selected", String(index === this.active));
    });
    const active = this.suggestions.children[this.active];
    if (active !== undefined && !this.suggestions.hidden) {
      this.input.setAttribute("aria-activedescendant", active.id);
    } else {
      this.input.removeAttribute("aria-activedescendant");
    }
  }

  /** Handles a key meant for the open list; returns whether it was one. */
  private pickByKey(event: KeyboardEvent): boolean {
    if (this.suggestions.hidden || event.isComposing) return false;
    const count = this.matches.length;
    switch (event.key) {
      case "ArrowDown":
        this.active = (this.active + 1) % count;
        break;
      case "ArrowUp":
        this.active = (this.active - 1 + count) % count;
        break;
      case "Enter":
      case "Tab": {
        if (event.shiftKey) return false;
        const command = this.matches[this.active];
        if (command === undefined) return false;
        event.preventDefault();
        this.pick(command);
        return true;
      }
      case "Escape":
        this.dismissed = true;
        event.preventDefault();
        // The list closes; a running turn is not cancelled by the same key.
        event.stopPropagation();
        this.showSuggestions();
        return true;
      default:
        return false;
    }
    event.preventDefault();
    this.highlight();
    return true;
  }

  private pick(command: SlashCommandView): void {
    this.input.value = `/${command.name} `;
    this.uiState.composer = this.input.value;
    this.dismissed = true;
    this.showSuggestions();
    this.input.focus();
    const end = this.input.value.length;
    this.input.setSelectionRange(end, end);
  }

  private submit(): void {
    const text = this.input.value;
    if (!this.canSend || text.trim() === "") return;
    this.post({ type: "prompt", text });
    this.input.value = "";
    this.uiState.composer = "";
    this.showSuggestions();
  }
}
