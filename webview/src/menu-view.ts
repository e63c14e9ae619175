// A menu button (`.menu`): an icon button that opens a short menu of actions, drawn with the
// theme's menu colours, as VS Code's own "More Actions…" (`…`) buttons are.
//
// It follows the menu button pattern: Enter, Space, ↓ or a click open the menu on its first item
// (↑ on its last), the arrow keys, Home and End move between items, and Escape, choosing, Tab or
// a click elsewhere close it (back to the button when closed from inside). Items are buttons
// given by their owners (`role="menuitem"`, or `menuitemcheckbox` with `aria-checked` for a
// toggle), so the view that owns an action keeps its label and state up to date itself.

import { element, icon } from "./element";
import { indexForKey } from "./list-keys";

let nextMenuId = 0;

export class MenuButton {
  readonly element: HTMLElement;
  readonly button = element("button", "icon-button menu-button");
  private readonly menu = element("div", "menu-list");

  constructor(className: string, label: string, iconName: string) {
    this.element = element("div", `menu ${className}`);
    this.button.type = "button";
    this.button.title = label;
    this.button.setAttribute("aria-label", label);
    this.button.setAttribute("aria-haspopup", "menu");
    this.button.append(icon(iconName));
    const id = `tether-menu-${nextMenuId++}`;
    this.menu.id = id;
    this.button.setAttribute("aria-controls", id);
    this.menu.setAttribute("role", "menu");
    this.menu.setAttribute("aria-label", label);
    this.element.append(this.button, this.menu);
    this.close(false);

    this.button.addEventListener("click", () => {
      if (this.menu.hidden) this.open(0);
      else this.close(true);
    });
    this.button.addEventListener("keydown", (event) => {
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        this.open(event.key === "ArrowDown" ? 0 : -1);
      }
    });
    this.menu.addEventListener("keydown", (event) => this.moveByKey(event));
    // Choosing an item closes the menu; the item's own listener does the action.
    this.menu.addEventListener("click", (event) => {
      if ((event.target as Element | null)?.closest('[role^="menuitem"]') !== null) this.close(true);
    });
    this.element.addEventListener("focusout", (event) => {
      if (!this.element.contains(event.relatedTarget as Node | null)) this.close(false);
    });
    this.element.ownerDocument.addEventListener("pointerdown", (event) => {
      if (!this.element.contains(event.target as Node | null)) this.close(false);
    });
  }

  get isOpen(): boolean {
    return !this.menu.hidden;
  }

  /**
   * Adds an item: `item` is a button the caller keeps (and labels); `checkable` makes it a
   * toggle whose state the caller sets with `aria-checked`.
   */
  add(item: HTMLButtonElement, iconName: string | null, checkable = false): void {
    item.type = "button";
    item.classList.add("menu-item");
    item.setAttribute("role", checkable ? "menuitemcheckbox" : "menuitem");
    item.tabIndex = -1;
    if (checkable) item.prepend(icon("check"));
    else if (iconName !== null) item.prepend(icon(iconName));
    else item.prepend(element("span", "menu-item-space"));
    this.menu.append(item);
  }

  /** A line between groups of items. */
  addSeparator(): void {
    const line = element("div", "menu-separator");
    line.setAttribute("role", "separator");
    this.menu.append(line);
  }

  /** Shows or hides the whole control; hidden, its menu is closed too. */
  show(shown: boolean): void {
    this.element.hidden = !shown;
    if (!shown) this.close(false);
  }

  private items(): HTMLButtonElement[] {
    return [...this.menu.querySelectorAll<HTMLButtonElement>('[role^="menuitem"]')].filter((item) => !item.hidden);
  }

  private open(index: number): void {
    this.menu.hidden = false;
    this.button.setAttribute("aria-expanded", "true");
    const items = this.items();
    items.at(index)?.focus();
  }

  private close(returnFocus: boolean): void {
    this.menu.hidden = true;
    this.button.setAttribute("aria-expanded", "false");
    if (returnFocus) this.button.focus();
  }

  private moveByKey(event: KeyboardEvent): void {
    if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      this.close(true);
      return;
    }
    if (event.key === "Tab") {
      this.close(false);
      return;
    }
    const items = this.items();
    const current = items.findIndex((item) => item === this.element.ownerDocument.activeElement);
    const next = indexForKey(event.key, current, items.length);
    if (next === null) return;
    event.preventDefault();
    items[next]?.focus();
  }
}
