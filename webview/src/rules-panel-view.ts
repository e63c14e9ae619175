// The rules panel (`section.rules-panel`): every permission rule in force, where it came from and
// how often it answered, with delete, keep-for-workspace and clear, and a filter over them; the
// rules in the settings that could not be used; a form to add a rule; and the way to the
// session's audit log.
//
// Like the rest of the chat it shows the host's state and sends intents: a click never edits the
// list here, the host's next header patch does. The toggle that opens the panel sits in the
// header; whether it is open is the webview's own UI state, so it survives patches and reloads.
// The add form is built once and never redrawn, and the list is only redrawn when the rules
// changed, so a patch that arrives while the person types or tabs through the panel does not take
// their input or their focus away.

import { element, iconButton } from "./element";
import { Picker } from "./picker-view";
import { SCOPE_LABELS } from "./permission-labels";
import { TOOL_KINDS } from "./protocol";
import type {
  PermissionsView,
  PostIntent,
  RuleDecision,
  RuleOrigin,
  RuleScope,
  RuleSpec,
  RuleView,
} from "./protocol";
import type { RulesPanelState } from "./ui-state";


/**
 * How long "Clear workspace rules" stays armed for the confirming second click. Webviews block
 * `window.confirm`, and clearing the workspace's rules rewrites its settings: one stray click
 * must not do it.
 */
const CLEAR_CONFIRM_MS = 5_000;

const PANEL_ID = "tether-rules-panel";

