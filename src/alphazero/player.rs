//! A network with tree search as a player (`best`, `latest`, `model:PATH`).

use std::path::Path;

use anyhow::Result;

use super::net_evaluator::NetEvaluator;
use crate::games::Game;
use crate::nn::{default_device, Net, Shape};
use crate::search::agent::SearchAgent;
use crate::search::mcts::MctsConfig;

/// Leaves evaluated together per network call when one game searches alone.
const PLAY_BATCH: usize = 8;

/// The network player loaded from `path`: `sims` simulations a move, the first
/// `random_plies` plies sampled by visits (so that games differ), greedy after.
pub fn net_agent<G: Game>(
    path: &Path,
    sims: u32,
    random_plies: u32,
) -> Result<SearchAgent<G, NetEvaluator<Net>>> {
    let net = Net::load(path, G::NAME, Shape::of::<G>(), default_device())?;
    Ok(SearchAgent::new(
        NetEvaluator::new(net),
        sims,
        PLAY_BATCH,
        MctsConfig::default(),
    )
    .with_random_plies(random_plies))
}
