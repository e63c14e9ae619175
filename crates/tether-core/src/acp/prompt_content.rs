//! What a prompt sends and shows: the person's text and attachments as ACP content blocks, and
//! the thread's user message read back from content blocks (a prompt being sent, one read from
//! a session's log, or the agent's own replay of a session).
//!
//! The blocks follow what the agent said it accepts (`promptCapabilities`, kept in
//! [`PromptCapabilitiesView`]). Every agent takes text and resource links. An agent with
//! `embeddedContext` gets a mentioned file's text as it is in the editor (unsaved edits
//! included), read through the host like any other read, and a selection's text as it was when
//! mentioned; one without gets a link to the file (the agent reads it itself) and a selection's
//! text as a text block after its link. Images are sent only to an agent with `image`.
//!
//! The prompt's first block is always the person's text; attachments follow in the order they
//! were mentioned. Reading blocks back relies on that order: the text block that follows a
//! selection's link is that selection's text, not something the person wrote.

use crate::export::fenced;
use crate::thread::AttachmentView;
use crate::webview::{PromptAttachment, PromptCapabilitiesView};
use crate::workspace_path::Workspace;

use super::updates::content_text;
use super::*;

/// A mentioned file larger than this is sent as a link the agent can read itself: embedding it
/// would fill the agent's context with one file.
pub const MAX_EMBEDDED_FILE_BYTES: usize = 512 * 1024;

/// The largest image a prompt may carry, decoded. Agents' model APIs refuse larger ones anyway.
pub const MAX_IMAGE_BYTES: usize = 10 * 1024 * 1024;

/// A prompt waiting before it is sent: for the turn's snapshot, and for the files it embeds.
#[derive(Debug)]
pub(super) struct HeldPrompt {
    /// Tells this prompt's reads from those of a prompt cancelled before it.
    pub(super) serial: u64,
    pub(super) session_id: acp::SessionId,
    pub(super) blocks: Vec<acp::ContentBlock>,
    pub(super) snapshot_pending: bool,
    pub(super) reads_pending: usize,
    /// What the person should know about how an attachment was sent (a file too large to embed),
    /// shown once the prompt has gone: a session's log then holds them after the prompt, and a
    /// replay shows them where the live thread did.
    pub(super) notices: Vec<String>,
}

impl HeldPrompt {
    pub(super) fn ready(&self) -> bool {
        !self.snapshot_pending && self.reads_pending == 0
    }

    /// The request to send, and the notices to show after it.
    pub(super) fn into_request(self) -> (acp::PromptRequest, Vec<String>) {
        (acp::PromptRequest::new(self.session_id, self.blocks), self.notices)
    }
}

/// A mentioned file to read into a prompt: the index of its block, and its path.
pub(super) type MentionRead = (usize, String);

/// The blocks of a prompt, and the files still to be read into it.
pub(super) fn prompt_blocks(
    text: &str,
    attachments: &[PromptAttachment],
    capabilities: PromptCapabilitiesView,
    workspace: &Workspace,
) -> Result<(Vec<acp::ContentBlock>, Vec<MentionRead>), IntentError> {
    let mut blocks = vec![acp::ContentBlock::Text(acp::TextContent::new(text))];
    let mut reads = Vec::new();
    for attachment in attachments {
        match attachment {
            PromptAttachment::File { path } => {
                // The link stays when the file cannot be embedded (see `embed_file`).
                if capabilities.embedded_context {
                    reads.push((blocks.len(), path.clone()));
                }
                blocks.push(file_link(path, None, workspace));
            }
            // Never embedded: the agent lists and reads what it needs of it.
            PromptAttachment::Folder { path } => blocks.push(folder_link(path, workspace)),
            PromptAttachment::Selection { path, start_line, end_line, text } => {
                let lines = Some((*start_line, *end_line));
                if capabilities.embedded_context {
                    blocks.push(embedded_text(path, lines, text.clone()));
                } else {
                    blocks.push(file_link(path, lines, workspace));
                    let label = selection_label(&workspace.label(path), *start_line, *end_line);
                    blocks.push(acp::ContentBlock::Text(acp::TextContent::new(format!(
                        "{label}:\n{}",
                        fenced("", text.trim_end_matches('\n'))
                    ))));
                }
            }
            PromptAttachment::Image { mime_type, data } => {
                if !capabilities.image {
                    return Err(IntentError::ImagesNotAccepted);
                }
                if !mime_type.starts_with("image/") {
                    return Err(IntentError::NotAnImage(mime_type.clone()));
                }
                if base64_decoded_len(data) > MAX_IMAGE_BYTES {
                    return Err(IntentError::ImageTooLarge { max_mib: MAX_IMAGE_BYTES >> 20 });
                }
                blocks.push(acp::ContentBlock::Image(acp::ImageContent::new(data.clone(), mime_type.clone())));
            }
        }
    }
    Ok((blocks, reads))
}

