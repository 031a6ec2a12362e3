//! A network with tree search as a player (`best`, `latest`, `model:PATH`).

use std::path::Path;

use anyhow::Result;

use super::net_evaluator::NetEvaluator;
use crate::games::Game;
use crate::nn::{default_device, Evaluator, InferenceNet, Net, Precision, Shape};
use crate::search::agent::SearchAgent;
use crate::search::mcts::{MctsConfig, SearchKind};

/// Leaves evaluated together per network call when one game searches alone.
const PLAY_BATCH: usize = 8;

/// The network player loaded from `path`: `sims` simulations a move of the `search`, the
/// first `random_plies` plies sampled (so that games differ), the best move after; the
/// network computing in `precision`.
pub fn net_agent<G: Game>(
    path: &Path,
    sims: u32,
    random_plies: u32,
    search: SearchKind,
    precision: Precision,
) -> Result<SearchAgent<G, NetEvaluator<InferenceNet>>> {
    let net =
        Net::load(path, G::NAME, Shape::of::<G>(), default_device())?.with_precision(precision);
    Ok(search_player(
        InferenceNet::new(&net)?,
        sims,
        random_plies,
        search,
        false,
    ))
}

/// The network player on any evaluator: a network of its own, or a client of an inference
/// thread that several players share (as `zero serve` does); with `symmetries`, the network's
/// answers averaged over the game's symmetries ([`NetEvaluator::averaging_symmetries`]).
pub fn search_player<G: Game, E: Evaluator>(
    net: E,
    sims: u32,
    random_plies: u32,
    search: SearchKind,
    symmetries: bool,
) -> SearchAgent<G, NetEvaluator<E>> {
    let eval = NetEvaluator::new(net);
    let eval = if symmetries {
        eval.averaging_symmetries::<G>()
    } else {
        eval
    };
    SearchAgent::new(
        eval,
        sims,
        PLAY_BATCH,
        MctsConfig {
            search,
            ..MctsConfig::default()
        },
    )
    .with_random_plies(random_plies)
}
