//! Tree search with some leaf evaluator as a player ([`SearchAgent`]), and the classical
//! rollout MCTS player (`mcts:SIMS`). The tree is kept between moves.

use anyhow::Result;

use super::mcts::{search_until, LeafEvaluator, MctsConfig, RolloutEvaluator, Tree};
use crate::agent::{Agent, Analysis};
use crate::core::rng::{mix64, rng_from_seed, Rng64};
use crate::core::stop::Stop;
use crate::games::{Game, Move};

/// Tree search with some leaf evaluator, as a player.
pub struct SearchAgent<G: Game, E: LeafEvaluator<G>> {
    eval: E,
    tree: Tree<G>,
    sims: u32,
    batch: usize,
    rng: Rng64,
    /// Plies at the start of a game chosen by visit-proportional sampling, so games differ.
    random_plies: u32,
    /// The search behind the last move, for [`Agent::analysis`].
    last: Option<Analysis>,
    /// Raised: the search plays its best move so far.
    stop: Option<Stop>,
}

impl<G: Game, E: LeafEvaluator<G>> SearchAgent<G, E> {
    /// `sims` simulations a move, evaluating up to `batch` leaves at once.
    pub fn new(eval: E, sims: u32, batch: usize, config: MctsConfig) -> Self {
        SearchAgent {
            eval,
            tree: Tree::new(G::new(), config),
            sims: sims.max(1),
            batch: batch.max(1),
            rng: rng_from_seed(0),
            random_plies: 0,
            last: None,
            stop: None,
        }
    }
    pub fn with_random_plies(mut self, plies: u32) -> Self {
        self.random_plies = plies;
        self
    }

    /// The search behind the move: its value and each move's share of the search's policy
    /// (visits, or the proven wins when there are some), most played first.
    fn summarize(&self) -> Analysis {
        let policy = self.tree.policy();
        let mut moves: Vec<(Move, f32)> = self
            .tree
            .root_children()
            .iter()
            .map(|k| (k.0, policy[k.0 as usize]))
            .collect();
        moves.sort_by(|a, b| b.1.total_cmp(&a.1));
        Analysis {
            value: self.tree.root_value(),
            visits: self.tree.root_visits(),
            moves,
        }
    }
}

impl<G: Game, E: LeafEvaluator<G> + Send> Agent<G> for SearchAgent<G, E> {
    fn new_game(&mut self, seed: u64) {
        self.rng = rng_from_seed(seed);
        self.eval.reseed(mix64(seed));
        self.tree.reset(G::new());
        self.last = None;
    }
    fn choose(&mut self, pos: &G) -> Result<Move> {
        if self.tree.root_pos() != pos {
            self.tree.reset(pos.clone());
        }
        search_until(
            &mut self.tree,
            &mut self.eval,
            self.sims,
            self.batch,
            &mut self.rng,
            self.stop.as_ref(),
        )?;
        let temperature = if (pos.ply() as u32) < self.random_plies {
            1.0
        } else {
            0.0
        };
        let m = self.tree.pick_move(temperature, &mut self.rng)?;
        self.last = Some(self.summarize());
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
    fn analysis(&self) -> Option<Analysis> {
        self.last.clone()
    }
    fn set_stop(&mut self, stop: Stop) {
        self.stop = Some(stop);
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::TicTacToe;

    #[test]
    fn the_analysis_describes_the_search_behind_the_move() {
        let mut agent = rollout_agent::<TicTacToe>(400);
        assert!(agent.analysis().is_none());
        agent.new_game(3);
        // X to move wins at once in the top right corner.
        let pos = TicTacToe::parse_position("1427").unwrap();
        let m = agent.choose(&pos).unwrap();
        let a = agent.analysis().unwrap();
        assert_eq!(a.visits, 400);
        assert_eq!(a.moves[0].0, m);
        assert!((a.moves.iter().map(|x| x.1).sum::<f32>() - 1.0).abs() < 1e-5);
        assert!(a.moves.windows(2).all(|w| w[0].1 >= w[1].1));
        assert!(a.value > 0.5, "a won position: {}", a.value);
        agent.new_game(4);
        assert!(agent.analysis().is_none());
    }

    #[test]
    fn a_raised_stop_plays_the_best_move_found_so_far() {
        let mut agent = rollout_agent::<TicTacToe>(50_000);
        let stop = Stop::new();
        agent.set_stop(stop.clone());
        agent.new_game(3);
        stop.raise();
        // Even the shortest search finds a legal move, and says how little it searched.
        let pos = TicTacToe::new();
        let m = agent.choose(&pos).unwrap();
        assert!(pos.is_legal(m));
        let a = agent.analysis().unwrap();
        assert!(a.visits < 50_000 && a.visits >= 2, "{} visits", a.visits);
        // Cleared, the next search runs to its number of simulations.
        stop.clear();
        agent.new_game(3);
        agent.choose(&pos).unwrap();
        assert_eq!(agent.analysis().unwrap().visits, 50_000);
    }
}
