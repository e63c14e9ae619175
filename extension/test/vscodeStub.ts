// Stands in for the `vscode` module in the unit tests (the build aliases `vscode` to this file).
// Only what the modules under test call at run time is here; each call is recorded so a test
// can assert what the person would have seen.

export interface ShownMessage {
  level: "error" | "warning" | "information";
  text: string;
}

export const shownMessages: ShownMessage[] = [];

export const window = {
  showErrorMessage(text: string): Promise<undefined> {
    shownMessages.push({ level: "error", text });
    return Promise.resolve(undefined);
  },
  showWarningMessage(text: string): Promise<undefined> {
    shownMessages.push({ level: "warning", text });
    return Promise.resolve(undefined);
  },
  showInformationMessage(text: string): Promise<undefined> {
    shownMessages.push({ level: "information", text });
    return Promise.resolve(undefined);
  },
};
