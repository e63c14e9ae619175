//! The composer's `@` list: the workspace's files and folders and the editor's selection, ranked
//! for what the person typed after the `@`.
//!
//! The host lists the files once per mention (VS Code knows the excludes and the open editors);
//! every keystroke after that is ranked here against that list, with no round trip to the host.
//! The folders are the ones holding listed files, so a folder the person excluded from search
//! (`node_modules`, say) is not offered either; a folder is listed as `src/components/`. What the
//! person picks travels back with the prompt as a [`PromptAttachment`]; turning it into ACP
//! content is [`crate::acp`]'s job.
//!
//! Deliberately absent: symbols and fuzzy scoring beyond "in order": a path matches when the
//! typed characters appear in it in order, and the closer the match is to the file's (or the
//! folder's) name the higher it ranks. That is what people expect from VS Code's own quick open,
//! minus its heuristics.

use std::collections::HashSet;

use crate::host_api::EditorSelection;
use crate::permissions::RequestPath;
use crate::webview::{MentionSuggestion, PromptAttachment};
use crate::workspace_path::Workspace;

/// At most this many entries are listed: more than a list can usefully show.
pub const MAX_SUGGESTIONS: usize = 50;

/// The files and selection of the mention being typed.
#[derive(Debug, Default)]
pub struct MentionIndex {
    /// The files as the host listed them (absolute), with the label each is shown and inserted
    /// as, sorted by label.
    files: Vec<(String, String)>,
    /// The folders holding those files (see [`folders_of`]), likewise; a label has no `/` at the
    /// end here, and gets one when shown.
    folders: Vec<(String, String)>,
    selection: Option<EditorSelection>,
    /// The host was asked for the files and has not answered: queries wait.
    listing: bool,
    /// The query typed while the host was listing, answered when the list arrives.
    waiting: Option<String>,
}

/// What to do with a query.
#[derive(Debug, PartialEq, Eq)]
pub enum FindOutcome {
    /// Ask the host for the files (`ListWorkspaceFiles`); the query is answered when they come.
    ListFiles,
    /// The files are being listed; the query is answered when they come.
    Wait,
    Answer(Vec<MentionSuggestion>),
}

impl MentionIndex {
    /// The person typed `query` after an `@` (`fresh`: the `@` was just typed).
    pub fn find(&mut self, query: &str, fresh: bool, workspace: &Workspace) -> FindOutcome {
        if self.listing {
            self.waiting = Some(query.to_owned());
            return FindOutcome::Wait;
        }
        if fresh || self.files.is_empty() && self.selection.is_none() {
            self.listing = true;
            self.waiting = Some(query.to_owned());
            return FindOutcome::ListFiles;
        }
        FindOutcome::Answer(self.suggestions(query, workspace))
    }

    /// The host listed the files: answers the query that waited for them, if any.
    pub fn handle_files(
        &mut self,
        files: Vec<String>,
        selection: Option<EditorSelection>,
        workspace: &Workspace,
    ) -> Option<(String, Vec<MentionSuggestion>)> {
        self.listing = false;
        let mut files: Vec<(String, String)> = files
            .into_iter()
            .map(|path| {
                let label = workspace.label(&path);
                (path, label)
            })
            .collect();
        files.sort_by(|a, b| a.1.cmp(&b.1));
        files.dedup();
        let mut folders = folders_of(&files, workspace);
        folders.sort_by(|a, b| a.1.cmp(&b.1));
        self.files = files;
        self.folders = folders;
        self.selection = selection.filter(|selection| !selection.text.is_empty());
        let query = self.waiting.take()?;
        let items = self.suggestions(&query, workspace);
        Some((query, items))
    }

    /// The list for `query`: the selection first when it matches, then the files, best first.
    pub fn suggestions(&self, query: &str, workspace: &Workspace) -> Vec<MentionSuggestion> {
        let mut items = Vec::new();
        if let Some(selection) = &self.selection {
            let suggestion = selection_suggestion(selection, workspace);
            if matches_in_order(&suggestion.label, query) || matches_in_order("selection", query) {
                items.push(suggestion);
            }
        }
        // Files and folders ranked together: typing a folder's name finds the folder first.
        let labels: Vec<&str> = self.files.iter().chain(&self.folders).map(|(_, label)| label.as_str()).collect();
        for index in rank(&labels, query, MAX_SUGGESTIONS - items.len()) {
            items.push(match index.checked_sub(self.files.len()) {
                None => {
                    let (path, label) = &self.files[index];
                    MentionSuggestion {
                        label: label.clone(),
                        detail: None,
                        attachment: PromptAttachment::File { path: path.clone() },
                    }
                }
                Some(folder) => {
                    let (path, label) = &self.folders[folder];
                    MentionSuggestion {
                        label: format!("{label}/"),
                        detail: None,
                        attachment: PromptAttachment::Folder { path: path.clone() },
                    }
                }
            });
        }
        items
    }

