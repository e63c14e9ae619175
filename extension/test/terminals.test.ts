// The agent's terminals in VS Code: a terminal opens named after the command and shows the output
// so far, then everything written to it, in order, even what arrived before VS Code opened it;
// typing reaches the command only in an interactive terminal; sizes are reported; the person
// closing a terminal tells the engine and Tether closing it does not; a reopened terminal starts
// from the replay; stopping a command after closing its terminal asks first.

import assert from "node:assert/strict";
import { test } from "node:test";

import type { HostCommand } from "../src/generated/protocol";
import { MirroredTerminals, type OpenTerminalRequest, PENDING_OUTPUT_LIMIT, STOP_BUTTON } from "../src/terminals";
import { recordingLog } from "./fakes";
import { ThemeIcon, choiceAnswers, createdTerminals, offeredChoices, resetWorkspace } from "./vscodeStub";

function mirroredTerminals() {
  resetWorkspace();
  const sent: HostCommand[] = [];
  const { log, lines } = recordingLog();
  const terminals = new MirroredTerminals((command) => sent.push(command), log);
  return { terminals, sent, lines };
}

function request(overrides: Partial<OpenTerminalRequest> = {}): OpenTerminalRequest {
  return { terminal: "term-1", name: "npm test", interactive: true, replay: "", reveal: true, ...overrides };
}

