//! Myers' O(ND) difference algorithm over interned tokens (lines or words), with a step budget
//! instead of a clock, and a cheaper approximate search for what the budget cannot afford exactly.
//!
//! `similar` has a good Myers, but the only way to bound it is a deadline made of
//! `std::time::Instant`, which panics on `wasm32-unknown-unknown`, and its `DiffHook` is only
//! called once the search is over, so a hook cannot stop it either. This is the linear-space
//! variant from Myers' paper (section 4b, the "middle snake"), which finds a shortest edit script.
//!
//! Its cost grows with the square of the edit distance, so a large file with many scattered edits,
//! or one rewritten from scratch, cannot be diffed exactly in the time a host may block. The
//! exact search may therefore spend at most half of the budget (a sixteenth for what looks like a
//! rewrite, and nothing when a lower bound on the edit distance says it cannot finish); a region
//! it cannot resolve within that goes to the approximate search, which spends the rest:
//!
//! - Tokens that occur often on the other side (blank lines, lone braces) are set aside when all
//!   that surrounds them changed, as GNU diff does: in a rewrite they would only pair up the
//!   braces of unrelated code, giving hundreds of tiny hunks where the person wants one.
//! - Myers' greedy forward search runs in stretches of a fixed number of rounds; a stretch that
//!   does not reach the end settles for the point it got furthest to and keeps the path there
//!   (as git's xdiff does when a search costs too much), and the next stretch starts from it. The
//!   cost per edit stays constant instead of growing with the edit distance, and for scattered
//!   edits the result is almost always what a shortest script would be.
//!
//! Whatever the approximate search cannot afford either is left as a plain replacement. In every
//! case the edit script is exact, which is all that applying and reverting need; only its length
//! may be more than the shortest.

use std::ops::Range;

/// Counts the comparison steps a diff may still take. One step is one diagonal visited or one
/// token pair compared; a step costs a few nanoseconds natively and somewhat more in WASM.
#[derive(Debug)]
pub(crate) struct Meter {
    left: u64,
    degraded: bool,
}

impl Meter {
    pub(crate) fn new(max_steps: u64) -> Self {
        Self { left: max_steps, degraded: false }
    }

    /// Takes `steps` from the budget. The work is already done when this is called, so the
    /// budget can be overrun by one round of the search; the caller stops at its next check.
    pub(crate) fn charge(&mut self, steps: u64) {
        self.left = self.left.saturating_sub(steps);
    }

    /// Whether some part of a diff was not searched exactly, so the result may be longer than a
    /// shortest edit script (or, for words, coarser than it need be).
    pub(crate) fn degraded(&self) -> bool {
        self.degraded
    }

    /// Records that a result was degraded: by the search, or by a caller for budget reasons of
    /// its own (for example a line too long to split into words).
    pub(crate) fn give_up(&mut self) {
        self.degraded = true;
    }
}

/// A run of `len` equal tokens at `old` in the old sequence and `new` in the new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    pub(crate) old: usize,
    pub(crate) new: usize,
    pub(crate) len: usize,
}

