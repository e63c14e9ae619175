//! Delivery of agent events to the connected hosts: every authenticated connection gets every
//! event, in order, and while no host is connected the events wait in a bounded backlog.
//!
//! A window reload closes the host's connection and opens a new one a few seconds later; agents
//! keep talking meanwhile. Whatever they print in between is kept here and handed to the next
//! host that says `hello`, before any live event, so the conversation has no hole in it.
//!
//! Memory stays bounded without dropping anything: each connection has a queue bounded in bytes
//! ([`QUEUE_BUDGET_BYTES`]), the backlog is bounded in events and bytes ([`BACKLOG_MAX_EVENTS`],
//! [`BACKLOG_MAX_BYTES`]), and a publisher that finds no room waits. The waiting publisher is the
//! task reading an agent's stdout, so a slow host (or a long absence) slows the agent down through
//! its stdout pipe instead of growing tetherd.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};

/// How many bytes of events may wait in one connection's queue before publishers wait.
pub const QUEUE_BUDGET_BYTES: usize = 8 * 1024 * 1024;

/// Every queued event is charged this much on top of its length, so that a flood of tiny events
/// is bounded too (their bookkeeping costs memory even when their text does not).
const PER_EVENT_OVERHEAD_BYTES: usize = 64;

/// The most events the backlog keeps while no host is connected.
pub const BACKLOG_MAX_EVENTS: usize = 8192;

/// The most bytes of events the backlog keeps while no host is connected. One event larger than
/// this (an agent line may be up to the configured maximum) is still accepted into an empty
/// backlog, so no event is ever too big to wait.
pub const BACKLOG_MAX_BYTES: usize = 64 * 1024 * 1024;

/// Identifies one connection to the fan-out.
pub type ConnectionId = u64;

/// Where tetherd is in its life, as far as delivering events goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Normal operation: publishers wait for room.
    Running,
    /// Shutting down, agents being killed: their last events are still delivered where there is
    /// room, but nobody waits for room (a host that stopped reading must not hold up the exit),
    /// and events with no host to go to are dropped.
    Closing,
    /// The end: connections write what is queued and close.
    Closed,
}

/// One line on its way to one host, holding its share of that connection's queue budget until
/// it has been written.
#[derive(Debug)]
pub struct Queued {
    pub line: Arc<str>,
    _budget: Option<OwnedSemaphorePermit>,
}

/// The sending side of one connection's queue. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Outbox {
    id: ConnectionId,
    queue: mpsc::UnboundedSender<Queued>,
    budget: Arc<Semaphore>,
}

/// The receiving side of one connection's queue, owned by the task writing to the socket.
#[derive(Debug)]
pub struct Inbox {
    queue: mpsc::UnboundedReceiver<Queued>,
    budget: Arc<Semaphore>,
}

/// The connection a queue belongs to is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Disconnected;

/// A new queue for connection `id`.
pub fn queue(id: ConnectionId) -> (Outbox, Inbox) {
    let (sender, receiver) = mpsc::unbounded_channel();
    let budget = Arc::new(Semaphore::new(QUEUE_BUDGET_BYTES));
    (Outbox { id, queue: sender, budget: budget.clone() }, Inbox { queue: receiver, budget })
}

impl Outbox {
    /// Queues `line`, waiting while the connection's queue is over its budget.
    pub async fn send(&self, line: Arc<str>) -> Result<(), Disconnected> {
        let permit = self.budget.clone().acquire_many_owned(cost_of(&line)).await.map_err(|_| Disconnected)?;
        self.push(line, Some(permit))
    }

    /// Queues `line` only if the budget has room right now.
    fn try_send(&self, line: Arc<str>) -> Result<(), Disconnected> {
        let permit = self.budget.clone().try_acquire_many_owned(cost_of(&line)).map_err(|_| Disconnected)?;
        self.push(line, Some(permit))
    }

    fn push(&self, line: Arc<str>, budget: Option<OwnedSemaphorePermit>) -> Result<(), Disconnected> {
        self.queue.send(Queued { line, _budget: budget }).map_err(|_| Disconnected)
    }
}

impl Inbox {
    /// The next line to write; `None` once the queue is closed and empty.
    pub async fn recv(&mut self) -> Option<Queued> {
        self.queue.recv().await
    }

