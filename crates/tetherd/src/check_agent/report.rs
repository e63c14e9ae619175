//! What `check-agent` found, and how it is printed: one line per finding for people, or one
//! JSON object for programs.
//!
//! A finding is a problem (the agent breaks the protocol; the check exits 1), an info (something
//! that stopped the check without being the agent's fault, such as needing a login), or a note
//! (what the agent advertised, what it printed on stderr, how long each step took).

use serde::Serialize;

/// How much of an offending stdout line a finding quotes, in characters.
const EXCERPT_CHARS: usize = 160;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Problem,
    Info,
    Note,
}

impl Severity {
    fn label(self) -> &'static str {
        match self {
            Severity::Problem => "problem",
            Severity::Info => "info",
            Severity::Note => "note",
        }
    }
}

/// What a finding is about. The names are stable: scripts may match on them in `--json` output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A stdout line that is not JSON (or not text at all).
    NonJson,
    /// JSON that is not a JSON-RPC message.
    NotJsonRpc,
    /// A response to an id the checker never sent.
    UnknownId,
    /// A second response to a request already answered.
    AnsweredTwice,
    /// A response carrying both `result` and `error`.
    ResultAndError,
    /// A message of a known method with a missing required field or a wrong type.
    InvalidMessage,
    /// A tool call with no completed/failed status by the end of its turn.
    ToolCallNotClosed,
    /// A session/update (or a request) naming a session the agent never created.
    UnknownSession,
    /// A step the agent did not answer in time.
    Timeout,
    /// The agent exited before the check was over.
    AgentExited,
    /// A cancelled prompt that did not end with stopReason `cancelled`.
    NotCancelled,
    /// A prompt to cancel that ended otherwise than `cancelled` where the checker cannot tell
    /// whether the agent had the cancel before it answered.
    CancelUnchecked,
    /// A step the agent answered with an error.
    ErrorAnswer,
    /// The agent speaks a protocol version other than 1.
    ProtocolVersion,
    /// Processes of the agent that survived SIGKILL.
    LeftRunning,
    /// The agent needs a login before it can create sessions or answer prompts.
    NeedsAuthentication,
    /// How long a step took.
    Timing,
    /// The agent's `agentCapabilities`.
    Capabilities,
    /// The agent's `agentInfo`.
    AgentInfo,
    /// What the agent printed on stderr.
    Stderr,
    /// How the checker answered a request of the agent's.
    ClientAnswer,
    /// Something the checker saw and tolerates (an unknown update kind, an extension method).
    Tolerated,
    /// (`--claude-cli`) How the CLI's process went: its exit, how an interrupted turn ended.
    Process,
    /// (`--claude-cli`) A JSON line without a string `type`: not a stream-json message.
    NotStreamJson,
    /// (`--claude-cli`) The CLI went on running after its input was closed.
    NoExit,
    /// (`--claude-cli`) A CLI started with `--resume` did not go on with the session.
    ResumeFailed,
}

impl Kind {
    fn label(self) -> String {
        // The serde name, so the human and JSON outputs use the same words.
        serde_json::to_value(self).ok().and_then(|value| value.as_str().map(str::to_owned)).unwrap_or_default()
    }
}

/// The stdout line a finding is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Offending {
    /// Its number among stdout's non-blank lines, from 1.
    pub line: u64,
    /// Its start.
    pub excerpt: String,
}

impl Offending {
    pub fn new(line: u64, text: &str) -> Offending {
        Offending { line, excerpt: excerpt(text) }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub kind: Kind,
    pub message: String,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub offending: Option<Offending>,
    /// For timings: the duration in milliseconds, also written in the message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub millis: Option<u128>,
}

/// Everything one check found, in the order found.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The agent's command line, as given.
    pub command: Vec<String>,
    pub findings: Vec<Finding>,
}

impl Report {
    pub fn new(command: Vec<String>) -> Report {
        Report { command, findings: Vec::new() }
    }

    pub fn add(&mut self, severity: Severity, kind: Kind, message: impl Into<String>, offending: Option<Offending>) {
        self.findings.push(Finding { severity, kind, message: message.into(), offending, millis: None });
    }

    pub fn problem(&mut self, kind: Kind, message: impl Into<String>, offending: Option<Offending>) {
        self.add(Severity::Problem, kind, message, offending);
    }

    pub fn note(&mut self, kind: Kind, message: impl Into<String>) {
        self.add(Severity::Note, kind, message, None);
    }

    pub fn timing(&mut self, step: &str, millis: u128) {
        self.findings.push(Finding {
            severity: Severity::Note,
            kind: Kind::Timing,
            message: format!("{step} took {millis} ms"),
            offending: None,
            millis: Some(millis),
        });
    }

    pub fn problem_count(&self) -> usize {
        self.findings.iter().filter(|finding| finding.severity == Severity::Problem).count()
    }

    /// The report for people: a heading, one line per finding, and a verdict.
    pub fn to_text(&self) -> String {
        let mut text = format!("check-agent: {}\n", self.command.join(" "));
        for finding in &self.findings {
            text.push_str(&format!("{} [{}] {}", finding.severity.label(), finding.kind.label(), finding.message));
            if let Some(Offending { line, excerpt }) = &finding.offending {
                text.push_str(&format!(" (stdout line {line}: {excerpt})"));
            }
            text.push('\n');
        }
        text.push_str(&match self.problem_count() {
            0 => "no problems found\n".to_owned(),
            1 => "1 problem found\n".to_owned(),
            count => format!("{count} problems found\n"),
        });
        text
    }

    /// The report for programs: one JSON object on one line.
    pub fn to_json(&self) -> String {
        #[derive(Serialize)]
        struct Machine<'a> {
            command: &'a [String],
            problems: usize,
            findings: &'a [Finding],
        }
        let machine = Machine { command: &self.command, problems: self.problem_count(), findings: &self.findings };
        // Strings, numbers and enums with string names: encoding cannot fail.
        serde_json::to_string(&machine).unwrap_or_default()
    }
}

/// The start of a line, on one line, for quoting in a finding.
pub fn excerpt(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(EXCERPT_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    #[test]
    fn findings_print_one_line_each_with_the_offending_excerpt() {
        let mut report = Report::new(vec!["my-agent".to_owned(), "--acp".to_owned()]);
        report.problem(Kind::NonJson, "not JSON: expected value", Some(Offending::new(3, &"x".repeat(200))));
        report.timing("initialize", 12);
        expect![[r#"
            check-agent: my-agent --acp
            problem [non-json] not JSON: expected value (stdout line 3: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…)
            note [timing] initialize took 12 ms
            1 problem found
        "#]]
        .assert_eq(&report.to_text());
        expect![[r#"{"command":["my-agent","--acp"],"problems":1,"findings":[{"severity":"problem","kind":"non-json","message":"not JSON: expected value","line":3,"excerpt":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…"},{"severity":"note","kind":"timing","message":"initialize took 12 ms","millis":12}]}"#]]
        .assert_eq(&report.to_json());
    }
}