/// The block for the mentioned file `path` (shown as `shown`) once read: its text embedded, or
/// why the link stays (for the person) when it is too large or could not be read.
pub(super) fn embed_file(
    path: &str,
    shown: &str,
    read: Result<Option<String>, String>,
) -> Result<acp::ContentBlock, String> {
    match read {
        Ok(Some(text)) if text.len() <= MAX_EMBEDDED_FILE_BYTES => Ok(embedded_text(path, None, text)),
        Ok(Some(text)) => Err(format!(
            "{shown} was sent as a link for the agent to read: it is {} KiB, more than the {} KiB Tether puts in a prompt.",
            text.len() / 1024,
            MAX_EMBEDDED_FILE_BYTES / 1024
        )),
        Ok(None) => Err(format!("{shown} was sent as a link: it does not exist.")),
        Err(message) => Err(format!("{shown} was sent as a link: it could not be read ({message}).")),
    }
}

/// A text block only the agent reads (the thread does not show it with the person's message):
/// what a restored conversation tells the agent, marked in `_meta.tether`.
pub(super) fn context_block(text: String) -> acp::ContentBlock {
    let mut tether = serde_json::Map::new();
    tether.insert(super::handshake::CONTEXT_META_KEY.to_owned(), serde_json::Value::Bool(true));
    let mut meta = serde_json::Map::new();
    meta.insert("tether".to_owned(), serde_json::Value::Object(tether));
    acp::ContentBlock::Text(acp::TextContent::new(text).meta(meta))
}

/// Whether `block` is a [`context_block`].
fn is_context_block(block: &acp::ContentBlock) -> bool {
    // `get`, not indexing: a `Map` indexed by a key it lacks panics, and `_meta` is the agent's
    // (or a log's) to fill with anything.
    matches!(block, acp::ContentBlock::Text(text)
    if text.meta.as_ref().is_some_and(|meta| {
        meta.get("tether").and_then(|tether| tether.get(super::handshake::CONTEXT_META_KEY))
            == Some(&serde_json::Value::Bool(true))
    }))
}

/// The user message a prompt's blocks show as.
pub(super) fn user_message(blocks: &[acp::ContentBlock], workspace: &Workspace) -> UserMessage {
    let mut message = UserMessage::text("");
    let mut blocks = blocks.iter().peekable();
    if let Some(acp::ContentBlock::Text(text)) = blocks.peek() {
        message.text = text.text.clone();
        blocks.next();
    }
    while let Some(block) = blocks.next() {
        if is_context_block(block) {
            continue;
        }
        let attachment = attachment_of(block, workspace);
        // A selection sent as a link is followed by its text (see `prompt_blocks`).
        if matches!((block, &attachment), (acp::ContentBlock::ResourceLink(_), Some(AttachmentView::Selection { .. })))
        {
            blocks.next_if(|next| matches!(next, acp::ContentBlock::Text(_)));
        }
        match attachment {
            Some(attachment) => message.attachments.push(attachment),
            None => {
                // More text (an agent's own prompt format): part of what the person sees.
                if !message.text.is_empty() {
                    message.text.push_str("\n\n");
                }
                message.text.push_str(&content_text(block));
            }
        }
    }
    message
}

