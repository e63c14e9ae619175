//! Myers' O(ND) difference algorithm over interned tokens (lines or words), with a step budget
//! instead of a clock.
//!
//! `similar` has a good Myers, but the only way to bound it is a deadline made of
//! `std::time::Instant`, which panics on `wasm32-unknown-unknown`, and its `DiffHook` is only
//! called once the search is over, so a hook cannot stop it either. This is the linear-space
//! variant from Myers' paper (section 4b, the "middle snake"), which finds a shortest edit script
//! unless the budget runs out. When it does, each region not yet resolved is left as a plain
//! replacement: the edit script is longer than necessary but still exact, which is all that
//! applying and reverting need.

use std::ops::Range;

/// Counts the comparison steps a diff may still take. One step is one diagonal visited or one
/// token pair compared; a step costs a few nanoseconds natively and somewhat more in WASM.
#[derive(Debug)]
pub(crate) struct Meter {
    left: u64,
    exhausted: bool,
}

impl Meter {
    pub(crate) fn new(max_steps: u64) -> Self {
        Self { left: max_steps, exhausted: false }
    }

    /// Takes `steps` from the budget. The work is already done when this is called, so the
    /// budget can be overrun by one round of the search; the caller stops at its next check.
    fn charge(&mut self, steps: u64) {
        match self.left.checked_sub(steps) {
            Some(left) => self.left = left,
            None => {
                self.left = 0;
                self.exhausted = true;
            }
        }
    }

    /// Whether some part of a diff was given up and left as a coarse replacement.
    pub(crate) fn exhausted(&self) -> bool {
        self.exhausted
    }

    /// Records that a caller degraded a result for budget reasons of its own (for example a
    /// line too long to split into words).
    pub(crate) fn give_up(&mut self) {
        self.exhausted = true;
    }

    /// An upper bound on the edit distance the search can reach before the budget is spent:
    /// round `d` of the search costs at least `2 * (d + 1)` steps, so `d` stays below
    /// `sqrt(max_steps)`. The search vectors are sized by this rather than by the input, which
    /// keeps memory small for huge inputs.
    fn max_reachable_d(&self) -> usize {
        usize::try_from(self.left.isqrt()).unwrap_or(usize::MAX).saturating_add(2)
    }
}

/// A run of `len` equal tokens at `old` in the old sequence and `new` in the new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    pub(crate) old: usize,
    pub(crate) new: usize,
    pub(crate) len: usize,
}

/// The equal runs of a (shortest, unless the budget ran out) edit script from `old` to `new`,
/// in ascending order. Everything between two runs is a change.
///
/// Before searching, the common prefix and suffix are cut off and tokens that do not occur in
/// the other sequence at all are set aside (as GNU diff and git do): they can never be part of
/// a common subsequence, so this keeps the result minimal while a full rewrite, whose lines are
/// mostly new, costs almost nothing.
pub(crate) fn common_runs(old: &[u32], new: &[u32], meter: &mut Meter) -> Vec<Run> {
    let mut runs = Runs::default();
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..].iter().rev().zip(new[prefix..].iter().rev()).take_while(|(a, b)| a == b).count();
    runs.push(0, 0, prefix);

    let old_mid = prefix..old.len() - suffix;
    let new_mid = prefix..new.len() - suffix;
    if !old_mid.is_empty() && !new_mid.is_empty() {
        let ids = old[old_mid.clone()].iter().chain(&new[new_mid.clone()]).max().map_or(0, |&max| max as usize + 1);
        let mut in_old = vec![false; ids];
        let mut in_new = vec![false; ids];
        old[old_mid.clone()].iter().for_each(|&t| in_old[t as usize] = true);
        new[new_mid.clone()].iter().for_each(|&t| in_new[t as usize] = true);
        let old_kept: Vec<usize> = old_mid.filter(|&i| in_new[old[i] as usize]).collect();
        let new_kept: Vec<usize> = new_mid.filter(|&j| in_old[new[j] as usize]).collect();
        let old_tokens: Vec<u32> = old_kept.iter().map(|&i| old[i]).collect();
        let new_tokens: Vec<u32> = new_kept.iter().map(|&j| new[j]).collect();

        let mut inner = Runs::default();
        let mut search = Search::new(&old_tokens, &new_tokens, meter);
        search.conquer(0..old_tokens.len(), 0..new_tokens.len(), &mut inner);
        // Runs of the reduced sequences map back token by token, since set-aside tokens may
        // sit inside them; `Runs::push` joins what is still contiguous.
        for run in inner.0 {
            for t in 0..run.len {
                runs.push(old_kept[run.old + t], new_kept[run.new + t], 1);
            }
        }
    }
    runs.push(old.len() - suffix, new.len() - suffix, suffix);
    runs.0
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

