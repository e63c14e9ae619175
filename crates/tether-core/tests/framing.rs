//! NDJSON framing over real recorded transcripts and over hostile streams: every chunking of the
//! same bytes must give the same lines, and bad lines (too long, not UTF-8) must cost only
//! themselves.
//!
//! The line summaries live next to the transcripts in `test_data/transcripts/*.lines`; refresh
//! them with `UPDATE_EXPECT=1 cargo test -p tether-core --test framing`.

use std::path::{Path, PathBuf};

use expect_test::{expect, expect_file};
use tether_core::framing::{DEFAULT_MAX_LINE_BYTES, FrameError, LineFramer};
use tether_core::jsonrpc::{Message, parse_message};

/// One item a framer handed out, and whether it came from `finish` (an unterminated last line).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Framed {
    line: Result<String, FrameError>,
    at_end_of_stream: bool,
}

/// Pushes each chunk, taking every line as it becomes available, then finishes the stream.
fn frame<'a>(max_line_bytes: usize, chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<Framed> {
    let mut framer = LineFramer::new(max_line_bytes);
    let mut framed = Vec::new();
    for chunk in chunks {
        framer.push(chunk);
        while let Some(line) = framer.next_line() {
            framed.push(Framed { line, at_end_of_stream: false });
        }
    }
    while let Some(line) = framer.finish() {
        framed.push(Framed { line, at_end_of_stream: true });
    }
    assert_eq!(framer.buffered_bytes(), 0, "a finished framer holds nothing");
    framed
}

fn transcripts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/transcripts")
}

fn transcript_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(transcripts_dir())
        .expect("the transcripts directory exists")
        .map(|entry| entry.expect("the directory can be listed").file_name())
        .filter_map(|name| name.to_str()?.strip_suffix(".ndjson").map(str::to_owned))
        .collect();
    names.sort();
    names
}

/// One line per framed item, saying what a reader of the transcript needs to know.
fn summarise(framed: &[Framed]) -> String {
    let mut out = String::new();
    for item in framed {
        let text = match &item.line {
            Ok(line) => summarise_message(line),
            Err(error) => format!("frame error: {error}"),
        };
        let end = if item.at_end_of_stream { "  (unterminated, from finish)" } else { "" };
        out.push_str(&format!("{text}{end}\n"));
    }
    out
}

fn summarise_message(line: &str) -> String {
    match parse_message(line) {
        Ok(Message::Request { id, method, .. }) => format!("request {} {method}", id_text(&id)),
        Ok(Message::Notification { method, params }) => {
            // For session/update, the kind of update is what makes the transcript readable.
            let kind = params
                .and_then(|params| serde_json::from_str::<serde_json::Value>(params.get()).ok())
                .and_then(|params| params["update"]["sessionUpdate"].as_str().map(str::to_owned));
            match kind {
                Some(kind) => format!("notification {method} {kind}"),
                None => format!("notification {method}"),
            }
        }
        Ok(Message::Response { id, result: Ok(_) }) => format!("response {} result", id_text(&id)),
        Ok(Message::Response { id, result: Err(error) }) => {
            format!("response {} error {} {:?}", id_text(&id), i32::from(error.code), error.message)
        }
        Err(error) => format!("not a message: {error}"),
    }
}

fn id_text(id: &tether_core::jsonrpc::RequestId) -> String {
    serde_json::to_string(id).expect("ids serialize")
}

#[test]
fn every_chunking_of_a_transcript_gives_the_lines_of_one_push() {
    let names = transcript_names();
    assert!(names.len() >= 3, "expected the recorded and hand-written transcripts, found {names:?}");
    for name in names {
        let bytes =
            std::fs::read(transcripts_dir().join(format!("{name}.ndjson"))).expect("the transcript is readable");
        let whole = frame(DEFAULT_MAX_LINE_BYTES, [bytes.as_slice()]);
        assert!(whole.iter().all(|item| item.line.is_ok()), "{name}: {whole:?}");

        for split in 0..=bytes.len() {
            let (head, tail) = bytes.split_at(split);
            assert_eq!(frame(DEFAULT_MAX_LINE_BYTES, [head, tail]), whole, "{name}: split at byte {split}");
        }
        assert_eq!(frame(DEFAULT_MAX_LINE_BYTES, bytes.chunks(1)), whole, "{name}: byte by byte");
        assert_eq!(frame(DEFAULT_MAX_LINE_BYTES, bytes.chunks(7)), whole, "{name}: 7-byte chunks");

        expect_file![format!("../test_data/transcripts/{name}.lines")].assert_eq(&summarise(&whole));
    }
}

