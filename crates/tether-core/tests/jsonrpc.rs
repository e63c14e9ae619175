//! JSON-RPC parsing, encoding and requests in flight.
//!
//! `parse_message` is data-driven: the cases are `test_data/jsonrpc/parse_message.cases` and the
//! outcomes, including the error reply a peer would get, are in `parse_message.expected`. Refresh
//! with `UPDATE_EXPECT=1 cargo test -p tether-core --test jsonrpc`.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

use expect_test::{expect, expect_file};
use serde::Deserialize;
use tether_core::jsonrpc::{
    ErrorCode, Message, Outgoing, Pending, RequestId, RpcError, encode_error, encode_notification, encode_request,
    encode_result, method_not_found, parse_message, parse_params, response_id,
};

fn id_text(id: &RequestId) -> String {
    serde_json::to_string(id).expect("ids serialize")
}

/// One line of text for what `parse_message` made of a line.
fn render_outcome(line: &str) -> String {
    match parse_message(line) {
        Ok(Message::Request { id, method, params }) => format!(
            "request id={} method={}{} params={}",
            id_text(&id),
            render_method(&method),
            if matches!(method, Cow::Owned(_)) { " (unescaped)" } else { "" },
            params.map_or("(none)", |params| params.get()),
        ),
        Ok(Message::Notification { method, params }) => format!(
            "notification method={} params={}",
            render_method(&method),
            params.map_or("(none)", |params| params.get()),
        ),
        Ok(Message::Response { id, result: Ok(result) }) => {
            format!("response id={} result={}", id_text(&id), result.get())
        }
        Ok(Message::Response { id, result: Err(error) }) => {
            format!("response id={} error={}", id_text(&id), serde_json::to_string(&error).expect("errors serialize"))
        }
        Err(error) => format!("{error}\n     reply {}", encode_error(&error.response_id(), &error.to_rpc_error())),
    }
}

fn render_method(method: &str) -> String {
    serde_json::to_string(method).expect("strings serialize")
}

#[test]
fn parse_message_cases() {
    let cases_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/jsonrpc/parse_message.cases");
    let cases = std::fs::read_to_string(cases_path).expect("the cases file is readable");
    let mut rendered = String::new();
    for case in cases.lines() {
        if case.trim().is_empty() || case.starts_with('#') {
            continue;
        }
        rendered.push_str(&format!("{case}\n  => {}\n", render_outcome(case)));
    }
    expect_file!["../test_data/jsonrpc/parse_message.expected"].assert_eq(&rendered);
}