/// What a non-text block shows as beside a prompt's text; `None` for text.
pub(super) fn attachment_of(block: &acp::ContentBlock, workspace: &Workspace) -> Option<AttachmentView> {
    let from_uri = |uri: &str, name: &str| match parse_file_uri(uri) {
        // A folder's link ends with `/` (see `folder_link`).
        Some((path, None)) if path.len() > 1 && path.ends_with('/') => {
            AttachmentView::Folder { path: workspace.label(path.trim_end_matches('/')) }
        }
        Some((path, None)) => AttachmentView::File { path: workspace.label(&path) },
        Some((path, Some((start_line, end_line)))) => {
            AttachmentView::Selection { path: workspace.label(&path), start_line, end_line }
        }
        None => AttachmentView::Other { label: if name.is_empty() { uri.to_owned() } else { name.to_owned() } },
    };
    Some(match block {
        acp::ContentBlock::Text(_) => return None,
        acp::ContentBlock::ResourceLink(link) => from_uri(&link.uri, &link.name),
        acp::ContentBlock::Resource(resource) => match &resource.resource {
            acp::EmbeddedResourceResource::TextResourceContents(text) => from_uri(&text.uri, ""),
            acp::EmbeddedResourceResource::BlobResourceContents(blob) => from_uri(&blob.uri, ""),
            _ => AttachmentView::Other { label: "an embedded resource".to_owned() },
        },
        acp::ContentBlock::Image(image) => {
            AttachmentView::Image { mime_type: image.mime_type.clone(), bytes: base64_decoded_len(&image.data) as u64 }
        }
        acp::ContentBlock::Audio(_) => AttachmentView::Other { label: "audio".to_owned() },
        _ => AttachmentView::Other { label: "content".to_owned() },
    })
}

/// `path#L3-9` (one line: `path#L3`), as mentions of lines are written.
pub(crate) fn selection_label(path: &str, start_line: u32, end_line: u32) -> String {
    if start_line == end_line { format!("{path}#L{start_line}") } else { format!("{path}#L{start_line}-{end_line}") }
}

fn file_link(path: &str, lines: Option<(u32, u32)>, workspace: &Workspace) -> acp::ContentBlock {
    let shown = workspace.label(path);
    let name = match lines {
        Some((start, end)) => selection_label(&shown, start, end),
        None => shown.rsplit('/').next().unwrap_or(&shown).to_owned(),
    };
    acp::ContentBlock::ResourceLink(acp::ResourceLink::new(name, file_uri(path, lines)))
}

/// A link to the mentioned folder `path`: its URI ends with `/` and its MIME type is
/// `inode/directory`, so an agent that shows or follows links can tell it from a file (Claude
/// Code's adapter, for one, writes the link as `[@name](uri)` and names it by the URI's last
/// part).
fn folder_link(path: &str, workspace: &Workspace) -> acp::ContentBlock {
    let shown = workspace.label(path);
    let name = format!("{}/", shown.rsplit('/').next().unwrap_or(&shown));
    let mut uri = file_uri(path, None);
    if !uri.ends_with('/') {
        uri.push('/');
    }
    acp::ContentBlock::ResourceLink(acp::ResourceLink::new(name, uri).mime_type("inode/directory".to_owned()))
}

fn embedded_text(path: &str, lines: Option<(u32, u32)>, text: String) -> acp::ContentBlock {
    let contents = acp::TextResourceContents::new(text, file_uri(path, lines));
    acp::ContentBlock::Resource(acp::EmbeddedResource::new(acp::EmbeddedResourceResource::TextResourceContents(
        contents,
    )))
}

/// A `file:` URI for an absolute path, with the lines as a `#L3:9` fragment (1-based, inclusive:
/// the form Zed's agents read).
pub(super) fn file_uri(path: &str, lines: Option<(u32, u32)>) -> String {
    let path = path.replace('\\', "/");
    let mut uri = String::from("file://");
    if !path.starts_with('/') {
        // A Windows drive path: file:///C:/...
        uri.push('/');
    }
    for byte in path.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' | b':' | b'@' | b'+' | b',' => {
                uri.push(byte as char)
            }
            _ => uri.push_str(&format!("%{byte:02X}")),
        }
    }
    if let Some((start, end)) = lines {
        uri.push_str(&format!("#L{start}:{end}"));
    }
    uri
}

