// A compact picker (`.picker`): a button that shows the current choice and opens a list of the
// others, drawn with the theme's menu colours. It replaces the browser's `<select>`, whose
// popup is drawn by the browser and matches no VS Code theme.
//
// It follows the listbox pattern of a select-only combobox: Enter, Space, ↓ or a click open the
// list on the chosen item; ↑/↓, Home and End move; Enter or Space (or a click) picks; Escape, Tab
// or a click elsewhere closes without picking; typing a letter moves to the next choice that
// starts with it. The button's accessible name says what the picker is for and what is chosen.
//
// Like the `<select>`s it replaces, it shows the host's value: `setValue` never calls `onPick`,
// only a person's choice does, so drawing the host's state can never send an intent back.

import { element, icon } from "./element";
import { indexForKey } from "./list-keys";

export interface PickerChoice {
  value: string;
  label: string;
  /** Said under the label in the list, and as the item's tooltip. */
  description?: string | null;
  /** Choices of one group are listed together under the group's name. */
  group?: string | null;
  /** The item's `data-state`, for its colours (the agent picker's "failed", "signIn", ...). */
  state?: string;
}

export interface PickerOptions {
  /** A codicon drawn before the chosen label. */
  icon?: string;
  /** Where the list opens: below the button (in the header) or above it (in the composer). */
  opens?: "below" | "above";
}

let nextListId = 0;

export class Picker {
  readonly element: HTMLElement;
  readonly button = element("button", "picker-button");
  private readonly chosenLabel = element("span", "picker-label");
  private readonly list = element("ul", "picker-list");
  private choices: PickerChoice[] = [];
  private shownChoices = "";
  private current = "";

