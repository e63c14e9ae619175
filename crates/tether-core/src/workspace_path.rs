//! Where a path is, inside the workspace or outside it, for workspaces on POSIX systems and on
//! Windows alike.
//!
//! The engine runs as WebAssembly in the host, where `std::path` knows only `/`; on Windows the
//! host hands it Windows paths (`C:\Users\me\app`, `\\server\share\app`, and whatever an agent
//! writes: `c:/users/me/app/src`, `src\main.rs`, `\\?\C:\Users\me\app`). So paths are text here,
//! and which rules apply is read off the workspace root ([`PathStyle::of`]): a root with a drive
//! letter or a UNC prefix is a Windows workspace, where both separators count, the drive or the
//! server and share must match, and names match whatever their case (NTFS and SMB shares
//! compare names case-insensitively by default). Everything else is POSIX: `/` only, case
//! counts.
//!
//! Paths are compared lexically (`.` and `..` removed, never above the root of the path). The
//! engine does no IO, so it cannot see a symbolic link or a junction: before it decides anything
//! about a path it has the host resolve the path and the roots through their links, and classifies
//! what they lead to with this (see `acp::links`).
//!
//! A workspace can have several folders ([`Workspace`]). VS Code's workspace trust covers all the
//! folders of a workspace at once, so every folder is inside; the first is where agents start.

use crate::permissions::RequestPath;

/// The rules a workspace's paths follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathStyle {
    /// `/`-separated, rooted at `/`, case-sensitive.
    Posix,
    /// `\` or `/`, rooted at a drive (`C:`) or a share (`\\server\share`), case-insensitive.
    Windows,
}

impl PathStyle {
    /// The style of the workspace whose root is `root`.
    pub fn of(root: &str) -> PathStyle {
        if windows_prefix(root).is_some() { PathStyle::Windows } else { PathStyle::Posix }
    }

    /// Whether names that differ only in case name the same file (the permission rules' path
    /// globs then match that way too).
    pub fn folds_case(self) -> bool {
        self == PathStyle::Windows
    }
}

/// `path` made absolute against `root` and normalised lexically, then classified as inside or
/// outside the workspace by its text alone. Inside, the path is relative to the root and
/// `/`-separated whatever the style (the form rules and the chat use), `.` for the root itself;
/// outside, it is absolute in the workspace's own style.
pub fn resolve_path(root: &str, path: &str) -> RequestPath {
    match PathStyle::of(root) {
        PathStyle::Posix => resolve_posix(root, path),
        PathStyle::Windows => resolve_windows(root, path),
    }
}

/// The absolute path of `relative` (`/`-separated, as [`resolve_path`] gives it) inside the
/// workspace at `root`, in the workspace's own style.
pub(crate) fn join_inside(root: &str, relative: &str) -> String {
    if relative == "." {
        return root.to_owned();
    }
    match PathStyle::of(root) {
        PathStyle::Posix => format!("{}/{relative}", root.trim_end_matches('/')),
        PathStyle::Windows => {
            format!("{}\\{}", root.trim_end_matches(['\\', '/']), relative.replace('/', "\\"))
        }
    }
}

/// `path` (absolute, or relative to the workspace at `root`) made absolute and normalised by its
/// text, in the workspace's own style.
pub fn absolute_path(root: &str, path: &str) -> String {
    match resolve_path(root, path) {
        RequestPath::Inside(relative) => join_inside(root, &relative),
        RequestPath::Outside(absolute) => absolute,
    }
}

/// The folders of a workspace, each of them inside. The first is the agents' working folder: a
/// relative path an agent names is taken against it.
///
/// A path inside is named relative to its folder. With one folder that is the whole name
/// (`src/main.rs`, `.` for the folder itself). With several, the name starts with the folder's
/// (`app/src/main.rs`, `lib` for the folder `lib` itself), as VS Code's search names the files of
/// a multi-root workspace: every name then says which file it is, and a rule's path glob can name
/// a folder (`app/**`). A folder's name is the last name of its path; folders that share one are
/// told apart by their place in the list (`app`, `app (2)`). A folder inside another holds its own
/// files: the deepest folder names a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    /// Never empty.
    folders: Vec<Folder>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Folder {
    root: String,
    name: String,
}

impl Workspace {
    /// A workspace of one folder.
    pub fn single(root: impl Into<String>) -> Workspace {
        Workspace { folders: vec![Folder { root: root.into(), name: String::new() }] }
    }