export class RulesPanelView {
  /** The "Permission rules (N)" item of the header's menu: opens and closes the panel. */
  readonly toggle = element("button", "rules-toggle");
  private readonly toggleLabel = element("span", "rules-toggle-label", "Permission rules (0)");
  private readonly close = iconButton("rules-close", "Close the permission rules", "close");
  readonly element = element("section", "rules-panel");
  private readonly problems = element("div", "rule-problems");
  /** Narrows the list to the rules whose words hold every word typed (scope and origin too). */
  private readonly filter = element("input", "rules-filter");
  private readonly noMatch = element("p", "rules-no-match");
  private readonly list = element("ul", "rules-list");
  private readonly empty = element(
    "p",
    "rules-empty",
    "No rules yet. Choose an “always” option on a request, or add a rule below.",
  );
  private readonly clearSession = element("button", "rules-clear", "Clear session rules");
  private readonly clearWorkspace = element("button", "rules-clear", "Clear workspace rules");
  private readonly audit = element("button", "audit-open", "Open audit log");
  private readonly form: RuleForm;
  private shownRules = "";
  private workspaceRuleCount = 0;
  private disarmTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly post: PostIntent,
    private readonly state: RulesPanelState,
  ) {
    this.element.id = PANEL_ID;
    this.element.setAttribute("aria-label", "Permission rules");
    this.toggle.type = "button";
    this.toggle.title = "Show or hide the permission rules";
    this.toggle.setAttribute("aria-controls", PANEL_ID);
    this.toggle.append(this.toggleLabel);
    this.toggle.addEventListener("click", () => {
      this.state.rulesOpen = !this.state.rulesOpen;
      this.showOpen();
    });
    this.close.addEventListener("click", () => {
      this.state.rulesOpen = false;
      this.showOpen();
    });

    this.clearSession.type = "button";
    this.clearSession.dataset["scope"] = "session";
    this.clearSession.addEventListener("click", () => this.post({ type: "clearRules", scope: "session" }));
    this.clearWorkspace.type = "button";
    this.clearWorkspace.dataset["scope"] = "workspace";
    this.clearWorkspace.addEventListener("click", () => this.clickClearWorkspace());
    this.audit.type = "button";
    this.audit.title = "Open this session's record of every permission decision";
    this.audit.addEventListener("click", () => this.post({ type: "openAuditLog" }));

    this.filter.type = "search";
    this.filter.placeholder = "Filter rules";
    this.filter.setAttribute("aria-label", "Filter the permission rules");
    this.filter.setAttribute("aria-controls", `${PANEL_ID}-list`);
    this.filter.addEventListener("input", () => this.applyFilter());
    this.list.id = `${PANEL_ID}-list`;
    this.noMatch.setAttribute("role", "status");

    const actions = element("div", "rules-actions");
    actions.append(this.clearSession, this.clearWorkspace, this.audit);
    this.form = new RuleForm(post);
    const titleRow = element("div", "rules-title-row");
    titleRow.append(element("div", "rules-title", "Permission rules"), this.close);
    this.element.append(
      titleRow,
      this.problems,
      this.filter,
      this.list,
      this.noMatch,
      this.empty,
      actions,
      this.form.element,
    );
    this.showOpen();
    this.render(null);
  }

  render(permissions: PermissionsView | null): void {
    const rules = permissions?.rules ?? [];
    const problems = permissions?.ruleProblems ?? [];
    this.toggleLabel.textContent = `Permission rules (${rules.length})`;
    this.toggle.hidden = permissions === null;

    const signature = JSON.stringify([rules, problems]);
    if (signature !== this.shownRules) {
      this.shownRules = signature;
      this.problems.replaceChildren(
        ...problems.map((problem) => {
          const line = element("div", "rule-problem", problem);
          line.setAttribute("role", "note");
          return line;
        }),
      );
      const focused = this.focusedRule();
      this.list.replaceChildren(...rules.map((rule) => this.ruleItem(rule)));
      this.empty.hidden = rules.length > 0;
      this.filter.hidden = rules.length === 0;
      this.applyFilter();
      if (focused !== null) this.refocus(focused);
    }

    const sessionRules = rules.filter((rule) => rule.scope === "session").length;
    this.workspaceRuleCount = rules.length - sessionRules;
    this.clearSession.disabled = sessionRules === 0;
    this.clearWorkspace.disabled = this.workspaceRuleCount === 0;
    if (this.workspaceRuleCount === 0) this.disarm();
    else if (this.disarmTimer !== null) this.clearWorkspace.textContent = this.confirmText();
    this.audit.hidden = (permissions?.auditLog ?? null) === null;
  }

  /** The rule button the focus is on, if any: its rule, its place in the list and its kind. */
  private focusedRule(): FocusedRule | null {
    const active = this.element.ownerDocument.activeElement;
    const item = active instanceof HTMLButtonElement ? active.closest<HTMLElement>("li.rule") : null;
    if (item === null || item.parentElement !== this.list) return null;
    return { id: item.dataset["ruleId"] ?? "", index: [...this.list.children].indexOf(item), button: active?.className ?? "" };
  }

  /**
   * Puts the focus back after the list was drawn again: on the same button of the same rule, else
   * on its rule's first button (Keep for workspace is gone once kept), else on the rule that took
   * a deleted one's place (or the one before it), else on the panel's close button. Left to
   * itself, the focus fell to the page, and a keyboard user started over from the top.
   */
  private refocus(focused: FocusedRule): void {
    const items = [...this.list.children].filter((item): item is HTMLElement => item instanceof HTMLElement && !item.hidden);
    const same = items.find((item) => item.dataset["ruleId"] === focused.id);
    const near = items[Math.min(focused.index, items.length - 1)];
    // In a rule: the button of the same kind, else its first.
    const buttonIn = (item: HTMLElement | undefined) => {
      const buttons = [...(item?.querySelectorAll<HTMLButtonElement>("button") ?? [])];
      return buttons.find((button) => button.className === focused.button) ?? buttons[0];
    };
    (buttonIn(same) ?? buttonIn(near) ?? this.close).focus();
  }

  /** Shows the rules the filter's words all occur in; says so when none does. */
  private applyFilter(): void {
    const words = this.filter.value.toLowerCase().split(/\s+/).filter((word) => word !== "");
    let shown = 0;
    for (const item of this.list.children) {
      if (!(item instanceof HTMLElement)) continue;
      const text = (item.dataset["searchText"] ?? "").toLowerCase();
      item.hidden = !words.every((word) => text.includes(word));
      if (!item.hidden) shown += 1;
    }
    const rules = this.list.children.length;
    this.list.hidden = shown === 0;
    this.noMatch.hidden = rules === 0 || shown > 0;
    this.noMatch.textContent = this.noMatch.hidden ? "" : `No rule matches “${this.filter.value.trim()}”.`;
  }

  private showOpen(): void {
    const open = this.state.rulesOpen;
    this.element.hidden = !open;
    this.toggle.setAttribute("aria-checked", String(open));
  }

  private ruleItem(rule: RuleView): HTMLElement {
    const item = element("li", "rule");
    item.dataset["ruleId"] = String(rule.id);
    item.dataset["scope"] = rule.scope;
    item.dataset["decision"] = rule.spec.decision;
    const fired = `fired ${rule.fired} ${rule.fired === 1 ? "time" : "times"}`;
    const details = element("div", "rule-details");
    details.append(
      element("span", "rule-scope", SCOPE_LABELS[rule.scope] ?? rule.scope),
      element("span", "rule-origin", originText(rule.origin)),
      element("span", "rule-fired", fired),
    );
    const buttons = element("div", "rule-buttons");
    if (rule.scope === "session") {
      const keep = element("button", "rule-keep", "Keep for workspace");
      keep.type = "button";
      keep.title = "Save this rule in the workspace settings, so later sessions use it too";
      keep.addEventListener("click", () => this.post({ type: "keepRuleForWorkspace", id: rule.id }));
      buttons.append(keep);
    }
    const remove = element("button", "rule-delete", "Delete");
    remove.type = "button";
    remove.title = "Delete this rule: matching requests ask again";
    remove.setAttribute("aria-label", `Delete rule: ${rule.description}`);
    remove.addEventListener("click", () => this.post({ type: "removeRule", id: rule.id }));
    buttons.append(remove);
    item.append(element("div", "rule-description", rule.description), details, buttons);
    // What the filter reads: the words shown, the decision and the tool kinds as written.
    item.dataset["searchText"] = [rule.description, details.textContent, rule.spec.decision, ...(rule.spec.kinds ?? [])].join(" ");
    return item;
  }

  /** The first click arms the button; a second one while it is armed clears. */
  private clickClearWorkspace(): void {
    if (this.disarmTimer !== null) {
      this.disarm();
      this.post({ type: "clearRules", scope: "workspace" });
      return;
    }
    this.clearWorkspace.dataset["confirm"] = "true";
    this.clearWorkspace.textContent = this.confirmText();
    this.disarmTimer = setTimeout(() => this.disarm(), CLEAR_CONFIRM_MS);
  }

  private confirmText(): string {
    const count = this.workspaceRuleCount;
    return `Click again to clear ${count} workspace ${count === 1 ? "rule" : "rules"}`;
  }

  private disarm(): void {
    if (this.disarmTimer !== null) clearTimeout(this.disarmTimer);
    this.disarmTimer = null;
    delete this.clearWorkspace.dataset["confirm"];
    this.clearWorkspace.textContent = "Clear workspace rules";
  }
}

