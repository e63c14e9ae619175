// A smoke test of tetherd's Windows code, run by Node for Windows (under Wine on Linux; see
// README.md, "Platforms and remote"). It drives the win32-x64 package's tetherd.exe as the
// extension does, over its named pipe:
// - the pipe admits the host that presents the token, and refuses a wrong token;
// - an agent (the package's demo agent) starts in a Job Object and answers ACP's initialize;
// - a terminal command line runs in cmd.exe on ConPTY, its output arrives, and its exit;
// - a long command and the agent are killed, their trees ended;
// - tetherd ends on its own once no host is connected.
// Usage: node smoke.cjs <tetherd.exe> <tether-test-agent.exe> <report file>
// The report file gets one line per check ("ok ..." or "FAIL ..."); the exit code is 1 on a
// failure. (Node's own stdout is not usable under Wine when it is a Linux pipe.)
"use strict";

const { spawn } = require("node:child_process");
const fs = require("node:fs");
const net = require("node:net");
const os = require("node:os");

const [tetherdPath, agentPath, reportPath] = process.argv.slice(2);
const report = (line) => fs.appendFileSync(reportPath, `${line}\n`);
let failures = 0;
function check(ok, what, detail = "") {
  report(`${ok ? "ok" : "FAIL"} ${what}${detail ? `: ${detail}` : ""}`);
  if (!ok) failures += 1;
}

/** A connection to tetherd: requests by id, and every notification kept in order. */
function connect(pipe) {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(pipe);
    const pending = new Map();
    const notifications = [];
    const waiters = [];
    let buffered = "";
    let nextId = 1;
    socket.setEncoding("utf8");
    socket.on("data", (chunk) => {
      buffered += chunk;
      let newline;
      while ((newline = buffered.indexOf("\n")) !== -1) {
        const message = JSON.parse(buffered.slice(0, newline));
        buffered = buffered.slice(newline + 1);
        if (message.id !== undefined && pending.has(message.id)) {
          pending.get(message.id)(message);
          pending.delete(message.id);
        } else {
          notifications.push(message);
          for (const waiter of [...waiters]) waiter();
        }
      }
    });
    socket.on("error", reject);
    socket.on("connect", () =>
      resolve({
        request(method, params) {
          const id = nextId++;
          socket.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
          return new Promise((done) => pending.set(id, done));
        },
        notify(method, params) {
          socket.write(`${JSON.stringify({ jsonrpc: "2.0", method, params })}\n`);
        },
        /** The first notification `matches` accepts, waiting up to `ms` for it. */
        waitFor(matches, ms) {
          return new Promise((done) => {
            const look = () => {
              const found = notifications.find(matches);
              if (found) {
                waiters.splice(waiters.indexOf(look), 1);
                clearTimeout(timer);
                done(found);
              }
            };
            const timer = setTimeout(() => {
              waiters.splice(waiters.indexOf(look), 1);
              done(undefined);
            }, ms);
            waiters.push(look);
            look();
          });
        },
        notifications,
        close: () => socket.end(),
      }),
    );
  });
}

