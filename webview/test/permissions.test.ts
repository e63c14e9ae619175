// Permissions as the person meets them in the chat: what a request card shows and how it reads
// once settled, the keys that answer it, and the rules panel with its form (the mode pickers are
// in mode-picker.test.ts).

import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import type { PermissionOutcome, WebviewToHost } from "../src/protocol";
import { commandToolCall, editToolCall, patch, permissions, rule, session, snapshot } from "./fixtures";
import { type Harness, harness } from "./support";

describe("permission card", () => {
  let ui: Harness;
  beforeEach(() => {
    ui = harness();
  });

  it("shows the command, the agent's options in order with their keys, and announces the request", () => {
    ui.frame(snapshot([commandToolCall(4, "npm test")]));
    const card = ui.query('.permission-card[data-state="waiting"]');
    assert.equal(card.querySelector("code.permission-command")?.textContent, "$ npm test");
    assert.equal(ui.query(".tool-title").textContent, "Run tests (4)");
    assert.equal(ui.query(".tool-kind").getAttribute("aria-label"), "Run a command");
    assert.deepEqual(
      ui.queryAll("button.permission-option").map((button) => [
        button.dataset["optionId"],
        button.dataset["kind"],
        button.textContent,
        button.dataset["shortcut"],
        button.getAttribute("aria-keyshortcuts"),
      ]),
      [
        ["allow-once", "allow_once", "Allow once", "1", "1"],
        ["allow-always", "allow_always", "Always allow", "2", "2"],
        ["reject-once", "reject_once", "Reject", "3", "3"],
        ["reject-always", "reject_always", "Always reject", "4", "4"],
      ],
    );
    // An "always" choice is Tether's rule for this session, whatever the agent calls it: its
    // tooltip says how far it goes (before, nothing said "this session").
    assert.deepEqual(
      ui.queryAll("button.permission-option").map((button) => button.title),
      [
        "Allow once (1)",
        "Always allow (2): Tether allows the same for the rest of this session; the rules panel can keep it for the workspace",
        "Reject (3)",
        "Always reject (4): Tether rejects the same for the rest of this session; the rules panel can keep it for the workspace",
      ],
    );
    const live = ui.query(".permission-announcement");
    assert.equal(live.getAttribute("aria-live"), "polite");
    assert.equal(live.textContent, "Permission needed: Run tests (4)");
  });

  it("says who asks, and lists the paths that lead elsewhere through a link", () => {
    ui.frame(snapshot([commandToolCall(4, "npm test")]));
    assert.equal(ui.query(".permission-prompt").textContent, "The agent asks for permission:");
    assert.equal(ui.queryAll(".permission-link").length, 0);

    const link = "docs/notes.md → /home/me/.bashrc (outside the workspace)";
    const tethers = commandToolCall(5, "npm test", null, {
      permission: { key: 5, options: [], outcome: null, fromTether: true, links: [link] },
    });
    ui.frame(snapshot([tethers]));
    assert.equal(ui.query(".permission-prompt").textContent, "Tether asks before this goes ahead:");
    assert.deepEqual(
      ui.queryAll(".permission-link").map((line) => line.textContent),
      [link],
    );
  });

  it("keeps showing the diff and the paths of an edit request", () => {
    ui.frame(snapshot([editToolCall(null)]));
    assert.equal(ui.query(".tool-diff-path").textContent, "notes.md");
    assert.equal(ui.query(".tool-diff-path").getAttribute("aria-label"), "Open notes.md at line 2");
    assert.equal(ui.queryAll(".permission-command").length, 0, "no command without one in the raw input");
  });

  it("replaces the options with one line saying how the request was settled", () => {
    const cases: Array<[PermissionOutcome, string, string, string]> = [
      [{ type: "selected", optionId: "allow-once" }, "answered", ".permission-outcome", "Allowed once"],
      [{ type: "selected", optionId: "reject-always" }, "answered", ".permission-outcome", "Always rejected (this session)"],
      [
        {
          type: "auto",
          optionId: "allow-once",
          allowed: true,
          by: { type: "rule", id: 1, description: "Allow execute matching “npm test”", scope: "session" },
          reason: null,
        },
        "auto",
        '.permission-auto[data-allowed="true"]',
        "Auto-approved by rule “Allow execute matching “npm test”” (this session)",
      ],
      [
        {
          type: "auto",
          optionId: "allow-once",
          allowed: true,
          by: { type: "rule", id: 2, description: "Allow read in the workspace", scope: "workspace" },
          reason: null,
        },
        "auto",
        '.permission-auto[data-allowed="true"]',
        "Auto-approved by rule “Allow read in the workspace” (workspace)",
      ],
      [
        {
          type: "auto",
          optionId: "allow-once",
          allowed: true,
          by: { type: "mode", mode: "acceptEdits" },
          reason: null,
        },
        "auto",
        '.permission-auto[data-allowed="true"]',
        "Auto-approved by Accept edits mode",
      ],
      [
        {
          type: "auto",
          optionId: "reject-once",
          allowed: false,
          by: { type: "mode", mode: "plan" },
          reason: "Tether is in Plan mode (read only)",
        },
        "auto",
        '.permission-auto[data-allowed="false"]',
        "Rejected by Plan mode: Tether is in Plan mode (read only)",
      ],
      [
        {
          type: "auto",
          optionId: "reject-once",
          allowed: false,
          by: { type: "rule", id: 3, description: "Deny delete", scope: "workspace" },
          reason: null,
        },
        "auto",
        '.permission-auto[data-allowed="false"]',
        "Rejected by rule “Deny delete” (workspace)",
      ],
      [{ type: "cancelled" }, "cancelled", ".permission-note", "Cancelled before you answered"],
      [{ type: "withdrawn" }, "withdrawn", ".permission-note", "The agent withdrew this request"],
    ];
    for (const [outcome, state, selector, text] of cases) {
      ui = harness();
      ui.frame(snapshot([commandToolCall(9, "npm test", outcome)]));
      const card = ui.query(".permission-card");
      const what = JSON.stringify(outcome);
      assert.equal(card.dataset["state"], state, what);
      assert.equal(card.querySelector(selector)?.textContent, text, what);
      assert.equal(card.querySelectorAll("button").length, 0, `${what}: no options once settled`);
      assert.equal(card.querySelector(".permission-command")?.textContent, "$ npm test", `${what}: still says what`);
    }
  });

  it("answers the oldest waiting request with the digit's option, and only outside text fields", () => {
    // The newer request (key 5) comes first in the thread: age is the request's, not the entry's.
    ui.frame(snapshot([commandToolCall(5, "npm run lint"), commandToolCall(3, "npm test")]));
    ui.query<HTMLTextAreaElement>("textarea.composer-input").focus();
    ui.press("1");
    assert.deepEqual(ui.posted, [], "a digit typed into the prompt is text");

    ui.query<HTMLTextAreaElement>("textarea.composer-input").blur();
    ui.press("2", { ctrlKey: true });
    ui.press("7");
    assert.deepEqual(ui.posted, [], "no modifier shortcuts, and no option 7 to choose");

    ui.press("2");
    ui.press("1");
    assert.deepEqual(ui.posted, [
      { type: "answerPermission", key: 3, optionId: "allow-always" },
      { type: "answerPermission", key: 5, optionId: "allow-once" },
    ]);
    ui.press("1");
    assert.equal(ui.posted.length, 2, "nothing is left to answer until the host says otherwise");
  });

  it("moves the focus on to the next question once one is answered with a click, then to the composer", () => {
    // The clicked button is disabled and then removed: left there, the focus fell to the page.
    ui.frame(snapshot([commandToolCall(3, "npm test"), commandToolCall(5, "npm run lint")]));
    const focused = () => ui.window.document.activeElement as HTMLElement | null;
    ui.query<HTMLButtonElement>('.permission-card[data-key="3"] button[data-option-id="allow-once"]').click();
    assert.equal(focused()?.closest<HTMLElement>(".permission-card")?.dataset["key"], "5");
    ui.query<HTMLButtonElement>('.permission-card[data-key="5"] button[data-option-id="reject-once"]').click();
    assert.equal(focused(), ui.query("textarea.composer-input"));
    assert.deepEqual(ui.posted, [
      { type: "answerPermission", key: 3, optionId: "allow-once" },
      { type: "answerPermission", key: 5, optionId: "reject-once" },
    ]);
  });

  it("takes digits on a focused option button too", () => {
    ui.frame(snapshot([]), patch([{ op: "push", index: 0, entry: commandToolCall(1, "npm test") }]));
    assert.equal(ui.window.document.activeElement?.getAttribute("data-option-id"), "allow-once");
    ui.press("3");
    assert.deepEqual(ui.posted, [{ type: "answerPermission", key: 1, optionId: "reject-once" }]);
  });
});