/// The equal runs of an edit script from `old` to `new`, in ascending order; a shortest one
/// unless the meter says the result is degraded. Everything between two runs is a change.
///
/// Before searching, the common prefix and suffix are cut off and tokens that do not occur in
/// the other sequence at all are set aside (as GNU diff and git do): they can never be part of
/// a common subsequence, so this keeps the result minimal while a full rewrite, whose lines are
/// mostly new, leaves little to search.
pub(crate) fn common_runs(old: &[u32], new: &[u32], meter: &mut Meter) -> Vec<Run> {
    let mut runs = Runs::default();
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..].iter().rev().zip(new[prefix..].iter().rev()).take_while(|(a, b)| a == b).count();
    runs.push(0, 0, prefix);

    let old_mid = prefix..old.len() - suffix;
    let new_mid = prefix..new.len() - suffix;
    if !old_mid.is_empty() && !new_mid.is_empty() {
        let (old_mid, new_mid) = (&old[old_mid], &new[new_mid]);
        let counts = count_tokens(old_mid, new_mid);
        let old_side = Reduced::new(old_mid, &counts, OLD);
        let new_side = Reduced::new(new_mid, &counts, NEW);
        // The exact search may spend half of the budget. When most tokens that could match are
        // confusing ones (a rewrite, whose only common lines are braces and blank lines), a
        // shortest script would only pair those up, at great cost: it gets a sixteenth, enough
        // for small inputs. The top-level middle snake alone needs `h * (h + 1)` steps for an
        // edit distance of at least `2 * h`; when even that is past the share, the exact search
        // gives up at once and leaves everything to the approximate search.
        let confusing = old_side.confusing_count() + new_side.confusing_count();
        let share = if 2 * confusing > old_side.tokens.len() + new_side.tokens.len() {
            meter.left / 16
        } else {
            meter.left / 2
        };
        let half = distance_lower_bound(&counts).div_ceil(2) as u64;
        let floor = if half.saturating_mul(half + 1) < share { meter.left - share } else { meter.left };
        let whole = (0..old_side.tokens.len(), 0..new_side.tokens.len());
        let inner = Search::new(&old_side, &new_side, meter, floor).run(whole.0, whole.1);
        // Runs of the reduced sequences map back token by token, since set-aside tokens may
        // sit inside them; `Runs::push` joins what is still contiguous.
        for run in inner {
            for t in 0..run.len {
                runs.push(prefix + old_side.at[run.old + t], prefix + new_side.at[run.new + t], 1);
            }
        }
    }
    runs.push(old.len() - suffix, new.len() - suffix, suffix);
    runs.0
}

/// Indices into a token's counts: how often it occurs in the old and in the new sequence.
const OLD: usize = 0;
const NEW: usize = 1;

/// How often each token occurs on each side, indexed by token.
fn count_tokens(old: &[u32], new: &[u32]) -> Vec<[u32; 2]> {
    let ids = old.iter().chain(new).max().map_or(0, |&max| max as usize + 1);
    let mut counts = vec![[0u32; 2]; ids];
    old.iter().for_each(|&t| counts[t as usize][OLD] = counts[t as usize][OLD].saturating_add(1));
    new.iter().for_each(|&t| counts[t as usize][NEW] = counts[t as usize][NEW].saturating_add(1));
    counts
}

/// A lower bound on the edit distance between the two sides once tokens that occur on one side
/// only are set aside: every other token must be inserted or deleted as often as its counts on
/// the two sides differ.
fn distance_lower_bound(counts: &[[u32; 2]]) -> usize {
    counts.iter().filter(|&&[old, new]| old > 0 && new > 0).map(|&[old, new]| old.abs_diff(new) as usize).sum()
}

/// One side's tokens with those that never occur on the other side set aside, and which of the
/// rest the approximate search sets aside too.
struct Reduced {
    tokens: Vec<u32>,
    /// The index in the original side of each kept token.
    at: Vec<usize>,
    /// For each kept token: it occurs often on the other side, and the nearest tokens before and
    /// after it that do not are both ones that never occur there, so it most likely sits in
    /// changed text and would only match by chance.
    confusing: Vec<bool>,
}

impl Reduced {
    /// The reduced `side` (`OLD` or `NEW`), given both sides' `counts`.
    fn new(side_tokens: &[u32], counts: &[[u32; 2]], side: usize) -> Self {
        let other = 1 - side;
        // GNU diff's threshold for "many matches": 5, doubled for every factor of 4 by which the
        // side is longer than 64 tokens.
        let mut many = 5u32;
        let mut scale = side_tokens.len() / 64;
        while {
            scale >>= 2;
            scale > 0
        } {
            many = many.saturating_mul(2);
        }

        let len = side_tokens.len();
        let (mut tokens, mut at, mut confusing) =
            (Vec::with_capacity(len), Vec::with_capacity(len), Vec::with_capacity(len));
        // Frequent tokens wait here until the next token that is not frequent says whether the
        // run they are in is surrounded by changes. The start of the side counts as unchanged,
        // since whatever precedes the region matched.
        let mut after_change = false;
        let mut pending = 0;
        for (i, &t) in side_tokens.iter().enumerate() {
            let matches = counts[t as usize][other];
            if matches > many {
                tokens.push(t);
                at.push(i);
                confusing.push(false);
                pending += 1;
                continue;
            }
            let changed = matches == 0;
            if changed && after_change {
                let len = confusing.len();
                confusing[len - pending..].iter_mut().for_each(|flag| *flag = true);
            }
            pending = 0;
            after_change = changed;
            if !changed {
                tokens.push(t);
                at.push(i);
                confusing.push(false);
            }
        }
        Self { tokens, at, confusing }
    }
}

