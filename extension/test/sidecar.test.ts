// Starting tetherd: the token travels only in the environment, the socket is connected once
// tetherd says it listens, bytes flow both ways, and every way of failing to start ends in one
// clear message naming the binary and quoting what tetherd said. A listening tetherd is recorded
// in a file only this user can read, and the next window connects to it instead of starting
// another, unless it is gone (or its socket's folder is not private).

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { spawn } from "node:child_process";
import * as net from "node:net";
import { type TestContext, after, test } from "node:test";

import {
  Sidecar,
  type SidecarEvents,
  type SidecarOptions,
  newSocketPath,
  readSidecarRecord,
  tetherdLogFilter,
  writeSidecarRecord,
} from "../src/sidecar";
import { eventually, recordingLog } from "./fakes";

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "tether-sidecar-test-"));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** Writes an executable Node.js script standing in for tetherd. */
function fakeTetherd(name: string, body: string): string {
  const file = path.join(scratch, name);
  fs.writeFileSync(file, `#!${process.execPath}\n${body}\n`, { mode: 0o755 });
  return file;
}

/**
 * A tetherd that listens where it is told, reports what it was started with in its first
 * message, echoes every line back upper-cased, and exits when the host hangs up.
 */
const echoingTetherd = `
const fs = require("node:fs");
const net = require("node:net");
const path = require("node:path");
const argv = process.argv.slice(2);
const socketPath = argv[argv.indexOf("--socket") + 1];
fs.mkdirSync(path.dirname(socketPath), { recursive: true, mode: 0o700 });
process.stderr.write("\\u001b[32m INFO\\u001b[0m starting\\n");
const server = net.createServer((connection) => {
  connection.write(JSON.stringify({ argv, token: process.env.TETHER_TOKEN, log: process.env.TETHER_LOG }) + "\\n");
  connection.setEncoding("utf8");
  connection.on("data", (text) => connection.write(text.toUpperCase()));
  connection.on("end", () => { connection.end(); server.close(); fs.rmSync(socketPath, { force: true }); });
});
server.listen(socketPath, () => {
  process.stdout.write(JSON.stringify({ listening: socketPath, pid: process.pid }) + "\\n");
});
`;

interface Recorded {
  events: SidecarEvents;
  connected: Array<(data: string) => void>;
  received: string[];
  closed: string[];
  failures: string[];
}

function recordEvents(): Recorded {
  const recorded: Recorded = {
    connected: [],
    received: [],
    closed: [],
    failures: [],
    events: {
      connected: (write) => recorded.connected.push(write),
      bytes: (bytes) => recorded.received.push(Buffer.from(bytes).toString("utf8")),
      closed: (reason) => recorded.closed.push(reason),
      failedToStart: (message) => recorded.failures.push(message),
    },
  };
  return recorded;
}

function start(binaryPath: string, recorded: Recorded, options: Partial<SidecarOptions> = {}) {
  const { log, lines } = recordingLog();
  const sidecar = Sidecar.start(
    {
      binaryPath,
      token: "secret-token",
      graceSeconds: 7,
      logDirectory: path.join(scratch, "logs"),
      recordFile: path.join(scratch, "unused-record", "tetherd.json"),
      reconnect: false,
      log,
      ...options,
    },
    recorded.events,
  );
  return { sidecar, lines };
}

/** `start`, with the connection closed after the test even when it fails. */
function startFor(t: TestContext, binaryPath: string, recorded: Recorded, options: Partial<SidecarOptions> = {}) {
  const started = start(binaryPath, recorded, options);
  t.after(() => started.sidecar.dispose());
  return started;
}

