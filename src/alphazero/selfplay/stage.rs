//! The self-play stage: the iteration's missing games played with `best`, on the run's files.

use std::ops::Range;

use anyhow::Result;

use super::play::self_play_shard;
use super::records::read_iteration;
use super::stats::{GameResults, SelfPlayStats};
use crate::alphazero::config::RunConfig;
use crate::alphazero::run::best::ensure_best;
use crate::alphazero::run::paths::RunPaths;
use crate::games::Game;
use crate::nn::{default_device, Net, Shape};

/// Plays the iteration's missing self-play games with `best` (of the whole iteration, or of
/// the chunks that `shard` names). The games and positions returned are the whole stage's,
/// those written by earlier, interrupted processes included (a shard's: this process's); the
/// throughput figures (network evaluations, batches, cache) are this process's, plus those of
/// `elsewhere`, shards played by other processes (a cluster's).
pub fn stage_self_play<G: Game>(
    cfg: &RunConfig,
    paths: &RunPaths,
    iteration: u32,
    shard: Option<Range<u64>>,
    elsewhere: Option<&SelfPlayStats>,
    progress: bool,
) -> Result<SelfPlayStats> {
    ensure_best::<G>(cfg, paths)?;
    let net = Net::load(&paths.best(), G::NAME, Shape::of::<G>(), default_device())?
        .with_precision(cfg.net.precision);
    let whole_stage = shard.is_none();
    let mut stats = self_play_shard::<G>(cfg, net, iteration, &paths.data, shard, progress)?;
    if let Some(shards) = elsewhere {
        stats.add_shards(shards);
    }
    if whole_stage {
        let games = read_iteration(&paths.data, G::NAME, G::NUM_ACTIONS, iteration)?;
        stats.games = games.len() as u64;
        stats.positions = games.iter().map(|g| g.moves.len() as u64).sum();
        stats.results = Some(GameResults::count(games.iter().map(|g| g.outcome)));
    }
    Ok(stats)
}
