//! An exponential moving average of a network's weights over its training steps (Polyak
//! averaging; KataGo's self-play networks are such an average of snapshots, its "stochastic
//! weight averaging"). With a constant learning rate the last step's weights wander about
//! the minimum the steps circle; their average sits nearer it.

use anyhow::{bail, Result};
use tch::Tensor;

use crate::nn::Net;

/// The average of every variable of a network, trainable or not (batch norm's running
/// statistics too, so that they match the averaged weights), by name in name order.
pub struct WeightAverage {
    /// Each step's weights count `1 / steps` in the average.
    steps: u64,
    pub tensors: Vec<(String, Tensor)>,
}

impl WeightAverage {
    /// An average over about `steps` steps, starting from `net`'s weights now; `None` for 0.
    pub fn new(net: &Net, steps: u64) -> Result<Option<WeightAverage>> {
        if steps == 0 {
            return Ok(None);
        }
        let mut tensors = Vec::new();
        for (name, t) in sorted_variables(net) {
            tensors.push((name, t.f_detach_copy()?));
        }
        Ok(Some(WeightAverage { steps, tensors }))
    }

    /// Folds `net`'s weights after a step into the average.
    pub fn update(&mut self, net: &Net) -> Result<()> {
        let weight = 1.0 / self.steps as f64;
        let vars = sorted_variables(net);
        if vars.len() != self.tensors.len() {
            bail!("the network's variables changed under the weight average");
        }
        tch::no_grad(|| -> Result<()> {
            for ((_, avg), (_, w)) in self.tensors.iter_mut().zip(&vars) {
                // In place; the tensor it returns is `avg` itself.
                let _ = avg.f_lerp_(w, weight)?;
            }
            Ok(())
        })
    }

    /// Gives `net` the averaged weights.
    pub fn copy_into(&self, net: &Net) -> Result<()> {
        tch::no_grad(|| -> Result<()> {
            for ((_, avg), (_, mut w)) in self.tensors.iter().zip(sorted_variables(net)) {
                w.f_copy_(avg)?;
            }
            Ok(())
        })
    }
}

fn sorted_variables(net: &Net) -> Vec<(String, Tensor)> {
    let mut vars: Vec<(String, Tensor)> = net.vs.variables().into_iter().collect();
    vars.sort_by(|a, b| a.0.cmp(&b.0));
    vars
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::tictactoe::TicTacToe;
    use crate::nn::{Arch, Shape};

    fn net(seed: u64) -> Result<Net> {
        let arch = Arch::Resnet {
            blocks: 1,
            filters: 8,
            value_channels: 1,
            wdl: false,
            board_head: false,
            opponent_policy_head: false,
            soft_policy_head: false,
            line_threats: false,
            squeeze_excite: false,
        };
        let shape = Shape::of::<TicTacToe>();
        Net::new_seeded("tictactoe", arch, shape, tch::Device::Cpu, seed)
    }

    fn first(net: &Net) -> Tensor {
        sorted_variables(net)[0].1.copy()
    }

    #[test]
    fn the_average_moves_a_quarter_of_the_way_at_each_step_of_four() -> Result<()> {
        let (a, b) = (net(1)?, net(2)?);
        let mut avg = WeightAverage::new(&a, 4)?.expect("4 steps");
        let (wa, wb) = (first(&a), first(&b));
        avg.update(&b)?;
        let target = net(3)?;
        avg.copy_into(&target)?;
        let expected = &wa * 0.75 + &wb * 0.25;
        let got = first(&target);
        assert!(f64::try_from((got - expected).abs().max())? < 1e-6);
        // The average is a copy: the network it started from is untouched.
        assert!(first(&a).equal(&wa));
        assert!(WeightAverage::new(&a, 0)?.is_none());
        Ok(())
    }
}