/** Where the focus was in the list of rules, to put it back after the list is drawn again. */
interface FocusedRule {
  id: string;
  index: number;
  button: string;
}

function originText(origin: RuleOrigin): string {
  switch (origin.type) {
    case "chosen":
      return `chose “${origin.option}” on “${origin.toolTitle}”`;
    case "added":
      return "added here";
    case "settings":
      return "from workspace settings";
  }
  // An origin a newer host added.
  return "";
}

/**
 * `form.rule-add`: a decision, the conditions (kinds, a title or command pattern, a path glob)
 * and a scope. Empty fields are left out of the rule; a rule with no condition at all would match
 * every request, so the form says so instead of sending it. Everything else about a rule (a bad
 * glob, a path outside the workspace) is the engine's to check, and it says what was wrong.
 */
class RuleForm {
  readonly element = element("form", "rule-add");
  private readonly decision = new Picker("rule-add-decision", "Decision", () => {});
  private readonly kinds: HTMLInputElement[];
  private readonly pattern = element("input", "rule-add-pattern");
  private readonly path = element("input", "rule-add-path");
  private readonly scope = new Picker("rule-add-scope", "Scope", () => {});
  private readonly error = element("div", "rule-add-error");

  constructor(private readonly post: PostIntent) {
    this.element.setAttribute("aria-label", "Add a rule");
    this.element.noValidate = true;
    // Two pickers whose choice is the form's until it is sent: picking posts nothing.
    this.decision.setChoices([
      { value: "allow", label: "Allow" },
      { value: "deny", label: "Deny" },
    ]);
    this.decision.setValue("allow");
    this.scope.setChoices([
      { value: "session", label: "This session" },
      { value: "workspace", label: "Workspace" },
    ]);
    this.scope.setValue("session");

    const kindSet = element("fieldset", "rule-add-kinds");
    kindSet.append(element("legend", undefined, "Kinds"));
    this.kinds = TOOL_KINDS.map((kind) => {
      const box = element("input");
      box.type = "checkbox";
      box.name = "kind";
      box.value = kind;
      const label = element("label", "rule-add-kind");
      label.append(box, document.createTextNode(kind));
      kindSet.append(label);
      return box;
    });

    this.pattern.type = "text";
    this.pattern.name = "pattern";
    this.pattern.placeholder = "npm test, npm run *, Read *";
    this.pattern.title =
      "A glob the whole command line or the whole tool title must match (* any text, ? one character)";
    this.path.type = "text";
    this.path.name = "path";
    this.path.placeholder = "src/**, *.lock";
    this.path.title =
      "A glob over workspace-relative paths; without a / it matches a file name anywhere, ** is the whole workspace";
    this.error.setAttribute("role", "alert");
    this.error.hidden = true;
    const submit = element("button", "rule-add-submit", "Add rule");
    submit.type = "submit";

    const head = element("div", "rule-add-row");
    head.append(field("Decision", this.decision.element), field("Scope", this.scope.element));
    this.element.append(
      element("div", "rules-title", "Add a rule"),
      head,
      kindSet,
      field("Pattern", this.pattern),
      field("Path", this.path),
      this.error,
      submit,
    );
    this.element.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
  }