#[derive(Default)]
struct Runs(Vec<Run>);

impl Runs {
    fn push(&mut self, old: usize, new: usize, len: usize) {
        if len == 0 {
            return;
        }
        match self.0.last_mut() {
            Some(last) if last.old + last.len == old && last.new + last.len == new => last.len += len,
            _ => self.0.push(Run { old, new, len }),
        }
    }
}

/// Work waiting to be done, in a stack rather than by recursion, so that no input can overflow
/// WASM's small stack.
enum Work {
    Region { old: Range<usize>, new: Range<usize> },
    Run { old: usize, new: usize, len: usize },
}

/// The exact search: Myers' divide and conquer over the reduced sides.
struct Search<'a> {
    old: &'a Reduced,
    new: &'a Reduced,
    meter: &'a mut Meter,
    /// The exact search gives up when the budget left is down to this.
    floor: u64,
    /// Furthest x reached on each diagonal k, forward from the top left, at `offset + k`.
    forward: Vec<isize>,
    /// The same backward from the bottom right, x counted from the end.
    backward: Vec<isize>,
    offset: isize,
    /// The largest `d` the vectors have room for.
    d_limit: usize,
}

impl<'a> Search<'a> {
    fn new(old: &'a Reduced, new: &'a Reduced, meter: &'a mut Meter, floor: u64) -> Self {
        // Round `d` of a search costs at least `2 * (d + 1)` steps, so `d` stays below
        // `sqrt(budget)`. The vectors are sized by this rather than by the input, which keeps
        // memory small for huge inputs.
        let reachable = usize::try_from(meter.left.isqrt()).unwrap_or(usize::MAX).saturating_add(2);
        let d_limit = ((old.tokens.len() + new.tokens.len()).div_ceil(2) + 1).min(reachable);
        let size = 2 * d_limit + 4;
        Self {
            old,
            new,
            meter,
            floor,
            forward: vec![0; size],
            backward: vec![0; size],
            offset: d_limit as isize + 2,
            d_limit,
        }
    }

    /// The equal runs between `old` and `new` (ranges of the reduced sequences): exactly as far
    /// as the exact search's share of the budget goes, approximately beyond.
    fn run(&mut self, old: Range<usize>, new: Range<usize>) -> Vec<Run> {
        let mut runs = Runs::default();
        let mut stack = vec![Work::Region { old, new }];
        while let Some(work) = stack.pop() {
            let (mut old, mut new) = match work {
                Work::Run { old, new, len } => {
                    runs.push(old, new, len);
                    continue;
                }
                Work::Region { old, new } => (old, new),
            };
            let (a, b) = (&self.old.tokens[old.clone()], &self.new.tokens[new.clone()]);
            let prefix = snake(a, b);
            let suffix = snake_back(&a[prefix..], &b[prefix..]);
            runs.push(old.start, new.start, prefix);
            old = old.start + prefix..old.end - suffix;
            new = new.start + prefix..new.end - suffix;
            let suffix_run = Work::Run { old: old.end, new: new.end, len: suffix };

            // With one side empty the region is a pure insertion or deletion.
            if !old.is_empty() && !new.is_empty() {
                match self.middle_snake(old.clone(), new.clone()) {
                    Some((x, y)) => {
                        // The split lies strictly inside the region (the paper's lemma 3 with the
                        // prefix and suffix trimmed); the check only guards against endless
                        // looping.
                        let inside = (x, y) != (old.start, new.start) && (x, y) != (old.end, new.end);
                        debug_assert!(inside, "middle snake split at a corner");
                        if inside {
                            stack.push(suffix_run);
                            stack.push(Work::Region { old: x..old.end, new: y..new.end });
                            stack.push(Work::Region { old: old.start..x, new: new.start..y });
                            continue;
                        }
                        // Left as one replacement, which may not be shortest.
                        self.meter.give_up();
                    }
                    None => self.approximate(old, new, &mut runs),
                }
            }
            stack.push(suffix_run);
        }
        runs.0
    }

