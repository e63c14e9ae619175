//! Where the paths an agent names really lead, so that inside or outside the workspace is decided
//! on the file a request would touch, not on the text of its path.
//!
//! A repository can commit `docs/notes.md -> ~/.bashrc`: by its text the path is inside the
//! workspace, but reading it reads the person's shell profile and writing it changes it. The
//! engine does no IO and cannot follow a link itself, so before it decides anything about a path
//! (a read, a write, a command's cwd, a mentioned file, the rules and the mode on a permission
//! request) it asks the host to resolve the path and the workspace's folders
//! ([`HostAction::ResolvePaths`]: the longest part that exists through `realpath`, the rest
//! appended as written) and holds the request until the answer comes
//! ([`AcpClient::handle_paths_resolved`]). What the path leads to is then classified with
//! [`Workspace::resolve`] against where the folders lead: a link that leaves the workspace is
//! outside, and a link to another file inside is that file (a rule on `secrets/**` holds through
//! it).
//!
//! Every decision resolves its paths afresh: a link can be changed at any time, so an answer is
//! not trusted for later requests. The last answer for each path is remembered only to show and
//! audit the tool calls that name it. Files are then read and written at the path resolved, so a
//! link swapped after the decision does not redirect them.
//!
//! What is deliberately absent: the places a tool call points at for "Follow the agent" are
//! checked by their text only. Following opens a file in the person's own editor and sends
//! nothing to the agent.

use std::collections::BTreeMap;

use crate::host_api::{HostAction, ResolvedPath};
use crate::jsonrpc::RequestId;
use crate::permissions::RequestPath;
use crate::workspace_path::Workspace;

use super::{AcpClient, PermissionKey};

/// How many resolved paths are remembered for showing tool calls; past that the memory starts
/// afresh (each decision resolves its own paths anyway).
const REMEMBERED_PATHS: usize = 4096;

/// The links side of one [`AcpClient`].
#[derive(Debug)]
pub(super) struct Links {
    /// Where each path (absolute, normalised by its text) led when it was last resolved.
    leads_to: BTreeMap<String, Result<String, String>>,
    /// The workspace at the roots its folders led to when they were last resolved.
    resolved: Option<Workspace>,
    /// What waits for each resolution in flight, and the paths it asked about (absolute,
    /// normalised by their text), in the order the answer gives them.
    waiting: BTreeMap<u64, (Vec<String>, Waiting)>,
    next: u64,
}

impl Links {
    pub(super) fn new(first_id: u64) -> Links {
        Links { leads_to: BTreeMap::new(), resolved: None, waiting: BTreeMap::new(), next: first_id }
    }
}

/// A request held until its paths are resolved.
#[derive(Debug)]
pub(super) enum Waiting {
    /// `fs/read_text_file`.
    Read { request: RequestId, path: String, start: u64, limit: Option<u64> },
    /// `fs/write_text_file`.
    Write { request: RequestId, path: String, content: String },
    /// `terminal/create` with a `cwd`.
    Run { request: RequestId, gate: super::terminal::RunGate },
    /// A permission request, to be put to the rules and the mode (its card is already shown).
    Decide { key: PermissionKey },
    /// A file a held prompt mentions, to be embedded in block `block`.
    Mention { prompt: u64, block: usize, path: String },
}

/// A path as the agent named it and where it leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Target {
    /// Absolute, normalised by its text.
    pub(super) named: String,
    /// Where it leads: `named` through every link, absolute. `named` itself when the host could
    /// not resolve it.
    pub(super) leads_to: String,
    /// Inside or outside the workspace, by where it leads; outside when it could not be
    /// resolved (Tether cannot tell, so the person is asked).
    pub(super) place: RequestPath,
}

impl Target {
    /// `docs/notes.md → /home/me/.bashrc` when the path leads elsewhere, else the path: how the
    /// person sees it on a card. Paths inside the workspace are shown by their names in it.
    pub(super) fn shown(&self, workspace: &Workspace) -> String {
        let named = workspace.label(&self.named);
        if self.leads_to == self.named {
            return named;
        }
        let leads_to = match &self.place {
            RequestPath::Inside(relative) => relative.clone(),
            RequestPath::Outside(absolute) => absolute.clone(),
        };
        format!("{named} → {leads_to}")
    }

