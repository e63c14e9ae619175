// The agent's terminals as VS Code terminals. The engine decides which terminal to show, what to
// replay into it and what to write to it; this file gives each one a Pseudoterminal, carries the
// engine's writes to it, and reports what the person does with it (typing, resizing, closing) back
// to the engine as commands. Whether closing a terminal stops its command is the engine's call:
// it asks for the confirmation below when it should.

import * as vscode from "vscode";

import { describeError } from "./errors";
import type { TerminalActions } from "./engineHost";
import type { HostAction, HostCommand } from "./generated/protocol";

/** What the engine asks for in an `openTerminal` action. */
export type OpenTerminalRequest = Omit<Extract<HostAction, { type: "openTerminal" }>, "type">;

/**
 * How much output (in UTF-16 code units) waits for a terminal VS Code has not opened yet. VS Code
 * ignores writes before it calls `open`, so they are held until then; if they pile up, the oldest
 * are dropped, since the newest output is what the person wants to see first.
 */
export const PENDING_OUTPUT_LIMIT = 1024 * 1024;

/** The button of the stop confirmation. */
export const STOP_BUTTON = "Stop";

/** One agent terminal shown in VS Code. */
class MirroredTerminal {
  private readonly written = new vscode.EventEmitter<string>();
  /** Output that arrived before VS Code opened the terminal; undefined once it is open. */
  private pending: string[] | undefined = [];
  private pendingLength = 0;
  /** Set when Tether disposes the terminal itself: its closing is then not the person's doing. */
  private disposedByHost = false;
  readonly terminal: vscode.Terminal;

  constructor(
    private readonly request: OpenTerminalRequest,
    private readonly send: (command: HostCommand) => void,
    /** Called once when the person closes the terminal. */
    private readonly closedByPerson: () => void,
  ) {
    const pty: vscode.Pseudoterminal = {
      onDidWrite: this.written.event,
      open: (dimensions) => this.opened(dimensions),
      close: () => this.closed(),
      handleInput: (data) => this.typed(data),
      setDimensions: (dimensions) => this.resized(dimensions),
    };
    this.terminal = vscode.window.createTerminal({
      name: request.name,
      pty,
      iconPath: new vscode.ThemeIcon("hubot"),
      // The command behind it lives in tetherd, not in this window: after a reload the engine
      // opens it again with its output so far, so VS Code must not restore an empty copy.
      isTransient: true,
    });
  }

  write(data: string): void {
    if (this.pending === undefined) {
      this.written.fire(data);
      return;
    }
    this.pending.push(data);
    this.pendingLength += data.length;
    // The newest piece is kept even when it alone is over the limit: the engine bounds each write.
    while (this.pendingLength > PENDING_OUTPUT_LIMIT && this.pending.length > 1) {
      this.pendingLength -= this.pending.shift()?.length ?? 0;
    }
  }

  disposeByHost(): void {
    this.disposedByHost = true;
    this.terminal.dispose();
    this.written.dispose();
  }

  private opened(dimensions: vscode.TerminalDimensions | undefined): void {
    if (this.request.replay !== "") {
      this.written.fire(this.request.replay);
    }
    if (dimensions !== undefined) {
      this.resized(dimensions);
    }
    const pending = this.pending ?? [];
    this.pending = undefined;
    this.pendingLength = 0;
    for (const data of pending) {
      this.written.fire(data);
    }
  }

  private typed(data: string): void {
    // A read-only mirror shows an agent's own command: there is no PTY of ours to type into.
    if (this.request.interactive) {
      this.send({ type: "terminalInput", terminal: this.request.terminal, data });
    }
  }

  private resized(dimensions: vscode.TerminalDimensions): void {
    this.send({
      type: "terminalResize",
      terminal: this.request.terminal,
      cols: dimensions.columns,
      rows: dimensions.rows,
    });
  }

  private closed(): void {
    // VS Code also calls `close` after Tether disposed the terminal; that is not the person's.
    if (this.disposedByHost) {
      return;
    }
    this.written.dispose();
    this.closedByPerson();
  }
}

/** The VS Code terminals mirroring the agent's terminals, by the agent's terminal id. */
export class MirroredTerminals implements TerminalActions {
  private readonly mirrors = new Map<string, MirroredTerminal>();

  constructor(
    private readonly send: (command: HostCommand) => void,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /** Shows the terminal, creating it with the replayed output when it is not open. */
  show(request: OpenTerminalRequest): void {
    let mirrored = this.mirrors.get(request.terminal);
    if (mirrored === undefined) {
      const terminal = request.terminal;
      mirrored = new MirroredTerminal(request, this.send, () => {
        this.mirrors.delete(terminal);
        this.send({ type: "terminalClosed", terminal });
      });
      this.mirrors.set(terminal, mirrored);
    }
    if (request.reveal) {
      mirrored.terminal.show(true);
    }
  }

  /** Writes to the terminal if it is open; output for a closed one is in the engine's replay. */
  write(terminal: string, data: string): void {
    this.mirrors.get(terminal)?.write(data);
  }

  /** Asks the person whether to stop a command whose terminal they closed. */
  confirmStop(terminal: string, command: string): void {
    vscode.window
      .showWarningMessage(
        `The command "${command}" is still running. Stop it? If not, it goes on in a new terminal.`,
        { modal: true },
        STOP_BUTTON,
      )
      .then(
        (answer) => {
          // VS Code has closed the terminal already: a command that goes on gets it back, as
          // the card's "Open in terminal" would, rather than running on out of sight.
          if (answer === STOP_BUTTON) {
            this.send({ type: "terminal", intent: { type: "stop", terminal } });
          } else {
            this.send({ type: "terminal", intent: { type: "open", terminal } });
          }
        },
        (error: unknown) => {
          this.log.error(`Could not ask whether to stop "${command}": ${describeError(error)}`);
        },
      );
  }

  /** Closes one mirrored terminal because the engine asked; the engine is not told back. */
  close(terminal: string): void {
    this.mirrors.get(terminal)?.disposeByHost();
    this.mirrors.delete(terminal);
  }

  /** Closes every mirrored terminal; the engine is not told, since it is going away too. */
  dispose(): void {
    for (const mirrored of this.mirrors.values()) {
      mirrored.disposeByHost();
    }
    this.mirrors.clear();
  }
}