struct Search<'a> {
    old: &'a [u32],
    new: &'a [u32],
    meter: &'a mut Meter,
    /// Furthest x reached on each diagonal k, forward from the top left, at `offset + k`.
    forward: Vec<usize>,
    /// The same backward from the bottom right, x counted from the end.
    backward: Vec<usize>,
    offset: isize,
    /// The largest `d` the vectors have room for.
    d_limit: usize,
}

impl<'a> Search<'a> {
    fn new(old: &'a [u32], new: &'a [u32], meter: &'a mut Meter) -> Self {
        let d_limit = ((old.len() + new.len()).div_ceil(2) + 1).min(meter.max_reachable_d());
        let size = 2 * d_limit + 4;
        Self { old, new, meter, forward: vec![0; size], backward: vec![0; size], offset: d_limit as isize + 2, d_limit }
    }

    fn conquer(&mut self, mut old: Range<usize>, mut new: Range<usize>, runs: &mut Runs) {
        let prefix = self.old[old.clone()].iter().zip(&self.new[new.clone()]).take_while(|(a, b)| a == b).count();
        runs.push(old.start, new.start, prefix);
        old.start += prefix;
        new.start += prefix;
        let suffix = self.old[old.clone()]
            .iter()
            .rev()
            .zip(self.new[new.clone()].iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        old.end -= suffix;
        new.end -= suffix;

        // With one side empty the region is a pure insertion or deletion. With the budget spent it
        // stays one replacement: no run is pushed for it.
        if !old.is_empty()
            && !new.is_empty()
            && !self.meter.exhausted()
            && let Some((x, y)) = self.middle_snake(old.clone(), new.clone())
        {
            // The split always lies strictly inside the region (the paper's lemma 3 with the
            // prefix and suffix trimmed); the check only guards against endless recursion.
            let inside = (x, y) != (old.start, new.start) && (x, y) != (old.end, new.end);
            debug_assert!(inside, "middle snake split at a corner");
            if inside {
                self.conquer(old.start..x, new.start..y, runs);
                self.conquer(x..old.end, y..new.end, runs);
            }
        }
        runs.push(old.end, new.end, suffix);
    }

    /// A point on a shortest edit path through the region, splitting its edit distance in
    /// halves; `None` when the budget ran out first.
    fn middle_snake(&mut self, old: Range<usize>, new: Range<usize>) -> Option<(usize, usize)> {
        let (n, m) = (old.len(), new.len());
        let delta = n as isize - m as isize;
        let odd = delta & 1 == 1;
        let at = |k: isize, offset: isize| (k + offset) as usize;
        let offset = self.offset;
        self.forward[at(1, offset)] = 0;
        self.backward[at(1, offset)] = 0;

        let d_max = ((n + m).div_ceil(2) + 1).min(self.d_limit);
        for d in 0..d_max as isize {
            self.meter.charge(2 * (d as u64 + 1));
            if self.meter.exhausted() {
                return None;
            }

            let mut k = -d;
            while k <= d {
                let fwd = &self.forward;
                let mut x = if k == -d || (k != d && fwd[at(k - 1, offset)] < fwd[at(k + 1, offset)]) {
                    fwd[at(k + 1, offset)]
                } else {
                    fwd[at(k - 1, offset)] + 1
                };
                let mut y = (x as isize - k) as usize;
                let (x0, y0) = (x, y);
                while x < n && y < m && self.old[old.start + x] == self.new[new.start + y] {
                    x += 1;
                    y += 1;
                }
                self.meter.charge((x - x0) as u64);
                self.forward[at(k, offset)] = x;
                if odd && (k - delta).abs() < d && x + self.backward[at(delta - k, offset)] >= n {
                    return Some((old.start + x0, new.start + y0));
                }
                k += 2;
            }

            let mut k = -d;
            while k <= d {
                let bwd = &self.backward;
                let mut x = if k == -d || (k != d && bwd[at(k - 1, offset)] < bwd[at(k + 1, offset)]) {
                    bwd[at(k + 1, offset)]
                } else {
                    bwd[at(k - 1, offset)] + 1
                };
                let mut y = (x as isize - k) as usize;
                let x0 = x;
                while x < n && y < m && self.old[old.start + n - x - 1] == self.new[new.start + m - y - 1] {
                    x += 1;
                    y += 1;
                }
                self.meter.charge((x - x0) as u64);
                self.backward[at(k, offset)] = x;
                if !odd && (k - delta).abs() <= d && x + self.forward[at(delta - k, offset)] >= n {
                    return Some((old.start + n - x, new.start + m - y));
                }
                k += 2;
            }
        }
        // Either the budget's bound on `d` was reached or, in theory never, the loop ended.
        self.meter.give_up();
        None
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
        assert!(!meter.exhausted());

        let mut meter = Meter::new(0);
        let runs = common_runs(&old, &new, &mut meter);
        assert_eq!(runs, vec![]);
        assert!(meter.exhausted());
    }
}
