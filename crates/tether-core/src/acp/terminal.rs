//! Terminals (work in progress: the intents are accepted and do nothing yet).

use super::{AcpClient, IntentError};
use crate::webview::TerminalIntent;

impl AcpClient {
    pub fn terminal_input(&mut self, _terminal: &str, _data: String) {}

    pub fn terminal_resize(&mut self, _terminal: &str, _cols: u16, _rows: u16) {}

    pub fn terminal_closed(&mut self, _terminal: &str) {}

    pub fn terminal_intent(&mut self, _intent: TerminalIntent) -> Result<(), IntentError> {
        Err(IntentError::UnknownTerminal)
    }
}
