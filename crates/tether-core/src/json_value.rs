//! Turning a value into a [`serde_json::Value`] and back through its JSON text, the one way the
//! engine does either.
//!
//! `serde_json::to_value` runs each type's `Serialize` against a second serializer (the one that
//! builds a `Value`), which puts a second copy of that type's encoding code in the WASM engine
//! next to the one that writes the wire's text. `serde_json::from_value` does the same on the way
//! in: each type's `Deserialize` is compiled once more for the deserializer that reads a `Value`,
//! beside the one that reads text. Going through the text uses only code that is there anyway:
//! none of the engine's types has an `f32` or a `u128` (the only values whose text reads back
//! differently), and maps keep their order. None of the callers is on a streaming path (they read
//! a session's log back, an agent's handshake, a settings value), so the extra pass over the text
//! costs nothing noticeable.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// `value` as a JSON value, exactly as `serde_json::to_value` makes it for the engine's types.
pub(crate) fn to_value<T: Serialize>(value: T) -> serde_json::Result<Value> {
    serde_json::from_str(&serde_json::to_string(&value)?)
}

/// `value` read as a `T`, exactly as `serde_json::from_value` reads it for the engine's types.
pub(crate) fn from_value<T: DeserializeOwned>(value: &Value) -> serde_json::Result<T> {
    serde_json::from_str(&value.to_string()).map_err(|error| {
        // The text's reader says where in the text it stopped, and that text was made here and
        // shown to nobody: the message says what is wrong and nothing else, as `from_value`'s.
        let message = error.to_string();
        let at = message.rfind(" at line ").filter(|_| error.line() > 0).unwrap_or(message.len());
        serde::de::Error::custom(&message[..at])
    })
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

    #[test]
    fn values_read_back_as_serde_json_reads_them() {
        let prompt = serde_json::json!([
            { "type": "text", "text": "hello" },
            { "type": "resource_link", "name": "notes", "uri": "file:///notes.md", "size": 12 },
        ]);
        let ours: Vec<acp::ContentBlock> = super::from_value(&prompt).unwrap();
        let theirs: Vec<acp::ContentBlock> = serde_json::from_value(prompt).unwrap();
        assert_eq!(ours, theirs);
        // A value of the wrong shape is refused with serde's own words, as `from_value` refuses it.
        for wrong in [
            serde_json::json!({ "type": "text" }),
            serde_json::json!({ "type": "text", "text": 7 }),
            serde_json::json!([{ "type": "text", "text": "one" }, { "type": "resource_link", "name": "notes" }]),
        ] {
            let ours = super::from_value::<Vec<acp::ContentBlock>>(&wrong).unwrap_err().to_string();
            let theirs = serde_json::from_value::<Vec<acp::ContentBlock>>(wrong).unwrap_err().to_string();
            assert_eq!(ours, theirs);
        }
        let wrong = serde_json::json!({ "type": "text", "text": 7 });
        let ours = super::from_value::<acp::TextContent>(&wrong).unwrap_err().to_string();
        let theirs = serde_json::from_value::<acp::TextContent>(wrong).unwrap_err().to_string();
        assert_eq!(ours, theirs);
    }
}
