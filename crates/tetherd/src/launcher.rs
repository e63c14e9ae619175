//! What to start for an agent's command: the program and its arguments, found the way a shell
//! of the platform would find them.
//!
//! On Unix the command goes to the OS as it is (`execvp` searches `PATH`). On Windows it cannot:
//! `CreateProcess`, and Rust's `Command` with it, only looks for `<name>.exe` on `PATH`, while npm
//! installs every agent's launcher as `<name>.cmd` (and `<name>.ps1`), which a shell finds through
//! `PATHEXT`. So on Windows the command is resolved here: a name without a folder is looked for in
//! each folder of `PATH`, with each extension of `PATHEXT` (`.COM;.EXE;.BAT;.CMD` when it is not
//! set) and then `.ps1`; a path with a folder and no extension is tried with the same extensions.
//! A `.cmd` or `.bat` found is started as it is (Rust's `Command` runs it through `cmd.exe`,
//! quoting the arguments for it, and refuses arguments it cannot quote safely); a `.ps1` through
//! Windows PowerShell, whose execution policy would otherwise refuse an unsigned script.
//!
//! The search is a pure function of the command, `PATH`, `PATHEXT` and which files exist
//! ([`resolve`]), so its Windows rules are tested on every platform.

use std::ffi::OsString;

/// The program to start and the arguments to give it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub program: OsString,
    pub args: Vec<OsString>,
}

/// What the search reads: the platform's rules, `PATH` and `PATHEXT` as the agent will get them,
/// and whether a file exists.
pub struct Search<'a> {
    pub windows: bool,
    pub path: Option<&'a str>,
    pub pathext: Option<&'a str>,
    pub is_file: &'a dyn Fn(&str) -> bool,
}

impl Search<'_> {
    /// The extensions tried, in order, lower case.
    fn extensions(&self) -> Vec<String> {
        let listed = self.pathext.filter(|value| !value.trim().is_empty()).unwrap_or(DEFAULT_PATHEXT);
        let mut extensions: Vec<String> = listed
            .split(';')
            .map(str::trim)
            .filter(|extension| extension.starts_with('.') && extension.len() > 1)
            .map(str::to_ascii_lowercase)
            .collect();
        extensions.push(".ps1".to_owned());
        extensions
    }
}

/// `PATHEXT` when the environment has none: what `cmd.exe` assumes, less the script hosts
/// (`.vbs`, `.js`) no agent is launched with.
const DEFAULT_PATHEXT: &str = ".COM;.EXE;.BAT;.CMD";

/// The command could not be found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotFound {
    pub command: String,
    /// The names looked for, for the message.
    pub tried: Vec<String>,
}

impl std::fmt::Display for NotFound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} was not found", self.command)?;
        match self.tried.as_slice() {
            [] => Ok(()),
            [one] => write!(f, " (looked for {one})"),
            tried => write!(f, " (looked for {} and {} more on PATH)", tried[0], tried.len() - 1),
        }
    }
}

/// What to start for `command` with `args` on this machine, in an environment whose `PATH` and
/// `PATHEXT` are `env`'s where it sets them (the agent's own), else tetherd's.
pub fn resolve_here(
    command: &str,
    args: &[String],
    env: &std::collections::BTreeMap<String, String>,
) -> Result<Launch, NotFound> {
    // Windows' variable names are case-insensitive (`Path` is the usual spelling there).
    let variable = |name: &str| {
        env.iter()
            .find(|(key, value)| key.eq_ignore_ascii_case(name) && !value.is_empty())
            .map(|(_, value)| value.clone())
            .or_else(|| std::env::var(name).ok())
    };
    let (path, pathext) = (variable("PATH"), variable("PATHEXT"));
    let search = Search {
        windows: cfg!(windows),
        path: path.as_deref(),
        pathext: pathext.as_deref(),
        is_file: &|candidate| std::path::Path::new(candidate).is_file(),
    };
    resolve(command, args, &search)
}

/// What to start for `command` with `args`, found by the rules of `search`.
pub fn resolve(command: &str, args: &[String], search: &Search<'_>) -> Result<Launch, NotFound> {
    let plain = || Launch { program: command.into(), args: args.iter().map(OsString::from).collect() };
    if !search.windows {
        return Ok(plain());
    }
    let extensions = search.extensions();
    let has_folder = command.contains(['\\', '/']) || command.get(1..2) == Some(":");
    let extension = extension_of(command);
    let candidates: Vec<String> = if has_folder {
        match extension {
            // A path with an extension is what it says.
            Some(_) => return Ok(launch_file(command.to_owned(), args)),
            None => extensions.iter().map(|extension| format!("{command}{extension}")).collect(),
        }
    } else {
        let folders = search.path.unwrap_or_default().split(';').map(|folder| folder.trim().trim_matches('"'));
        let names: Vec<String> = match extension {
            // `npx.cmd` is looked for as it is, and so is `node.exe`; `my.agent` as a name with
            // extensions after it.
            Some(extension) if extensions.contains(&extension) => vec![command.to_owned()],
            _ => extensions.iter().map(|extension| format!("{command}{extension}")).collect(),
        };
        folders
            .filter(|folder| !folder.is_empty())
            .flat_map(|folder| {
                names.iter().map(move |name| format!("{}\\{name}", folder.trim_end_matches(['\\', '/'])))
            })
            .collect()
    };
    match candidates.iter().find(|candidate| (search.is_file)(candidate)) {
        Some(found) => Ok(launch_file(found.clone(), args)),
        None => Err(NotFound { command: command.to_owned(), tried: candidates }),
    }
}