    /// The files and folders `text` mentions by hand: an `@` followed by a listed file's or
    /// folder's label, typed rather than picked from the list (so `attached` does not hold it
    /// yet). Before, such a mention went to the agent as words, while the same mention picked
    /// from the list attached the file. A sentence's closing punctuation after the label is not
    /// part of it; a folder's `/` at the end may be typed or not.
    pub fn typed_mentions(&self, text: &str, attached: &[PromptAttachment]) -> Vec<PromptAttachment> {
        let find = |list: &[(String, String)], label: &str| {
            list.binary_search_by(|(_, listed)| listed.as_str().cmp(label)).ok().map(|index| list[index].0.clone())
        };
        let mut found: Vec<PromptAttachment> = Vec::new();
        for word in text.split_whitespace() {
            let Some(mentioned) = word.strip_prefix('@') else { continue };
            let mentioned = mentioned.trim_end_matches(['.', ',', ';', ':', '!', '?', ')']);
            let attachment = match find(&self.files, mentioned) {
                Some(path) => PromptAttachment::File { path },
                None => match find(&self.folders, mentioned.strip_suffix('/').unwrap_or(mentioned)) {
                    Some(path) => PromptAttachment::Folder { path },
                    None => continue,
                },
            };
            if !attached.contains(&attachment) && !found.contains(&attachment) {
                found.push(attachment);
            }
        }
        found
    }
}

/// The folders holding `files` (absolute paths with their labels), each once, as (absolute
/// path, label): every folder between a file and the workspace folder it is in. A workspace of
/// several folders names each of them too (`app`, `lib`); a workspace of one does not offer its
/// root. Files outside the workspace give no folders.
fn folders_of(files: &[(String, String)], workspace: &Workspace) -> Vec<(String, String)> {
    let mut seen: HashSet<&str> = HashSet::new();
    let mut folders = Vec::new();
    for (path, _) in files {
        // A backslash is a separator in a Windows path only: on Linux it may be part of a name.
        let separators: &[char] = if path.starts_with('/') { &['/'] } else { &['/', '\\'] };
        let mut folder = path.as_str();
        while let Some(cut) = folder.rfind(separators) {
            folder = &folder[..cut];
            // Once a folder was seen, the ones above it were too.
            if folder.is_empty() || !seen.insert(folder) {
                break;
            }
            match workspace.resolve(folder) {
                RequestPath::Inside(label) if label != "." => folders.push((folder.to_owned(), label)),
                _ => break,
            }
        }
    }
    folders
}

/// The `@` entry for an editor's selection: `path#L3-9` (one line: `path#L3`).
pub fn selection_suggestion(selection: &EditorSelection, workspace: &Workspace) -> MentionSuggestion {
    let path = workspace.label(&selection.path);
    let (label, detail) = if selection.start_line == selection.end_line {
        (format!("{path}#L{}", selection.start_line), format!("Selection, line {}", selection.start_line))
    } else {
        (
            format!("{path}#L{}-{}", selection.start_line, selection.end_line),
            format!("Selection, lines {}-{}", selection.start_line, selection.end_line),
        )
    };
    MentionSuggestion {
        label,
        detail: Some(detail),
        attachment: PromptAttachment::Selection {
            path: selection.path.clone(),
            start_line: selection.start_line,
            end_line: selection.end_line,
            text: selection.text.clone(),
        },
    }
}

