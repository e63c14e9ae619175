// Starts tetherd and connects to it: spawns the binary with the token in its environment, waits
// for the one line it prints once listening, opens the socket, and reports the socket's life to
// the caller. Bytes are passed through untouched; the engine speaks the protocol.
//
// tetherd is spawned detached so that it can outlive this window. Once it listens, its socket,
// token and pid are recorded in a file only this user can read (`tetherd.json` in the
// workspace's storage), and the next window of the workspace, after a reload, connects to the
// recorded tetherd first, so that its agents carry on. Only when that tetherd is gone is a new
// one spawned. Closing the socket is all this host does on the way out: tetherd's grace period
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
  /** Where the listening tetherd is recorded for the next window (see `writeSidecarRecord`). */
  recordFile: string;
  /**
   * Connect to the tetherd in `recordFile` first when it was started with `token`; spawn one
   * only when it is gone. Only a window's first start does: a later one follows a tetherd that
   * closed this window's connection, and connecting to it again would only repeat that.
   */
  reconnect: boolean;
  log: vscode.LogOutputChannel;
}

/** A listening tetherd, as recorded for the next window. */
export interface SidecarRecord {
  socket: string;
  /** Presented in `hello`; it is why the file must be private. */
  token: string;
  pid: number;
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

  /**
   * Connects to the recorded tetherd (when `options.reconnect` says to) or spawns one; everything
   * after that is reported through `events`.
   */
  static start(options: SidecarOptions, events: SidecarEvents): Sidecar {
    const sidecar = new Sidecar(options, events);
    const recorded = options.reconnect ? sidecar.reusableRecord() : undefined;
    if (recorded === undefined) {
      sidecar.spawn();
    } else {
      sidecar.reconnect(recorded);
    }
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

  /** The recorded tetherd, when there is one this window may connect to. */
  private reusableRecord(): SidecarRecord | undefined {
    const { recordFile, token, log } = this.options;
    const recorded = readSidecarRecord(recordFile, log);
    if (recorded === undefined) {
      return undefined;
    }
    if (recorded.token !== token) {
      // Only when another window rewrote the record since this one read it at activation.
      log.info(`The tetherd recorded in ${recordFile} was started by another window; starting a new one.`);
      return undefined;
    }
    const unsafe = privateFolderProblem(path.dirname(recorded.socket));
    if (unsafe !== undefined) {
      // Connecting hands over the token: only to a socket nobody else can have put there.
      log.warn(`Not connecting to the recorded tetherd at ${recorded.socket}: ${unsafe}. Starting a new one.`);
      return undefined;
    }
    return recorded;
  }

  /**
   * Connects to the tetherd a previous window left running; when it has exited (its socket is
   * gone or refuses connections), spawns a new one instead.
   */
  private reconnect(recorded: SidecarRecord): void {
    const { log } = this.options;
    log.info(`Connecting to tetherd (pid ${recorded.pid}) left running by the previous window, on ${recorded.socket}.`);
    this.connect(recorded.socket, {
      connected: () => {
        log.info(`Reconnected to tetherd (pid ${recorded.pid}) left running by the previous window.`);
      },
      unreachable: (error) => {
        log.info(
          `The tetherd left running by the previous window (pid ${recorded.pid}) is gone (${error}); starting a new one.`,
        );
        if (!this.disposed) {
          this.spawn();
        }
      },
    });
  }

  private spawn(): void {
    const { binaryPath, token, graceSeconds, logDirectory, log } = this.options;
    const socketPath = newSocketPath(process.platform, os.tmpdir(), userId(), randomBytes(8).toString("hex"));
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
        env: { ...process.env, TETHER_TOKEN: token, TETHER_LOG: tetherdLogFilter(log.logLevel) },
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
    const announced = parseObject(line);
    const socketPath = announced?.["listening"];
    if (typeof socketPath !== "string" || socketPath === "") {
      this.fail(`tetherd (${this.options.binaryPath}) printed "${line}" instead of {"listening":...}.`);
      this.child?.kill();
      return;
    }
    this.listening = true;
    clearTimeout(this.listeningTimer);
    const { recordFile, token, log } = this.options;
    log.info(`tetherd is listening on ${socketPath} (${line}).`);
    const announcedPid = announced?.["pid"];
    const pid = typeof announcedPid === "number" ? announcedPid : (this.child?.pid ?? 0);
    try {
      writeSidecarRecord(recordFile, { socket: socketPath, token, pid });
    } catch (error) {
      // This window works all the same; only a reload will start another tetherd.
      log.warn(`Could not record tetherd in ${recordFile}, so a window reload will not find it: ${describeError(error)}`);
    }
    if (!this.disposed) {
      this.connect(socketPath);
    }
  }

  /**
   * Opens the socket. Without `firstAttempt`, failing to connect is reported as the connection
   * closing; with it, the attempt's own callbacks decide what a failure means.
   */
  private connect(socketPath: string, firstAttempt?: ConnectAttempt): void {
    const socket = net.createConnection({ path: socketPath });
    this.socket = socket;
    let opened = false;
    let lastError: string | undefined;
    socket.on("connect", () => {
      opened = true;
      firstAttempt?.connected();
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
      if (!opened && firstAttempt !== undefined) {
        firstAttempt.unreachable(lastError ?? "it closed the connection");
        return;
      }
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

/** What a reconnection does once it knows whether the recorded tetherd is still there. */
interface ConnectAttempt {
  connected(): void;
  /** The socket could not be opened; `error` says why (ENOENT, ECONNREFUSED...). */
  unreachable(error: string): void;
}

/**
 * Records a listening tetherd in `file`, readable by this user only: the folder is created with
 * mode 0700 and the file written 0600, under a temporary name first and then renamed, so that a
 * reader never sees half a record.
 */
export function writeSidecarRecord(file: string, record: SidecarRecord): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${randomBytes(6).toString("hex")}.tmp`;
  // `wx`: never write through a file (or link) someone else put at this name.
  fs.writeFileSync(temporary, `${JSON.stringify(record)}\n`, { mode: 0o600, flag: "wx" });
  try {
    fs.renameSync(temporary, file);
  } catch (error) {
    try {
      fs.rmSync(temporary, { force: true });
    } catch {
      // The rename's error is the one worth reporting; a temporary file that cannot be removed
      // either is only litter in the extension's own storage.
    }
    throw error;
  }
}

/**
 * The tetherd recorded in `file`, or `undefined` when there is none: no file yet, or one that
 * cannot be read or is not a record (logged, since a new tetherd is then started for nothing).
 */
export function readSidecarRecord(file: string, log: vscode.LogOutputChannel): SidecarRecord | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
      log.warn(`Could not read ${file}: ${describeError(error)}`);
    }
    return undefined;
  }
  const recorded = parseObject(text);
  const socket = recorded?.["socket"];
  const token = recorded?.["token"];
  const pid = recorded?.["pid"];
  if (
    typeof socket !== "string" ||
    socket === "" ||
    typeof token !== "string" ||
    token === "" ||
    typeof pid !== "number" ||
    !Number.isSafeInteger(pid)
  ) {
    log.warn(`Ignored ${file}: it does not record a tetherd (socket, token and pid).`);
    return undefined;
  }
  return { socket, token, pid };
}

/** `text` parsed as JSON when it is an object, else `undefined`. */
function parseObject(text: string): Record<string, unknown> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
    ? (parsed as Record<string, unknown>)
    : undefined;
}

/**
 * Why `folder` may not hold a socket this window hands its token to, or `undefined` when it is
 * a real folder of this user's that nobody else can enter (as tetherd makes it). Windows has no
 * such folder: tetherd listens on a named pipe there.
 */
function privateFolderProblem(folder: string): string | undefined {
  const uid = process.geteuid?.();
  if (uid === undefined) {
    return undefined;
  }
  let stats: fs.Stats;
  try {
    stats = fs.lstatSync(folder);
  } catch (error) {
    // A folder that is gone means tetherd is too; connecting fails with ENOENT, and that is
    // handled like any tetherd that exited.
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? undefined : describeError(error);
  }
  if (!stats.isDirectory()) {
    return `${folder} is not a folder`;
  }
  if (stats.uid !== uid) {
    return `${folder} belongs to another user`;
  }
  if ((stats.mode & 0o077) !== 0) {
    return `other users can enter ${folder} (mode ${(stats.mode & 0o777).toString(8)})`;
  }
  return undefined;
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

/**
 * Where a new tetherd listens: a socket in a private per-user folder (tetherd makes it mode 0700),
 * or on Windows a named pipe (only its owner may open it; tetherd sets its access list). The
 * random part keeps each tetherd's name unguessable, so that nobody can make the pipe first and
 * wait for the token: tetherd would then fail to listen rather than share the name.
 */
/** tetherd's log filters (`TETHER_LOG`) by `vscode.LogLevel`, whose values are Off = 0 to Error = 5. */
const TETHERD_LOG_FILTERS = ["off", "trace", "debug", "info", "warn", "error"];

/**
 * The log filter tetherd starts with (`TETHER_LOG`, in `tracing`'s syntax): the level of Tether's
 * output channel, so that "Developer: Set Log Level..." for Tether reaches tetherd's log too, from
 * the next tetherd started. A `TETHER_LOG` in VS Code's own environment wins, since it can name
 * modules (`tetherd::terminal=trace`).
 */
export function tetherdLogFilter(level: vscode.LogLevel | undefined, environment = process.env["TETHER_LOG"]): string {
  if (environment !== undefined && environment !== "") return environment;
  return (level !== undefined ? TETHERD_LOG_FILTERS[level] : undefined) ?? "info";
}

export function newSocketPath(platform: NodeJS.Platform, tmpdir: string, user: string, random: string): string {
  if (platform === "win32") {
    return `\\\\.\\pipe\\tether-${user.replace(/[^A-Za-z0-9._-]/g, "_")}-${random}`;
  }
  return path.posix.join(tmpdir, `tether-${user}`, `tetherd-${random}.sock`);
}

/** Names the per-user socket folder; Windows has no uid (and tetherd uses named pipes there). */
function userId(): string {
  return process.getuid?.().toString() ?? os.userInfo().username;
}