test("connects once tetherd listens; the token is in the environment, never in argv", async () => {
  const recorded = recordEvents();
  const { sidecar, lines } = start(fakeTetherd("echo.js", echoingTetherd), recorded);
  await eventually(() => recorded.connected.length === 1 && recorded.received.length > 0, "the first message");

  const hello = JSON.parse(recorded.received.join("")) as { argv: string[]; token: string };
  assert.equal(hello.token, "secret-token");
  assert.ok(!hello.argv.includes("secret-token"), "the token must not be visible in ps");
  assert.equal(hello.argv[0], "serve");
  assert.equal(hello.argv[hello.argv.indexOf("--grace-seconds") + 1], "7");
  assert.equal(hello.argv[hello.argv.indexOf("--log-file") + 1], path.join(scratch, "logs", "tetherd.log"));
  const socketPath = hello.argv[hello.argv.indexOf("--socket") + 1] ?? "";
  assert.equal(path.basename(path.dirname(socketPath)), `tether-${process.getuid?.()}`);
  assert.match(path.basename(socketPath), /^tetherd-[0-9a-f]{16}\.sock$/);
  assert.ok(fs.existsSync(path.join(scratch, "logs")), "the log folder is created for tetherd");
  assert.ok(
    lines.some((line) => line.text === "tetherd:  INFO starting"),
    `tetherd's stderr reaches the log without colour codes: ${JSON.stringify(lines)}`,
  );

  recorded.received.length = 0;
  recorded.connected[0]?.("ping\n");
  await eventually(() => recorded.received.join("") === "PING\n", "the echo");

  sidecar.dispose();
  await eventually(() => !fs.existsSync(socketPath), "tetherd to see the host hang up");
  assert.deepEqual(recorded.closed, [], "a deliberate close is not reported as a failure");
  assert.deepEqual(recorded.failures, []);
});

test("tetherd logs at the level of Tether's output channel, unless TETHER_LOG says otherwise", async (t) => {
  const saved = process.env["TETHER_LOG"];
  delete process.env["TETHER_LOG"];
  t.after(() => {
    if (saved !== undefined) process.env["TETHER_LOG"] = saved;
  });
  const recorded = recordEvents();
  const { log } = recordingLog();
  // The person chose Debug for Tether ("Developer: Set Log Level..."): vscode.LogLevel.Debug is 2.
  Object.assign(log, { logLevel: 2 });
  startFor(t, fakeTetherd("log-level.js", echoingTetherd), recorded, { log });
  await eventually(() => recorded.received.length > 0, "the first message");
  assert.equal((JSON.parse(recorded.received.join("")) as { log: string }).log, "debug");

  assert.equal(tetherdLogFilter(undefined, undefined), "info", "a channel that does not say: info");
  assert.equal(tetherdLogFilter(5, undefined), "error");
  assert.equal(tetherdLogFilter(0, undefined), "off");
  assert.equal(tetherdLogFilter(2, "tetherd::terminal=trace"), "tetherd::terminal=trace", "the environment wins");
});

test("a connection tetherd drops is reported as closed", async () => {
  const recorded = recordEvents();
  const { sidecar } = start(
    fakeTetherd(
      "drops.js",
      `
const fs = require("node:fs");
const net = require("node:net");
const path = require("node:path");
const socketPath = process.argv[process.argv.indexOf("--socket") + 1];
fs.mkdirSync(path.dirname(socketPath), { recursive: true });
const server = net.createServer((connection) => { connection.end(); server.close(); });
server.listen(socketPath, () => console.log(JSON.stringify({ listening: socketPath, pid: process.pid })));
`,
    ),
    recorded,
  );
  await eventually(() => recorded.closed.length === 1, "the close");
  assert.deepEqual(recorded.closed, ["tetherd closed the connection"]);
  assert.deepEqual(recorded.failures, []);
  sidecar.dispose();
});

test("tetherd exiting before it listens is one failure quoting its stderr and naming the binary", async () => {
  const recorded = recordEvents();
  const binary = fakeTetherd(
    "dies.js",
    `console.error("Error: TETHER_TOKEN must be set"); console.error("second line"); process.exit(3);`,
  );
  const { sidecar } = start(binary, recorded);
  await eventually(() => recorded.failures.length === 1, "the failure");
  const [failure] = recorded.failures;
  assert.ok(failure?.includes(binary), failure);
  assert.match(failure ?? "", /exited with code 3 before it was listening/);
  assert.match(failure ?? "", /TETHER_TOKEN must be set\nsecond line/);
  assert.deepEqual(recorded.connected, []);
  sidecar.dispose();
});

