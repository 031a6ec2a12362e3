//! What a self-play stage did: its throughput figures, merged over workers and shards, and
//! how its games ended.

use serde::{Deserialize, Serialize};

/// What a self-play run did (a shard's, as `zero selfplay --games-from --json` prints it, is
/// read back to merge the shards' figures).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SelfPlayStats {
    pub games: u64,
    pub positions: u64,
    pub seconds: f64,
    /// Positions sent to the network.
    pub nn_evals: u64,
    pub batches: u64,
    pub cache_hits: u64,
    /// Leaves that needed a value (network or cache).
    pub leaves: u64,
    /// Seconds the inference thread spent in forward passes.
    pub forward_seconds: f64,
    /// Batches of each size the network saw (index = size).
    #[serde(skip, default)]
    pub batch_sizes: Vec<u64>,
    /// On a GPU, the inference threads that served the workers (the setting clamped to the
    /// workers this run had, themselves no more than its chunks); none on a CPU.
    #[serde(skip, default)]
    pub inference_threads: Option<usize>,
    /// How the whole stage's games ended (counted from its files; absent for a shard).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub results: Option<GameResults>,
}

/// How self-play games ended, for the first player. A run whose games swing between mostly
/// draws and mostly first-player wins is still changing its mind about the opening; in
/// Connect Four, perfect play wins for the first player.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameResults {
    pub first_player_wins: u64,
    pub draws: u64,
    pub second_player_wins: u64,
}

impl GameResults {
    /// The results of games whose outcomes for the first player are `outcomes` (1, 0, -1).
    pub fn count(outcomes: impl IntoIterator<Item = i8>) -> GameResults {
        let mut r = GameResults::default();
        for o in outcomes {
            match o.signum() {
                1 => r.first_player_wins += 1,
                0 => r.draws += 1,
                _ => r.second_player_wins += 1,
            }
        }
        r
    }

    /// The shares of first-player wins, draws and second-player wins, in whole percent, as
    /// the report and the stage's line show them: rounded by largest remainder, so that they
    /// add up to 100 (1/1/1 games: 34/33/33, not 33/33/33); none played: 0/0/0.
    pub fn percentages(&self) -> [f64; 3] {
        let counts = [self.first_player_wins, self.draws, self.second_player_wins];
        let n: u64 = counts.iter().sum();
        if n == 0 {
            return [0.0; 3];
        }
        // In integers, so that equal shares tie exactly.
        let mut whole = counts.map(|k| 100 * k / n);
        let remainder = counts.map(|k| 100 * k % n);
        let missing = 100 - whole.iter().sum::<u64>();
        let mut by_remainder = [0, 1, 2];
        // Stable: of equal remainders, the earlier share gets the point.
        by_remainder.sort_by_key(|&i| std::cmp::Reverse(remainder[i]));
        for &i in by_remainder.iter().take(missing as usize) {
            whole[i] += 1;
        }
        whole.map(|w| w as f64)
    }
}

impl SelfPlayStats {
    pub fn positions_per_s(&self) -> f64 {
        self.positions as f64 / self.seconds.max(1e-9)
    }
    pub fn nn_evals_per_s(&self) -> f64 {
        self.nn_evals as f64 / self.seconds.max(1e-9)
    }
    pub fn mean_batch(&self) -> f64 {
        self.nn_evals as f64 / self.batches.max(1) as f64
    }
    pub fn cache_hit_rate(&self) -> f64 {
        self.cache_hits as f64 / self.leaves.max(1) as f64
    }
    /// Adds the figures of shards played elsewhere: their games and positions are counted
    /// from the files, their seconds are the processes' (so the rates are per process).
    pub fn add_shards(&mut self, shards: &SelfPlayStats) {
        self.merge(shards);
        self.seconds += shards.seconds;
        self.forward_seconds += shards.forward_seconds;
    }
    pub(super) fn merge(&mut self, o: &SelfPlayStats) {
        self.positions += o.positions;
        self.nn_evals += o.nn_evals;
        self.batches += o.batches;
        self.cache_hits += o.cache_hits;
        self.leaves += o.leaves;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shares(first: u64, draws: u64, second: u64) -> [f64; 3] {
        GameResults {
            first_player_wins: first,
            draws,
            second_player_wins: second,
        }
        .percentages()
    }

    #[test]
    fn percentages_add_up_to_100() {
        assert_eq!(shares(1, 1, 1), [34.0, 33.0, 33.0]);
        // Rounded each on its own these were 17/17/67: 101.
        assert_eq!(shares(1, 1, 4), [17.0, 17.0, 66.0]);
        assert_eq!(shares(600, 144, 456), [50.0, 12.0, 38.0]);
        assert_eq!(shares(0, 7, 0), [0.0, 100.0, 0.0]);
        assert_eq!(shares(0, 0, 0), [0.0, 0.0, 0.0]);
        for (a, b, c) in [(1, 2, 3), (5, 5, 1), (333, 333, 334), (2, 3, 1195)] {
            assert_eq!(shares(a, b, c).iter().sum::<f64>(), 100.0, "{a}/{b}/{c}");
        }
    }
}
