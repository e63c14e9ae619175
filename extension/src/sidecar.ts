// Starts tetherd and connects to it: spawns the binary with a fresh token in its environment,
// waits for the one line it prints once listening, opens the socket, and reports the socket's
// life to the caller. Bytes are passed through untouched; the engine speaks the protocol.
//
// tetherd is spawned detached so that it can outlive this window (a reload re-attaches to it
// later). Closing the socket is all this host does on the way out: tetherd's grace period
// decides when it exits.

import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";

import type * as vscode from "vscode";

import { describeError } from "./errors";

export interface SidecarOptions {
  /** The tetherd executable. */
  binaryPath: string;
  /** Given to tetherd through `TETHER_TOKEN` only: an argument would show up in `ps`. */
  token: string;
  graceSeconds: number;
  /** Where tetherd writes `tetherd.log` (the extension's log folder). */
  logDirectory: string;
  log: vscode.LogOutputChannel;
}

export interface SidecarEvents {
  /** The socket is open; `write` sends to it. */
  connected(write: (data: string) => void): void;
  bytes(bytes: Uint8Array): void;
  /** The socket closed after it had connected, or it could not be opened. */
  closed(reason: string): void;
  /** tetherd could not be started, or never said it was listening. */
  failedToStart(message: string): void;
}