async function main() {
  const token = `smoke-${process.pid}-${Date.now()}`;
  const tetherd = spawn(tetherdPath, ["serve", "--socket", `\\\\.\\pipe\\tether-smoke-${process.pid}`, "--grace-seconds", "5"], {
    env: { ...process.env, TETHER_TOKEN: token },
    stdio: ["ignore", "pipe", "pipe"],
    windowsHide: true,
  });
  let stderr = "";
  tetherd.stderr.setEncoding("utf8");
  tetherd.stderr.on("data", (chunk) => (stderr += chunk));
  const listening = await new Promise((resolve) => {
    let text = "";
    tetherd.stdout.setEncoding("utf8");
    tetherd.stdout.on("data", (chunk) => {
      text += chunk;
      if (text.includes("\n")) resolve(JSON.parse(text.slice(0, text.indexOf("\n"))));
    });
    tetherd.on("exit", (code) => resolve({ exited: code }));
  });
  check(typeof listening.listening === "string", "tetherd listens on a named pipe", JSON.stringify(listening));
  if (typeof listening.listening !== "string") {
    report(stderr);
    return;
  }
  const pipe = listening.listening;

  const stranger = await connect(pipe);
  const refused = await stranger.request("hello", { token: "wrong", protocolVersion: 1, client: "smoke" });
  check(refused.error?.code === -32001, "a wrong token is refused", JSON.stringify(refused.error));
  stranger.close();

  const host = await connect(pipe);
  const hello = await host.request("hello", { token, protocolVersion: 1, client: "smoke" });
  check(hello.result?.pid === tetherd.pid, "the token opens it", JSON.stringify(hello.result ?? hello.error));

  const cwd = os.tmpdir();
  const spawned = await host.request("agent/spawn", { name: "demo", command: agentPath, args: [], cwd });
  const agentId = spawned.result?.agentId;
  check(agentId !== undefined, "the demo agent starts", JSON.stringify(spawned.result ?? spawned.error));
  host.notify("agent/send", {
    agentId,
    message: { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } },
  });
  const initialized = await host.waitFor((m) => m.method === "agent/message" && m.params.message.id === 0, 20000);
  check(initialized?.params.message.result?.protocolVersion === 1, "it answers initialize over its pipes",
    JSON.stringify(initialized?.params.message));

  const echo = await host.request("terminal/create", {
    agentId, command: "echo hello from ConPTY && ver", shell: true, cwd, cols: 80, rows: 24,
  });
  const echoId = echo.result?.terminalId;
  check(echoId !== undefined, "a command line starts in a terminal", JSON.stringify(echo.result ?? echo.error));
  const echoExit = await host.waitFor((m) => m.method === "terminal/exited" && m.params.terminalId === echoId, 20000);
  const printed = host.notifications
    .filter((m) => m.method === "terminal/data" && m.params.terminalId === echoId)
    .map((m) => m.params.data)
    .join("");
  check(printed.includes("hello from ConPTY"), "its output arrives", JSON.stringify(printed.slice(0, 300)));
  check(echoExit?.params.status.exitCode === 0 && echoExit?.params.killed === false, "and its exit, code 0",
    JSON.stringify(echoExit?.params));
  const output = await host.request("terminal/output", { terminalId: echoId });
  check(output.result?.output.includes("hello from ConPTY"), "terminal/output has it",
    JSON.stringify(output.result ?? output.error));

  const long = await host.request("terminal/create", {
    agentId, command: "ping -n 60 127.0.0.1", shell: true, cwd, cols: 80, rows: 24,
  });
  const longId = long.result?.terminalId;
  const killedAt = Date.now();
  await host.request("terminal/kill", { terminalId: longId });
  const longExit = await host.waitFor((m) => m.method === "terminal/exited" && m.params.terminalId === longId, 20000);
  check(longExit?.params.killed === true, "a long command is killed", `${Date.now() - killedAt} ms, ${JSON.stringify(longExit?.params)}`);

  const killed = await host.request("agent/kill", { agentId });
  const agentExit = await host.waitFor((m) => m.method === "agent/exited" && m.params.agentId === agentId, 20000);
  check(agentExit?.params.killed === true, "the agent is killed", JSON.stringify(agentExit?.params ?? killed.error));

  // With no host left, tetherd ends on its own after the grace period (5 s here).
  host.close();
  const exited = await new Promise((resolve) => {
    if (tetherd.exitCode !== null) resolve(tetherd.exitCode);
    tetherd.on("exit", (code) => resolve(code));
    setTimeout(() => resolve("still running"), 20000);
  });
  check(exited === 0, "tetherd ends on its own once no host is connected", String(exited));
  if (exited === "still running") tetherd.kill();
  report(`--- tetherd's log ---\n${stderr}`);
}

main()
  .catch((error) => check(false, "the smoke test ran", error.stack))
  .finally(() => process.exit(failures === 0 ? 0 : 1));