/// The path and lines of a `file:` URI (the inverse of [`file_uri`], also reading `#L3-9` and
/// `#L3`); `None` for another scheme or a malformed escape.
pub(crate) fn parse_file_uri(uri: &str) -> Option<(String, Option<(u32, u32)>)> {
    let rest = uri.strip_prefix("file://")?;
    let (path, fragment) = match rest.split_once('#') {
        Some((path, fragment)) => (path, Some(fragment)),
        None => (rest, None),
    };
    let mut bytes = Vec::with_capacity(path.len());
    let mut input = path.bytes();
    while let Some(byte) = input.next() {
        if byte == b'%' {
            let high = (input.next()? as char).to_digit(16)?;
            let low = (input.next()? as char).to_digit(16)?;
            bytes.push((high * 16 + low) as u8);
        } else {
            bytes.push(byte);
        }
    }
    let mut path = String::from_utf8(bytes).ok()?;
    // file:///C:/x is the Windows path C:/x.
    if path.len() > 3 && path.as_bytes()[2] == b':' && path.starts_with('/') {
        path.remove(0);
    }
    let lines = fragment.and_then(|fragment| {
        let range = fragment.strip_prefix('L')?;
        let (start, end) = range.split_once([':', '-']).unwrap_or((range, range));
        Some((start.parse().ok()?, end.trim_start_matches('L').parse().ok()?))
    });
    Some((path, lines))
}

/// The decoded size of base64 `data` (padding and line breaks not counted).
fn base64_decoded_len(data: &str) -> usize {
    let symbols = data.bytes().filter(|byte| !matches!(byte, b'=' | b'\n' | b'\r')).count();
    symbols * 3 / 4
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_text_block_with_someone_elses_meta_is_shown_not_a_panic() {
        // Found by the replay fuzzer: `_meta` without `tether` made the context check panic.
        let mut meta = serde_json::Map::new();
        meta.insert("other".to_owned(), serde_json::Value::from(1));
        let blocks = [
            acp::ContentBlock::from("Fix it".to_owned()),
            acp::ContentBlock::Text(acp::TextContent::new("More words").meta(meta)),
            context_block("Earlier turns".to_owned()),
        ];
        let message = user_message(&blocks, &Workspace::single("/workspace"));
        assert_eq!(message.text, "Fix it\n\nMore words", "the agent-only context is left out, the rest shown");
    }

    #[test]
    fn file_uris_round_trip_with_escapes_and_lines() {
        let cases = [
            ("/ws/src/main.rs", None, "file:///ws/src/main.rs"),
            ("/ws/my file#1.rs", Some((3, 9)), "file:///ws/my%20file%231.rs#L3:9"),
            ("/ws/é.md", None, "file:///ws/%C3%A9.md"),
            ("C:\\ws\\a.rs", None, "file:///C:/ws/a.rs"),
        ];
        for (path, lines, uri) in cases {
            assert_eq!(file_uri(path, lines), uri);
            let expected_path = path.replace('\\', "/");
            assert_eq!(parse_file_uri(uri), Some((expected_path, lines)));
        }
        assert_eq!(parse_file_uri("file:///a.rs#L4-6"), Some(("/a.rs".to_owned(), Some((4, 6)))));
        assert_eq!(parse_file_uri("file:///a.rs#L4"), Some(("/a.rs".to_owned(), Some((4, 4)))));
        assert_eq!(parse_file_uri("https://example.com/a"), None);
        assert_eq!(parse_file_uri("file:///a%zz"), None);
    }

    #[test]
    fn base64_sizes_ignore_padding() {
        assert_eq!(base64_decoded_len("aGVsbG8="), 5);
        assert_eq!(base64_decoded_len("aGVsbG8h"), 6);
    }
}