    /// Resolves a region the exact search gave up on: without its confusing tokens, by the
    /// approximate search.
    fn approximate(&mut self, old: Range<usize>, new: Range<usize>, runs: &mut Runs) {
        self.meter.give_up();
        let old_side = self.old.without_confusing(old);
        let new_side = self.new.without_confusing(new);
        for run in approximate_runs(&old_side.tokens, &new_side.tokens, self.meter) {
            for t in 0..run.len {
                runs.push(old_side.at[run.old + t], new_side.at[run.new + t], 1);
            }
        }
    }

    /// Myers' middle snake of a region: a point on a shortest edit path through it, splitting its
    /// edit distance in halves; `None` when the exact search's share of the budget ran out first.
    fn middle_snake(&mut self, old: Range<usize>, new: Range<usize>) -> Option<(usize, usize)> {
        let a = &self.old.tokens[old.clone()];
        let b = &self.new.tokens[new.clone()];
        let (n, m) = (a.len() as isize, b.len() as isize);
        let delta = n - m;
        let odd = delta & 1 == 1;
        let offset = self.offset;
        let (forward, backward) = (&mut self.forward, &mut self.backward);
        let at = |k: isize| (k + offset) as usize;
        forward[at(1)] = 0;
        backward[at(1)] = 0;

        let d_max = ((n + m + 1) / 2 + 1).min(self.d_limit as isize);
        for d in 0..d_max {
            if self.meter.left <= self.floor {
                return None;
            }
            let mut steps = 2 * (d as u64 + 1);

            for k in (-d..=d).step_by(2) {
                let mut x = if k == -d || (k != d && forward[at(k - 1)] < forward[at(k + 1)]) {
                    forward[at(k + 1)]
                } else {
                    forward[at(k - 1)] + 1
                };
                let y = x - k;
                let (x0, y0) = (x, y);
                if x < n && y >= 0 && y < m {
                    let len = snake(&a[x as usize..], &b[y as usize..]);
                    steps += len as u64;
                    x += len as isize;
                }
                forward[at(k)] = x;
                if odd && (k - delta).abs() < d && x + backward[at(delta - k)] >= n {
                    self.meter.charge(steps);
                    return Some((old.start + x0 as usize, new.start + y0 as usize));
                }
            }

            for k in (-d..=d).step_by(2) {
                let mut x = if k == -d || (k != d && backward[at(k - 1)] < backward[at(k + 1)]) {
                    backward[at(k + 1)]
                } else {
                    backward[at(k - 1)] + 1
                };
                let y = x - k;
                if x < n && y >= 0 && y < m {
                    let len = snake_back(&a[..(n - x) as usize], &b[..(m - y) as usize]);
                    steps += len as u64;
                    x += len as isize;
                }
                backward[at(k)] = x;
                if !odd && (k - delta).abs() <= d && x + forward[at(delta - k)] >= n {
                    self.meter.charge(steps);
                    return Some((old.start + (n - x) as usize, new.start + (m - (x - k)) as usize));
                }
            }
            self.meter.charge(steps);
        }
        // The bound the vectors have room for was reached, which the budget could not have paid
        // for anyway (or, in theory never, the searches did not meet).
        None
    }
}

