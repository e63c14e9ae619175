// Answers what an agent's MCP tools ask of VS Code (the engine's `askEditor`): the selection,
// the open editors, the Problems panel, and the language servers through VS Code's own
// `vscode.execute*Provider` commands, so every language VS Code knows answers. This file only
// reads VS Code's state and writes it in the wire's shape (absolute paths, 0-based positions);
// what the agent may see of it, and how much, is decided in tetherd.

import * as vscode from "vscode";

import type {
  EditorAnswer,
  EditorDiagnostic,
  EditorLocation,
  EditorPosition,
  EditorQuery,
  EditorRange,
  EditorSymbol,
  OpenEditor,
} from "./generated/protocol";

/** Answers one question, with at most `maxResults` + 1 items in a list (the extra one tells tetherd the list goes on). */
export async function answerEditorQuery(query: EditorQuery, maxResults: number): Promise<EditorAnswer> {
  const limit = maxResults + 1;
  switch (query.kind) {
    case "selection":
      return { kind: "selection", selection: activeSelection() };
    case "openEditors":
      return { kind: "openEditors", editors: openEditors().slice(0, limit) };
    case "diagnostics": {
      const all =
        query.path === null
          ? vscode.languages.getDiagnostics()
          : ([[vscode.Uri.file(query.path), vscode.languages.getDiagnostics(vscode.Uri.file(query.path))]] as const);
      return { kind: "diagnostics", diagnostics: diagnosticsOf(all, limit) };
    }
    case "definition":
    case "references": {
      const uri = await opened(query.path);
      const command = query.kind === "definition" ? "vscode.executeDefinitionProvider" : "vscode.executeReferenceProvider";
      const found = await vscode.commands.executeCommand<Array<vscode.Location | vscode.LocationLink> | undefined>(
        command,
        uri,
        toPosition(query.position),
      );
      return { kind: "locations", locations: locationsOf(found ?? []).slice(0, limit) };
    }
    case "hover": {
      const uri = await opened(query.path);
      const hovers = await vscode.commands.executeCommand<vscode.Hover[] | undefined>(
        "vscode.executeHoverProvider",
        uri,
        toPosition(query.position),
      );
      return { kind: "hover", contents: hoverTexts(hovers ?? []).slice(0, limit) };
    }
    case "documentSymbols": {
      const uri = await opened(query.path);
      const symbols = await vscode.commands.executeCommand<
        Array<vscode.DocumentSymbol | vscode.SymbolInformation> | undefined
      >("vscode.executeDocumentSymbolProvider", uri);
      return { kind: "symbols", symbols: symbolsOf(symbols ?? [], query.path, limit) };
    }
    case "workspaceSymbols": {
      const symbols = await vscode.commands.executeCommand<vscode.SymbolInformation[] | undefined>(
        "vscode.executeWorkspaceSymbolProvider",
        query.query,
      );
      return { kind: "symbols", symbols: symbolsOf(symbols ?? [], "", limit) };
    }
    case "openFile": {
      const line = Math.max(0, query.line ?? 0);
      const position = new vscode.Position(line, 0);
      await vscode.window.showTextDocument(vscode.Uri.file(query.path), {
        preview: true,
        preserveFocus: !query.focus,
        selection: new vscode.Range(position, position),
      });
      return { kind: "opened", path: query.path };
    }
  }
}

/** Language servers answer about documents VS Code has loaded; loading it first makes the first question about a file as good as the later ones. */
async function opened(path: string): Promise<vscode.Uri> {
  const uri = vscode.Uri.file(path);
  await vscode.workspace.openTextDocument(uri);
  return uri;
}

function activeSelection(): Extract<EditorAnswer, { kind: "selection" }>["selection"] {
  const editor = vscode.window.activeTextEditor;
  if (editor === undefined || editor.document.uri.scheme !== "file") {
    return null;
  }
  const selection = editor.selection;
  return {
    path: editor.document.uri.fsPath,
    languageId: editor.document.languageId,
    range: toRange(selection),
    text: editor.document.getText(selection),
  };
}

