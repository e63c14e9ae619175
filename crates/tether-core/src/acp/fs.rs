//! The client's file methods and file review (in progress).

use super::*;
use crate::host_api::{EditOutcome, FileReadReply};
use crate::webview::ReviewIntent;

impl AcpClient {
    pub fn handle_file_read(&mut self, _reply: FileReadReply, _data: &[u8], _now: u64) {}

    pub fn handle_file_changed(&mut self, _path: &str) {}

    pub fn handle_edit_done(&mut self, _edit: u64, _outcome: EditOutcome) {}

    pub fn review(&mut self, _intent: ReviewIntent, _now: u64) -> Result<(), IntentError> {
        Ok(())
    }
}
