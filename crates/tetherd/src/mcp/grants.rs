//! The MCP tokens: one per agent, each naming the agent whose tools it opens and the workspace
//! folders they may read.
//!
//! A token is 32 random bytes from the operating system, in hex. It is compared in constant
//! time, and it stops working once its agent has exited: it travelled in the agent's
//! `session/new`, which the session's log keeps.

use std::sync::{Arc, Mutex, MutexGuard};

use subtle::ConstantTimeEq;
use tether_core::sidecar::AgentId;

use super::workspace_tools::WorkspaceRoots;

/// What a token opens.
#[derive(Debug)]
pub struct Grant {
    pub agent_id: AgentId,
    pub roots: WorkspaceRoots,
}

/// The tokens given out by this tetherd.
#[derive(Debug, Default)]
pub struct Grants {
    granted: Mutex<Vec<(String, Arc<Grant>)>>,
}

impl Grants {
    fn lock(&self) -> MutexGuard<'_, Vec<(String, Arc<Grant>)>> {
        // Every critical section is one push, one retain or one search.
        self.granted.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A new token for `agent_id`.
    pub fn grant(&self, agent_id: AgentId, roots: WorkspaceRoots) -> Result<String, getrandom::Error> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes)?;
        let token: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
        self.lock().push((token.clone(), Arc::new(Grant { agent_id, roots })));
        Ok(token)
    }

    /// The grant `token` opens, if it opens one and `is_live` says its agent still runs. Every
    /// token is compared (in constant time), so the answer takes as long whichever matches.
    pub fn check(&self, token: &str, is_live: impl Fn(AgentId) -> bool) -> Option<Arc<Grant>> {
        let mut granted = self.lock();
        granted.retain(|(_, grant)| is_live(grant.agent_id));
        let mut found = None;
        for (known, grant) in granted.iter() {
            if bool::from(known.as_bytes().ct_eq(token.as_bytes())) {
                found = Some(grant.clone());
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots() -> WorkspaceRoots {
        WorkspaceRoots::new([std::env::temp_dir()]).expect("the temp folder exists")
    }

    #[test]
    fn a_token_opens_its_own_agent_while_it_lives() {
        let grants = Grants::default();
        let first = grants.grant(1, roots()).expect("random bytes");
        let second = grants.grant(2, roots()).expect("random bytes");
        assert_ne!(first, second);
        assert_eq!(first.len(), 64);
        assert_eq!(grants.check(&first, |_| true).map(|grant| grant.agent_id), Some(1));
        assert_eq!(grants.check(&second, |_| true).map(|grant| grant.agent_id), Some(2));
        assert!(grants.check("", |_| true).is_none());
        assert!(grants.check(&first[..63], |_| true).is_none());
        // Agent 1 exits: its token is dead for good, even if an agent id were ever reused.
        assert!(grants.check(&first, |agent| agent != 1).is_none());
        assert!(grants.check(&first, |_| true).is_none());
        assert_eq!(grants.check(&second, |_| true).map(|grant| grant.agent_id), Some(2));
    }
}