function openEditors(): OpenEditor[] {
  const editors: OpenEditor[] = [];
  for (const group of vscode.window.tabGroups.all) {
    for (const tab of group.tabs) {
      if (!(tab.input instanceof vscode.TabInputText) || tab.input.uri.scheme !== "file") {
        continue;
      }
      const document = vscode.workspace.textDocuments.find((open) => open.uri.toString() === (tab.input as vscode.TabInputText).uri.toString());
      editors.push({
        path: tab.input.uri.fsPath,
        languageId: document?.languageId ?? null,
        dirty: tab.isDirty,
        active: tab.isActive && group.isActive,
      });
    }
  }
  return editors;
}

/** VS Code's severities by name, in its own order (`DiagnosticSeverity.Error` is 0). */
const SEVERITIES = ["error", "warning", "information", "hint"] as const;

/** The Problems of the given files, errors first (so that a cut list keeps the errors). */
export function diagnosticsOf(
  files: ReadonlyArray<readonly [vscode.Uri, readonly vscode.Diagnostic[]]>,
  limit: number,
): EditorDiagnostic[] {
  const all: EditorDiagnostic[] = [];
  for (const [uri, diagnostics] of files) {
    if (uri.scheme !== "file") {
      continue;
    }
    for (const diagnostic of diagnostics) {
      const code = typeof diagnostic.code === "object" ? diagnostic.code.value : diagnostic.code;
      all.push({
        path: uri.fsPath,
        range: toRange(diagnostic.range),
        severity: SEVERITIES[diagnostic.severity] ?? "information",
        message: diagnostic.message,
        source: diagnostic.source ?? null,
        code: code === undefined ? null : String(code),
      });
    }
  }
  const rank = (severity: string) => SEVERITIES.indexOf(severity as (typeof SEVERITIES)[number]);
  return all.sort((a, b) => rank(a.severity) - rank(b.severity)).slice(0, limit);
}

/** Locations and location links (a definition may come as either) as the wire has them. */
export function locationsOf(found: ReadonlyArray<vscode.Location | vscode.LocationLink>): EditorLocation[] {
  return found.map((location) =>
    "targetUri" in location
      ? { path: location.targetUri.fsPath, range: toRange(location.targetSelectionRange ?? location.targetRange) }
      : { path: location.uri.fsPath, range: toRange(location.range) },
  );
}

/** Hover contents as Markdown text, whichever of VS Code's forms they came in. */
export function hoverTexts(hovers: readonly vscode.Hover[]): string[] {
  return hovers.flatMap((hover) =>
    hover.contents.map((content) => {
      if (typeof content === "string") {
        return content;
      }
      if ("language" in content) {
        return "```" + content.language + "\n" + content.value + "\n```";
      }
      return content.value;
    }),
  );
}

/** Symbols flattened, each with its container's name; document symbols are in `path`. */
export function symbolsOf(
  symbols: ReadonlyArray<vscode.DocumentSymbol | vscode.SymbolInformation>,
  path: string,
  limit: number,
): EditorSymbol[] {
  const flat: EditorSymbol[] = [];
  const visit = (symbol: vscode.DocumentSymbol | vscode.SymbolInformation, container: string | null) => {
    if (flat.length >= limit) {
      return;
    }
    const kind = vscode.SymbolKind[symbol.kind] ?? String(symbol.kind);
    if ("location" in symbol) {
      flat.push({
        name: symbol.name,
        kind,
        path: symbol.location.uri.fsPath,
        range: toRange(symbol.location.range),
        container: symbol.containerName === "" ? container : symbol.containerName,
      });
      return;
    }
    flat.push({ name: symbol.name, kind, path, range: toRange(symbol.range), container });
    for (const child of symbol.children) {
      visit(child, symbol.name);
    }
  };
  for (const symbol of symbols) {
    visit(symbol, null);
  }
  return flat;
}

function toPosition(position: EditorPosition): vscode.Position {
  return new vscode.Position(position.line, position.character);
}

function toRange(range: vscode.Range): EditorRange {
  return {
    start: { line: range.start.line, character: range.start.character },
    end: { line: range.end.line, character: range.end.character },
  };
}