/// The indexes of the `labels` that match `query`, best first, at most `limit`.
///
/// A label matches when the query's characters appear in it in order, ignoring case. Matches
/// rank by where the query is found: as the start of the file name, inside the file name,
/// inside the path as typed, or only scattered; then shorter paths first (a file near the root
/// is more likely the one meant), then by path.
pub fn rank(labels: &[&str], query: &str, limit: usize) -> Vec<usize> {
    let query = query.to_lowercase();
    let mut scored: Vec<(u8, usize, usize)> = labels
        .iter()
        .enumerate()
        .filter_map(|(index, label)| {
            let lower = label.to_lowercase();
            let name = lower.rsplit('/').next().unwrap_or(&lower);
            let tier = if name.starts_with(&query) {
                0
            } else if name.contains(&query) {
                1
            } else if lower.contains(&query) {
                2
            } else if matches_in_order(&lower, &query) {
                3
            } else {
                return None;
            };
            Some((tier, label.len(), index))
        })
        .collect();
    // Ties on tier and length keep the labels' (sorted) order.
    scored.sort_unstable_by(|a, b| (a.0, a.1, labels[a.2]).cmp(&(b.0, b.1, labels[b.2])));
    scored.into_iter().take(limit).map(|(_, _, index)| index).collect()
}