#[test]
fn crlf_and_blank_lines_are_handled_and_text_survives_intact() {
    let bytes =
        std::fs::read(transcripts_dir().join("crlf-blank-lines.agent.ndjson")).expect("the transcript is readable");
    let lines: Vec<String> = frame(DEFAULT_MAX_LINE_BYTES, bytes.chunks(1))
        .into_iter()
        .map(|item| item.line.expect("every line of this transcript is good"))
        .collect();
    // No line keeps a carriage return, and the multi-byte text arrives whole although it was fed
    // one byte at a time.
    assert!(lines.iter().all(|line| !line.contains('\r')), "{lines:#?}");
    assert!(lines[1].contains("Grüße — 日本語 🎉"), "{}", lines[1]);
}

#[test]
fn an_oversized_line_is_reported_once_and_never_buffered() {
    let max = 4096;
    let oversized_len = 100_000;
    let mut framer = LineFramer::new(max);
    let mut out = Vec::new();

    framer.push(b"{\"before\":1}\n{\"x\":\"");
    let oversized = vec![b'a'; oversized_len - 6];
    for chunk in oversized.chunks(1024) {
        framer.push(chunk);
        while let Some(line) = framer.next_line() {
            out.push(line);
        }
        assert!(framer.buffered_bytes() <= max, "{} bytes buffered with a maximum of {max}", framer.buffered_bytes());
    }
    framer.push(b"\"}\r\n{\"after\":2}\n");
    while let Some(line) = framer.next_line() {
        out.push(line);
    }
    assert_eq!(framer.finish(), None);

    // The reported length is the line's own, carriage return and newline not counted.
    expect![[r#"
        [
            Ok(
                "{\"before\":1}",
            ),
            Err(
                TooLong {
                    len: 100002,
                    max: 4096,
                },
            ),
            Ok(
                "{\"after\":2}",
            ),
        ]
    "#]]
    .assert_debug_eq(&out);
}

#[test]
fn the_maximum_is_inclusive_and_the_terminator_does_not_count() {
    let max = 8;
    let stream = b"12345678\n123456789\n12345678\r\n123456789\r\n\n12345678\r";
    let lines: Vec<_> = frame(max, [stream.as_slice()]).into_iter().map(|item| item.line).collect();
    expect![[r#"
        [
            Ok(
                "12345678",
            ),
            Err(
                TooLong {
                    len: 9,
                    max: 8,
                },
            ),
            Ok(
                "12345678",
            ),
            Err(
                TooLong {
                    len: 9,
                    max: 8,
                },
            ),
            Ok(
                "12345678",
            ),
        ]
    "#]]
    .assert_debug_eq(&lines);
    for chunk_len in 1..stream.len() {
        let chunked: Vec<_> = frame(max, stream.chunks(chunk_len)).into_iter().map(|item| item.line).collect();
        assert_eq!(chunked, lines, "chunks of {chunk_len} bytes");
    }
}

#[test]
fn an_oversized_last_line_without_newline_is_reported_by_finish() {
    let mut framer = LineFramer::new(16);
    framer.push(b"{\"ok\":true}\n");
    framer.push(&[b'x'; 40]);
    assert_eq!(framer.next_line(), Some(Ok("{\"ok\":true}".to_owned())));
    assert_eq!(framer.next_line(), None);
    assert_eq!(framer.finish(), Some(Err(FrameError::TooLong { len: 40, max: 16 })));
    assert_eq!(framer.finish(), None);
}

#[test]
fn an_invalid_utf8_line_costs_only_itself() {
    let stream: &[u8] = b"{\"a\":1}\n{\"text\":\"caf\xc3\xa9 \xff\xfe\"}\n{\"b\":2}\n";
    let lines: Vec<_> = frame(1024, [stream]).into_iter().map(|item| item.line).collect();
    expect![[r#"
        [
            Ok(
                "{\"a\":1}",
            ),
            Err(
                InvalidUtf8 {
                    len: 19,
                    preview: "{\"text\":\"café ��\"}",
                    valid_up_to: 15,
                },
            ),
            Ok(
                "{\"b\":2}",
            ),
        ]
    "#]]
    .assert_debug_eq(&lines);
}

#[test]
fn a_character_split_across_pushes_stays_intact() {
    // "é" is two bytes and "🎉" four; every split point inside them must still give the text.
    let line = "{\"text\":\"é🎉\"}\n".as_bytes();
    for split in 0..=line.len() {
        let (head, tail) = line.split_at(split);
        let framed = frame(1024, [head, tail]);
        assert_eq!(
            framed,
            vec![Framed { line: Ok("{\"text\":\"é🎉\"}".to_owned()), at_end_of_stream: false }],
            "split at byte {split}"
        );
    }
}

#[test]
fn thousands_of_tiny_lines_in_tiny_chunks() {
    let mut stream = Vec::new();
    for index in 0..5000 {
        stream.extend_from_slice(format!("{{\"jsonrpc\":\"2.0\",\"id\":{index},\"result\":{{}}}}\n").as_bytes());
    }
    let framed = frame(DEFAULT_MAX_LINE_BYTES, stream.chunks(3));
    assert_eq!(framed.len(), 5000);
    assert_eq!(framed[4999].line, Ok("{\"jsonrpc\":\"2.0\",\"id\":4999,\"result\":{}}".to_owned()));
}

#[test]
fn a_line_of_the_default_maximum_streams_through_and_memory_is_given_back() {
    // A 64 MiB message (say, a whole file embedded in a tool call) arriving in pipe-sized chunks.
    // Were each push to rescan the buffer, this test would not finish.
    let prefix = b"{\"text\":\"";
    let suffix = b"\"}";
    let mut line = Vec::with_capacity(DEFAULT_MAX_LINE_BYTES + 1);
    line.extend_from_slice(prefix);
    line.resize(DEFAULT_MAX_LINE_BYTES - suffix.len(), b'z');
    line.extend_from_slice(suffix);
    line.push(b'\n');

    let mut framer = LineFramer::default();
    let mut received = Vec::new();
    for chunk in line.chunks(64 * 1024) {
        framer.push(chunk);
        while let Some(line) = framer.next_line() {
            received.push(line.expect("a line of exactly the maximum is accepted"));
        }
    }
    framer.push(b"{\"next\":true}\n");
    while let Some(line) = framer.next_line() {
        received.push(line.expect("the next line is fine"));
    }
    assert_eq!(received.len(), 2);
    assert_eq!(received[0].len(), DEFAULT_MAX_LINE_BYTES);
    assert!(received[0].ends_with("zz\"}"));
    assert_eq!(received[1], "{\"next\":true}");
    assert_eq!(framer.buffered_bytes(), 0);
}

#[test]
fn garbage_never_panics_and_always_makes_progress() {
    // A deterministic pseudo-random mix of newlines, carriage returns, spaces and arbitrary bytes,
    // fed in varying chunk sizes: the framer must hand out the same items however it is fed.
    let mut state: u32 = 0x1234_5678;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state
    };
    let stream: Vec<u8> = (0..20_000)
        .map(|_| match next() % 10 {
            0 => b'\n',
            1 => b'\r',
            2 => b' ',
            _ => (next() % 256) as u8,
        })
        .collect();
    let whole = frame(64, [stream.as_slice()]);
    for chunk_len in [1, 2, 3, 5, 64, 65, 1000] {
        assert_eq!(frame(64, stream.chunks(chunk_len)), whole, "chunks of {chunk_len} bytes");
    }
}

/// tetherd's MCP bridge says one line, then the connection carries another protocol: what was
/// read past that line must reach the next reader byte for byte (complete lines, then the start
/// of the next one).
#[test]
fn what_was_not_taken_is_handed_back_as_a_stream() {
    let mut framer = LineFramer::new(64);
    framer.push(b"{\"hello\":1}\n{\"a\":1}\r\n{\"b\":");
    assert_eq!(framer.next_line(), Some(Ok("{\"hello\":1}".to_owned())));
    assert_eq!(framer.into_remaining(), b"{\"a\":1}\r\n{\"b\":".to_vec());

    let mut framer = LineFramer::new(64);
    framer.push(b"{\"hello\":1}\n");
    assert_eq!(framer.next_line(), Some(Ok("{\"hello\":1}".to_owned())));
    assert_eq!(framer.into_remaining(), Vec::<u8>::new());
}