test("a missing binary is a failure naming the path", async (t) => {
  // The process is caught on its way out of `spawn`, so the test can wait for its `close`, which
  // Node emits after the `error` of a binary that cannot run: the last event that could report the
  // failure a second time.
  // The module object itself (not a bundler's copy of its names), which sidecar.ts calls through.
  const childProcess: typeof import("node:child_process") = require("node:child_process");
  const closed: Array<Promise<void>> = [];
  const realSpawn = childProcess.spawn;
  t.mock.method(childProcess, "spawn", (...args: Parameters<typeof childProcess.spawn>) => {
    const child = realSpawn(...args);
    closed.push(new Promise((resolve) => child.once("close", () => resolve())));
    return child;
  });
  const recorded = recordEvents();
  const missing = path.join(scratch, "no-such-tetherd");
  const { sidecar } = start(missing, recorded);
  await eventually(() => recorded.failures.length > 0, "the failure");
  assert.equal(closed.length, 1, "tetherd was spawned once");
  await closed[0];
  assert.equal(recorded.failures.length, 1, "reported once");
  assert.match(recorded.failures[0] ?? "", /could not start tetherd/);
  assert.ok(recorded.failures[0]?.includes(missing));
  sidecar.dispose();
});

test("a first line that is not the listening announcement is a failure quoting it", async () => {
  const recorded = recordEvents();
  const { sidecar } = start(
    fakeTetherd("chatty.js", `console.log("tetherd 9.9 starting up"); setTimeout(() => {}, 60000);`),
    recorded,
  );
  await eventually(() => recorded.failures.length === 1, "the failure");
  assert.match(recorded.failures[0] ?? "", /printed "tetherd 9\.9 starting up" instead of \{"listening":\.\.\.\}/);
  sidecar.dispose();
});

/** A fresh folder for one test's record file, inside the scratch folder. */
function recordFolder(name: string): string {
  return path.join(scratch, "records", name);
}

/** A folder of this user's that nobody else can enter, as tetherd makes its socket folder. */
function privateFolder(name: string): string {
  const folder = path.join(scratch, "sockets", name);
  fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
  fs.chmodSync(folder, 0o700);
  return folder;
}