/** How long tetherd may take to start listening; generous, since machines can be slow and busy. */
const LISTENING_TIMEOUT_MS = 30_000;
/** How many of tetherd's last stderr lines a startup failure quotes. */
const STDERR_TAIL_LINES = 20;
/** A longer "line" on tetherd's stdout or stderr is cut into pieces rather than buffered whole. */
const MAX_LINE_CHARS = 16_384;
/** Terminal colour and style sequences (`ESC [ ... m`). */
const ANSI_ESCAPE = /\u001b\[[0-9;]*m/g;

export class Sidecar {
  private child: ChildProcess | undefined;
  private socket: net.Socket | undefined;
  private listeningTimer: NodeJS.Timeout | undefined;
  private listening = false;
  private finished = false;
  private disposed = false;
  private readonly stderrTail: string[] = [];

  private constructor(
    private readonly options: SidecarOptions,
    private readonly events: SidecarEvents,
  ) {}

  /** Spawns tetherd; everything after that is reported through `events`. */
  static start(options: SidecarOptions, events: SidecarEvents): Sidecar {
    const sidecar = new Sidecar(options, events);
    sidecar.spawn();
    return sidecar;
  }

  /** Closes the socket; tetherd keeps running for its grace period. */
  dispose(): void {
    if (this.disposed) {
      return;
    }
    this.disposed = true;
    clearTimeout(this.listeningTimer);
    // `end` flushes what is still queued, then closes our side.
    this.socket?.end();
    this.child?.stdout?.destroy();
    this.child?.stderr?.destroy();
    this.child?.unref();
  }

  private spawn(): void {
    const { binaryPath, token, graceSeconds, logDirectory, log } = this.options;
    const socketPath = path.join(
      os.tmpdir(),
      `tether-${userId()}`,
      `tetherd-${randomBytes(8).toString("hex")}.sock`,
    );
    try {
      fs.mkdirSync(logDirectory, { recursive: true });
    } catch (error) {
      // tetherd reports a log file it cannot create itself, on stderr, which lands in our log.
      log.warn(`Could not create the log folder ${logDirectory}: ${describeError(error)}`);
    }
    const args = [
      "serve",
      "--socket",
      socketPath,
      "--grace-seconds",
      String(graceSeconds),
      "--log-file",
      path.join(logDirectory, "tetherd.log"),
    ];
    log.info(`Starting ${binaryPath} ${args.join(" ")}`);
    let child: ChildProcess;
    try {
      child = spawn(binaryPath, args, {
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
        windowsHide: true,
        env: { ...process.env, TETHER_TOKEN: token },
      });
    } catch (error) {
      this.fail(`could not start tetherd (${binaryPath}): ${describeError(error)}`);
      return;
    }
    this.child = child;

    child.on("error", (error) => {
      // Emitted when the binary cannot be run at all (missing, not executable); `close` follows
      // only sometimes, so this reports on its own.
      this.fail(`could not start tetherd (${binaryPath}): ${error.message}`);
    });
    child.on("close", (code, signal) => {
      const how = signal !== null ? `was killed by ${signal}` : `exited with code ${code ?? "unknown"}`;
      if (this.listening) {
        // The socket's own `close` tells the engine; this is for the log.
        log.info(`tetherd ${how}.`);
        return;
      }
      const tail = this.stderrTail.length > 0 ? `\n${this.stderrTail.join("\n")}` : " (it printed nothing)";
      this.fail(`tetherd (${binaryPath}) ${how} before it was listening. Its last output:${tail}`);
    });

    readLines(child.stdout, (line) => {
      if (this.listening || this.finished) {
        log.debug(`tetherd stdout: ${line}`);
      } else {
        this.onFirstLine(line);
      }
    });
    readLines(child.stderr, (line) => {
      this.stderrTail.push(line);
      if (this.stderrTail.length > STDERR_TAIL_LINES) {
        this.stderrTail.shift();
      }
      // tetherd colours its stderr log; the output channel shows escape codes verbatim.
      log.info(`tetherd: ${line.replace(ANSI_ESCAPE, "")}`);
    });

    this.listeningTimer = setTimeout(() => {
      this.fail(
        `tetherd (${binaryPath}) did not say it was listening within ${LISTENING_TIMEOUT_MS / 1000} s.`,
      );
      child.kill();
    }, LISTENING_TIMEOUT_MS);
  }

  /** tetherd's first stdout line: `{"listening":"<socket path>","pid":N}`. */
  private onFirstLine(line: string): void {
    let announced: unknown;
    try {
      announced = JSON.parse(line);
    } catch {
      announced = undefined;
    }
    const socketPath =
      typeof announced === "object" && announced !== null
        ? (announced as Record<string, unknown>)["listening"]
        : undefined;
    if (typeof socketPath !== "string" || socketPath === "") {
      this.fail(`tetherd (${this.options.binaryPath}) printed "${line}" instead of {"listening":...}.`);
      this.child?.kill();
      return;
    }
    this.listening = true;
    clearTimeout(this.listeningTimer);
    this.options.log.info(`tetherd is listening on ${socketPath} (${line}).`);
    if (!this.disposed) {
      this.connect(socketPath);
    }
  }

  private connect(socketPath: string): void {
    const socket = net.createConnection({ path: socketPath });
    this.socket = socket;
    let lastError: string | undefined;
    socket.on("connect", () => {
      if (!this.disposed) {
        this.events.connected((data) => {
          socket.write(data);
        });
      }
    });
    socket.on("data", (bytes: Buffer) => {
      if (!this.disposed) {
        this.events.bytes(bytes);
      }
    });
    socket.on("error", (error) => {
      // `close` always follows an `error`; it reports, with this message.
      lastError = error.message;
    });
    socket.on("close", () => {
      this.finished = true;
      if (!this.disposed) {
        this.events.closed(
          lastError === undefined ? "tetherd closed the connection" : `connection to tetherd failed: ${lastError}`,
        );
      }
    });
  }

  /** Reports a startup failure, once. */
  private fail(message: string): void {
    if (this.finished || this.listening) {
      return;
    }
    this.finished = true;
    clearTimeout(this.listeningTimer);
    if (!this.disposed) {
      // The engine logs and shows this message; logging it here too would say it twice.
      this.events.failedToStart(message);
    }
  }
}

/** Calls `onLine` for each line of a text stream, without the line ending. */
function readLines(stream: NodeJS.ReadableStream | null, onLine: (line: string) => void): void {
  if (stream === null) {
    return;
  }
  let pending = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    pending += chunk;
    let newline: number;
    while ((newline = pending.indexOf("\n")) !== -1) {
      onLine(pending.slice(0, newline).replace(/\r$/, ""));
      pending = pending.slice(newline + 1);
    }
    while (pending.length > MAX_LINE_CHARS) {
      onLine(pending.slice(0, MAX_LINE_CHARS));
      pending = pending.slice(MAX_LINE_CHARS);
    }
  });
  stream.on("end", () => {
    if (pending !== "") {
      onLine(pending);
    }
  });
}

/** Names the per-user socket folder; Windows has no uid (and tetherd uses named pipes there). */
function userId(): string {
  return process.getuid?.().toString() ?? os.userInfo().username;
}
