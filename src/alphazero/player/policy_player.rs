//! The network alone as a player (`--sims 0`): it plays the move its policy head likes best,
//! with no search, so that the network itself can be graded and compared with search.

use std::path::Path;

use anyhow::{bail, Result};
use rand::Rng;

use super::net_evaluator::NetEvaluator;
use crate::agent::{Agent, Analysis};
use crate::core::rng::{rng_from_seed, Rng64};
use crate::games::{Game, Move};
use crate::nn::{default_device, Evaluator, InferenceNet, Net, Precision, Shape};
use crate::search::mcts::LeafEvaluator;

/// The network alone as a player, on any evaluator (a network of its own by default).
pub struct PolicyAgent<E = InferenceNet> {
    eval: NetEvaluator<E>,
    rng: Rng64,
    /// Plies at the start of a game sampled in proportion to the policy, so games differ.
    random_plies: u32,
    last: Option<Analysis>,
}

/// The network of `path`, computing in `precision`, as a player without search.
pub fn policy_agent<G: Game>(
    path: &Path,
    random_plies: u32,
    precision: Precision,
) -> Result<PolicyAgent> {
    let net =
        Net::load(path, G::NAME, Shape::of::<G>(), default_device())?.with_precision(precision);
    Ok(PolicyAgent::new(InferenceNet::new(&net)?, random_plies))
}

impl<E: Evaluator> PolicyAgent<E> {
    /// The network behind `net` as a player without search.
    pub fn new(net: E, random_plies: u32) -> Self {
        PolicyAgent {
            eval: NetEvaluator::new(net),
            rng: rng_from_seed(0),
            random_plies,
            last: None,
        }
    }

    /// The same player on the network's answers averaged over the game's symmetries.
    pub fn averaging_symmetries<G: Game>(mut self) -> Self {
        self.eval = self.eval.averaging_symmetries::<G>();
        self
    }

    /// The policy over the legal moves (renormalised, best first) and the value, for the mover.
    fn read<G: Game>(&mut self, pos: &G) -> Result<Analysis> {
        let mut policy = vec![0.0; G::NUM_ACTIONS];
        let mut value = [0.0];
        LeafEvaluator::<G>::evaluate(
            &mut self.eval,
            std::slice::from_ref(pos),
            &mut policy,
            &mut value,
        )?;
        let legal = pos.legal_moves();
        let total: f32 = legal.iter().map(|&m| policy[m as usize].max(0.0)).sum();
        let mut moves: Vec<(Move, f32)> = legal
            .iter()
            .map(|&m| {
                let p = if total > 0.0 {
                    policy[m as usize].max(0.0) / total
                } else {
                    1.0 / legal.len() as f32
                };
                (m, p)
            })
            .collect();
        moves.sort_by(|a, b| b.1.total_cmp(&a.1));
        Ok(Analysis {
            value: value[0],
            visits: 0,
            moves,
        })
    }

    /// A move drawn in proportion to its prior.
    fn sample(&mut self, moves: &[(Move, f32)]) -> Move {
        let mut x: f32 = self.rng.random();
        for &(m, p) in moves {
            if x < p {
                return m;
            }
            x -= p;
        }
        moves[0].0
    }
}

impl<G: Game, E: Evaluator + Send> Agent<G> for PolicyAgent<E> {
    fn new_game(&mut self, seed: u64) {
        self.rng = rng_from_seed(seed);
        self.last = None;
    }
    fn choose(&mut self, pos: &G) -> Result<Move> {
        let analysis = self.read(pos)?;
        let Some(&(best, top)) = analysis.moves.first() else {
            bail!("no legal move: the game is over");
        };
        let m = if (pos.ply() as u32) < self.random_plies {
            self.sample(&analysis.moves)
        } else {
            // Among equal priors, one at random.
            let tied: Vec<Move> = analysis
                .moves
                .iter()
                .take_while(|x| x.1 == top)
                .map(|x| x.0)
                .collect();
            if tied.len() > 1 {
                tied[self.rng.random_range(0..tied.len())]
            } else {
                best
            }
        };
        self.last = Some(analysis);
        Ok(m)
    }
    fn analysis(&self) -> Option<Analysis> {
        self.last.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::TicTacToe;
    use crate::nn::Arch;

    #[test]
    fn it_plays_the_highest_legal_prior() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("net.safetensors");
        let shape = Shape::of::<TicTacToe>();
        let arch = Arch::resnet(1, 8);
        let net = Net::new_seeded("tictactoe", arch, shape, default_device(), 3).unwrap();
        net.save(&path).unwrap();
        let mut agent = policy_agent::<TicTacToe>(&path, 0, Precision::F32).unwrap();
        for position in ["", "5", "51", "519"] {
            let pos = TicTacToe::parse_position(position).unwrap();
            let mut input = vec![0.0; TicTacToe::input_size()];
            pos.encode(&mut input);
            let (mut policy, mut value) = (vec![0.0; 9], [0.0]);
            net.evaluate(&input, 1, &mut policy, &mut value).unwrap();
            let expected = pos
                .legal_moves()
                .into_iter()
                .max_by(|&a, &b| policy[a as usize].total_cmp(&policy[b as usize]))
                .unwrap();
            assert_eq!(
                Agent::<TicTacToe>::choose(&mut agent, &pos).unwrap(),
                expected
            );
            let a = Agent::<TicTacToe>::analysis(&agent).unwrap();
            assert_eq!(a.moves.len(), pos.legal_moves().len());
            assert!((a.moves.iter().map(|m| m.1).sum::<f32>() - 1.0).abs() < 1e-5);
            assert!((a.value - value[0]).abs() < 1e-6);
        }
    }
}