    /// A workspace of `first` and `others` (absolute paths, in VS Code's order). A folder given
    /// twice counts once.
    pub fn new(first: impl Into<String>, others: impl IntoIterator<Item = String>) -> Workspace {
        let first = first.into();
        let style = PathStyle::of(&first);
        let mut roots = vec![first];
        for root in others {
            if !roots.iter().any(|known| same_place(known, &root)) {
                roots.push(root);
            }
        }
        if roots.len() == 1 {
            return Workspace::single(roots.remove(0));
        }
        let mut folders: Vec<Folder> = Vec::with_capacity(roots.len());
        for root in roots {
            let base = last_name(&root);
            let mut name = base.clone();
            let mut count = 1;
            while folders.iter().any(|folder| names_equal(style, &folder.name, &name)) {
                count += 1;
                name = format!("{base} ({count})");
            }
            folders.push(Folder { root, name });
        }
        Workspace { folders }
    }

    /// The agents' working folder.
    pub fn first(&self) -> &str {
        &self.folders[0].root
    }

    /// Every folder's root, the first first.
    pub fn roots(&self) -> impl Iterator<Item = &str> {
        self.folders.iter().map(|folder| folder.root.as_str())
    }

    /// The same folders, with the same names, at other roots (where each root leads through
    /// links, in the order of [`Workspace::roots`]). A root not given keeps its own.
    pub fn at_roots(&self, roots: impl IntoIterator<Item = Option<String>>) -> Workspace {
        let mut folders = self.folders.clone();
        for (folder, root) in folders.iter_mut().zip(roots) {
            if let Some(root) = root {
                folder.root = root;
            }
        }
        Workspace { folders }
    }

    /// `path` (absolute, or relative to the first folder) classified: inside, named as the type's
    /// doc says, or outside, absolute and normalised by its text.
    pub fn resolve(&self, path: &str) -> RequestPath {
        let [first, others @ ..] = self.folders.as_slice() else { unreachable!("a workspace has a folder") };
        let in_first = resolve_path(&first.root, path);
        if others.is_empty() {
            return in_first;
        }
        let absolute = match &in_first {
            RequestPath::Inside(relative) => join_inside(&first.root, relative),
            RequestPath::Outside(absolute) => absolute.clone(),
        };
        // The deepest folder holding the path: the one it is fewest names below.
        let deepest = self
            .folders
            .iter()
            .filter_map(|folder| match resolve_path(&folder.root, &absolute) {
                RequestPath::Inside(relative) => Some((folder, relative)),
                RequestPath::Outside(_) => None,
            })
            .min_by_key(|(_, relative)| if relative == "." { 0 } else { relative.split('/').count() });
        match deepest {
            Some((folder, relative)) if relative == "." => RequestPath::Inside(folder.name.clone()),
            Some((folder, relative)) => RequestPath::Inside(format!("{}/{relative}", folder.name)),
            None => RequestPath::Outside(absolute),
        }
    }

    /// `path` (absolute, or relative to the first folder) made absolute and normalised by its
    /// text.
    pub fn absolute(&self, path: &str) -> String {
        absolute_path(self.first(), path)
    }

    /// `path` as the person reads it: its name when inside, else absolute.
    pub fn label(&self, path: &str) -> String {
        match self.resolve(path) {
            RequestPath::Inside(name) | RequestPath::Outside(name) => name,
        }
    }
}

/// The last name of a folder's path, whatever its separators.
fn last_name(root: &str) -> String {
    let trimmed = root.trim_end_matches(['/', '\\']);
    let name = match PathStyle::of(root) {
        PathStyle::Posix => trimmed.rsplit('/').next(),
        PathStyle::Windows => trimmed.rsplit(is_separator).next(),
    };
    match name {
        Some(name) if !name.is_empty() => name.to_owned(),
        _ => root.to_owned(),
    }
}

fn names_equal(style: PathStyle, a: &str, b: &str) -> bool {
    if style.folds_case() { names_match(a, b) } else { a == b }
}

/// Whether two absolute roots are the same folder by their text.
fn same_place(a: &str, b: &str) -> bool {
    matches!(resolve_path(a, b), RequestPath::Inside(relative) if relative == ".")
}

