//! The network as the search's leaf evaluator: positions are encoded into the network's input
//! and the answers handed back. This adapter is where search meets the network, so that
//! neither knows the other.
//!
//! It can also average the network over the game's symmetries (AlphaGo's evaluation averaged
//! over the board's eight): each position is evaluated as itself and as each of its images,
//! and the answers, mapped back, are averaged. The network's errors on a position and on its
//! mirror image are partly independent, so their mean errs less, at the price of one
//! evaluation per symmetry.

use anyhow::Result;

use crate::games::{Game, Symmetry};
use crate::nn::Evaluator;
use crate::search::mcts::LeafEvaluator;

/// A network (inline or through the inference thread) as a leaf evaluator.
pub struct NetEvaluator<E> {
    pub net: E,
    inputs: Vec<f32>,
    /// The symmetries averaged over, identity first; empty: the position alone.
    symmetries: Vec<Symmetry>,
    encoded: Vec<f32>,
    policies: Vec<f32>,
    values: Vec<f32>,
}

impl<E> NetEvaluator<E> {
    pub fn new(net: E) -> Self {
        NetEvaluator {
            net,
            inputs: Vec::new(),
            symmetries: Vec::new(),
            encoded: Vec::new(),
            policies: Vec::new(),
            values: Vec::new(),
        }
    }

    /// Averages every evaluation over the game's symmetries (a game with only the identity
    /// evaluates as [`NetEvaluator::new`] does).
    pub fn averaging_symmetries<G: Game>(mut self) -> Self {
        let symmetries = G::symmetries();
        self.symmetries = if symmetries.len() > 1 {
            symmetries
        } else {
            Vec::new()
        };
        self
    }
}

impl<E: Evaluator> NetEvaluator<E> {
    /// Evaluates `positions` under each symmetry in one batch and averages the answers.
    fn evaluate_averaged<G: Game>(
        &mut self,
        positions: &[G],
        policies: &mut [f32],
        values: &mut [f32],
    ) -> Result<()> {
        let (isz, a, n) = (G::input_size(), G::NUM_ACTIONS, positions.len());
        let k = self.symmetries.len();
        self.encoded.resize(isz, 0.0);
        self.inputs.resize(k * n * isz, 0.0);
        for (i, p) in positions.iter().enumerate() {
            p.encode(&mut self.encoded);
            for (s, sym) in self.symmetries.iter().enumerate() {
                let at = (s * n + i) * isz;
                sym.apply_planes(&self.encoded, &mut self.inputs[at..at + isz]);
            }
        }
        self.policies.resize(k * n * a, 0.0);
        self.values.resize(k * n, 0.0);
        self.net
            .evaluate(&self.inputs, k * n, &mut self.policies, &mut self.values)?;
        policies[..n * a].fill(0.0);
        values[..n].fill(0.0);
        let share = 1.0 / k as f32;
        for (s, sym) in self.symmetries.iter().enumerate() {
            for i in 0..n {
                let image = &self.policies[(s * n + i) * a..(s * n + i + 1) * a];
                // The image's answer for action `sym.actions[m]` is the position's for `m`.
                for m in 0..a {
                    policies[i * a + m] += share * image[sym.actions[m]];
                }
                values[i] += share * self.values[s * n + i];
            }
        }
        Ok(())
    }
}

