//! A network with search as a player (`best`, `latest`, `model:PATH`), and the classical
//! rollout MCTS player (`mcts:SIMS`). Both keep their tree between moves.

use std::path::Path;

use anyhow::Result;

use crate::games::{Game, Move};
use crate::nn::{Net, Shape};
use crate::players::{rng_from_seed, Agent, Rng64};
use crate::search::mcts::{
    search, LeafEvaluator, MctsConfig, NetEvaluator, RolloutEvaluator, Tree,
};

/// Leaves evaluated together per network call when one game searches alone.
const PLAY_BATCH: usize = 8;

/// Tree search with some leaf evaluator, as a player.
pub struct SearchAgent<G: Game, E: LeafEvaluator<G>> {
    eval: E,
    tree: Tree<G>,
    sims: u32,
    batch: usize,
    rng: Rng64,
    /// Plies at the start of a game chosen by visit-proportional sampling, so games differ.
    random_plies: u32,
    /// Print the search's estimate and top moves after each move (for `zero play`).
    verbose: bool,
}

impl<G: Game, E: LeafEvaluator<G>> SearchAgent<G, E> {
    pub fn new(eval: E, sims: u32, batch: usize, config: MctsConfig) -> Self {
        SearchAgent {
            eval,
            tree: Tree::new(G::new(), config),
            sims: sims.max(1),
            batch: batch.max(1),
            rng: rng_from_seed(0),
            random_plies: 0,
            verbose: false,
        }
    }
    pub fn with_random_plies(mut self, plies: u32) -> Self {
        self.random_plies = plies;
        self
    }
    pub fn with_verbose(mut self, verbose: bool) -> Self {
        self.verbose = verbose;
        self
    }

    fn report(&self, pos: &G) {
        let value = self.tree.root_value();
        let mut kids = self.tree.root_children();
        kids.sort_by_key(|k| std::cmp::Reverse(k.1));
        let total: u32 = kids.iter().map(|k| k.1).sum::<u32>().max(1);
        let top: Vec<String> = kids
            .iter()
            .take(3)
            .map(|k| {
                format!(
                    "{} ({:.0}%)",
                    pos.format_move(k.0),
                    100.0 * k.1 as f32 / total as f32
                )
            })
            .collect();
        eprintln!(
            "model: value {value:+.2} for itself (expected score {:.0}%, draws half), top moves {}",
            50.0 * (value + 1.0),
            top.join(", ")
        );
    }
}

impl<G: Game, E: LeafEvaluator<G> + Send> Agent<G> for SearchAgent<G, E> {
    fn new_game(&mut self, seed: u64) {
        self.rng = rng_from_seed(seed);
        self.eval.reseed(crate::games::mix64(seed));
        self.tree.reset(G::new());
    }
    fn choose(&mut self, pos: &G) -> Result<Move> {
        if self.tree.root_pos() != pos {
            self.tree.reset(pos.clone());
        }
        search(
            &mut self.tree,
            &mut self.eval,
            self.sims,
            self.batch,
            &mut self.rng,
        )?;
        let temperature = if (pos.ply() as u32) < self.random_plies {
            1.0
        } else {
            0.0
        };
        let m = self.tree.pick_move(temperature, &mut self.rng)?;
        if self.verbose {
            self.report(pos);
        }
        Ok(m)
    }
    fn observe(&mut self, before: &G, m: Move) {
        if self.tree.root_pos() == before {
            self.tree.advance(m);
        } else {
            let mut next = before.clone();
            next.play(m);
            self.tree.reset(next);
        }
    }
}

/// A network player loaded from `path`.
pub fn net_agent<G: Game>(
    path: &Path,
    sims: u32,
    random_plies: u32,
    verbose: bool,
) -> Result<SearchAgent<G, NetEvaluator<Net>>> {
    let net = Net::load(path, G::NAME, Shape::of::<G>(), crate::nn::default_device())?;
    Ok(SearchAgent::new(
        NetEvaluator::new(net),
        sims,
        PLAY_BATCH,
        MctsConfig::default(),
    )
    .with_random_plies(random_plies)
    .with_verbose(verbose))
}

/// The classical MCTS player: random playouts, uniform priors.
pub fn rollout_agent<G: Game>(sims: u32) -> SearchAgent<G, RolloutEvaluator> {
    let config = MctsConfig {
        // UCT-like exploration with uniform priors, no first-play penalty.
        c_puct: 2.5,
        fpu_reduction: 0.0,
        ..MctsConfig::default()
    };
    SearchAgent::new(
        RolloutEvaluator {
            rng: rng_from_seed(1),
        },
        sims,
        1,
        config,
    )
}
