// Starting tetherd: the token travels only in the environment, the socket is connected once
// tetherd says it listens, bytes flow both ways, and every way of failing to start ends in one
// clear message naming the binary and quoting what tetherd said.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, test } from "node:test";

import { Sidecar, type SidecarEvents } from "../src/sidecar";
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
  connection.write(JSON.stringify({ argv, token: process.env.TETHER_TOKEN }) + "\\n");
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

function start(binaryPath: string, recorded: Recorded) {
  const { log, lines } = recordingLog();
  const sidecar = Sidecar.start(
    { binaryPath, token: "secret-token", graceSeconds: 7, logDirectory: path.join(scratch, "logs"), log },
    recorded.events,
  );
  return { sidecar, lines };
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

test("a missing binary is a failure naming the path", async () => {
  const recorded = recordEvents();
  const missing = path.join(scratch, "no-such-tetherd");
  const { sidecar } = start(missing, recorded);
  await eventually(() => recorded.failures.length > 0, "the failure");
  await new Promise((resolve) => setTimeout(resolve, 50));
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
