//! A text's line endings, and an agent's new text for a file given that file's endings.
//!
//! Models write `\n`. On Windows, files checked out by git (`core.autocrlf`) end their lines with
//! `\r\n`. A write that replaced such a file with the text exactly as the agent sent it would show
//! every line as changed in review, and, kept, would turn the whole file to `\n`. So a new text
//! whose line breaks all end one way, for a file whose line breaks all end the other way, is given
//! the file's endings before it is diffed ([`in_endings_of`]), as an editor keeps a file's endings
//! when someone types into it. A text or a file with mixed endings, or none, is left as it is:
//! which ending is meant is then not clear, and the diff shows exactly what would be written.

/// How every line break of a text ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEnding {
    /// `\n` alone.
    Lf,
    /// `\r\n`.
    Crlf,
}

impl LineEnding {
    /// The one ending every line break of `text` uses; `None` when it has no line break or both
    /// kinds. (A lone `\r` is not a line break, as for [`crate::split_lines`].)
    pub fn of(text: &str) -> Option<Self> {
        let bytes = text.as_bytes();
        let mut found = None;
        for (at, _) in text.match_indices('\n') {
            let ending = if at > 0 && bytes[at - 1] == b'\r' { Self::Crlf } else { Self::Lf };
            match found {
                None => found = Some(ending),
                Some(seen) if seen != ending => return None,
                Some(_) => {}
            }
        }
        found
    }
}

/// `content` with the line endings of `original`, the file it is to replace, when each uses one
/// kind and they differ; `None` when `content` is to be taken as it is.
pub fn in_endings_of(content: &str, original: &str) -> Option<String> {
    let (Some(wanted), Some(has)) = (LineEnding::of(original), LineEnding::of(content)) else {
        return None;
    };
    match (has, wanted) {
        (LineEnding::Lf, LineEnding::Crlf) => Some(content.replace('\n', "\r\n")),
        (LineEnding::Crlf, LineEnding::Lf) => Some(content.replace("\r\n", "\n")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    /// One line per case: the content, the original, and what is written (escaped).
    fn cases(cases: &[(&str, &str)]) -> String {
        cases
            .iter()
            .map(|(content, original)| {
                let written = in_endings_of(content, original);
                format!(
                    "{content:?} for {original:?} -> {}",
                    written.map_or_else(|| "as it is".to_owned(), |written| format!("{written:?}"))
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn a_text_takes_the_endings_of_the_file_it_replaces_when_each_has_one_kind() {
        expect![[r#"
            "a\nb\n" for "a\r\nc\r\n" -> "a\r\nb\r\n"
            "a\r\nb" for "a\nc\n" -> "a\nb"
            "a\nb\n" for "a\nc\n" -> as it is
            "a\r\nb\r\n" for "a\r\nc\r\n" -> as it is
            "a\nb\r\n" for "a\r\nc\r\n" -> as it is
            "a\nb\n" for "a\r\nc\n" -> as it is
            "a\nb\n" for "one line, no break" -> as it is
            "no break" for "a\r\nb\r\n" -> as it is
            "lone\rcarriage\n" for "a\r\n" -> "lone\rcarriage\r\n"
            "" for "a\r\n" -> as it is"#]]
        .assert_eq(&cases(&[
            ("a\nb\n", "a\r\nc\r\n"),
            ("a\r\nb", "a\nc\n"),
            ("a\nb\n", "a\nc\n"),
            ("a\r\nb\r\n", "a\r\nc\r\n"),
            ("a\nb\r\n", "a\r\nc\r\n"),
            ("a\nb\n", "a\r\nc\n"),
            ("a\nb\n", "one line, no break"),
            ("no break", "a\r\nb\r\n"),
            ("lone\rcarriage\n", "a\r\n"),
            ("", "a\r\n"),
        ]));
    }

    #[test]
    fn endings_are_read_from_every_break() {
        assert_eq!(LineEnding::of("x\r\ny\r\n"), Some(LineEnding::Crlf));
        assert_eq!(LineEnding::of("\n"), Some(LineEnding::Lf));
        assert_eq!(LineEnding::of("x\r\ny\n"), None);
        assert_eq!(LineEnding::of("x\ry"), None);
    }
}