/// Whether the characters of `query` appear in `text` in order, ignoring case.
fn matches_in_order(text: &str, query: &str) -> bool {
    let mut text = text.chars().flat_map(char::to_lowercase);
    query.chars().flat_map(char::to_lowercase).all(|wanted| text.any(|c| c == wanted))
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;

    fn ws() -> Workspace {
        Workspace::single("/ws")
    }

    #[test]
    fn a_file_mentioned_by_hand_is_attached_as_if_picked() {
        let mut index = MentionIndex::default();
        index.handle_files(FILES.iter().map(|path| (*path).to_owned()).collect(), None, &ws());
        let picked = PromptAttachment::File { path: "/ws/README.md".to_owned() };
        let typed = index.typed_mentions(
            "Compare @src/main.rs with @README.md and @src/main.rs, not @src/missing.rs or me@src/lib.rs",
            std::slice::from_ref(&picked),
        );
        // Once each, the picked one not again, a file not listed nor a word with an @ inside not.
        assert_eq!(typed, [PromptAttachment::File { path: "/ws/src/main.rs".to_owned() }]);
    }

    const FILES: &[&str] = &[
        "/ws/README.md",
        "/ws/src/main.rs",
        "/ws/src/mention.rs",
        "/ws/src/acp/mentions.rs",
        "/ws/crates/core/src/main_loop.rs",
        "/ws/docs/maintenance.md",
        "/elsewhere/notes.txt",
    ];

    fn check(query: &str, selection: Option<EditorSelection>, expect: Expect) {
        let mut index = MentionIndex::default();
        assert_eq!(index.find(query, true, &ws()), FindOutcome::ListFiles);
        let (answered, items) =
            index.handle_files(FILES.iter().map(|path| (*path).to_owned()).collect(), selection, &ws()).unwrap();
        assert_eq!(answered, query);
        let shown: Vec<String> = items
            .iter()
            .map(|item| match &item.detail {
                Some(detail) => format!("{} ({detail})", item.label),
                None => item.label.clone(),
            })
            .collect();
        expect.assert_eq(&shown.join("\n"));
    }

    #[test]
    fn files_rank_by_where_the_query_is_found() {
        // The file name's start beats a match inside the name, which beats the folders, which
        // beat scattered letters; shorter paths first within a tier.
        check(
            "main",
            None,
            expect![[r#"
                src/main.rs
                docs/maintenance.md
                crates/core/src/main_loop.rs"#]],
        );
        check(
            "ment",
            None,
            expect![[r#"
                src/mention.rs
                src/acp/mentions.rs"#]],
        );
        check(
            "acpm",
            None,
            expect![[r#"
                src/acp/mentions.rs"#]],
        );
        // Case does not matter; a file outside the workspace keeps its absolute path.
        check(
            "NOTES",
            None,
            expect![[r#"
                /elsewhere/notes.txt"#]],
        );
    }

    #[test]
    fn folders_holding_listed_files_are_offered_and_rank_by_their_names() {
        // A folder's name starting with the query beats a file with it inside its path; the
        // workspace's root and folders outside it are not offered.
        check(
            "acp",
            None,
            expect![[r#"
                src/acp/
                src/acp/mentions.rs
                crates/core/src/main_loop.rs"#]],
        );
        check(
            "src",
            None,
            expect![[r#"
                src/
                crates/core/src/
                src/acp/
                src/main.rs
                src/mention.rs
                src/acp/mentions.rs
                crates/core/src/main_loop.rs"#]],
        );
    }

    #[test]
    fn a_backslash_in_a_linux_name_does_not_make_a_folder() {
        let mut index = MentionIndex::default();
        index.handle_files(vec!["/ws/docs/a\\b.md".to_owned()], None, &ws());
        let labels: Vec<String> = index.suggestions("", &ws()).into_iter().map(|item| item.label).collect();
        assert_eq!(labels, ["docs/", "docs/a\\b.md"]);
    }

    #[test]
    fn a_folder_mentioned_by_hand_is_attached_with_or_without_its_slash() {
        let mut index = MentionIndex::default();
        index.handle_files(FILES.iter().map(|path| (*path).to_owned()).collect(), None, &ws());
        let typed = index.typed_mentions("What is in @src/acp/, @crates/core? Not @ws nor @/elsewhere.", &[]);
        assert_eq!(
            typed,
            [
                PromptAttachment::Folder { path: "/ws/src/acp".to_owned() },
                PromptAttachment::Folder { path: "/ws/crates/core".to_owned() },
            ]
        );
    }

    #[test]
    fn an_empty_query_lists_the_selection_then_every_file() {
        let selection = EditorSelection {
            path: "/ws/src/main.rs".to_owned(),
            start_line: 3,
            end_line: 9,
            text: "fn main() {}".to_owned(),
        };
        check(
            "",
            Some(selection.clone()),
            expect![[r#"
                src/main.rs#L3-9 (Selection, lines 3-9)
                src/
                docs/
                crates/
                src/acp/
                README.md
                crates/core/
                src/main.rs
                src/mention.rs
                crates/core/src/
                docs/maintenance.md
                src/acp/mentions.rs
                /elsewhere/notes.txt
                crates/core/src/main_loop.rs"#]],
        );
        // Typing "sel" keeps the selection even though no path holds those letters in order.
        check(
            "sel",
            Some(selection),
            expect![[r#"
                src/main.rs#L3-9 (Selection, lines 3-9)
                crates/core/src/main_loop.rs"#]],
        );
    }

    #[test]
    fn an_empty_selection_is_not_offered() {
        let selection =
            EditorSelection { path: "/ws/src/main.rs".to_owned(), start_line: 3, end_line: 3, text: String::new() };
        check(
            "readme",
            Some(selection),
            expect![[r#"
                README.md"#]],
        );
    }

    #[test]
    fn keystrokes_after_the_first_are_ranked_without_asking_the_host() {
        let mut index = MentionIndex::default();
        assert_eq!(index.find("", true, &ws()), FindOutcome::ListFiles);
        // Typed while the host lists: the newest query is the one answered.
        assert_eq!(index.find("rea", false, &ws()), FindOutcome::Wait);
        let (query, items) = index.handle_files(vec!["/ws/README.md".to_owned()], None, &ws()).unwrap();
        assert_eq!((query.as_str(), items.len()), ("rea", 1));
        let FindOutcome::Answer(items) = index.find("zzz", false, &ws()) else { panic!("not answered at once") };
        assert!(items.is_empty());
        // A new `@` lists again: files may have been created since.
        assert_eq!(index.find("", true, &ws()), FindOutcome::ListFiles);
    }

    #[test]
    fn the_list_is_capped() {
        let labels: Vec<String> = (0..200).map(|n| format!("file{n}.rs")).collect();
        let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
        assert_eq!(rank(&labels, "file", MAX_SUGGESTIONS).len(), MAX_SUGGESTIONS);
    }

    #[test]
    fn the_files_and_folders_of_every_workspace_folder_are_listed_by_their_names_in_it() {
        let mut index = MentionIndex::default();
        let workspace = Workspace::new("/ws/app", ["/ws/lib".to_owned()]);
        assert_eq!(index.find("", true, &workspace), FindOutcome::ListFiles);
        let files = ["/ws/app/src/main.rs", "/ws/lib/src/lib.rs", "/elsewhere/notes.md"];
        let (_, items) = index.handle_files(files.map(str::to_owned).to_vec(), None, &workspace).unwrap();
        let mut labels: Vec<&str> = items.iter().map(|item| item.label.as_str()).collect();
        labels.sort_unstable();
        // Each workspace folder is offered by its name; a file outside it gives no folder.
        assert_eq!(
            labels,
            ["/elsewhere/notes.md", "app/", "app/src/", "app/src/main.rs", "lib/", "lib/src/", "lib/src/lib.rs"]
        );
    }
}