/** Lets VS Code's later reactions (a disposed terminal's `close`, a message's answer) happen. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

test("a terminal shows the output so far, then the writes that came before VS Code opened it, in order", () => {
  const { terminals, sent } = mirroredTerminals();
  terminals.show(request({ replay: "\x1b[1m$ npm test\x1b[0m\r\n" }));
  terminals.write("term-1", "PASS a\r\n");
  terminals.write("term-1", "PASS b\r\n");

  assert.equal(createdTerminals.length, 1);
  const [terminal] = createdTerminals;
  assert.ok(terminal);
  assert.equal(terminal.name, "npm test");
  assert.deepEqual(terminal.options.iconPath, new ThemeIcon("hubot"));
  assert.equal(terminal.options.isTransient, true, "a reload must not restore a terminal with nothing behind it");
  assert.deepEqual(terminal.shows, [true], "brought to the front without taking focus");

  terminal.open({ columns: 120, rows: 30 });
  assert.equal(terminal.text, "\x1b[1m$ npm test\x1b[0m\r\nPASS a\r\nPASS b\r\n");
  assert.deepEqual(sent, [{ type: "terminalResize", terminal: "term-1", cols: 120, rows: 30 }]);

  terminals.write("term-1", "done\r\n");
  assert.equal(terminal.text, "\x1b[1m$ npm test\x1b[0m\r\nPASS a\r\nPASS b\r\ndone\r\n");
});

test("opening a terminal that is already open only brings it to the front when asked", () => {
  const { terminals } = mirroredTerminals();
  terminals.show(request({ reveal: false, replay: "one\r\n" }));
  const [terminal] = createdTerminals;
  assert.ok(terminal);
  terminal.open({ columns: 80, rows: 24 });
  assert.deepEqual(terminal.shows, [], "not revealed");

  terminals.show(request({ reveal: true, replay: "one\r\ntwo\r\n" }));
  terminals.show(request({ reveal: false, replay: "one\r\ntwo\r\nthree\r\n" }));
  assert.equal(createdTerminals.length, 1, "no second terminal for the same command");
  assert.deepEqual(terminal.shows, [true]);
  assert.equal(terminal.text, "one\r\n", "the open terminal's output is not replayed again");
});

test("output piling up before VS Code opens the terminal keeps its newest part", () => {
  const { terminals } = mirroredTerminals();
  terminals.show(request());
  const half = PENDING_OUTPUT_LIMIT / 2;
  for (const letter of ["a", "b", "c"]) {
    terminals.write("term-1", letter.repeat(half));
  }
  const [terminal] = createdTerminals;
  assert.ok(terminal);
  terminal.open(undefined);
  assert.equal(terminal.text, "b".repeat(half) + "c".repeat(half));
});

test("each terminal gets its own writes, and writes to a terminal that is not open are dropped", () => {
  const { terminals } = mirroredTerminals();
  terminals.show(request({ terminal: "term-1", name: "make" }));
  terminals.show(request({ terminal: "term-2", name: "cargo build" }));
  terminals.write("term-2", "Compiling\r\n");
  terminals.write("term-1", "cc main.c\r\n");
  terminals.write("term-3", "nobody's\r\n");
  createdTerminals.forEach((terminal) => terminal.open(undefined));
  assert.deepEqual(
    createdTerminals.map((terminal) => [terminal.name, terminal.text]),
    [
      ["make", "cc main.c\r\n"],
      ["cargo build", "Compiling\r\n"],
    ],
  );
});

test("typing reaches the command only in an interactive terminal, and is not echoed by Tether", () => {
  const { terminals, sent } = mirroredTerminals();
  terminals.show(request({ terminal: "mine", interactive: true }));
  terminals.show(request({ terminal: "agents", name: "cargo test (agent)", interactive: false }));
  const [interactive, readOnly] = createdTerminals;
  assert.ok(interactive && readOnly);
  interactive.open(undefined);
  readOnly.open(undefined);

  interactive.type("y\r");
  readOnly.type("y\r");
  assert.deepEqual(sent, [{ type: "terminalInput", terminal: "mine", data: "y\r" }]);
  assert.equal(interactive.text, "");
  assert.equal(readOnly.text, "");
});

test("the terminal's size is reported when it opens with one and whenever it changes", () => {
  const { terminals, sent } = mirroredTerminals();
  terminals.show(request());
  const [terminal] = createdTerminals;
  assert.ok(terminal);
  terminal.open(undefined);
  assert.deepEqual(sent, [], "no size yet");
  terminal.resize({ columns: 100, rows: 40 });
  terminal.resize({ columns: 60, rows: 40 });
  assert.deepEqual(sent, [
    { type: "terminalResize", terminal: "term-1", cols: 100, rows: 40 },
    { type: "terminalResize", terminal: "term-1", cols: 60, rows: 40 },
  ]);
});

test("closing a terminal tells the engine, and reopening it starts a new one from the replay", () => {
  const { terminals, sent } = mirroredTerminals();
  terminals.show(request({ replay: "" }));
  const [first] = createdTerminals;
  assert.ok(first);
  first.open(undefined);
  terminals.write("term-1", "1\r\n");

  first.closeByPerson();
  assert.deepEqual(sent, [{ type: "terminalClosed", terminal: "term-1" }]);
  terminals.write("term-1", "2\r\n");

  terminals.show(request({ replay: "1\r\n2\r\n" }));
  terminals.write("term-1", "3\r\n");
  assert.equal(createdTerminals.length, 2, "a new terminal");
  const second = createdTerminals[1];
  assert.ok(second);
  second.open(undefined);
  assert.equal(second.text, "1\r\n2\r\n3\r\n");
  assert.equal(first.text, "1\r\n", "the closed terminal got nothing more");
});

test("terminals Tether closes when it goes away do not tell the engine they were closed", async () => {
  const { terminals, sent } = mirroredTerminals();
  terminals.show(request({ terminal: "opened" }));
  terminals.show(request({ terminal: "never-opened" }));
  createdTerminals[0]?.open(undefined);

  terminals.dispose();
  await settle();
  assert.deepEqual(
    createdTerminals.map((terminal) => terminal.disposed),
    [true, true],
  );
  assert.deepEqual(sent, []);
});

test("a terminal the engine closes goes without telling the engine, and can be opened again", async () => {
  const { terminals, sent } = mirroredTerminals();
  terminals.show(request({ terminal: "old" }));
  terminals.show(request({ terminal: "new" }));
  createdTerminals[0]?.open(undefined);
  sent.length = 0;

  terminals.close("old");
  await settle();
  assert.deepEqual(
    createdTerminals.map((terminal) => terminal.disposed),
    [true, false],
    "only the terminal named is closed",
  );
  assert.deepEqual(sent, [], "the engine asked for it: no terminalClosed back");
  terminals.show(request({ terminal: "old" }));
  assert.equal(createdTerminals.length, 3, "opening it again makes a new terminal");
});

test("stopping a command whose terminal was closed asks first; only Stop stops it, else the terminal comes back", async () => {
  const { terminals, sent } = mirroredTerminals();
  offeredChoices.length = 0;
  choiceAnswers.length = 0;
  choiceAnswers.push(undefined, STOP_BUTTON);

  terminals.confirmStop("term-1", "sleep 100");
  await settle();
  // Before, Cancel stopped nothing but left the command running with no terminal to show it.
  assert.deepEqual(
    sent,
    [{ type: "terminal", intent: { type: "open", terminal: "term-1" } }],
    "dismissing the question stops nothing, and opens the command's terminal again",
  );

  terminals.confirmStop("term-2", "npm run watch");
  await settle();
  const question = (command: string) => ({
    text: `The command "${command}" is still running. Stop it? If not, it goes on in a new terminal.`,
    modal: true,
    items: ["Stop"],
  });
  assert.deepEqual(offeredChoices, [question("sleep 100"), question("npm run watch")]);
  assert.deepEqual(sent.slice(1), [{ type: "terminal", intent: { type: "stop", terminal: "term-2" } }]);
});