/// How many rounds one stretch of the approximate search takes before it settles for the
/// furthest point reached: about `ROUNDS^2 / 2` steps per stretch, each resolving up to `ROUNDS`
/// edits.
const APPROXIMATE_ROUNDS: usize = 64;

/// A diagonal the forward search has not reached (yet).
const UNREACHED: isize = -1;

/// The approximate search: Myers' greedy forward search, in stretches of at most
/// `APPROXIMATE_ROUNDS` rounds. A stretch that does not reach the end settles for the point that
/// got furthest (as git's xdiff does when a search costs too much) and keeps the path that led
/// there, which is a shortest path to that point; the next stretch starts from it. So each edit
/// costs about `ROUNDS` steps, however many there are, and scattered edits come out as a
/// shortest script would have them. When the budget runs out, the rest is one replacement.
fn approximate_runs(a: &[u32], b: &[u32], meter: &mut Meter) -> Vec<Run> {
    let mut runs = Runs::default();
    let suffix = snake_back(a, b);
    let (n, m) = (a.len() - suffix, b.len() - suffix);
    let (mut x0, mut y0) = (0, 0);
    let mut trace = Trace::default();
    while x0 < n && y0 < m && meter.left > 0 {
        let (x, y) = greedy_stretch(&a[x0..n], &b[y0..m], meter, &mut trace, &mut |old, new, len| {
            runs.push(x0 + old, y0 + new, len);
        });
        (x0, y0) = (x0 + x, y0 + y);
    }
    runs.push(n, m, suffix);
    runs.0
}

/// The furthest x reached on each diagonal after each round of a stretch: round `d` covers the
/// diagonals `lows[d]..` up to the next round's start in `xs`.
#[derive(Default)]
struct Trace {
    xs: Vec<isize>,
    starts: Vec<usize>,
    lows: Vec<isize>,
}

impl Trace {
    fn clear(&mut self) {
        self.xs.clear();
        self.starts.clear();
        self.lows.clear();
    }

    /// Where round `d` reached on diagonal `k`.
    fn x(&self, d: usize, k: isize) -> isize {
        let (start, end) = (self.starts[d], self.starts.get(d + 1).copied().unwrap_or(self.xs.len()));
        let i = k - self.lows[d];
        if i < 0 || start + i as usize >= end { UNREACHED } else { self.xs[start + i as usize] }
    }
}

/// One stretch of the approximate search from the start of `a` and `b` (neither empty): emits
/// the equal runs of the path it settles for, in order, and returns the point that path ends at
/// (the end of both, if reached).
fn greedy_stretch(
    a: &[u32],
    b: &[u32],
    meter: &mut Meter,
    trace: &mut Trace,
    emit: &mut impl FnMut(usize, usize, usize),
) -> (usize, usize) {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let offset = APPROXIMATE_ROUNDS as isize + 1;
    let mut v = vec![UNREACHED; 2 * APPROXIMATE_ROUNDS + 3];
    trace.clear();
    // The diagonal and round of the best point so far.
    let mut best = (0, 0);
    for d in 0..APPROXIMATE_ROUNDS as isize {
        // Round 0 always runs (the caller checked the budget), so there is a point to settle for.
        if d > 0 && meter.left == 0 {
            break;
        }
        // Only the diagonals of the round's parity that stay inside the region.
        let low = if d <= m { -d } else { -m + ((d - m) & 1) };
        let high = if d <= n { d } else { n - ((d - n) & 1) };
        let mut steps = 0;
        let mut reach = None;
        let mut done = false;
        for k in (low..=high).step_by(2) {
            let i = (k + offset) as usize;
            let mut x = if d == 0 { 0 } else { step_into(v[i - 1], v[i + 1], k, n, m).0 };
            steps += 1;
            if x != UNREACHED {
                let y = x - k;
                if x < n && y < m {
                    let len = snake(&a[x as usize..], &b[y as usize..]);
                    x += len as isize;
                    steps += len as u64;
                }
                // The best point consumes the most tokens, `x + y`.
                if reach.is_none_or(|(_, most)| 2 * x - k > most) {
                    reach = Some((k, 2 * x - k));
                }
                done |= x == n && x - k == m;
            }
            v[i] = x;
        }
        trace.starts.push(trace.xs.len());
        trace.lows.push(low);
        trace.xs.extend_from_slice(&v[(low + offset) as usize..=(high + offset) as usize]);
        meter.charge(steps);
        if let Some((k, _)) = reach {
            best = (k, d as usize);
        }
        if done {
            break;
        }
    }
    backtrack(trace, best.0, best.1, n, m, emit)
}