    /// The next line to write if one is queued already; `None` without waiting otherwise.
    pub fn try_recv(&mut self) -> Option<Queued> {
        self.queue.try_recv().ok()
    }

    /// Refuses further lines; the ones already queued can still be received.
    pub fn close(&mut self) {
        self.queue.close();
        self.budget.close();
    }

    /// Takes every line still queued, without waiting.
    fn drain(&mut self) -> Vec<Arc<str>> {
        let mut lines = Vec::new();
        while let Ok(queued) = self.queue.try_recv() {
            lines.push(queued.line);
        }
        lines
    }
}

impl Drop for Inbox {
    fn drop(&mut self) {
        // Publishers waiting for budget on a connection that is gone must give up rather than
        // wait forever.
        self.budget.close();
    }
}

/// A line's charge against a connection's queue budget.
fn cost_of(line: &str) -> u32 {
    let cost = (line.len() + PER_EVENT_OVERHEAD_BYTES).min(QUEUE_BUDGET_BYTES);
    u32::try_from(cost).expect("the queue budget fits in u32")
}

/// Events kept while no host is connected.
#[derive(Debug, Default)]
struct Backlog {
    lines: VecDeque<Arc<str>>,
    bytes: usize,
}

impl Backlog {
    fn has_room_for(&self, line: &str) -> bool {
        self.lines.is_empty() || (self.lines.len() < BACKLOG_MAX_EVENTS && self.bytes + line.len() <= BACKLOG_MAX_BYTES)
    }

    fn push_back(&mut self, line: Arc<str>) {
        self.bytes += line.len();
        self.lines.push_back(line);
    }

    /// Puts lines that were queued for a host that left back at the front, in their order. They
    /// were published before anything already in the backlog.
    fn push_front_all(&mut self, lines: Vec<Arc<str>>) {
        for line in lines.into_iter().rev() {
            self.bytes += line.len();
            self.lines.push_front(line);
        }
    }

    fn take(&mut self) -> VecDeque<Arc<str>> {
        self.bytes = 0;
        std::mem::take(&mut self.lines)
    }
}

#[derive(Debug, Default)]
struct State {
    hosts: Vec<Outbox>,
    backlog: Backlog,
}

/// The fan-out itself; one per tetherd.
#[derive(Debug)]
pub struct Fanout {
    state: Mutex<State>,
    /// How many hosts are attached. Publishers waiting for backlog room wait for it to change, and
    /// the server's grace timer watches it.
    hosts_attached: watch::Sender<usize>,
    phase: watch::Sender<Phase>,
}

impl Default for Fanout {
    fn default() -> Self {
        Self::new()
    }
}