fn resolve_posix(root: &str, path: &str) -> RequestPath {
    // Most paths an agent names are already absolute and normal, below a normal root: every
    // tool call names a few, so a burst of thousands of them spent about a tenth of its fold
    // splitting and joining names to find that out. Such a path is placed by its text alone;
    // any other is read name by name.
    if let Some(relative) = path.strip_prefix(root).and_then(|rest| rest.strip_prefix('/'))
        && is_normal_posix(root)
        && normal_names(relative)
    {
        return RequestPath::Inside(relative.to_owned());
    }
    resolve_posix_by_names(root, path)
}

/// Whether `path` is absolute and already as [`normalize_posix`] writes it, the root (`/`) aside.
fn is_normal_posix(path: &str) -> bool {
    path.strip_prefix('/').is_some_and(normal_names)
}

/// Whether `names` is one or more names joined by `/`, none of them empty, `.` or `..`.
fn normal_names(names: &str) -> bool {
    names.split('/').all(|name| !matches!(name, "" | "." | ".."))
}

fn resolve_posix_by_names(root: &str, path: &str) -> RequestPath {
    let root = normalize_posix(root, "");
    let absolute = if path.starts_with('/') { normalize_posix(path, "") } else { normalize_posix(path, &root) };
    if absolute == root {
        return RequestPath::Inside(".".to_owned());
    }
    match absolute.strip_prefix(&root).and_then(|rest| if root == "/" { Some(rest) } else { rest.strip_prefix('/') }) {
        Some(relative) if !relative.is_empty() => RequestPath::Inside(relative.to_owned()),
        _ => RequestPath::Outside(absolute),
    }
}

fn normalize_posix(path: &str, base: &str) -> String {
    let mut parts: Vec<&str> = base.split('/').filter(|part| !part.is_empty()).collect();
    push_parts(&mut parts, path.split('/'));
    format!("/{}", parts.join("/"))
}