/// Where a path reaches on diagonal `k` with one more edit, from the furthest points `right`
/// (on diagonal `k - 1`, which a deletion continues) and `down` (on `k + 1`, which an insertion
/// continues) of the round before: the larger x, insertion on a tie as in Myers' paper, and
/// which diagonal it came from; `UNREACHED` if neither move stays inside the `n` by `m` region.
fn step_into(right: isize, down: isize, k: isize, n: isize, m: isize) -> (isize, isize) {
    let deleted = if right != UNREACHED && right < n { right + 1 } else { UNREACHED };
    let inserted = if down != UNREACHED && down - (k + 1) < m { down } else { UNREACHED };
    if inserted >= deleted { (inserted, k + 1) } else { (deleted, k - 1) }
}

/// Follows the path to the furthest point of diagonal `k` in round `d` back to the start,
/// emits its equal runs in order, and returns the point.
fn backtrack(
    trace: &Trace,
    k: isize,
    d: usize,
    n: isize,
    m: isize,
    emit: &mut impl FnMut(usize, usize, usize),
) -> (usize, usize) {
    let end = (trace.x(d, k), trace.x(d, k) - k);
    let (mut k, mut x) = (k, end.0);
    let mut snakes = Vec::new();
    for d in (1..=d).rev() {
        let (from, previous_k) = step_into(trace.x(d - 1, k - 1), trace.x(d - 1, k + 1), k, n, m);
        snakes.push((from, from - k, x - from));
        x = trace.x(d - 1, previous_k);
        k = previous_k;
    }
    snakes.push((0, 0, x));
    for &(old, new, len) in snakes.iter().rev() {
        emit(old as usize, new as usize, len as usize);
    }
    (end.0 as usize, end.1 as usize)
}
/// How many tokens `a` and `b` have in common at their start.
fn snake(a: &[u32], b: &[u32]) -> usize {
    let len = a.len().min(b.len());
    let (a, b) = (&a[..len], &b[..len]);
    let mut i = 0;
    while i < len && a[i] == b[i] {
        i += 1;
    }
    i
}

/// How many tokens `a` and `b` have in common at their end.
fn snake_back(a: &[u32], b: &[u32]) -> usize {
    let len = a.len().min(b.len());
    let (a, b) = (&a[a.len() - len..], &b[b.len() - len..]);
    let mut i = len;
    while i > 0 && a[i - 1] == b[i - 1] {
        i -= 1;
    }
    len - i
}

impl Reduced {
    fn confusing_count(&self) -> usize {
        self.confusing.iter().filter(|&&confusing| confusing).count()
    }

