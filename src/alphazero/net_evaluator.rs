//! The network as the search's leaf evaluator: positions are encoded into the network's input
//! and the answers handed back. This adapter is where search meets the network, so that
//! neither knows the other.

use anyhow::Result;

use crate::games::Game;
use crate::nn::Evaluator;
use crate::search::mcts::LeafEvaluator;

/// A network (inline or through the inference thread) as a leaf evaluator.
pub struct NetEvaluator<E> {
    pub net: E,
    inputs: Vec<f32>,
}

impl<E> NetEvaluator<E> {
    pub fn new(net: E) -> Self {
        NetEvaluator {
            net,
            inputs: Vec::new(),
        }
    }
}

impl<G: Game, E: Evaluator> LeafEvaluator<G> for NetEvaluator<E> {
    fn evaluate(
        &mut self,
        positions: &[G],
        policies: &mut [f32],
        values: &mut [f32],
    ) -> Result<()> {
        let isz = G::input_size();
        self.inputs.resize(positions.len() * isz, 0.0);
        for (i, p) in positions.iter().enumerate() {
            p.encode(&mut self.inputs[i * isz..(i + 1) * isz]);
        }
        self.net
            .evaluate(&self.inputs, positions.len(), policies, values)
    }
}
