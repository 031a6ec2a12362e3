//! A network with tree search as a player (`best`, `latest`, `model:PATH`).

use std::path::Path;

use anyhow::Result;

use super::net_evaluator::NetEvaluator;
use crate::agent::Agent;
use crate::alphazero::config::RunConfig;
use crate::core::threads::default_threads;
use crate::games::Game;
use crate::nn::{default_device, Evaluator, InferenceNet, InferenceServer, Net, Precision, Shape};
use crate::search::agent::SearchAgent;
use crate::search::mcts::PlaySearch;

/// Leaves evaluated together per network call when one game searches alone.
const PLAY_BATCH: usize = 8;

/// The network player loaded from `path`: `sims` simulations a move of the `search`, the
/// first `random_plies` plies sampled (so that games differ), the best move after; the
/// network computing in `precision`.
pub fn net_agent<G: Game>(
    path: &Path,
    sims: u32,
    random_plies: u32,
    search: PlaySearch,
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
    search: PlaySearch,
    symmetries: bool,
) -> SearchAgent<G, NetEvaluator<E>> {
    let eval = NetEvaluator::new(net);
    let eval = if symmetries {
        eval.averaging_symmetries::<G>()
    } else {
        eval
    };
    SearchAgent::new(eval, sims, PLAY_BATCH, search.config()).with_random_plies(random_plies)
}

/// One network's players for the threads of a stage's match or grading. On a CPU each player
/// loads a folded copy of its own (no thread waits for another). On a GPU one inference thread
/// owns the network and merges the players' requests into batches: with a copy a thread, each
/// thread would send the GPU forwards of a few positions.
pub struct StageNet<'a> {
    path: &'a Path,
    search: PlaySearch,
    precision: Precision,
    server: Option<InferenceServer>,
}

impl<'a> StageNet<'a> {
    /// The network of `path` for up to `threads` players at once.
    pub fn open<G: Game>(
        path: &'a Path,
        search: PlaySearch,
        precision: Precision,
        threads: usize,
    ) -> Result<StageNet<'a>> {
        let served = default_device() != tch::Device::Cpu;
        Self::open_as::<G>(path, search, precision, threads, served)
    }

    /// The same, served by an inference thread or not, whatever the device.
    fn open_as<G: Game>(
        path: &'a Path,
        search: PlaySearch,
        precision: Precision,
        threads: usize,
        served: bool,
    ) -> Result<StageNet<'a>> {
        let server = if served {
            let device = default_device();
            let net = Net::load(path, G::NAME, Shape::of::<G>(), device)?.with_precision(precision);
            let max_batch = threads.max(1) * PLAY_BATCH;
            Some(InferenceServer::start(InferenceNet::new(&net)?, max_batch))
        } else {
            None
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

/// The network of `path` for a stage's match threads, searching as `cfg.mcts` says (its search
/// and Gumbel's value scale; no noise) and computing in `cfg.precision`.
pub(in crate::alphazero) fn stage_net<'a, G: Game>(
    cfg: &RunConfig,
    path: &'a Path,
) -> Result<StageNet<'a>> {
    let search = PlaySearch {
        kind: cfg.mcts.search,
        gumbel_value_scale: cfg.mcts.gumbel_value_scale,
    };
    StageNet::open::<G>(path, search, cfg.net.precision, default_threads())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arena::{play_match_games, MatchOptions};
    use crate::games::Connect4;
    use crate::nn::Arch;
    use crate::search::mcts::SearchKind;

    /// The GPU's way, one inference thread serving every match thread, run here on the CPU:
    /// one player at a time sends the batches a copy of its own would compute, so its moves
    /// and analyses are the copy's exactly; several threads at once finish their match.
    #[test]
    fn a_served_network_plays_as_its_own_copy_does() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("net.safetensors");
        let (arch, shape) = (Arch::resnet(1, 8), Shape::of::<Connect4>());
        Net::new_seeded("connect4", arch, shape, default_device(), 7)
            .unwrap()
            .save(&path)
            .unwrap();
        let puct = PlaySearch::new(SearchKind::Puct);
        let open =
            |served| StageNet::open_as::<Connect4>(&path, puct, Precision::F32, 2, served).unwrap();
        let (copies, served) = (open(false), open(true));
        assert!(copies.server.is_none() && served.server.is_some());
        let (mut own, mut shared) = (
            copies.player::<Connect4>(24, 0).unwrap(),
            served.player::<Connect4>(24, 0).unwrap(),
        );
        for moves in ["", "4", "4453", "44444432"] {
            let position = Connect4::parse_position(moves).unwrap();
            own.new_game(1);
            shared.new_game(1);
            assert_eq!(
                own.choose(&position).unwrap(),
                shared.choose(&position).unwrap(),
                "{moves}"
            );
            let (a, b) = (own.analysis().unwrap(), shared.analysis().unwrap());
            assert_eq!((a.value, &a.moves), (b.value, &b.moves), "{moves}");
        }
        let opts = MatchOptions {
            games: 8,
            seed: 3,
            threads: 2,
            progress: false,
            opening_plies: 2,
        };
        let values = play_match_games::<Connect4>(
            &|| served.player::<Connect4>(8, 2),
            &|| copies.player::<Connect4>(8, 2),
            0..8,
            &opts,
        )
        .unwrap();
        assert_eq!(values.len(), 8);
    }
}
