//! A session's event log: everything said on the agent's wire, in both directions, and the
//! host's decisions, one JSON object per line in `<sessionDir>/events.jsonl`.
//!
//! tetherd writes it (it owns the session folder and outlives the window): a line from the agent
//! is appended before it is forwarded to the host, a line for the agent before it is written to
//! the agent's stdin, so anything a host ever saw is on disk. The thread a person saw is the fold
//! of this log (`AcpClient::replay`), which is how a reloaded window or a restarted VS Code gets the
//! conversation back without asking the agent.
//!
//! ```text
//! {"seq":1,"time":"2026-11-23T10:00:00.000Z","event":"toAgent","message":{"jsonrpc":"2.0","id":0,"method":"initialize",...}}
//! {"seq":2,"time":"2026-11-23T10:00:00.120Z","event":"fromAgent","message":{"jsonrpc":"2.0","id":0,"result":{...}}}
//! {"seq":9,"time":"2026-11-23T10:00:05.002Z","event":"host","record":{"event":"answered",...}}
//! {"seq":10,"time":"2026-11-23T10:00:07.410Z","event":"stderr","line":"warning: ..."}
//! {"seq":11,"time":"2026-11-23T10:00:09.000Z","event":"exited","code":null,"signal":9,"killed":false}
//! ```
//!
//! `seq` counts from 1 without gaps within a file; `time` is UTC with milliseconds. Messages are
//! spliced in as they were on the wire (never re-encoded). A crash can leave the last line cut
//! short: readers skip a last line that is not JSON, and report any other bad line without
//! stopping.

use serde::Deserialize;
use serde_json::value::RawValue;

/// The event log's file name inside a session folder.
pub const EVENTS_FILE: &str = "events.jsonl";

/// The title of a session nobody has named or prompted in yet.
pub const UNTITLED_SESSION: &str = "New session";

/// How many characters of its first prompt an unnamed session's title keeps.
const PROMPT_TITLE_CHARS: usize = 80;

/// The title of a session that was not named: its first prompt's first non-blank line, cut to
/// `PROMPT_TITLE_CHARS` characters with an ellipsis when longer.
pub fn prompt_title(text: &str) -> String {
    let line = text.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or_default();
    shortened(line, PROMPT_TITLE_CHARS)
}

/// `line` as it is when it has at most `max_chars` characters, else cut to fit with an ellipsis
/// (and without the blanks the cut left before it).
pub(crate) fn shortened(line: &str, max_chars: usize) -> String {
    if line.chars().count() <= max_chars {
        return line.to_owned();
    }
    let mut cut: String = line.chars().take(max_chars.saturating_sub(1)).collect();
    cut.truncate(cut.trim_end().len());
    cut.push('…');
    cut
}

/// One event of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogEvent {
    /// A line for the agent's stdin (JSON text, as sent).
    ToAgent(String),
    /// A line the agent printed on stdout (JSON text, as received).
    FromAgent(String),
    /// A decision of the host's (an audit record, JSON text).
    Host(String),
    /// A line the agent printed on stderr.
    Stderr(String),
    /// The agent process ended.
    Exited { code: Option<i32>, signal: Option<i32>, killed: bool },
}

/// One line of the log, read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    pub seq: u64,
    pub time: String,
    pub event: LogEvent,
}

/// A line that could not be read, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogProblem {
    /// 1-based line number in the file.
    pub line: usize,
    pub message: String,
}

/// What [`read_log`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadLog {
    pub entries: Vec<LogEntry>,
    /// Lines that are not events of this format (the cut last line of a crash is not one: it is
    /// expected and only counted in `cut_tail`).
    pub problems: Vec<LogProblem>,
    /// The log ends with a partial line (the writer stopped in the middle of it).
    pub cut_tail: bool,
}

#[derive(Deserialize)]
struct RawLine {
    seq: u64,
    time: String,
    event: String,
    message: Option<Box<RawValue>>,
    record: Option<Box<RawValue>>,
    line: Option<String>,
    code: Option<i32>,
    signal: Option<i32>,
    #[serde(default)]
    killed: bool,
}

/// Reads a whole log. Never fails: what cannot be read is reported in [`ReadLog::problems`].
pub fn read_log(text: &str) -> ReadLog {
    let mut read = ReadLog::default();
    let complete = text.ends_with('\n');
    let lines: Vec<&str> = text.split('\n').collect();
    // `split` gives an empty last piece after a final newline.
    let count = if complete { lines.len() - 1 } else { lines.len() };
    for (index, line) in lines.iter().take(count).enumerate() {
        let last = index + 1 == count;
        if line.trim().is_empty() {
            continue;
        }
        match parse_line(line) {
            Ok(entry) => read.entries.push(entry),
            Err(_) if last && !complete => read.cut_tail = true,
            Err(message) => read.problems.push(LogProblem { line: index + 1, message }),
        }
    }
    read
}