  constructor(
    className: string,
    private readonly label: string,
    private readonly onPick: (value: string) => void,
    options: PickerOptions = {},
  ) {
    this.element = element("div", `picker ${className}`);
    this.element.dataset["opens"] = options.opens ?? "below";
    this.button.type = "button";
    this.button.setAttribute("aria-haspopup", "listbox");
    this.button.setAttribute("aria-expanded", "false");
    const listId = `tether-picker-${nextListId++}`;
    this.list.id = listId;
    this.button.setAttribute("aria-controls", listId);
    this.list.setAttribute("role", "listbox");
    this.list.setAttribute("aria-label", label);
    this.list.tabIndex = -1;
    this.list.hidden = true;
    if (options.icon !== undefined) this.button.append(icon(options.icon));
    this.button.append(this.chosenLabel, icon("chevron-down"));
    this.element.append(this.button, this.list);
    this.describe();

    this.button.addEventListener("click", () => (this.list.hidden ? this.open() : this.close(true)));
    this.button.addEventListener("keydown", (event) => {
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        this.open();
      }
    });
    this.list.addEventListener("keydown", (event) => this.moveByKey(event));
    this.list.addEventListener("click", (event) => {
      const item = (event.target as Element | null)?.closest<HTMLElement>('[role="option"]');
      if (item !== null && item !== undefined) this.pick(item);
    });
    // Tabbing or clicking anywhere else closes the list; the focus goes where the person sent it.
    this.element.addEventListener("focusout", (event) => {
      if (!this.element.contains(event.relatedTarget as Node | null)) this.close(false);
    });
    this.element.ownerDocument.addEventListener("pointerdown", (event) => {
      if (!this.element.contains(event.target as Node | null)) this.close(false);
    });
  }

  /** The chosen value, as the host last said it (or as the person just picked it). */
  get value(): string {
    return this.current;
  }

  get isOpen(): boolean {
    return !this.list.hidden;
  }

  /** Replaces the choices; the list is rebuilt only when they changed. */
  setChoices(choices: readonly PickerChoice[]): void {
    const shape = JSON.stringify(choices);
    if (shape === this.shownChoices) return;
    this.shownChoices = shape;
    this.choices = [...choices];
    const items: HTMLElement[] = [];
    let group: string | null = null;
    for (const choice of this.choices) {
      const inGroup = choice.group ?? null;
      if (inGroup !== null && inGroup !== group) {
        const heading = element("li", "picker-group", inGroup);
        heading.setAttribute("role", "presentation");
        items.push(heading);
      }
      group = inGroup;
      const item = element("li", "picker-item");
      item.setAttribute("role", "option");
      item.tabIndex = -1;
      item.dataset["value"] = choice.value;
      if (choice.state !== undefined) item.dataset["state"] = choice.state;
      const check = icon("check");
      check.classList.add("picker-check");
      const text = element("span", "picker-item-text");
      text.append(element("span", "picker-item-label", choice.label));
      if (choice.description !== undefined && choice.description !== null && choice.description !== "") {
        text.append(element("span", "picker-item-description", choice.description));
        item.title = choice.description;
      }
      item.append(check, text);
      items.push(item);
    }
    this.list.replaceChildren(...items);
    this.setValue(this.current);
  }

  /** Shows `value` as chosen. A value that is not among the choices is shown as it is. */
  setValue(value: string): void {
    this.current = value;
    this.element.dataset["value"] = value;
    for (const item of this.items()) {
      item.setAttribute("aria-selected", String(item.dataset["value"] === value));
    }
    this.chosenLabel.textContent = this.choices.find((choice) => choice.value === value)?.label ?? value;
    this.describe();
  }

  /** Sets the button's tooltip (what the picker does), beside its accessible name. */
  setTooltip(tooltip: string): void {
    this.button.title = tooltip;
  }

  private describe(): void {
    const chosen = this.chosenLabel.textContent ?? "";
    this.button.setAttribute("aria-label", chosen === "" ? this.label : `${this.label}: ${chosen}`);
    if (this.button.title === "") this.button.title = this.label;
  }

  private items(): HTMLElement[] {
    return [...this.list.querySelectorAll<HTMLElement>('[role="option"]')];
  }

  private open(): void {
    if (this.choices.length === 0) return;
    this.list.hidden = false;
    this.button.setAttribute("aria-expanded", "true");
    this.element.classList.add("open");
    this.keepInView();
    const items = this.items();
    (items.find((item) => item.dataset["value"] === this.current) ?? items[0])?.focus();
  }

  private close(returnFocus: boolean): void {
    if (this.list.hidden) return;
    this.list.hidden = true;
    this.button.setAttribute("aria-expanded", "false");
    this.element.classList.remove("open");
    this.list.style.removeProperty("--picker-shift");
    if (returnFocus) this.button.focus();
  }

  private pick(item: HTMLElement): void {
    const value = item.dataset["value"] ?? "";
    this.close(true);
    if (value === this.current) return;
    // The picker shows the choice at once; the host's next update has the last word.
    this.setValue(value);
    this.onPick(value);
  }

  /** A list wider than the room to the right of its button is moved left into the view. */
  private keepInView(): void {
    const view = this.element.ownerDocument.defaultView;
    if (view === null) return;
    const overflow = this.list.getBoundingClientRect().right - (view.innerWidth - 4);
    if (overflow > 0) this.list.style.setProperty("--picker-shift", `${-overflow}px`);
  }

  private moveByKey(event: KeyboardEvent): void {
    const items = this.items();
    const current = items.indexOf(this.element.ownerDocument.activeElement as HTMLElement);
    switch (event.key) {
      case "Escape":
        event.preventDefault();
        event.stopPropagation();
        this.close(true);
        return;
      case "Tab":
        this.close(false);
        return;
      case "Enter":
      case " ": {
        event.preventDefault();
        const item = items[current];
        if (item !== undefined) this.pick(item);
        return;
      }
    }
    let next = indexForKey(event.key, current, items.length);
    if (next === null && event.key.length === 1 && !event.ctrlKey && !event.metaKey && !event.altKey) {
      // Typing moves to the next choice that starts with what was typed.
      const typed = event.key.toLowerCase();
      const order = [...items.slice(current + 1), ...items.slice(0, current + 1)];
      const match = order.find((item) => item.textContent?.trim().toLowerCase().startsWith(typed));
      next = match === undefined ? null : items.indexOf(match);
    }
    if (next === null) return;
    event.preventDefault();
    items[next]?.focus();
  }
}
