//! Turning a value into a [`serde_json::Value`] through its JSON text, the one way the engine
//! does it.
//!
//! `serde_json::to_value` runs each type's `Serialize` against a second serializer (the one that
//! builds a `Value`), which puts a second copy of that type's encoding code in the WASM engine
//! next to the one that writes the wire's text. Writing the text and reading it back uses only
//! code that is there anyway, for the same `Value`: none of the engine's types has an `f32` or a
//! `u128` (the only values whose text reads back differently), and maps keep their order. None of
//! the callers is on a streaming path, so the extra pass over the text costs nothing noticeable.

use serde::Serialize;
use serde_json::Value;

/// `value` as a JSON value, exactly as `serde_json::to_value` makes it for the engine's types.
pub(crate) fn to_value<T: Serialize>(value: T) -> serde_json::Result<Value> {
    serde_json::from_str(&serde_json::to_string(&value)?)
}

#[cfg(test)]
mod tests {
    use agent_client_protocol_schema::v1 as acp;

    #[test]
    fn values_are_what_serde_json_makes_of_them() {
        let prompt = vec![
            acp::ContentBlock::from("hello"),
            acp::ContentBlock::ResourceLink(acp::ResourceLink::new("notes", "file:///notes.md")),
        ];
        assert_eq!(super::to_value(&prompt).unwrap(), serde_json::to_value(&prompt).unwrap());
        assert_eq!(
            super::to_value(acp::StopReason::MaxTurnRequests).unwrap(),
            serde_json::Value::String("max_turn_requests".to_owned())
        );
    }
}