fn parse_line(line: &str) -> Result<LogEntry, String> {
    let raw: RawLine = serde_json::from_str(line).map_err(|error| error.to_string())?;
    let missing = |field: &str| format!("a {} event without {field}", raw.event);
    let event = match raw.event.as_str() {
        "toAgent" => LogEvent::ToAgent(raw.message.ok_or_else(|| missing("message"))?.get().to_owned()),
        "fromAgent" => LogEvent::FromAgent(raw.message.ok_or_else(|| missing("message"))?.get().to_owned()),
        "host" => LogEvent::Host(raw.record.ok_or_else(|| missing("record"))?.get().to_owned()),
        "stderr" => LogEvent::Stderr(raw.line.clone().ok_or_else(|| missing("line"))?),
        "exited" => LogEvent::Exited { code: raw.code, signal: raw.signal, killed: raw.killed },
        other => return Err(format!("unknown event {other:?}")),
    };
    Ok(LogEntry { seq: raw.seq, time: raw.time, event })
}

/// A log line's `time` (UTC with milliseconds, `2026-11-23T10:00:00.120Z`) in milliseconds since
/// the Unix epoch; `None` when it is not written that way.
pub fn time_ms(time: &str) -> Option<u64> {
    let (date, clock) = time.strip_suffix('Z')?.split_once('T')?;
    let mut date = date.splitn(3, '-').map(str::parse::<i64>);
    let (year, month, day) = (date.next()?.ok()?, date.next()?.ok()?, date.next()?.ok()?);
    let (hms, millis) = clock.split_once('.').unwrap_or((clock, "0"));
    let mut hms = hms.splitn(3, ':').map(str::parse::<i64>);
    let (hour, minute, second) = (hms.next()?.ok()?, hms.next()?.ok()?, hms.next()?.ok()?);
    let millis: i64 = format!("{millis:0<3}").get(..3)?.parse().ok()?;
    // Tetherd writes four-digit years and clock fields in range; anything else is not its
    // writing, and bounding it here keeps the arithmetic below from overflowing.
    let in_range = (0..=9999).contains(&year)
        && (1..=12).contains(&month)
        && (1..=31).contains(&day)
        && (0..24).contains(&hour)
        && (0..60).contains(&minute)
        && (0..=60).contains(&second)
        && (0..1000).contains(&millis);
    if !in_range {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm), so no calendar crate is needed.
    let shifted_year = if month <= 2 { year - 1 } else { year };
    let era = shifted_year.div_euclid(400);
    let year_of_era = shifted_year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let days = era * 146_097 + day_of_era - 719_468;
    let ms = ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis;
    u64::try_from(ms).ok()
}

/// One log line for `event`, without its newline: what tetherd appends. `message` and `record`
/// texts must be JSON (they are spliced in as they are).
pub fn encode_line(seq: u64, time: &str, event: &LogEvent) -> String {
    let time = serde_json::Value::String(time.to_owned());
    let head = format!(r#"{{"seq":{seq},"time":{time},"event":"#);
    match event {
        LogEvent::ToAgent(message) => format!(r#"{head}"toAgent","message":{message}}}"#),
        LogEvent::FromAgent(message) => format!(r#"{head}"fromAgent","message":{message}}}"#),
        LogEvent::Host(record) => format!(r#"{head}"host","record":{record}}}"#),
        LogEvent::Stderr(line) => {
            format!(r#"{head}"stderr","line":{}}}"#, serde_json::Value::String(line.clone()))
        }
        LogEvent::Exited { code, signal, killed } => {
            let json = |value: &Option<i32>| value.map_or_else(|| "null".to_owned(), |value| value.to_string());
            format!(r#"{head}"exited","code":{},"signal":{},"killed":{killed}}}"#, json(code), json(signal))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_reads_back_as_written() {
        let events = [
            LogEvent::ToAgent(r#"{"jsonrpc":"2.0","id":0,"method":"initialize"}"#.to_owned()),
            LogEvent::FromAgent(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#.to_owned()),
            LogEvent::Host(r#"{"event":"answered"}"#.to_owned()),
            LogEvent::Stderr("a \"quoted\" line\twith a tab".to_owned()),
            LogEvent::Exited { code: None, signal: Some(9), killed: false },
        ];
        let text: String = events
            .iter()
            .enumerate()
            .map(|(index, event)| encode_line(index as u64 + 1, "2026-11-23T10:00:00.000Z", event) + "\n")
            .collect();
        let read = read_log(&text);
        assert_eq!(read.problems, []);
        assert!(!read.cut_tail);
        let back: Vec<LogEvent> = read.entries.into_iter().map(|entry| entry.event).collect();
        assert_eq!(back, events);
    }

    #[test]
    fn a_cut_last_line_is_the_end_and_other_bad_lines_are_reported() {
        let good = encode_line(1, "t", &LogEvent::Stderr("one".to_owned()));
        let text = format!("{good}\nnot json\n{good}\n{}", &good[..good.len() / 2]);
        let read = read_log(&text);
        assert_eq!(read.entries.len(), 2);
        assert!(read.cut_tail);
        assert_eq!(read.problems.len(), 1);
        assert_eq!(read.problems[0].line, 2);
    }
}