impl Fanout {
    pub fn new() -> Self {
        Self {
            state: Mutex::default(),
            hosts_attached: watch::Sender::new(0),
            phase: watch::Sender::new(Phase::Running),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is a list and a queue, each left consistent by every critical section, so a
        // panic elsewhere while the lock was held does not make it unusable.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Watches the number of attached hosts.
    pub fn watch_hosts(&self) -> watch::Receiver<usize> {
        self.hosts_attached.subscribe()
    }

    /// Watches the phase.
    pub fn watch_phase(&self) -> watch::Receiver<Phase> {
        self.phase.subscribe()
    }

    pub fn set_phase(&self, phase: Phase) {
        self.phase.send_replace(phase);
    }

    fn phase(&self) -> Phase {
        *self.phase.borrow()
    }

    /// Starts delivering events to `outbox`: first the backlog, then every event published from
    /// now on.
    pub fn attach(&self, outbox: Outbox) {
        let mut state = self.lock();
        for line in state.backlog.take() {
            // The backlog was bounded when it filled, so it goes in past the budget; a connection
            // that is already gone simply does not get it, and the next host will not either,
            // which is the same as this host having read and lost it.
            if outbox.push(line, None).is_err() {
                break;
            }
        }
        state.hosts.push(outbox);
        let count = state.hosts.len();
        drop(state);
        self.hosts_attached.send_replace(count);
    }

    /// Stops delivering to connection `id` (if it was attached). If it was the last host, the
    /// lines still queued for it, after `unwritten` (the lines of a write that failed, in order),
    /// go back to the front of the backlog for the next host.
    pub fn detach(&self, id: ConnectionId, inbox: &mut Inbox, unwritten: impl IntoIterator<Item = Arc<str>>) {
        let mut state = self.lock();
        let before = state.hosts.len();
        state.hosts.retain(|outbox| outbox.id != id);
        let count = state.hosts.len();
        // Closing the inbox under the lock means no publisher can slip a line into it after the
        // drain: a send that loses the race fails and is retried against the new state.
        inbox.close();
        let mut lines: Vec<Arc<str>> = unwritten.into_iter().collect();
        lines.extend(inbox.drain());
        if count == 0 && self.phase() == Phase::Running && !lines.is_empty() {
            state.backlog.push_front_all(lines);
        }
        drop(state);
        if count != before {
            self.hosts_attached.send_replace(count);
        }
    }

    /// Delivers one event to every attached host, or to the backlog when none is attached,
    /// waiting for room when needed (see the module documentation).
    pub async fn publish(&self, line: String) {
        let line: Arc<str> = line.into();
        let mut hosts_changed = self.hosts_attached.subscribe();
        let mut phase = self.phase.subscribe();
        loop {
            let hosts = {
                let mut state = self.lock();
                if state.hosts.is_empty() {
                    if self.phase() != Phase::Running {
                        return;
                    }
                    if state.backlog.has_room_for(&line) {
                        state.backlog.push_back(line);
                        return;
                    }
                    // Mark the current count as seen while holding the lock, so an attach that
                    // happens right after it is not missed.
                    hosts_changed.borrow_and_update();
                    None
                } else {
                    Some(state.hosts.clone())
                }
            };
            let Some(hosts) = hosts else {
                tokio::select! {
                    _ = hosts_changed.changed() => {}
                    _ = phase.wait_for(|phase| *phase != Phase::Running) => {}
                }
                continue;
            };
            let mut delivered = false;
            for outbox in &hosts {
                let sent = if self.phase() == Phase::Running {
                    tokio::select! {
                        sent = outbox.send(line.clone()) => sent,
                        // Shutdown began while waiting for room: try once more without waiting.
                        _ = phase.wait_for(|phase| *phase != Phase::Running) => {
                            outbox.try_send(line.clone())
                        }
                    }
                } else {
                    outbox.try_send(line.clone())
                };
                delivered |= sent.is_ok();
            }
            if delivered || self.phase() != Phase::Running {
                return;
            }
            // Every host went away while this event was on its way: deliver it to whoever is
            // there now, or to the backlog.
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// Gives spawned tasks (on the test's single-threaded runtime) every chance to run as far as
    /// they can before the test looks at them.
    async fn let_other_tasks_run() {
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
    }

    async fn receive_all(inbox: &mut Inbox) -> Vec<String> {
        let mut lines = Vec::new();
        while let Ok(Some(queued)) = tokio::time::timeout(Duration::ZERO, inbox.recv()).await {
            lines.push(queued.line.to_string());
        }
        lines
    }

    #[tokio::test]
    async fn events_published_with_no_host_reach_the_next_host_first_and_in_order() {
        let fanout = Fanout::new();
        fanout.publish("one".into()).await;
        fanout.publish("two".into()).await;
        let (outbox, mut inbox) = queue(1);
        outbox.send("hello result".into()).await.expect("the inbox is open");
        fanout.attach(outbox);
        fanout.publish("three".into()).await;
        assert_eq!(receive_all(&mut inbox).await, ["hello result", "one", "two", "three"]);
    }

    #[tokio::test]
    async fn every_attached_host_gets_every_event() {
        let fanout = Fanout::new();
        let (first, mut first_inbox) = queue(1);
        let (second, mut second_inbox) = queue(2);
        fanout.attach(first);
        fanout.attach(second);
        fanout.publish("event".into()).await;
        assert_eq!(receive_all(&mut first_inbox).await, ["event"]);
        assert_eq!(receive_all(&mut second_inbox).await, ["event"]);
    }

    #[tokio::test]
    async fn lines_queued_for_the_last_host_go_back_to_the_backlog_when_it_leaves() {
        let fanout = Fanout::new();
        let (outbox, mut inbox) = queue(1);
        fanout.attach(outbox);
        fanout.publish("written".into()).await;
        fanout.publish("failed".into()).await;
        fanout.publish("queued".into()).await;
        // The writer took two lines; the write of the second one failed.
        assert_eq!(inbox.recv().await.map(|queued| queued.line.to_string()).as_deref(), Some("written"));
        let failed = inbox.recv().await.map(|queued| queued.line);
        fanout.detach(1, &mut inbox, failed);
        assert_eq!(*fanout.watch_hosts().borrow(), 0);
        fanout.publish("later".into()).await;

        let (next, mut next_inbox) = queue(2);
        fanout.attach(next);
        assert_eq!(receive_all(&mut next_inbox).await, ["failed", "queued", "later"]);
    }

    #[tokio::test]
    async fn the_lines_of_a_write_that_failed_go_back_before_those_still_queued() {
        let fanout = Fanout::new();
        let (outbox, mut inbox) = queue(1);
        fanout.attach(outbox);
        for line in ["first", "second", "third", "queued"] {
            fanout.publish(line.into()).await;
        }
        // The writer took three lines for one write, which failed.
        let batch: Vec<Arc<str>> = [inbox.try_recv(), inbox.try_recv(), inbox.try_recv()]
            .into_iter()
            .map(|queued| queued.expect("queued").line)
            .collect();
        fanout.detach(1, &mut inbox, batch);

        let (next, mut next_inbox) = queue(2);
        fanout.attach(next);
        assert_eq!(receive_all(&mut next_inbox).await, ["first", "second", "third", "queued"]);
    }

    #[tokio::test]
    async fn a_full_backlog_makes_the_publisher_wait_for_a_host_instead_of_dropping() {
        let fanout = Arc::new(Fanout::new());
        for n in 0..BACKLOG_MAX_EVENTS {
            fanout.publish(n.to_string()).await;
        }
        let publisher = tokio::spawn({
            let fanout = fanout.clone();
            async move { fanout.publish("one too many".into()).await }
        });
        let_other_tasks_run().await;
        assert!(!publisher.is_finished(), "the publisher must wait while the backlog is full");

        let (outbox, mut inbox) = queue(1);
        fanout.attach(outbox);
        tokio::time::timeout(Duration::from_secs(20), publisher)
            .await
            .expect("the publisher goes on once a host is attached")
            .expect("the publisher does not panic");
        let lines = receive_all(&mut inbox).await;
        assert_eq!(lines.len(), BACKLOG_MAX_EVENTS + 1);
        assert_eq!(lines.first().map(String::as_str), Some("0"));
        assert_eq!(lines.last().map(String::as_str), Some("one too many"));
    }

    #[tokio::test]
    async fn a_host_that_stops_reading_slows_the_publisher_down() {
        let fanout = Arc::new(Fanout::new());
        let (outbox, mut inbox) = queue(1);
        fanout.attach(outbox);
        let big = "x".repeat(QUEUE_BUDGET_BYTES / 4);
        let publisher = tokio::spawn({
            let fanout = fanout.clone();
            async move {
                for _ in 0..8 {
                    fanout.publish(big.clone()).await;
                }
            }
        });
        let_other_tasks_run().await;
        assert!(!publisher.is_finished(), "eight quarter-budgets cannot all be queued at once");
        let mut received = 0;
        while received < 8 {
            inbox.recv().await.expect("the publisher still holds the fan-out");
            received += 1;
        }
        tokio::time::timeout(Duration::from_secs(20), publisher)
            .await
            .expect("reading makes room for the rest")
            .expect("the publisher does not panic");
    }

    #[tokio::test]
    async fn shutdown_releases_a_publisher_waiting_for_backlog_room() {
        let fanout = Arc::new(Fanout::new());
        for n in 0..BACKLOG_MAX_EVENTS {
            fanout.publish(n.to_string()).await;
        }
        let publisher = tokio::spawn({
            let fanout = fanout.clone();
            async move { fanout.publish("stuck".into()).await }
        });
        let_other_tasks_run().await;
        assert!(!publisher.is_finished(), "the publisher must wait while the backlog is full");
        fanout.set_phase(Phase::Closing);
        tokio::time::timeout(Duration::from_secs(20), publisher)
            .await
            .expect("shutdown releases the publisher")
            .expect("the publisher does not panic");
    }
}