impl<G: Game, E: Evaluator> LeafEvaluator<G> for NetEvaluator<E> {
    fn evaluate(
        &mut self,
        positions: &[G],
        policies: &mut [f32],
        values: &mut [f32],
    ) -> Result<()> {
        if !self.symmetries.is_empty() {
            return self.evaluate_averaged(positions, policies, values);
        }
        let isz = G::input_size();
        self.inputs.resize(positions.len() * isz, 0.0);
        for (i, p) in positions.iter().enumerate() {
            p.encode(&mut self.inputs[i * isz..(i + 1) * isz]);
        }
        self.net
            .evaluate(&self.inputs, positions.len(), policies, values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::{Connect4, TicTacToe};
    use crate::nn::Shape;

    /// A stand-in network with no symmetry at all: its answers depend on where the stones are
    /// and on the actions' numbers.
    struct Lopsided<G>(std::marker::PhantomData<G>);

    impl<G: Game> Evaluator for Lopsided<G> {
        fn shape(&self) -> Shape {
            Shape::of::<G>()
        }
        fn evaluate(
            &mut self,
            inputs: &[f32],
            n: usize,
            policies: &mut [f32],
            values: &mut [f32],
        ) -> Result<()> {
            let (isz, a) = (G::input_size(), G::NUM_ACTIONS);
            for i in 0..n {
                let x = &inputs[i * isz..(i + 1) * isz];
                let weights: Vec<f32> = (0..a)
                    .map(|m| (m as f32 + 1.0) * (1.0 + x[m] + 2.0 * x[isz - 1 - m]))
                    .collect();
                let total: f32 = weights.iter().sum();
                for m in 0..a {
                    policies[i * a + m] = weights[m] / total;
                }
                let weighted: f32 = x.iter().enumerate().map(|(k, v)| k as f32 * v).sum();
                values[i] = (weighted / 100.0).tanh();
            }
            Ok(())
        }
    }

    fn evaluate<G: Game>(eval: &mut NetEvaluator<Lopsided<G>>, pos: &G) -> (Vec<f32>, f32) {
        let mut policy = vec![0.0; G::NUM_ACTIONS];
        let mut value = [0.0];
        LeafEvaluator::<G>::evaluate(eval, std::slice::from_ref(pos), &mut policy, &mut value)
            .unwrap();
        (policy, value[0])
    }

    /// The position `moves` reached through each symmetry's images of its moves.
    fn images<G: Game>(moves: &[u8]) -> Vec<(Symmetry, G)> {
        G::symmetries()
            .into_iter()
            .map(|sym| {
                let mut pos = G::new();
                for &m in moves {
                    pos.play(sym.apply_move(m));
                }
                (sym, pos)
            })
            .collect()
    }

    /// Whether the evaluation of every image of `moves` is the image of the position's own.
    fn agrees_with_its_images<G: Game>(eval: &mut NetEvaluator<Lopsided<G>>, moves: &[u8]) -> bool {
        let mut pos = G::new();
        for &m in moves {
            pos.play(m);
        }
        let (policy, value) = evaluate(eval, &pos);
        images::<G>(moves).iter().all(|(sym, image)| {
            let (p, v) = evaluate(eval, image);
            (v - value).abs() < 1e-5
                && (0..G::NUM_ACTIONS).all(|m| (p[sym.actions[m]] - policy[m]).abs() < 1e-5)
        })
    }

    fn lopsided<G: Game>() -> NetEvaluator<Lopsided<G>> {
        NetEvaluator::new(Lopsided(std::marker::PhantomData))
    }

    #[test]
    fn averaged_answers_follow_every_symmetry_of_the_position() {
        for moves in [&[0u8, 4, 5][..], &[1, 2], &[8]] {
            assert!(!agrees_with_its_images::<TicTacToe>(&mut lopsided(), moves));
            let mut averaged = lopsided().averaging_symmetries::<TicTacToe>();
            assert!(agrees_with_its_images::<TicTacToe>(&mut averaged, moves));
        }
        for moves in [&[0u8, 3, 3][..], &[6, 6, 5, 1]] {
            assert!(!agrees_with_its_images::<Connect4>(&mut lopsided(), moves));
            let mut averaged = lopsided().averaging_symmetries::<Connect4>();
            assert!(agrees_with_its_images::<Connect4>(&mut averaged, moves));
        }
    }

    #[test]
    fn the_average_is_the_mean_of_the_position_and_its_mirror_image() {
        let moves = [0u8, 3, 3, 1];
        let [(_, pos), (mirror, image)] = &images::<Connect4>(&moves)[..] else {
            panic!("Connect Four has two symmetries");
        };
        let mut plain = NetEvaluator::new(Lopsided(std::marker::PhantomData));
        let (p0, v0) = evaluate(&mut plain, pos);
        let (p1, v1) = evaluate(&mut plain, image);
        let mut averaged = NetEvaluator::new(Lopsided(std::marker::PhantomData))
            .averaging_symmetries::<Connect4>();
        let (p, v) = evaluate(&mut averaged, pos);
        assert!((v - (v0 + v1) / 2.0).abs() < 1e-6);
        for m in 0..Connect4::NUM_ACTIONS {
            let expected = (p0[m] + p1[mirror.actions[m]]) / 2.0;
            assert!(
                (p[m] - expected).abs() < 1e-6,
                "move {m}: {} against {expected}",
                p[m]
            );
        }
        assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    }
}
