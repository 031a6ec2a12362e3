//! A network with tree search as a player (`best`, `latest`, `model:PATH`).

use std::path::Path;

use anyhow::Result;

use super::net_evaluator::NetEvaluator;
use crate::agent::Agent;
use crate::games::Game;
use crate::nn::{default_device, Evaluator, InferenceNet, InferenceServer, Net, Precision, Shape};
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

/// One network's players for the threads of a stage's match or grading. On a CPU each player
/// loads a folded copy of its own (no thread waits for another). On a GPU one inference thread
/// owns the network and merges the players' requests into batches: with a copy a thread, each
/// of 16 threads sent the GPU forwards of a few positions, and the evaluation was the gpu
/// preset's longest stage (docs/gpu.md).
pub struct StageNet<'a> {
    path: &'a Path,
    search: SearchKind,
    precision: Precision,
    server: Option<InferenceServer>,
}

impl<'a> StageNet<'a> {
    /// The network of `path` for up to `threads` players at once.
    pub fn open<G: Game>(
        path: &'a Path,
        search: SearchKind,
        precision: Precision,
        threads: usize,
    ) -> Result<StageNet<'a>> {
        let device = default_device();
        let server = if device == tch::Device::Cpu {
            None
        } else {
            let net = Net::load(path, G::NAME, Shape::of::<G>(), device)?.with_precision(precision);
            let max_batch = threads.max(1) * PLAY_BATCH;
            Some(InferenceServer::start(InferenceNet::new(&net)?, max_batch))
        };
        Ok(StageNet {
            path,
            search,
            precision,
            server,
        })
    }

    /// A player: `sims` simulations a move, the first `random_plies` plies sampled.
    pub fn player<G: Game>(&self, sims: u32, random_plies: u32) -> Result<Box<dyn Agent<G>>> {
        Ok(match &self.server {
            Some(server) => Box::new(search_player::<G, _>(
                server.client()?,
                sims,
                random_plies,
                self.search,
                false,
            )),
            None => Box::new(net_agent::<G>(
                self.path,
                sims,
                random_plies,
                self.search,
                self.precision,
            )?),
        })
    }
}