#[test]
fn every_error_reply_is_itself_a_valid_response() {
    // What we send back for a bad line must parse as a response on the other side, or two peers
    // could answer each other's errors for ever.
    for line in ["not json", "[]", "{\"jsonrpc\":\"1.0\",\"id\":\"x\",\"method\":\"a\"}"] {
        let error = parse_message(line).expect_err("the line is bad");
        let reply = encode_error(&error.response_id(), &error.to_rpc_error());
        match parse_message(&reply) {
            Ok(Message::Response { result: Err(_), .. }) => {}
            other => panic!("the reply {reply} parsed as {other:?}"),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
#[expect(dead_code, reason = "the fields are read through Debug in the snapshot")]
struct ReadParams {
    session_id: String,
    path: String,
    line: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
struct AllOptional {
    cursor: Option<String>,
}

#[test]
fn parse_params_explains_what_is_wrong() {
    let message = parse_message(
        r#"{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a","line":3}}"#,
    )
    .expect("a valid request");
    let Message::Request { params, .. } = message else { panic!("expected a request") };
    expect![[r#"
        Ok(
            ReadParams {
                session_id: "s",
                path: "/a",
                line: Some(
                    3,
                ),
            },
        )
    "#]]
    .assert_debug_eq(&parse_params::<ReadParams>(params));

    let missing_field = serde_json::value::RawValue::from_string(r#"{"sessionId":"s"}"#.to_owned()).expect("json");
    expect![[r#"
        Err(
            Error {
                code: -32602: Invalid params,
                message: "Invalid params: missing field `path` at line 1 column 17",
                data: None,
            },
        )
    "#]]
    .assert_debug_eq(&parse_params::<ReadParams>(Some(&missing_field)));

    let wrong_type =
        serde_json::value::RawValue::from_string(r#"{"sessionId":"s","path":7}"#.to_owned()).expect("json");
    let error = parse_params::<ReadParams>(Some(&wrong_type)).expect_err("path is not a string");
    assert_eq!(error.code, ErrorCode::InvalidParams);
    assert!(error.message.contains("invalid type: integer `7`, expected a string"), "{error:?}");

    // Absent params: fine for a struct whose fields are all optional and for `()`, an error
    // naming the missing field otherwise.
    assert!(parse_params::<AllOptional>(None).is_ok_and(|params| params.cursor.is_none()));
    assert!(parse_params::<()>(None).is_ok());
    let error = parse_params::<ReadParams>(None).expect_err("sessionId and path are required");
    assert!(error.message.contains("missing field `sessionId`"), "{error:?}");
}

#[test]
fn encoded_messages_are_single_lines_that_parse_back() {
    let request = encode_request(
        &RequestId::Number(3),
        "fs/read_text_file",
        &serde_json::json!({"path": "line one\nline two", "sessionId": "s"}),
    );
    let notification = encode_notification("session/cancel", &serde_json::json!({"sessionId": "s"}));
    let without_params = encode_request(&RequestId::Str("x".to_owned()), "session/list", &());
    let result = encode_result(&RequestId::Number(0), &serde_json::json!({"stopReason": "end_turn"}));
    let null_result = encode_result(&RequestId::Number(1), &());
    let error = encode_error(
        &RequestId::Str("req \"7\"".to_owned()),
        &RpcError::auth_required().data(serde_json::json!({"methods": ["api-key"]})),
    );
    let unknown = encode_error(&RequestId::Number(9), &method_not_found("x/unknown"));

    let lines = [request, notification, without_params, result, null_result, error, unknown];
    for line in &lines {
        assert!(!line.contains('\n'), "{line}");
        parse_message(line).unwrap_or_else(|error| panic!("{line} does not parse back: {error}"));
    }
    expect![[r#"
        {"jsonrpc":"2.0","id":3,"method":"fs/read_text_file","params":{"path":"line one\nline two","sessionId":"s"}}
        {"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}
        {"jsonrpc":"2.0","id":"x","method":"session/list"}
        {"jsonrpc":"2.0","id":0,"result":{"stopReason":"end_turn"}}
        {"jsonrpc":"2.0","id":1,"result":null}
        {"jsonrpc":"2.0","id":"req \"7\"","error":{"code":-32000,"message":"Authentication required","data":{"methods":["api-key"]}}}
        {"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"Method not found: x/unknown"}}
    "#]]
    .assert_eq(&(lines.join("\n") + "\n"));
}

#[test]
fn a_value_that_cannot_be_encoded_becomes_an_internal_error_not_a_panic() {
    // JSON object keys must be strings; serde_json refuses a map keyed by lists.
    let unencodable: BTreeMap<Vec<u8>, u8> = BTreeMap::from([(vec![1], 1)]);
    let line = encode_result(&RequestId::Number(4), &unencodable);
    expect![[r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"Internal error: could not encode a message: key must be a string"}}"#]]
        .assert_eq(&line);
    let line = encode_notification("session/update", &unencodable);
    match parse_message(&line) {
        Ok(Message::Response { id: RequestId::Null, result: Err(error) }) => {
            assert_eq!(error.code, ErrorCode::InternalError);
        }
        other => panic!("{line} parsed as {other:?}"),
    }
}

#[test]
fn outgoing_requests_get_increasing_ids_and_are_matched_by_response() {
    let mut outgoing = Outgoing::new();
    assert!(outgoing.is_empty());
    let (first, line) = outgoing.request("initialize", &serde_json::json!({"protocolVersion": 1}), "init", None);
    let (second, _) = outgoing.request("session/new", &serde_json::json!({}), "new", Some(5_000));
    let (third, _) = outgoing.request("session/prompt", &serde_json::json!({}), "prompt", None);
    assert_eq!([&first, &second, &third], [&RequestId::Number(0), &RequestId::Number(1), &RequestId::Number(2)]);
    assert_eq!(line, r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#);
    assert_eq!(outgoing.len(), 3);

    // Responses can come back in any order; each finds its own request exactly once.
    assert_eq!(
        outgoing.take(&RequestId::Number(1)),
        Some(Pending { method: "session/new".to_owned(), tag: "new", deadline: Some(5_000) })
    );
    assert_eq!(outgoing.take(&RequestId::Number(1)), None, "already answered");
    assert_eq!(outgoing.take(&RequestId::Number(17)), None, "never sent");
    assert_eq!(outgoing.take(&RequestId::Str("0".to_owned())), None, "a string is not our id");
    assert_eq!(outgoing.take(&RequestId::Number(0)).map(|pending| pending.tag), Some("init"));
    assert_eq!(outgoing.len(), 1);

    // Ids are never reused, even after the earlier requests were answered.
    let (fourth, _) = outgoing.request("session/cancel", &(), "cancel", None);
    assert_eq!(fourth, RequestId::Number(3));
}

#[test]
fn outgoing_requests_expire_at_their_deadline() {
    let mut outgoing = Outgoing::new();
    outgoing.request("a", &(), 'a', Some(1_000));
    outgoing.request("b", &(), 'b', None);
    outgoing.request("c", &(), 'c', Some(3_000));
    outgoing.request("d", &(), 'd', Some(1_000));
    assert_eq!(outgoing.next_deadline(), Some(1_000));

    assert!(outgoing.expire(999).is_empty(), "nothing is due before its deadline");
    let expired: Vec<(RequestId, char)> =
        outgoing.expire(1_000).into_iter().map(|(id, pending)| (id, pending.tag)).collect();
    assert_eq!(expired, [(RequestId::Number(0), 'a'), (RequestId::Number(3), 'd')]);
    assert_eq!(outgoing.next_deadline(), Some(3_000));
    assert!(outgoing.expire(2_000).is_empty(), "expired requests are gone");

    // A late response to an expired request is not mistaken for anything.
    assert_eq!(outgoing.take(&RequestId::Number(0)), None);

    let expired: Vec<char> = outgoing.expire(u64::MAX).into_iter().map(|(_, p)| p.tag).collect();
    assert_eq!(expired, ['c'], "a request without a deadline never expires");
    assert_eq!(outgoing.next_deadline(), None);
    assert_eq!(outgoing.len(), 1);
}

#[test]
fn a_lost_connection_drains_every_pending_request() {
    let mut outgoing: Outgoing<u32> = Outgoing::default();
    for tag in 0..3 {
        outgoing.request("session/prompt", &(), tag, Some(10_000));
    }
    outgoing.take(&RequestId::Number(1));
    let drained: Vec<(RequestId, u32)> = outgoing.drain().into_iter().map(|(id, pending)| (id, pending.tag)).collect();
    assert_eq!(drained, [(RequestId::Number(0), 0), (RequestId::Number(2), 2)]);
    assert!(outgoing.is_empty());
    assert_eq!(outgoing.next_deadline(), None);
    assert!(outgoing.expire(u64::MAX).is_empty());
}

#[test]
fn the_id_of_an_encoded_response_is_read_from_its_start_and_requests_have_none() {
    let ids = [RequestId::Number(7), RequestId::Str("a\"b".to_owned()), RequestId::Null];
    for id in &ids {
        let big = "x".repeat(100_000);
        assert_eq!(response_id(&encode_result(id, &big)).as_ref(), Some(id));
        assert_eq!(response_id(&encode_error(id, &RpcError::internal_error())).as_ref(), Some(id));
        assert_eq!(response_id(&encode_request(id, "fs/read_text_file", &big)), None);
    }
    assert_eq!(response_id(&encode_notification("session/cancel", &"s1")), None);
    assert_eq!(response_id(r#"{"id":1,"jsonrpc":"2.0","result":{}}"#), None, "only the encoder's own layout");
}
