// Stands in for the `vscode` module in the unit tests (the build aliases `vscode` to this file).
// Only what the modules under test call at run time is here; each call is recorded so a test
// can assert what the person would have seen, and the settings are a map a test can fill.

export interface ShownMessage {
  level: "error" | "warning" | "information";
  text: string;
}

export const shownMessages: ShownMessage[] = [];

/** Paths of the documents `showTextDocument` opened. */
export const openedDocuments: string[] = [];

/** When set, `showTextDocument` fails with this message (as it does for a missing file). */
export const failures: { showTextDocument?: string; update?: string } = {};

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
  showTextDocument(uri: Uri): Promise<unknown> {
    if (failures.showTextDocument !== undefined) {
      return Promise.reject(new Error(failures.showTextDocument));
    }
    openedDocuments.push(uri.fsPath);
    return Promise.resolve({});
  },
};

export class Uri {
  private constructor(readonly fsPath: string) {}

  static file(path: string): Uri {
    return new Uri(path);
  }
}

export enum ConfigurationTarget {
  Global = 1,
  Workspace = 2,
  WorkspaceFolder = 3,
}

/** One `update` call on a configuration. */
export interface SettingUpdate {
  key: string;
  value: unknown;
  target: ConfigurationTarget | undefined;
}

/** The workspace settings `getConfiguration` reads, by full key (`tether.permissions.rules`). */
export const settings = new Map<string, unknown>();
/** The user settings, under the workspace ones (`get` falls back to them, `inspect` shows both). */
export const userSettings = new Map<string, unknown>();
export const settingUpdates: SettingUpdate[] = [];

type ConfigurationListener = (event: { affectsConfiguration(section: string): boolean }) => void;
const configurationListeners: ConfigurationListener[] = [];

export const workspace = {
  workspaceFolders: undefined as Array<{ uri: Uri }> | undefined,

  getConfiguration(section: string) {
    return {
      get(key: string): unknown {
        return settings.get(`${section}.${key}`) ?? userSettings.get(`${section}.${key}`);
      },
      inspect(key: string) {
        return {
          key: `${section}.${key}`,
          globalValue: userSettings.get(`${section}.${key}`),
          workspaceValue: settings.get(`${section}.${key}`),
        };
      },
      update(key: string, value: unknown, target?: ConfigurationTarget): Promise<void> {
        if (failures.update !== undefined) {
          return Promise.reject(new Error(failures.update));
        }
        settingUpdates.push({ key: `${section}.${key}`, value, target });
        return Promise.resolve();
      },
    };
  },

  onDidChangeConfiguration(listener: ConfigurationListener) {
    configurationListeners.push(listener);
    return {
      dispose() {
        configurationListeners.splice(configurationListeners.indexOf(listener), 1);
      },
    };
  },
};

/** Fires `onDidChangeConfiguration` as VS Code does after these settings changed. */
export function changeSettings(changed: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(changed)) {
    settings.set(key, value);
  }
  const keys = Object.keys(changed);
  const event = {
    affectsConfiguration: (section: string) =>
      keys.some((key) => key === section || key.startsWith(`${section}.`)),
  };
  for (const listener of [...configurationListeners]) {
    listener(event);
  }
}