describe("rules panel", () => {
  let ui: Harness;
  beforeEach(() => {
    ui = harness();
  });

  const twoRules = () =>
    session({
      permissions: permissions({
        rules: [
          rule({ id: 4, fired: 1 }),
          rule({
            id: 2,
            scope: "workspace",
            origin: { type: "settings" },
            fired: 3,
            spec: { decision: "deny", kinds: ["delete"] },
            description: "Deny delete",
          }),
          rule({
            id: 9,
            origin: { type: "added" },
            spec: { decision: "allow", path: "docs/**" },
            description: "Allow any tool on docs/**",
          }),
        ],
        ruleProblems: ["Rule 2 in tether.permissions.rules: unknown tool kind \"exec\""],
        auditLog: "/workspace/.tether/sessions/1/audit.jsonl",
      }),
    });

  it("is collapsed until the menu's item opens it, and stays open across patches and reloads", () => {
    ui.frame(snapshot([], { session: twoRules() }));
    const toggle = ui.query<HTMLButtonElement>("header.session .session-more button.rules-toggle");
    const panel = ui.query("section.rules-panel");
    assert.equal(toggle.textContent, "Permission rules (3)");
    assert.equal(panel.hidden, true);
    assert.equal(toggle.getAttribute("aria-checked"), "false");

    toggle.click();
    assert.equal(panel.hidden, false);
    assert.equal(toggle.getAttribute("aria-checked"), "true");
    ui.frame(patch([], session()));
    assert.equal(panel.hidden, false, "a header patch does not close it");
    assert.equal(toggle.textContent, "Permission rules (0)");
    assert.deepEqual(ui.posted, [], "opening the panel is the webview's own business");
    ui.query<HTMLButtonElement>("section.rules-panel button.rules-close").click();
    assert.equal(panel.hidden, true, "its own close button closes it");
    assert.equal(toggle.getAttribute("aria-checked"), "false");
    toggle.click();

    ui = harness({ composer: "", openThoughts: [], rulesOpen: true });
    ui.frame(snapshot([]));
    assert.equal(ui.query("section.rules-panel").hidden, false, "a reloaded webview reopens it");
  });

  it("lists each rule with its scope, origin and count, in the host's order", () => {
    ui.frame(snapshot([], { session: twoRules() }));
    assert.deepEqual(
      ui.queryAll(".rule").map((item) => [
        item.dataset["ruleId"],
        item.dataset["scope"],
        item.querySelector(".rule-description")?.textContent,
        item.querySelector(".rule-scope")?.textContent,
        item.querySelector(".rule-origin")?.textContent,
        item.querySelector(".rule-fired")?.textContent,
        [...item.querySelectorAll("button")].map((button) => button.className),
      ]),
      [
        [
          "4",
          "session",
          "Allow execute matching “npm test”",
          "this session",
          "chose “Always allow” on “Run tests”",
          "fired 1 time",
          ["rule-keep", "rule-delete"],
        ],
        ["2", "workspace", "Deny delete", "workspace", "from workspace settings", "fired 3 times", ["rule-delete"]],
        [
          "9",
          "session",
          "Allow any tool on docs/**",
          "this session",
          "added here",
          "fired 0 times",
          ["rule-keep", "rule-delete"],
        ],
      ],
    );
    assert.equal(ui.query(".rules-empty").hidden, true);
    assert.deepEqual(
      ui.queryAll(".rule-problem").map((line) => line.textContent),
      ['Rule 2 in tether.permissions.rules: unknown tool kind "exec"'],
    );
  });

  it("filters the list by every word typed, through patches, and says when nothing matches", () => {
    ui.frame(snapshot([], { session: twoRules() }));
    const filter = ui.query<HTMLInputElement>("section.rules-panel input.rules-filter");
    const shown = () => ui.queryAll(".rule").filter((item) => !item.hidden).map((item) => item.dataset["ruleId"]);
    const type = (text: string) => {
      filter.value = text;
      filter.dispatchEvent(new ui.window.Event("input", { bubbles: true }));
    };
    assert.deepEqual(shown(), ["4", "2", "9"]);

    type("deny");
    assert.deepEqual(shown(), ["2"], "the decision");
    type("SESSION allow");
    assert.deepEqual(shown(), ["4", "9"], "every word, in any case, scope included");
    type("added docs");
    assert.deepEqual(shown(), ["9"], "origin and pattern");
    // The host's next patch rebuilds the list: the filter still holds.
    ui.frame(patch([], twoRules()));
    assert.deepEqual(shown(), ["9"]);

    type("yarn");
    assert.deepEqual(shown(), []);
    assert.equal(ui.query(".rules-no-match").textContent, "No rule matches “yarn”.");
    assert.equal(ui.query(".rules-empty").hidden, true, "there are rules, only none that matches");
    type("");
    assert.deepEqual(shown(), ["4", "2", "9"]);
    assert.equal(ui.query(".rules-no-match").hidden, true);

    ui.frame(patch([], session()));
    assert.equal(filter.hidden, true, "no rules, nothing to filter");
    assert.equal(ui.query(".rules-no-match").hidden, true);
  });

  it("says when there are no rules, and offers no clearing or audit log then", () => {
    ui.frame(snapshot([]));
    assert.equal(ui.query(".rules-empty").hidden, false);
    assert.equal(ui.queryAll(".rule").length, 0);
    assert.equal(ui.query<HTMLButtonElement>('button.rules-clear[data-scope="session"]').disabled, true);
    assert.equal(ui.query<HTMLButtonElement>('button.rules-clear[data-scope="workspace"]').disabled, true);
    assert.equal(ui.query("button.audit-open").hidden, true);
  });

  it("sends delete, keep, clear and open-audit-log intents", () => {
    ui.frame(snapshot([], { session: twoRules() }));
    ui.query<HTMLButtonElement>('.rule[data-rule-id="2"] button.rule-delete').click();
    ui.query<HTMLButtonElement>('.rule[data-rule-id="4"] button.rule-keep').click();
    ui.query<HTMLButtonElement>('button.rules-clear[data-scope="session"]').click();
    ui.query<HTMLButtonElement>("button.audit-open").click();
    assert.deepEqual(ui.posted, [
      { type: "removeRule", id: 2 },
      { type: "keepRuleForWorkspace", id: 4 },
      { type: "clearRules", scope: "session" },
      { type: "openAuditLog" },
    ]);
  });

  it("keeps the focus in the list when a rule is deleted or kept", () => {
    // Before, the list was drawn anew and the focus fell to the page.
    ui = harness({ composer: "", openThoughts: [], rulesOpen: true });
    ui.frame(snapshot([], { session: twoRules() }));
    const focused = () => ui.window.document.activeElement as HTMLElement | null;
    const rulesOf = (ids: number[]) => {
      const all = twoRules().permissions.rules;
      return session({ permissions: permissions({ rules: ids.map((id) => all.find((each) => each.id === id)!) }) });
    };
    ui.query<HTMLButtonElement>('.rule[data-rule-id="2"] button.rule-delete').focus();
    ui.frame(patch([], rulesOf([4, 9])));
    assert.equal(focused()?.closest<HTMLElement>(".rule")?.dataset["ruleId"], "9", "the rule that took its place");
    assert.ok(focused()?.classList.contains("rule-delete"));

    ui.query<HTMLButtonElement>('.rule[data-rule-id="4"] button.rule-keep').focus();
    const [four, , nine] = twoRules().permissions.rules;
    ui.frame(patch([], session({ permissions: permissions({ rules: [{ ...four!, scope: "workspace" }, nine!] }) })));
    assert.equal(focused()?.closest<HTMLElement>(".rule")?.dataset["ruleId"], "4", "kept: the same rule");
    assert.ok(focused()?.classList.contains("rule-delete"), "its Keep button is gone: its first button");

    ui.query<HTMLButtonElement>('.rule[data-rule-id="9"] button.rule-delete').focus();
    ui.frame(patch([], rulesOf([])));
    assert.equal(focused(), ui.query("button.rules-close"), "no rule left: the panel's close button");
  });

  it("clears the workspace's rules only on a confirming second click", () => {
    ui.frame(snapshot([], { session: twoRules() }));
    const clear = ui.query<HTMLButtonElement>('button.rules-clear[data-scope="workspace"]');
    assert.equal(clear.textContent, "Clear workspace rules");
    clear.click();
    assert.deepEqual(ui.posted, []);
    assert.equal(clear.dataset["confirm"], "true");
    assert.equal(clear.textContent, "Click again to clear 1 workspace rule");
    clear.click();
    assert.deepEqual(ui.posted, [{ type: "clearRules", scope: "workspace" }]);
    assert.equal(clear.textContent, "Clear workspace rules", "disarmed once used");

    ui.frame(patch([], session()));
    assert.equal(clear.disabled, true, "nothing left to clear");
  });

  it("adds a rule from the form, leaving out what was not filled in", () => {
    ui.frame(snapshot([]));
    const form = ui.query<HTMLFormElement>("form.rule-add");
    const submit = () => ui.query<HTMLButtonElement>("form.rule-add button.rule-add-submit").click();
    assert.deepEqual(
      [...form.querySelectorAll<HTMLInputElement>('input[name="kind"]')].map((box) => box.value),
      ["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"],
    );
    const set = (selector: string, value: string) => {
      form.querySelector<HTMLInputElement>(selector)!.value = value;
    };
    const pick = (picker: string, value: string) => {
      form.querySelector<HTMLButtonElement>(`.${picker} button.picker-button`)!.click();
      form.querySelector<HTMLElement>(`.${picker} [role="option"][data-value="${value}"]`)!.click();
    };

    set('[name="pattern"]', "   ");
    submit();
    assert.deepEqual(ui.posted, [], "a rule with no condition is not sent");
    assert.equal(ui.query(".rule-add-error").hidden, false);
    assert.match(ui.query(".rule-add-error").textContent ?? "", /at least one condition/);

    form.querySelector<HTMLInputElement>('input[name="kind"][value="execute"]')!.checked = true;
    set('[name="pattern"]', " npm run * ");
    submit();
    pick("rule-add-decision", "deny");
    set('[name="path"]', "secrets/**");
    pick("rule-add-scope", "workspace");
    submit();
    assert.deepEqual(ui.posted, [
      { type: "addRule", spec: { decision: "allow", kinds: ["execute"], pattern: "npm run *" }, scope: "session" },
      { type: "addRule", spec: { decision: "deny", path: "secrets/**" }, scope: "workspace" },
    ] satisfies WebviewToHost[]);
    assert.equal(ui.query(".rule-add-error").hidden, true);
  });

  it("keeps what the person is typing when the host's rules change", () => {
    ui.frame(snapshot([]));
    ui.query<HTMLButtonElement>("button.rules-toggle").click();
    const pattern = ui.query<HTMLInputElement>('form.rule-add input[name="pattern"]');
    pattern.focus();
    pattern.value = "cargo *";
    ui.frame(patch([], twoRules()));
    assert.equal(ui.query<HTMLInputElement>('form.rule-add input[name="pattern"]'), pattern);
    assert.equal(pattern.value, "cargo *");
    assert.equal(ui.window.document.activeElement, pattern);
    assert.equal(ui.queryAll(".rule").length, 3);
  });
});
