//! The rule globs: `*` any run of characters, `?` one character, `\` escapes; on a
//! workspace-relative path `*` and `?` stay within a segment and `**` spans segments.
//!
//! Matched by simulating the automaton the pattern describes, in time proportional to the text
//! times the pattern whatever the stars (see [`Glob`]). A crate was considered: `globset` would
//! give `[` and `{` meanings the rules never had and only allows `**` as a whole path segment,
//! and `glob-match`'s `*` never crosses `/`, so `npm run *` would stop matching `npm run
//! build/all`; both would change what rules people have written mean. The fuzz target `glob`
//! checks this matcher against a plain backtracking reading of the syntax.

/// Escapes glob characters so that `text` matches only itself.
pub(super) fn escape_glob(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '\\') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// A glob over free text: `*` any run of characters, `?` one character, `\` escapes.
pub fn text_glob(pattern: &str, text: &str) -> bool {
    Glob::parse(pattern, false).matches(text)
}

/// A glob over a workspace-relative path: `*` and `?` stay within one path segment, `**` spans
/// segments. A pattern without `/` matches the last segment at any depth.
pub fn path_glob(pattern: &str, path: &str) -> bool {
    let target = if pattern.contains('/') || pattern == "**" { path } else { path.rsplit('/').next().unwrap_or(path) };
    Glob::parse(pattern, true).matches(target)
}

/// One step of a compiled glob.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GlobToken {
    Char(char),
    /// `?`: one character (not `/` in a path).
    AnyChar,
    /// `*`: any run of characters (not crossing `/` in a path).
    Star,
    /// `**` in a path: any run of characters, `/` included.
    AnyPath,
    /// The start of `**/` in a path, which also matches nothing: the match may jump over the
    /// `**` and `/` that follow (so `src/**/x` matches `src/x`).
    SkipDirs,
}

/// A glob compiled to a sequence of tokens and matched by simulating the automaton it describes:
/// the set of positions in the pattern reachable after each character of the text. The time is
/// the text's length times the pattern's, whatever the stars: the text comes from the agent (a
/// command line, a title) and a workspace rule from the repository, so a backtracking matcher
/// would let either stall the engine with a pattern of many stars.
#[derive(Debug)]
struct Glob {
    tokens: Vec<GlobToken>,
    segments: bool,
}

impl Glob {
    fn parse(pattern: &str, segments: bool) -> Glob {
        let chars: Vec<char> = pattern.chars().collect();
        let mut tokens = Vec::with_capacity(chars.len());
        let mut at = 0;
        while at < chars.len() {
            match chars[at] {
                // A lone `\` at the end stands for itself.
                '\\' if at + 1 < chars.len() => {
                    tokens.push(GlobToken::Char(chars[at + 1]));
                    at += 2;
                }
                '*' if segments && chars.get(at + 1) == Some(&'*') => {
                    if chars.get(at + 2) == Some(&'/') {
                        tokens.extend([GlobToken::SkipDirs, GlobToken::AnyPath, GlobToken::Char('/')]);
                        at += 3;
                    } else {
                        tokens.push(GlobToken::AnyPath);
                        at += 2;
                    }
                }
                '*' => {
                    tokens.push(GlobToken::Star);
                    at += 1;
                }
                '?' => {
                    tokens.push(GlobToken::AnyChar);
                    at += 1;
                }
                c => {
                    tokens.push(GlobToken::Char(c));
                    at += 1;
                }
            }
        }
        Glob { tokens, segments }
    }

    fn matches(&self, text: &str) -> bool {
        let accept = self.tokens.len();
        let mut current = vec![false; accept + 1];
        let mut next = vec![false; accept + 1];
        current[0] = true;
        self.close(&mut current);
        for c in text.chars() {
            next.fill(false);
            let crosses = self.segments && c == '/';
            for (state, token) in self.tokens.iter().enumerate() {
                if !current[state] {
                    continue;
                }
                match *token {
                    GlobToken::Char(expected) if expected == c => next[state + 1] = true,
                    GlobToken::AnyChar if !crosses => next[state + 1] = true,
                    GlobToken::Star if !crosses => next[state] = true,
                    GlobToken::AnyPath => next[state] = true,
                    _ => {}
                }
            }
            self.close(&mut next);
            std::mem::swap(&mut current, &mut next);
            if !current.contains(&true) {
                return false;
            }
        }
        current[accept]
    }

    /// Adds the positions reachable without reading a character: past a star (which may match
    /// nothing), and past the whole of a `**/`.
    fn close(&self, states: &mut [bool]) {
        // Epsilon moves only go forward, so one pass in order reaches everything.
        for state in 0..self.tokens.len() {
            if !states[state] {
                continue;
            }
            match self.tokens[state] {
                GlobToken::Star | GlobToken::AnyPath => states[state + 1] = true,
                GlobToken::SkipDirs => {
                    states[state + 1] = true;
                    states[state + 3] = true;
                }
                GlobToken::Char(_) | GlobToken::AnyChar => {}
            }
        }
    }
}