/// The extension of the last name of `path`, lower case, with its dot.
fn extension_of(path: &str) -> Option<String> {
    let name = path.rsplit(['\\', '/']).next().unwrap_or(path);
    let dot = name.rfind('.').filter(|&dot| dot > 0 && dot + 1 < name.len())?;
    Some(name[dot..].to_ascii_lowercase())
}

/// How to start the file `path`: a PowerShell script through PowerShell, anything else itself.
fn launch_file(path: String, args: &[String]) -> Launch {
    let args = args.iter().map(OsString::from);
    if extension_of(&path).as_deref() == Some(".ps1") {
        let mut all: Vec<OsString> =
            ["-NoLogo", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-File"]
                .map(OsString::from)
                .into();
        all.push(path.into());
        all.extend(args);
        return Launch { program: "powershell.exe".into(), args: all };
    }
    Launch { program: path.into(), args: args.collect() }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Resolves `command` on Windows with the files `files` (case-insensitively, as NTFS does).
    fn on_windows(command: &str, path: &str, pathext: Option<&str>, files: &[&str]) -> String {
        let is_file = |candidate: &str| files.iter().any(|file| file.eq_ignore_ascii_case(candidate));
        let search = Search { windows: true, path: Some(path), pathext, is_file: &is_file };
        match resolve(command, &["--acp".to_owned()], &search) {
            Ok(launch) => {
                let args: Vec<String> = launch.args.iter().map(|arg| arg.to_string_lossy().into_owned()).collect();
                format!("{} {}", launch.program.to_string_lossy(), args.join(" "))
            }
            Err(not_found) => format!("error: {not_found}"),
        }
    }

    const PATH: &str = r"C:\Windows\system32;C:\Program Files\nodejs\;C:\Users\me\AppData\Roaming\npm";

    #[test]
    fn npm_launchers_are_found_through_pathext() {
        let files = [
            r"C:\Users\me\AppData\Roaming\npm\gemini.cmd",
            r"C:\Users\me\AppData\Roaming\npm\gemini.ps1",
            r"C:\Program Files\nodejs\node.exe",
            r"C:\Users\me\AppData\Roaming\npm\only-ps.ps1",
        ];
        let cases = [
            ("gemini", None),
            ("node", None),
            ("gemini.cmd", None),
            ("GEMINI", Some(".EXE;.CMD")),
            ("only-ps", None),
            ("missing", None),
            ("gemini", Some(".EXE")),
        ];
        let out: Vec<String> = cases
            .iter()
            .map(|(command, pathext)| {
                format!("{command:<12} {pathext:?} → {}", on_windows(command, PATH, *pathext, &files))
            })
            .collect();
        expect_test::expect![[r#"
            gemini       None → C:\Users\me\AppData\Roaming\npm\gemini.cmd --acp
            node         None → C:\Program Files\nodejs\node.exe --acp
            gemini.cmd   None → C:\Users\me\AppData\Roaming\npm\gemini.cmd --acp
            GEMINI       Some(".EXE;.CMD") → C:\Users\me\AppData\Roaming\npm\GEMINI.cmd --acp
            only-ps      None → powershell.exe -NoLogo -NoProfile -NonInteractive -ExecutionPolicy Bypass -File C:\Users\me\AppData\Roaming\npm\only-ps.ps1 --acp
            missing      None → error: "missing" was not found (looked for C:\Windows\system32\missing.com and 14 more on PATH)
            gemini       Some(".EXE") → powershell.exe -NoLogo -NoProfile -NonInteractive -ExecutionPolicy Bypass -File C:\Users\me\AppData\Roaming\npm\gemini.ps1 --acp
        "#]]
        .assert_eq(&(out.join("\n") + "\n"));
    }

    #[test]
    fn a_path_with_a_folder_is_not_searched_for() {
        let files = [r"C:\tools\agent.cmd", r"D:\agents\claude.exe"];
        assert_eq!(on_windows(r"C:\tools\agent", PATH, None, &files), r"C:\tools\agent.cmd --acp");
        assert_eq!(on_windows("D:/agents/claude.exe", PATH, None, &files), "D:/agents/claude.exe --acp");
        assert_eq!(
            on_windows(r"C:\tools\missing", PATH, None, &files),
            r#"error: "C:\\tools\\missing" was not found (looked for C:\tools\missing.com and 4 more on PATH)"#
        );
    }

    #[test]
    fn unix_commands_go_to_the_os_as_they_are() {
        let search = Search { windows: false, path: Some("/usr/bin"), pathext: None, is_file: &|_| false };
        let launch = resolve("gemini", &["--experimental-acp".to_owned()], &search).expect("nothing is searched for");
        assert_eq!(launch, Launch { program: "gemini".into(), args: vec!["--experimental-acp".into()] });
    }
}