/// Adds `names` to `parts`, dropping `.` and empty names and taking `..` back one name (never
/// above the start).
fn push_parts<'a>(parts: &mut Vec<&'a str>, names: impl Iterator<Item = &'a str>) {
    for name in names {
        match name {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
}

/// What a Windows path is rooted at.
#[derive(Debug, Clone, PartialEq, Eq)]
enum WindowsPrefix {
    /// A drive letter, upper case.
    Drive(char),
    /// `\\server\share`.
    Share { server: String, share: String },
}

impl WindowsPrefix {
    fn same_as(&self, other: &WindowsPrefix) -> bool {
        match (self, other) {
            (WindowsPrefix::Drive(a), WindowsPrefix::Drive(b)) => a == b,
            (
                WindowsPrefix::Share { server: a_server, share: a_share },
                WindowsPrefix::Share { server: b_server, share: b_share },
            ) => names_match(a_server, b_server) && names_match(a_share, b_share),
            _ => false,
        }
    }

    fn shown(&self) -> String {
        match self {
            WindowsPrefix::Drive(letter) => format!("{letter}:"),
            WindowsPrefix::Share { server, share } => format!("\\\\{server}\\{share}"),
        }
    }
}

fn is_separator(c: char) -> bool {
    c == '\\' || c == '/'
}

/// The prefix of an absolute Windows path and the rest after it; `None` when `path` has neither
/// a drive nor a share. The verbatim forms (`\\?\C:\`, `\\?\UNC\server\share`) are read as the
/// plain ones they stand for.
fn windows_prefix(path: &str) -> Option<(WindowsPrefix, &str)> {
    for verbatim in [r"\\?\", r"\\.\"] {
        if let Some(rest) = path.strip_prefix(verbatim) {
            return match rest.strip_prefix(r"UNC\") {
                Some(share) => share_prefix(share),
                None => drive_prefix(rest),
            };
        }
    }
    let mut chars = path.chars();
    match (chars.next(), chars.next()) {
        (Some(a), Some(b)) if is_separator(a) && is_separator(b) => share_prefix(&path[2..]),
        _ => drive_prefix(path),
    }
}

/// `C:` followed by a separator or nothing, and the rest.
fn drive_prefix(path: &str) -> Option<(WindowsPrefix, &str)> {
    let (letter, rest) = drive_relative(path)?;
    (rest.is_empty() || rest.starts_with(is_separator)).then_some((WindowsPrefix::Drive(letter), rest))
}

/// `server\share` (after the two separators of a UNC path), and the rest.
fn share_prefix(path: &str) -> Option<(WindowsPrefix, &str)> {
    let mut names = path.splitn(3, is_separator);
    let server = names.next().filter(|name| !name.is_empty())?;
    let share = names.next().filter(|name| !name.is_empty())?;
    let rest = names.next().unwrap_or("");
    Some((WindowsPrefix::Share { server: server.to_owned(), share: share.to_owned() }, rest))
}

/// Whether two names are the same file name on Windows: compared without regard to case.
fn names_match(a: &str, b: &str) -> bool {
    a == b || a.to_lowercase() == b.to_lowercase()
}

fn resolve_windows(root: &str, path: &str) -> RequestPath {
    let Some((root_prefix, root_rest)) = windows_prefix(root) else {
        return RequestPath::Outside(path.to_owned());
    };
    let mut root_parts = Vec::new();
    push_parts(&mut root_parts, root_rest.split(is_separator));
    let (prefix, parts) = match windows_prefix(path) {
        Some((prefix, rest)) => {
            let mut parts = Vec::new();
            push_parts(&mut parts, rest.split(is_separator));
            (prefix, parts)
        }
        // `\dir` is rooted on the workspace's drive, and `dir` is taken against the workspace.
        // `C:dir` is relative to the current folder of drive C, which only a shell has: taken
        // against the workspace on the workspace's drive, and left as written on another.
        None => {
            let relative = match drive_relative(path) {
                Some((letter, rest)) if root_prefix.same_as(&WindowsPrefix::Drive(letter)) => rest,
                Some(_) => return RequestPath::Outside(path.to_owned()),
                None => path,
            };
            let mut parts = if relative.starts_with(is_separator) { Vec::new() } else { root_parts.clone() };
            push_parts(&mut parts, relative.split(is_separator));
            (root_prefix.clone(), parts)
        }
    };
    let inside = prefix.same_as(&root_prefix)
        && parts.len() >= root_parts.len()
        && parts.iter().zip(&root_parts).all(|(part, root_part)| names_match(part, root_part));
    if !inside {
        return RequestPath::Outside(format!("{}\\{}", prefix.shown(), parts.join("\\")));
    }
    match &parts[root_parts.len()..] {
        [] => RequestPath::Inside(".".to_owned()),
        relative => RequestPath::Inside(relative.join("/")),
    }
}

/// `D:dir`: a drive letter without a separator after it, and what follows.
fn drive_relative(path: &str) -> Option<(char, &str)> {
    let mut chars = path.chars();
    match (chars.next(), chars.next()) {
        (Some(letter), Some(':')) if letter.is_ascii_alphabetic() => Some((letter.to_ascii_uppercase(), &path[2..])),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;

    /// The root's style, then each path and where it is.
    fn check(root: &str, paths: &[&str], expected: Expect) {
        let mut out = format!("{root} ({:?})\n", PathStyle::of(root));
        for path in paths {
            let place = match resolve_path(root, path) {
                RequestPath::Inside(relative) => format!("inside  {relative}"),
                RequestPath::Outside(absolute) => format!("outside {absolute}"),
            };
            out.push_str(&format!("{path:<40} {place}\n"));
        }
        expected.assert_eq(&out);
    }

    #[test]
    fn posix_paths_are_placed_by_their_text() {
        check(
            "/work/app",
            &[
                "/work/app/src/main.rs",
                "src/../README.md",
                "/work/app",
                "/work/app/../other/x",
                "../../../../etc/passwd",
                "/work/application",
                // Case counts, and a backslash is a character of a name.
                "/WORK/app/src",
                r"src\main.rs",
            ],
            expect![[r#"
                /work/app (Posix)
                /work/app/src/main.rs                    inside  src/main.rs
                src/../README.md                         inside  README.md
                /work/app                                inside  .
                /work/app/../other/x                     outside /work/other/x
                ../../../../etc/passwd                   outside /etc/passwd
                /work/application                        outside /work/application
                /WORK/app/src                            outside /WORK/app/src
                src\main.rs                              inside  src\main.rs
            "#]],
        );
    }

    #[test]
    fn a_normal_path_is_placed_by_its_text_as_it_is_name_by_name() {
        let roots = ["/work/app", "/work/app/", "/", "/work/./app", "/work//app", "/w"];
        let paths = [
            "/work/app/src/main.rs",
            "/work/app/src/",
            "/work/app//src",
            "/work/app/./src",
            "/work/app/../app/src",
            "/work/app/..",
            "/work/app/.hidden/..x",
            "/work/app",
            "/work/application/x",
            "/work/app.rs",
            "/w/x",
            "src/main.rs",
            "",
        ];
        for root in roots {
            for path in paths {
                assert_eq!(resolve_posix(root, path), resolve_posix_by_names(root, path), "{path} in {root}");
            }
        }
    }

    #[test]
    fn windows_paths_match_by_drive_and_names_whatever_their_case_and_separators() {
        check(
            r"C:\Users\me\app",
            &[
                r"C:\Users\me\app\src\main.rs",
                "c:/users/ME/App/src/lib.rs",
                r"src\util\mod.rs",
                "src/./util/../main.rs",
                r"C:\Users\me\app",
                r"C:\Users\me\application\x",
                r"D:\Users\me\app\src",
                r"..\other\notes.txt",
                r"..\..\..\..\..\Windows\System32",
                // Rooted on the workspace's drive.
                r"\Users\me\app\README.md",
                r"\\?\C:\Users\me\app\Cargo.toml",
                // Relative to a drive's current folder: the workspace's drive, then another.
                r"c:docs\guide.md",
                "D:notes.txt",
                r"\\server\share\app",
            ],
            expect![[r#"
                C:\Users\me\app (Windows)
                C:\Users\me\app\src\main.rs              inside  src/main.rs
                c:/users/ME/App/src/lib.rs               inside  src/lib.rs
                src\util\mod.rs                          inside  src/util/mod.rs
                src/./util/../main.rs                    inside  src/main.rs
                C:\Users\me\app                          inside  .
                C:\Users\me\application\x                outside C:\Users\me\application\x
                D:\Users\me\app\src                      outside D:\Users\me\app\src
                ..\other\notes.txt                       outside C:\Users\me\other\notes.txt
                ..\..\..\..\..\Windows\System32          outside C:\Windows\System32
                \Users\me\app\README.md                  inside  README.md
                \\?\C:\Users\me\app\Cargo.toml           inside  Cargo.toml
                c:docs\guide.md                          inside  docs/guide.md
                D:notes.txt                              outside D:notes.txt
                \\server\share\app                       outside \\server\share\app
            "#]],
        );
    }

    #[test]
    fn windows_shares_match_by_server_and_share() {
        check(
            r"\\fileserver\projects\app",
            &[
                r"\\FileServer\Projects\app\src\a.ts",
                "//fileserver/projects/app/b.ts",
                r"\\?\UNC\fileserver\projects\app\c.ts",
                r"\\fileserver\other\app\d.ts",
                r"\\fileserver\projects\..\..\x",
                r"C:\app\e.ts",
                r"src\f.ts",
            ],
            expect![[r#"
                \\fileserver\projects\app (Windows)
                \\FileServer\Projects\app\src\a.ts       inside  src/a.ts
                //fileserver/projects/app/b.ts           inside  b.ts
                \\?\UNC\fileserver\projects\app\c.ts     inside  c.ts
                \\fileserver\other\app\d.ts              outside \\fileserver\other\app\d.ts
                \\fileserver\projects\..\..\x            outside \\fileserver\projects\x
                C:\app\e.ts                              outside C:\app\e.ts
                src\f.ts                                 inside  src/f.ts
            "#]],
        );
    }

    /// The workspace's folders, then each path and where it is.
    fn check_workspace(workspace: &Workspace, paths: &[&str], expected: Expect) {
        let mut out = format!("{}\n", workspace.roots().collect::<Vec<_>>().join(" + "));
        for path in paths {
            let place = match workspace.resolve(path) {
                RequestPath::Inside(name) => format!("inside  {name}"),
                RequestPath::Outside(absolute) => format!("outside {absolute}"),
            };
            out.push_str(&format!("{path:<40} {place}\n"));
        }
        expected.assert_eq(&out);
    }

    #[test]
    fn every_folder_of_a_workspace_is_inside_and_names_its_paths() {
        let others = ["/work/lib", "/work/app/vendor/kit", "/srv/other/lib", "/work/app/"];
        let workspace = Workspace::new("/work/app", others.map(str::to_owned));
        check_workspace(
            &workspace,
            &[
                "src/main.rs",
                "/work/app/src/main.rs",
                "/work/app",
                "/work/lib/src/lib.rs",
                "/work/lib",
                "../lib/Cargo.toml",
                // A folder inside another holds its own files.
                "/work/app/vendor/kit/index.js",
                "/work/app/vendor/other.js",
                // Two folders called `lib`: the second is told apart by its place.
                "/srv/other/lib/a.txt",
                "/work/library/x",
                "/etc/passwd",
                "../../etc/passwd",
            ],
            expect![[r#"
                /work/app + /work/lib + /work/app/vendor/kit + /srv/other/lib
                src/main.rs                              inside  app/src/main.rs
                /work/app/src/main.rs                    inside  app/src/main.rs
                /work/app                                inside  app
                /work/lib/src/lib.rs                     inside  lib/src/lib.rs
                /work/lib                                inside  lib
                ../lib/Cargo.toml                        inside  lib/Cargo.toml
                /work/app/vendor/kit/index.js            inside  kit/index.js
                /work/app/vendor/other.js                inside  app/vendor/other.js
                /srv/other/lib/a.txt                     inside  lib (2)/a.txt
                /work/library/x                          outside /work/library/x
                /etc/passwd                              outside /etc/passwd
                ../../etc/passwd                         outside /etc/passwd
            "#]],
        );
        assert_eq!(workspace.first(), "/work/app");
        assert_eq!(workspace.absolute("src/../README.md"), "/work/app/README.md");
        assert_eq!(workspace.label("/work/lib/src/lib.rs"), "lib/src/lib.rs");
        assert_eq!(workspace.label("/tmp/x"), "/tmp/x");
    }

    #[test]
    fn a_workspace_of_one_folder_names_paths_as_that_folder_does() {
        // The same folder listed again is one folder: no name is put before the paths.
        let workspace = Workspace::new("/work/app", ["/work/app".to_owned(), "/work/./app/".to_owned()]);
        assert_eq!(workspace, Workspace::single("/work/app"));
        for path in ["src/main.rs", "/work/app", "/work/other/x", "../../etc/passwd"] {
            assert_eq!(workspace.resolve(path), resolve_path("/work/app", path), "{path}");
        }
    }

    #[test]
    fn windows_workspace_folders_match_whatever_the_case() {
        let workspace = Workspace::new(r"C:\Users\me\app", [r"D:\src\Lib".to_owned(), r"c:\users\ME\lib".to_owned()]);
        check_workspace(
            &workspace,
            &[r"src\main.rs", r"d:\SRC\lib\x.cs", r"C:\Users\me\Lib\y.cs", r"D:\src\Library", r"E:\lib\z"],
            expect![[r#"
                C:\Users\me\app + D:\src\Lib + c:\users\ME\lib
                src\main.rs                              inside  app/src/main.rs
                d:\SRC\lib\x.cs                          inside  Lib/x.cs
                C:\Users\me\Lib\y.cs                     inside  lib (2)/y.cs
                D:\src\Library                           outside D:\src\Library
                E:\lib\z                                 outside E:\lib\z
            "#]],
        );
    }

    #[test]
    fn a_workspace_keeps_its_names_at_the_roots_its_folders_lead_to() {
        let workspace = Workspace::new("/home/me/app", ["/home/me/lib".to_owned()]);
        let resolved = workspace.at_roots([Some("/data/app".to_owned()), None]);
        assert_eq!(resolved.resolve("/data/app/src/x.rs"), RequestPath::Inside("app/src/x.rs".to_owned()));
        assert_eq!(resolved.resolve("/home/me/lib/y.rs"), RequestPath::Inside("lib/y.rs".to_owned()));
        assert_eq!(resolved.resolve("/home/me/app/z.rs"), RequestPath::Outside("/home/me/app/z.rs".to_owned()));
    }

    #[test]
    fn a_path_inside_is_joined_back_in_the_workspace_style() {
        assert_eq!(join_inside("/work/app", "src/main.rs"), "/work/app/src/main.rs");
        assert_eq!(join_inside("/work/app/", "."), "/work/app/");
        assert_eq!(join_inside(r"C:\Users\me\app", "src/main.rs"), r"C:\Users\me\app\src\main.rs");
        assert_eq!(join_inside(r"\\server\share\app\", "a/b.ts"), r"\\server\share\app\a\b.ts");
        assert_eq!(absolute_path("/work/app", "src/../lib.rs"), "/work/app/lib.rs");
        assert_eq!(absolute_path(r"C:\Users\me\app", "src/../lib.rs"), r"C:\Users\me\app\lib.rs");
        assert_eq!(absolute_path(r"C:\Users\me\app", "../x"), r"C:\Users\me\x");
        for root in ["/work/app", r"C:\Users\me\app", r"\\server\share\app"] {
            let RequestPath::Inside(relative) = resolve_path(root, &join_inside(root, "src/lib.rs")) else {
                panic!("{root}: a joined path is inside");
            };
            assert_eq!(relative, "src/lib.rs", "{root}");
        }
    }
}