    /// The tokens of `range` that are not confusing, with their indices in this reduced side.
    fn without_confusing(&self, range: Range<usize>) -> Reduced {
        let kept = range.filter(|&i| !self.confusing[i]);
        let (at, tokens): (Vec<usize>, Vec<u32>) = kept.map(|i| (i, self.tokens[i])).unzip();
        let confusing = vec![false; tokens.len()];
        Reduced { tokens, at, confusing }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn distance(old: &[u32], new: &[u32], runs: &[Run]) -> usize {
        old.len() + new.len() - 2 * runs.iter().map(|r| r.len).sum::<usize>()
    }

    #[test]
    fn finds_shortest_scripts_and_gives_up_when_spent() {
        let old = [1, 2, 3, 1, 2, 2, 1];
        let new = [3, 2, 1, 2, 1, 3];
        let mut meter = Meter::new(u64::MAX);
        let runs = common_runs(&old, &new, &mut meter);
        // The paper's example: the shortest edit script has five edits.
        assert_eq!(distance(&old, &new, &runs), 5);
        assert!(!meter.degraded());

        let mut meter = Meter::new(0);
        let runs = common_runs(&old, &new, &mut meter);
        assert_eq!(runs, vec![]);
        assert!(meter.degraded());
    }

    /// Checks that runs are in order, apart, and pair equal tokens.
    fn check_runs(old: &[u32], new: &[u32], runs: &[Run]) {
        let (mut old_at, mut new_at) = (0, 0);
        for run in runs {
            assert!(run.old >= old_at && run.new >= new_at, "{runs:?}");
            assert_eq!(old[run.old..run.old + run.len], new[run.new..run.new + run.len], "{runs:?}");
            (old_at, new_at) = (run.old + run.len, run.new + run.len);
        }
    }

    /// A deterministic sequence over `alphabet` tokens.
    fn sequence(len: usize, alphabet: u32, seed: u64) -> Vec<u32> {
        let mut state = seed;
        (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state % u64::from(alphabet)) as u32
            })
            .collect()
    }

    #[test]
    fn the_approximate_search_is_exact_and_shortest_within_one_stretch() {
        for seed in 1..200 {
            let old = sequence(40, 4, seed);
            let new = sequence(30 + (seed % 20) as usize, 4, seed * 7);
            let mut meter = Meter::new(u64::MAX);
            let shortest = distance(&old, &new, &common_runs(&old, &new, &mut meter));
            let mut meter = Meter::new(u64::MAX);
            let runs = approximate_runs(&old, &new, &mut meter);
            check_runs(&old, &new, &runs);
            // Fewer edits than one stretch's rounds: the stretch reaches the end by a shortest path.
            assert!(shortest < APPROXIMATE_ROUNDS);
            assert_eq!(distance(&old, &new, &runs), shortest, "seed {seed}");
        }
    }

    #[test]
    fn the_approximate_search_settles_and_stops_when_spent() {
        // Scattered changes, far more than one stretch can resolve.
        let old = sequence(5_000, 50, 3);
        let mut new = old.clone();
        for i in (0..5_000).step_by(25) {
            new[i] = 1_000 + i as u32;
        }
        let mut meter = Meter::new(u64::MAX);
        let runs = approximate_runs(&old, &new, &mut meter);
        check_runs(&old, &new, &runs);
        assert_eq!(distance(&old, &new, &runs), 2 * 200, "one replaced token per change");

        let mut meter = Meter::new(5_000);
        let runs = approximate_runs(&old, &new, &mut meter);
        check_runs(&old, &new, &runs);
        assert_eq!(meter.left, 0);
        // What was resolved before the budget ran out is kept; the rest is one replacement, and
        // the shared end is still found.
        assert!(runs.len() > 10 && runs[runs.len() - 1].old + runs[runs.len() - 1].len == old.len());
        assert!(runs[runs.len() - 2].old < old.len() / 2, "{:?}", &runs[runs.len() - 2..]);
    }

    #[test]
    fn frequent_tokens_amid_changes_are_confusing() {
        // Token 9 is frequent on the new side; 1 and 2 match once; 7 and 8 never occur there.
        let old = [7, 9, 9, 8, 1, 9, 8, 9, 2, 9, 7];
        let new = [1, 2, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9];
        let counts = count_tokens(&old, &new);
        let side = Reduced::new(&old, &counts, OLD);
        assert_eq!(side.tokens, [9, 9, 1, 9, 9, 2, 9]);
        assert_eq!(side.at, [1, 2, 4, 5, 7, 8, 9]);
        // Between 7 and 8, both changed: confusing. After 1 (which matches) or before 2: not.
        // The last one precedes a change but follows a match: not.
        assert_eq!(side.confusing, [true, true, false, false, false, false, false]);
        assert_eq!(distance_lower_bound(&counts), 10 - 5, "only the nines are unbalanced");
    }
}
