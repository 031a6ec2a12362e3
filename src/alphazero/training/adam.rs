//! Adam, with weight decay added to the gradient (L2, as libtorch's `Adam`), written out so
//! that its moments can be saved in a training checkpoint and training resumes exactly.

use anyhow::Result;
use tch::Tensor;

use crate::nn::Net;

const BETA1: f64 = 0.9;
const BETA2: f64 = 0.999;
const EPS: f64 = 1e-8;

/// The optimizer's state: the trainable variables (by name, in name order), their first and
/// second moments, and the number of steps taken.
pub struct Adam {
    pub vars: Vec<(String, Tensor)>,
    pub m: Vec<Tensor>,
    pub v: Vec<Tensor>,
    pub t: u64,
    /// `weight_decay * w` is added to each gradient before the moments see it.
    weight_decay: f64,
}

impl Adam {
    /// Adam over `net`'s trainable variables, moments at zero.
    pub fn new(net: &Net, weight_decay: f64) -> Result<Adam> {
        let mut vars: Vec<(String, Tensor)> = net
            .vs
            .variables()
            .into_iter()
            .filter(|(_, t)| t.requires_grad())
            .collect();
        vars.sort_by(|a, b| a.0.cmp(&b.0));
        let zeros = || -> Result<Vec<Tensor>> {
            Ok(vars
                .iter()
                .map(|(_, t)| t.f_zeros_like())
                .collect::<Result<_, _>>()?)
        };
        let (m, v) = (zeros()?, zeros()?);
        Ok(Adam {
            vars,
            m,
            v,
            t: 0,
            weight_decay,
        })
    }

    /// Sets every variable's gradient to zero.
    pub fn zero_grad(&mut self) -> Result<()> {
        for (_, p) in &self.vars {
            let mut g = p.f_grad()?;
            if g.defined() {
                let _ = g.f_detach_()?.f_zero_()?;
            }
        }
        Ok(())
    }

    /// One step at learning rate `lr` along the gradients that `backward` left.
    pub fn step(&mut self, lr: f64) -> Result<()> {
        self.t += 1;
        let bc1 = 1.0 - BETA1.powi(self.t as i32);
        let bc2 = 1.0 - BETA2.powi(self.t as i32);
        let _guard = tch::no_grad_guard();
        for (((_, p), m), v) in self.vars.iter_mut().zip(&mut self.m).zip(&mut self.v) {
            let mut g = p.f_grad()?;
            if !g.defined() {
                continue;
            }
            // In place where libtorch's own Adam is: few temporaries, few passes. (The in-place
            // operations also return their tensor, which is not needed.)
            if self.weight_decay != 0.0 {
                let _ = g.f_add_(&p.f_mul_scalar(self.weight_decay)?)?;
            }
            let _ = m.f_lerp_(&g, 1.0 - BETA1)?;
            let _ = v.f_mul_scalar_(BETA2)?;
            let _ = v.f_addcmul_(&g.f_mul_scalar(1.0 - BETA2)?, &g)?;
            let mut denom = v.f_sqrt()?;
            let _ = denom.f_div_scalar_(bc2.sqrt())?;
            let _ = denom.f_add_scalar_(EPS)?;
            let _ = p.f_addcdiv_(&m.f_mul_scalar(-lr / bc1)?, &denom)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::tictactoe::TicTacToe;
    use crate::games::Game;
    use crate::nn::{Arch, Shape};
    use tch::nn::OptimizerConfig;
    use tch::{Device, Kind, Reduction};

    fn weights(net: &Net) -> Vec<(String, Vec<f32>)> {
        let mut vars: Vec<_> = net.vs.variables().into_iter().collect();
        vars.sort_by(|a, b| a.0.cmp(&b.0));
        vars.into_iter()
            .map(|(n, t)| {
                let t = t.flatten(0, -1);
                (n, Vec::<f32>::try_from(&t).unwrap())
            })
            .collect()
    }

    /// A tensor of `shape` with values in [0, 1) that follow `salt` (not libtorch's generator,
    /// which other tests seed).
    fn data(shape: &[i64], salt: i64) -> Tensor {
        let n: i64 = shape.iter().product();
        let v: Vec<f32> = (0..n)
            .map(|i| ((i * 7919 + salt * 104_729) % 1013) as f32 / 1013.0)
            .collect();
        Tensor::from_slice(&v).view(shape)
    }

    /// The training loss on a batch that depends on `step`.
    fn loss(net: &Net, step: i64) -> Tensor {
        let s = Shape::of::<TicTacToe>();
        let n = 8i64;
        let xs = data(&[n, s.planes as i64, 3, 3], step);
        let target = data(&[n, s.actions as i64], step + 50).softmax(-1, Kind::Float);
        let tv = data(&[n], step + 99) * 2.0 - 1.0;
        let (logits, v) = net.forward(&xs, true).unwrap();
        let pl = -(target * logits.log_softmax(-1, Kind::Float))
            .sum_dim_intlist(-1, false, Kind::Float)
            .mean(Kind::Float);
        pl + v.mse_loss(&tv, Reduction::Mean)
    }

    /// Six steps of ours with `decay` and of libtorch's optimizer `theirs` from the same
    /// weights end at the same weights, and not at the initial ones.
    fn matches_libtorch<C: OptimizerConfig>(decay: f64, theirs: C) {
        let arch = Arch::resnet(1, 4);
        let shape = Shape::of::<TicTacToe>();
        let new = || Net::new_seeded(TicTacToe::NAME, arch, shape, Device::Cpu, 5).unwrap();
        let (ours_net, theirs_net) = (new(), new());
        assert_eq!(weights(&ours_net), weights(&theirs_net));
        let mut ours = Adam::new(&ours_net, decay).unwrap();
        let mut theirs = theirs.build(&theirs_net.vs, 0.01).unwrap();
        for step in 0..6 {
            let lr = 0.01 * (1.0 + step as f64 * 0.3);
            ours.zero_grad().unwrap();
            loss(&ours_net, step).backward();
            ours.step(lr).unwrap();
            theirs.set_lr(lr);
            theirs.zero_grad();
            loss(&theirs_net, step).backward();
            theirs.step();
        }
        let (a, b) = (weights(&ours_net), weights(&theirs_net));
        for ((name, x), (_, y)) in a.iter().zip(&b) {
            for (u, w) in x.iter().zip(y) {
                assert!((u - w).abs() < 1e-6, "{name}: {u} vs {w}");
            }
        }
        // The steps did something: the weights are not the initial ones.
        assert_ne!(a, weights(&new()));
    }

    #[test]
    fn matches_libtorch_adam() {
        let wd = 1e-2;
        matches_libtorch(wd, tch::nn::Adam::default().wd(wd));
    }

    #[test]
    fn a_large_decay_matches_libtorch_adam_too() {
        // A large decay, so that a mistake in it shows in six steps.
        let wd = 5.0;
        matches_libtorch(wd, tch::nn::Adam::default().wd(wd));
    }
}