    /// Whether the path goes through a link (or could not be resolved).
    pub(super) fn is_link(&self) -> bool {
        self.leads_to != self.named
    }

    pub(super) fn is_outside(&self) -> bool {
        matches!(self.place, RequestPath::Outside(_))
    }
}

impl AcpClient {
    /// `path` (absolute, or relative to the agent's folder) made absolute and normalised by its
    /// text.
    pub(super) fn named_path(&self, path: &str) -> String {
        self.workspace.absolute(path)
    }

    /// Has the host resolve `paths` (as the agent named them) and the workspace's folders, then goes on
    /// with `then` ([`AcpClient::handle_paths_resolved`]). With no path to resolve it goes on at
    /// once.
    pub(super) fn resolve_then(&mut self, paths: Vec<String>, then: Waiting) {
        if paths.is_empty() {
            self.go_on(then);
            return;
        }
        let resolve = self.links.next;
        self.links.next += 1;
        let mut named: Vec<String> = Vec::with_capacity(paths.len());
        for path in paths {
            let path = self.named_path(&path);
            if !named.contains(&path) {
                named.push(path);
            }
        }
        self.links.waiting.insert(resolve, (named.clone(), then));
        let roots = self.workspace.roots().map(str::to_owned).collect();
        self.host(HostAction::ResolvePaths { resolve, roots, paths: named });
    }

    /// The host's answer to a [`HostAction::ResolvePaths`]: where the folders and each path lead,
    /// in the order asked. The request that waited for it goes on.
    pub fn handle_paths_resolved(
        &mut self,
        resolve: u64,
        roots: Vec<ResolvedPath>,
        paths: Vec<ResolvedPath>,
        now: u64,
    ) {
        self.now = now;
        let Some((named, then)) = self.links.waiting.remove(&resolve) else {
            // An answer for a client that was replaced, or one given twice: nothing waits for it.
            return;
        };
        // A folder that could not be resolved is taken by its text.
        let roots = roots.into_iter().map(|root| match root {
            ResolvedPath::Found { path } => Some(path),
            ResolvedPath::Failed { .. } => None,
        });
        self.links.resolved = Some(self.workspace.at_roots(roots));
        if self.links.leads_to.len() + named.len() > REMEMBERED_PATHS {
            self.links.leads_to.clear();
        }
        let mut answers = paths.into_iter();
        for path in named {
            let leads_to = match answers.next() {
                Some(ResolvedPath::Found { path }) => Ok(path),
                Some(ResolvedPath::Failed { message }) => Err(message),
                None => Err("the host did not say where it leads".to_owned()),
            };
            self.links.leads_to.insert(path, leads_to);
        }
        self.go_on(then);
    }

    /// Where `path` (as the agent named it) leads, as the host last said. A path never resolved
    /// is taken by its text: only tool calls being shown or audited can name one, never a
    /// decision.
    pub(super) fn target(&self, path: &str) -> Target {
        let named = self.named_path(path);
        let resolved = self.links.resolved.as_ref().unwrap_or(&self.workspace);
        match self.links.leads_to.get(&named) {
            Some(Ok(leads_to)) => Target { place: resolved.resolve(leads_to), leads_to: leads_to.clone(), named },
            Some(Err(_)) => Target { place: RequestPath::Outside(named.clone()), leads_to: named.clone(), named },
            None => {
                // A path the host gave back (where another path leads) is already resolved: it is
                // inside when it is under where a folder leads.
                let mut place = self.workspace.resolve(&named);
                if let (RequestPath::Outside(_), Some(resolved)) = (&place, &self.links.resolved)
                    && let inside @ RequestPath::Inside(_) = resolved.resolve(&named)
                {
                    place = inside;
                }
                Target { place, leads_to: named.clone(), named }
            }
        }
    }

    /// Inside or outside the workspace, by where `path` leads.
    pub(super) fn place(&self, path: &str) -> RequestPath {
        self.target(path).place
    }

    fn go_on(&mut self, then: Waiting) {
        match then {
            Waiting::Read { request, path, start, limit } => self.read_resolved(request, &path, start, limit),
            Waiting::Write { request, path, content } => self.write_resolved(request, &path, content),
            Waiting::Run { request, gate } => self.run_resolved(request, gate),
            Waiting::Decide { key } => self.decide_resolved(key),
            Waiting::Mention { prompt, block, path } => self.mention_resolved(prompt, block, path),
        }
    }
}