/** A stand-in for a tetherd left running: a socket server counting the hosts that connect. */
async function listeningServer(t: TestContext, socketPath: string): Promise<{ connections: () => number }> {
  let connections = 0;
  const sockets: net.Socket[] = [];
  const server = net.createServer((socket) => {
    connections += 1;
    sockets.push(socket);
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  t.after(() => {
    sockets.forEach((socket) => socket.destroy());
    server.close();
  });
  return { connections: () => connections };
}

test("once tetherd listens, its socket, token and pid are recorded for this user's eyes only", async (t) => {
  const recordFile = path.join(recordFolder("written"), "storage", "tetherd.json");
  const recorded = recordEvents();
  startFor(t, fakeTetherd("echo-recorded.js", echoingTetherd), recorded, { recordFile });
  await eventually(() => recorded.received.length > 0, "the first message");

  const hello = JSON.parse(recorded.received.join("")) as { argv: string[] };
  const socketPath = hello.argv[hello.argv.indexOf("--socket") + 1];
  const record = JSON.parse(fs.readFileSync(recordFile, "utf8")) as Record<string, unknown>;
  assert.equal(record["socket"], socketPath);
  assert.equal(record["token"], "secret-token");
  assert.equal(typeof record["pid"], "number");
  assert.equal(fs.statSync(recordFile).mode & 0o777, 0o600, "the file holds the token: only its owner reads it");
  assert.equal(fs.statSync(path.dirname(recordFile)).mode & 0o777, 0o700);
  assert.deepEqual(fs.readdirSync(path.dirname(recordFile)), ["tetherd.json"], "no temporary file is left behind");

  const { log } = recordingLog();
  assert.deepEqual(readSidecarRecord(recordFile, log), record);
});

test("a window reload connects to the recorded tetherd and starts none", async (t) => {
  const socketPath = path.join(privateFolder("alive"), "tetherd.sock");
  const server = await listeningServer(t, socketPath);
  const recordFile = path.join(recordFolder("alive"), "tetherd.json");
  writeSidecarRecord(recordFile, { socket: socketPath, token: "secret-token", pid: 4242 });

  const recorded = recordEvents();
  // A binary that cannot start: starting one would be reported as a failure.
  const { lines } = startFor(t, path.join(scratch, "no-such-tetherd"), recorded, { recordFile, reconnect: true });
  await eventually(() => recorded.connected.length === 1 && server.connections() === 1, "the reconnection");
  // Once connected, this sidecar never starts a tetherd.
  assert.deepEqual(recorded.failures, []);
  assert.ok(!lines.some((line) => line.text.startsWith("Starting ")), JSON.stringify(lines));
  assert.ok(
    lines.some((line) => line.text === "Reconnected to tetherd (pid 4242) left running by the previous window."),
    JSON.stringify(lines),
  );
  assert.equal(JSON.parse(fs.readFileSync(recordFile, "utf8")).pid, 4242, "the record stays as it was");
});

test("a recorded tetherd that is gone, socket file and all, is replaced by a new one with the same token", async (t) => {
  const recordFile = path.join(recordFolder("gone"), "tetherd.json");
  const goneSocket = path.join(privateFolder("gone"), "tetherd.sock");
  writeSidecarRecord(recordFile, { socket: goneSocket, token: "secret-token", pid: 99999 });

  const recorded = recordEvents();
  const { lines } = startFor(t, fakeTetherd("echo-after-gone.js", echoingTetherd), recorded, {
    recordFile,
    reconnect: true,
  });
  await eventually(() => recorded.received.length > 0, "the new tetherd's first message");
  const hello = JSON.parse(recorded.received.join("")) as { argv: string[]; token: string };
  assert.equal(hello.token, "secret-token");
  assert.ok(lines.some((line) => /\(pid 99999\) is gone \(.*ENOENT.*\); starting a new one/.test(line.text)), JSON.stringify(lines));
  const record = JSON.parse(fs.readFileSync(recordFile, "utf8")) as { socket: string; pid: number };
  assert.equal(record.socket, hello.argv[hello.argv.indexOf("--socket") + 1], "the record names the new tetherd");
  assert.notEqual(record.pid, 99999);
});

test("a recorded tetherd that was killed, leaving its socket file, is replaced by a new one", async (t) => {
  const socketPath = path.join(privateFolder("killed"), "tetherd.sock");
  // A process listening on the socket, killed so that it cannot remove the socket file.
  const listener = spawn(
    process.execPath,
    ["-e", `require("node:net").createServer().listen(${JSON.stringify(socketPath)}, () => console.log("up"))`],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise((resolve) => listener.stdout.once("data", resolve));
  const exited = new Promise((resolve) => listener.once("exit", resolve));
  listener.kill("SIGKILL");
  await exited;
  assert.ok(fs.existsSync(socketPath), "the killed listener left its socket file");
  const recordFile = path.join(recordFolder("killed"), "tetherd.json");
  writeSidecarRecord(recordFile, { socket: socketPath, token: "secret-token", pid: listener.pid ?? 0 });

  const recorded = recordEvents();
  const { lines } = startFor(t, fakeTetherd("echo-after-kill.js", echoingTetherd), recorded, {
    recordFile,
    reconnect: true,
  });
  await eventually(() => recorded.received.length > 0, "the new tetherd's first message");
  assert.ok(lines.some((line) => /is gone \(.*ECONNREFUSED.*\); starting a new one/.test(line.text)), JSON.stringify(lines));
  assert.notEqual(JSON.parse(fs.readFileSync(recordFile, "utf8")).socket, socketPath);
});

test("without a usable record a new tetherd is started: none, unreadable, another token, or not a reload", async (t) => {
  const socketPath = path.join(privateFolder("unused"), "tetherd.sock");
  const server = await listeningServer(t, socketPath);
  const cases: Array<{ name: string; record: string | undefined; reconnect: boolean; warning: RegExp | undefined }> = [
    { name: "no record", record: undefined, reconnect: true, warning: undefined },
    { name: "not JSON", record: "{\"socket\": ", reconnect: true, warning: /does not record a tetherd/ },
    { name: "no token", record: JSON.stringify({ socket: socketPath, pid: 1 }), reconnect: true, warning: /does not record a tetherd/ },
    {
      name: "another window's token",
      record: JSON.stringify({ socket: socketPath, token: "other-token", pid: 1 }),
      reconnect: true,
      warning: undefined,
    },
    {
      name: "a later start in the same window",
      record: JSON.stringify({ socket: socketPath, token: "secret-token", pid: 1 }),
      reconnect: false,
      warning: undefined,
    },
  ];
  for (const { name, record, reconnect, warning } of cases) {
    const recordFile = path.join(recordFolder(`unusable-${cases.findIndex((other) => other.name === name)}`), "tetherd.json");
    if (record !== undefined) {
      fs.mkdirSync(path.dirname(recordFile), { recursive: true });
      fs.writeFileSync(recordFile, record);
    }
    const recorded = recordEvents();
    const { lines } = startFor(t, fakeTetherd("echo-fresh.js", echoingTetherd), recorded, { recordFile, reconnect });
    await eventually(() => recorded.received.length > 0, `a new tetherd (${name})`);
    const written = JSON.parse(fs.readFileSync(recordFile, "utf8")) as { socket: string; token: string };
    assert.notEqual(written.socket, socketPath, name);
    assert.equal(written.token, "secret-token", name);
    const warnings = lines.filter((line) => line.level === "warn").map((line) => line.text);
    if (warning === undefined) {
      assert.deepEqual(warnings, [], name);
    } else {
      assert.ok(warnings.some((text) => warning.test(text)), `${name}: ${JSON.stringify(warnings)}`);
    }
  }
  assert.equal(server.connections(), 0, "no case connected to the recorded socket");
});

test("the token is not handed to a recorded socket in a folder other users can enter", async (t) => {
  const folder = path.join(scratch, "sockets", "shared");
  fs.mkdirSync(folder, { recursive: true });
  fs.chmodSync(folder, 0o755);
  const socketPath = path.join(folder, "tetherd.sock");
  const server = await listeningServer(t, socketPath);
  const recordFile = path.join(recordFolder("shared"), "tetherd.json");
  writeSidecarRecord(recordFile, { socket: socketPath, token: "secret-token", pid: 1 });

  const recorded = recordEvents();
  const { lines } = startFor(t, fakeTetherd("echo-not-shared.js", echoingTetherd), recorded, {
    recordFile,
    reconnect: true,
  });
  await eventually(() => recorded.received.length > 0, "a new tetherd");
  assert.equal(server.connections(), 0);
  assert.ok(
    lines.some((line) => line.level === "warn" && line.text.includes("other users can enter") && line.text.includes("mode 755")),
    JSON.stringify(lines),
  );
});

test("a new tetherd listens in the user's private folder, or on Windows on a named pipe of its own", () => {
  assert.equal(newSocketPath("linux", "/tmp", "1000", "00ff"), "/tmp/tether-1000/tetherd-00ff.sock");
  assert.equal(newSocketPath("darwin", "/var/folders/x/T", "501", "00ff"), "/var/folders/x/T/tether-501/tetherd-00ff.sock");
  // A path under the temporary folder would not be a pipe: tetherd refuses anything but \\.\pipe\ there.
  assert.equal(newSocketPath("win32", "C:\\Users\\Ann Lee\\AppData\\Local\\Temp", "Ann Lee", "00ff"), "\\\\.\\pipe\\tether-Ann_Lee-00ff");
});
