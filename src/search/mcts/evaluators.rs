//! What evaluates the search's leaves ([`LeafEvaluator`]: uniform priors, random rollouts; a
//! network elsewhere) and the [`search`] driver, which runs a tree to a number of simulations
//! with one.

use anyhow::Result;
use rand::Rng;

use super::select::Selection;
use super::tree::{Leaf, Tree};
use crate::core::rng::{rng_from_seed, Rng64};
use crate::core::stop::Stop;
use crate::games::Game;

/// Batches in a row that found no leaf to evaluate before a search gives up: only a tree whose
/// every line ends in a finished game (or waits on a pending leaf) does that so long.
const MAX_STALLED_BATCHES: u32 = 1000;

/// Evaluates positions for the search: policy (over all actions) and value for the mover.
pub trait LeafEvaluator<G: Game> {
    fn evaluate(&mut self, positions: &[G], policies: &mut [f32], values: &mut [f32])
        -> Result<()>;
    /// Restarts the evaluator's own randomness (rollouts) for a new game.
    fn reseed(&mut self, _seed: u64) {}
}

/// Uniform priors and a value of zero: measures the search alone.
pub struct UniformEvaluator;

impl<G: Game> LeafEvaluator<G> for UniformEvaluator {
    fn evaluate(
        &mut self,
        positions: &[G],
        policies: &mut [f32],
        values: &mut [f32],
    ) -> Result<()> {
        policies[..positions.len() * G::NUM_ACTIONS].fill(1.0);
        values[..positions.len()].fill(0.0);
        Ok(())
    }
}

/// Classical MCTS: uniform priors and the result of one random playout.
pub struct RolloutEvaluator {
    pub rng: Rng64,
}

impl<G: Game> LeafEvaluator<G> for RolloutEvaluator {
    fn evaluate(
        &mut self,
        positions: &[G],
        policies: &mut [f32],
        values: &mut [f32],
    ) -> Result<()> {
        policies[..positions.len() * G::NUM_ACTIONS].fill(1.0);
        for (pos, v) in positions.iter().zip(values.iter_mut()) {
            let me = pos.to_move();
            let mut p = pos.clone();
            loop {
                if let Some(o) = p.outcome() {
                    *v = o.value_for(me);
                    break;
                }
                let moves = p.legal_moves();
                p.play(moves[self.rng.random_range(0..moves.len())]);
            }
        }
        Ok(())
    }
    fn reseed(&mut self, seed: u64) {
        self.rng = rng_from_seed(seed);
    }
}

/// Runs `tree` until its root has `sims` visits, evaluating up to `batch` leaves at a time.
pub fn search<G: Game, E: LeafEvaluator<G>>(
    tree: &mut Tree<G>,
    eval: &mut E,
    sims: u32,
    batch: usize,
    rng: &mut Rng64,
) -> Result<()> {
    search_until(tree, eval, sims, batch, rng, None)
}

/// Simulations a search runs before it heeds a stop: enough that the root's moves have been
/// looked at (a root with no visited child has no move to play).
const MIN_SIMS_BEFORE_STOP: u32 = 2;

/// [`search`], ending early once `stop` is raised (looked at between batches): the tree then
/// holds fewer visits, and its best move so far is the one to play.
pub fn search_until<G: Game, E: LeafEvaluator<G>>(
    tree: &mut Tree<G>,
    eval: &mut E,
    sims: u32,
    batch: usize,
    rng: &mut Rng64,
    stop: Option<&Stop>,
) -> Result<()> {
    let stopped = |tree: &Tree<G>| {
        stop.is_some_and(Stop::is_raised) && tree.root_visits() >= MIN_SIMS_BEFORE_STOP.min(sims)
    };
    let mut leaves: Vec<Leaf<G>> = Vec::with_capacity(batch);
    let mut positions: Vec<G> = Vec::with_capacity(batch);
    let mut policies = vec![0.0; batch * G::NUM_ACTIONS];
    let mut values = vec![0.0; batch];
    tree.set_budget(sims);
    tree.noise_root_once(rng);
    let mut stalls = 0;
    while tree.root_visits() < sims && !stopped(tree) {
        leaves.clear();
        positions.clear();
        while leaves.len() < batch && tree.root_visits() < sims {
            match tree.select() {
                Selection::Leaf(l) => {
                    positions.push(l.pos.clone());
                    leaves.push(l);
                }
                Selection::Terminal => {}
                Selection::Collision => break,
            }
        }
        if leaves.is_empty() {
            // Only collisions or terminals: terminals still add visits; guard against a
            // tree with nothing left to explore.
            stalls += 1;
            if stalls > MAX_STALLED_BATCHES {
                break;
            }
            continue;
        }
        eval.evaluate(&positions, &mut policies, &mut values)?;
        for (i, l) in leaves.iter().enumerate() {
            tree.complete(
                l,
                &policies[i * G::NUM_ACTIONS..(i + 1) * G::NUM_ACTIONS],
                values[i],
            );
        }
        tree.noise_root_once(rng);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::{Connect4, TicTacToe};
    use crate::search::mcts::MctsConfig;

    #[test]
    fn finds_the_immediate_win_and_the_only_block() {
        let mut rng = rng_from_seed(1);
        // X to move can win at 3 (top row 1,2 taken).
        let pos = TicTacToe::parse_position("1427").unwrap();
        let mut tree = Tree::new(pos, MctsConfig::default());
        search(
            &mut tree,
            &mut RolloutEvaluator {
                rng: rng_from_seed(2),
            },
            400,
            1,
            &mut rng,
        )
        .unwrap();
        assert_eq!(tree.pick_move(0.0, &mut rng).unwrap(), 2);
        // Connect Four: the first player threatens column 4 vertically; the second must block.
        let pos = Connect4::parse_position("41414").unwrap();
        let mut tree = Tree::new(pos, MctsConfig::default());
        search(
            &mut tree,
            &mut RolloutEvaluator {
                rng: rng_from_seed(3),
            },
            2000,
            8,
            &mut rng,
        )
        .unwrap();
        assert_eq!(tree.pick_move(0.0, &mut rng).unwrap(), 3);
    }

    #[test]
    fn visits_add_up_and_reuse_keeps_the_subtree() {
        let mut rng = rng_from_seed(1);
        let mut tree = Tree::new(Connect4::new(), MctsConfig::default());
        search(&mut tree, &mut UniformEvaluator, 500, 4, &mut rng).unwrap();
        assert_eq!(tree.root_visits(), 500);
        let kids = tree.root_children();
        assert_eq!(kids.iter().map(|k| k.1).sum::<u32>(), 499);
        let (m, visits, _, _) = kids[3];
        tree.advance(m);
        assert_eq!(tree.root_visits(), visits);
        assert_eq!(tree.root_pos(), &Connect4::parse_position("4").unwrap());
        search(&mut tree, &mut UniformEvaluator, 600, 4, &mut rng).unwrap();
        assert_eq!(tree.root_visits(), 600);
        let p = tree.policy();
        assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    }
}
