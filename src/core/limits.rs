//! The largest counts a person may ask for where a count sizes memory or threads up front: the
//! games of a match or of an iteration, simulations, threads, batches. Each is far above any
//! preset and any run that would end in a day, and far below what would exhaust a machine's
//! memory before the first game: a count past one is refused by name at once, instead of an
//! allocation failure and an abort. docs/configuration.md lists them.

use anyhow::{bail, Result};

/// Games of a match (`zero arena --games`, the evaluation and benchmark matches) or of an
/// iteration's self-play: each game's result is kept until the end.
pub const MAX_GAMES: u64 = 10_000_000;
/// Simulations of one move's search (`--sims`, `mcts:SIMS`, the run's `sims`): a search keeps
/// a node a simulation.
pub const MAX_SIMS: u64 = 10_000_000;
/// Threads, workers and games played in lockstep: each has players, trees or a batch slot.
pub const MAX_THREADS: u64 = 4096;
/// Positions of one training batch, or positions searched again per iteration, or asked of an
/// evaluation set.
pub const MAX_POSITIONS: u64 = 100_000_000;
/// Positions of one training batch: its input planes are allocated at once.
pub const MAX_BATCH: u64 = 1 << 20;
/// Iterations in a replay window: their games are read into memory together.
pub const MAX_WINDOW: u64 = 10_000;

/// `n` itself, or an error naming `what` (an option or a setting) and the limit.
pub fn at_most(what: &str, n: u64, limit: u64) -> Result<u64> {
    if n > limit {
        bail!("{what} {n} is more than the {} allowed", with_commas(limit));
    }
    Ok(n)
}

/// `10000000` as `10,000,000`.
pub fn with_commas(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_past_its_limit_is_refused_by_name() {
        assert_eq!(at_most("--games", MAX_GAMES, MAX_GAMES).unwrap(), MAX_GAMES);
        let e = at_most("--games", 1_000_000_000_000, MAX_GAMES).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--games 1000000000000 is more than the 10,000,000 allowed"
        );
        assert_eq!(with_commas(999), "999");
        assert_eq!(with_commas(1000), "1,000");
    }
}