  private submit(): void {
    const spec: RuleSpec = { decision: this.decision.value as RuleDecision };
    const kinds = this.kinds.filter((box) => box.checked).map((box) => box.value);
    const pattern = this.pattern.value.trim();
    const path = this.path.value.trim();
    if (kinds.length > 0) spec.kinds = kinds;
    if (pattern !== "") spec.pattern = pattern;
    if (path !== "") spec.path = path;
    if (kinds.length === 0 && pattern === "" && path === "") {
      this.error.textContent = "A rule needs at least one condition: a kind, a pattern or a path.";
      this.error.hidden = false;
      return;
    }
    this.error.hidden = true;
    this.error.textContent = "";
    this.post({ type: "addRule", spec, scope: this.scope.value as RuleScope });
    // The conditions are cleared for the next rule; the decision and scope are usually reused.
    for (const box of this.kinds) box.checked = false;
    this.pattern.value = "";
    this.path.value = "";
  }
}

/**
 * A labelled field. A text input sits in a `<label>`; a picker does not, since a click anywhere
 * in a label (its list's items too) would also click the picker's button and open it again. The
 * picker's button carries its own name ("Decision: Allow").
 */
function field(label: string, control: HTMLElement): HTMLElement {
  const wrapper = element(control instanceof HTMLInputElement ? "label" : "div", "rule-add-field");
  wrapper.append(element("span", "rule-add-label", label), control);
  return wrapper;
}
