//! The dual policy/value network: building it, its forward pass and evaluating positions. Its
//! layers compute the pass: a residual network with a policy head (logits over the game's
//! actions) and a value head (resnet.rs).

use anyhow::{anyhow, bail, Result};
use tch::nn;
use tch::{Device, Kind, TchError, Tensor};

use super::arch::{Arch, ModelMeta, Shape};
use super::layers::{lock_torch_generator, Compute, Heads};
use super::precision::Precision;
use super::resnet::ResnetBody;

/// A network and its variables. Owned by one thread (tensors are not `Sync`).
pub struct Net {
    pub vs: nn::VarStore,
    pub(super) body: ResnetBody,
    pub meta: ModelMeta,
    /// What the trunk computes in (not part of the model: the same weights either way).
    precision: Precision,
}

impl Net {
    /// A freshly initialised network.
    /// A network whose initial weights follow `seed` alone. libtorch draws them from one
    /// process-wide generator, so the seeding and the drawing happen under a lock: two
    /// networks made at once (tests, a library user's threads) still get their own seeds'
    /// weights.
    pub fn new_seeded(
        game: &str,
        arch: Arch,
        shape: Shape,
        device: Device,
        seed: u64,
    ) -> Result<Net> {
        let _guard = lock_torch_generator();
        tch::manual_seed(seed as i64);
        Net::build(game, arch, shape, device)
    }

    /// A network with random initial weights (from wherever libtorch's generator stands).
    pub fn new(game: &str, arch: Arch, shape: Shape, device: Device) -> Result<Net> {
        let _guard = lock_torch_generator();
        Net::build(game, arch, shape, device)
    }

    fn build(game: &str, arch: Arch, shape: Shape, device: Device) -> Result<Net> {
        if arch.numbers(shape).is_none() {
            bail!("a {arch} network is too large to build");
        }
        let vs = nn::VarStore::new(device);
        let p = vs.root();
        let body = ResnetBody::new(p, arch, shape)?;
        Ok(Net {
            vs,
            body,
            meta: ModelMeta {
                game: game.to_string(),
                arch,
                shape,
                generation: 0,
                training_steps: 0,
                iteration: 0,
                config: serde_json::Value::Null,
            },
            precision: Precision::F32,
        })
    }

    /// The same network computing in `precision` (see [`Precision`]).
    pub fn with_precision(mut self, precision: Precision) -> Net {
        self.precision = precision;
        self
    }

    pub fn precision(&self) -> Precision {
        self.precision
    }

    pub fn device(&self) -> Device {
        self.vs.device()
    }

    /// How the trunk's convolutions compute in training: in the precision's kind; channels
    /// last on a CPU, in either precision (see [`channels_last`]; in bfloat16 a training step of
    /// 256 positions took a median 64 ms instead of 78 on a 2-core Xeon with AMX, 55 instead of
    /// 62 on an AMD Zen 4, docs/ablations.md). CUDA keeps libtorch's default layout, the one it
    /// was measured with.
    ///
    /// [`channels_last`]: super::layers::channels_last
    pub(super) fn trunk_compute(&self) -> Compute {
        Compute {
            kind: self.precision.trunk_kind(),
            channels_last: self.device() == Device::Cpu,
        }
    }

    /// How the trunk's convolutions compute for a network answering without autograd (the
    /// folded [`super::InferenceNet`]): as in training, but in bfloat16 channels last only
    /// where the processor measured faster so ([`Precision::inference_channels_last_on_cpu`]).
    pub(super) fn inference_trunk_compute(&self) -> Compute {
        let training = self.trunk_compute();
        Compute {
            channels_last: training.channels_last
                && self.precision.inference_channels_last_on_cpu(),
            ..training
        }
    }

    /// Number of trainable parameters.
    pub fn parameters(&self) -> i64 {
        self.vs
            .trainable_variables()
            .iter()
            .map(|t| t.numel() as i64)
            .sum()
    }

    /// Policy logits `[n, actions]` and values `[n]` for inputs `[n, planes, h, w]`. A libtorch
    /// failure (a wrong shape, memory) is an error, not a panic.
    pub fn forward(&self, xs: &Tensor, train: bool) -> Result<(Tensor, Tensor), TchError> {
        let heads = self.forward_heads(xs, train)?;
        Ok((heads.policy, heads.value))
    }

    /// As [`Net::forward`], with the win/draw/loss logits of a network with that value head
    /// ([`Heads`]).
    pub fn forward_heads(&self, xs: &Tensor, train: bool) -> Result<Heads, TchError> {
        let trunk = self.trunk_compute();
        self.body.forward_heads(xs, train, trunk)
    }

    /// Evaluates `n` encoded positions (no gradient): writes softmax policies over all actions
    /// (the caller masks illegal ones) and values. A libtorch failure is an error with its
    /// message.
    pub fn evaluate(
        &self,
        inputs: &[f32],
        n: usize,
        policies: &mut [f32],
        values: &mut [f32],
    ) -> Result<()> {
        let forward = |xs: &Tensor| self.forward(xs, false);
        evaluate_batch(
            self.meta.shape,
            self.device(),
            forward,
            inputs,
            n,
            policies,
            values,
        )
    }

    /// A copy of this network on `device` (for the inference thread).
    pub fn try_clone(&self, device: Device) -> Result<Net> {
        let mut net = Net::new(&self.meta.game, self.meta.arch, self.meta.shape, device)?;
        net.vs.copy(&self.vs)?;
        net.meta = self.meta.clone();
        Ok(net.with_precision(self.precision))
    }
}

/// Evaluates `n` encoded positions with `forward` (inputs `[n, planes, h, w]` on `device` to
/// policy logits and values), without gradient: writes softmax policies over all actions (the
/// caller masks illegal ones) and values. A libtorch failure is an error with its message.
pub(super) fn evaluate_batch(
    shape: Shape,
    device: Device,
    forward: impl FnOnce(&Tensor) -> Result<(Tensor, Tensor), TchError>,
    inputs: &[f32],
    n: usize,
    policies: &mut [f32],
    values: &mut [f32],
) -> Result<()> {
    let (isz, a) = (shape.input_size(), shape.actions);
    if inputs.len() < n * isz || policies.len() < n * a || values.len() < n {
        bail!(
            "cannot evaluate {n} positions with {} inputs into room for {} policies and {} \
             values ({isz} inputs and {a} actions a position)",
            inputs.len(),
            policies.len(),
            values.len()
        );
    }
    let _guard = tch::no_grad_guard();
    let run = || -> Result<(), TchError> {
        let dims = [
            n as i64,
            shape.planes as i64,
            shape.height as i64,
            shape.width as i64,
        ];
        let xs = Tensor::f_from_slice(&inputs[..n * isz])?
            .f_view(dims)?
            .f_to_device(device)?;
        let (logits, v) = forward(&xs)?;
        let p = logits
            .f_softmax(-1, Kind::Float)?
            .f_to_device(Device::Cpu)?
            .f_contiguous()?;
        let v = v.f_to_device(Device::Cpu)?.f_contiguous()?;
        p.f_copy_data(&mut policies[..n * a], n * a)?;
        v.f_copy_data(&mut values[..n], n)
    };
    run().map_err(|e| anyhow!("the network failed on a batch of {n} positions: {e}"))
}

#[cfg(test)]
pub(super) mod tests {
    use std::path::Path;

    use super::*;
    use crate::games::tictactoe::TicTacToe;

    const GAME: &str = "tictactoe";

    pub(in crate::nn) fn net(seed: u64) -> Net {
        let arch = Arch::resnet(1, 8);
        let mut net =
            Net::new_seeded(GAME, arch, Shape::of::<TicTacToe>(), Device::Cpu, seed).unwrap();
        net.meta.generation = 3;
        net.meta.training_steps = 120;
        net.meta.iteration = 4;
        net.meta.config = serde_json::json!({ "sims": 16, "note": "a \"quoted\" word" });
        net
    }

    pub(in crate::nn) fn load(path: &Path) -> Result<Net> {
        Net::load(path, GAME, Shape::of::<TicTacToe>(), Device::Cpu)
    }

    pub(in crate::nn) fn weights(net: &Net) -> Vec<(String, Vec<f32>)> {
        let mut vars: Vec<_> = net.vs.variables().into_iter().collect();
        vars.sort_by(|a, b| a.0.cmp(&b.0));
        vars.into_iter()
            .map(|(n, t)| (n, Vec::<f32>::try_from(&t.flatten(0, -1)).unwrap()))
            .collect()
    }

    #[test]
    fn arch_numbers_count_every_variable_of_the_built_network() {
        use crate::games::{Connect4, Othello4};
        let shapes = [
            Shape::of::<TicTacToe>(),
            Shape::of::<Connect4>(),
            Shape::of::<Othello4>(),
        ];
        for shape in shapes {
            for arch in [
                Arch::resnet(1, 8),
                Arch::resnet(3, 5),
                Arch::resnet(1, 4).with_wdl_head(),
            ] {
                let built = Net::new(GAME, arch, shape, Device::Cpu).unwrap();
                let total: i64 = built
                    .vs
                    .variables()
                    .values()
                    .map(|t| t.numel() as i64)
                    .sum();
                assert_eq!(arch.numbers(shape), Some(total), "{arch} for {shape:?}");
            }
        }
        let huge = Arch::resnet(usize::MAX, 1 << 40);
        assert_eq!(huge.numbers(Shape::of::<TicTacToe>()), None);
        let e = Net::new(GAME, huge, Shape::of::<TicTacToe>(), Device::Cpu)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("too large to build"), "{e}");
    }

    #[test]
    fn a_win_draw_loss_head_values_a_position_at_its_expected_result() {
        let arch: Arch =
            serde_json::from_str(r#"{"kind":"resnet","blocks":1,"filters":8,"wdl":true}"#).unwrap();
        assert!(arch.has_wdl_head());
        assert_eq!(arch.to_string(), "resnet 1x8, win/draw/loss value");
        let json = serde_json::to_string(&arch).unwrap();
        assert_eq!(serde_json::from_str::<Arch>(&json).unwrap(), arch);
        let shape = Shape::of::<TicTacToe>();
        let net = Net::new_seeded(GAME, arch, shape, Device::Cpu, 2).unwrap();
        // Inputs from a formula, not libtorch's generator: a draw outside the generator's lock
        // would move the seed of a network another test is building.
        let xs = Tensor::arange(135, (Kind::Float, Device::Cpu))
            .sin()
            .view([5, 3, 3, 3]);
        let heads = net.forward_heads(&xs, false).unwrap();
        let p = heads.value_logits.unwrap().softmax(-1, Kind::Float);
        let expected = p.select(1, 0) - p.select(1, 2);
        let diff = (&heads.value - expected).abs().max().double_value(&[]);
        assert!(diff < 1e-6, "{diff}");
        // Saved and loaded: the head's width is in the weights.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wdl.safetensors");
        net.save(&path).unwrap();
        let back = load(&path).unwrap();
        assert_eq!(back.meta.arch, arch);
        assert_eq!(weights(&back), weights(&net));
        // The scalar head has no logits.
        let plain = net_with(Arch::resnet(1, 8));
        assert!(plain
            .forward_heads(&xs, false)
            .unwrap()
            .value_logits
            .is_none());
    }

    fn net_with(arch: Arch) -> Net {
        Net::new_seeded(GAME, arch, Shape::of::<TicTacToe>(), Device::Cpu, 1).unwrap()
    }

    #[test]
    fn in_bfloat16_the_same_weights_answer_as_in_32_bits_to_within_its_precision() {
        use crate::games::Connect4;
        let shape = Shape::of::<Connect4>();
        let f32_net =
            Net::new_seeded("connect4", Arch::resnet(2, 16), shape, Device::Cpu, 4).unwrap();
        let bf16_net = f32_net
            .try_clone(Device::Cpu)
            .unwrap()
            .with_precision(Precision::Bf16);
        // A copy keeps the precision; the weights stay 32-bit floats.
        let copy = bf16_net.try_clone(Device::Cpu).unwrap();
        assert_eq!(copy.precision(), Precision::Bf16);
        assert!(copy
            .vs
            .variables()
            .values()
            .all(|t| t.kind() == Kind::Float));
        let n = 16;
        let mut rng = crate::core::rng::rng_from_seed(9);
        let x: Vec<f32> = (0..n * shape.input_size())
            .map(|_| f32::from(rand::Rng::random_range(&mut rng, 0..2u8)))
            .collect();
        let answer = |net: &Net| {
            let (mut p, mut v) = (vec![0.0; n * shape.actions], vec![0.0; n]);
            net.evaluate(&x, n, &mut p, &mut v).unwrap();
            (p, v)
        };
        let ((p32, v32), (p16, v16)) = (answer(&f32_net), answer(&bf16_net));
        let largest = |a: &[f32], b: &[f32]| {
            a.iter()
                .zip(b)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0f32, f32::max)
        };
        // bfloat16 keeps 8 bits of mantissa: about 2-3 decimal digits through the trunk.
        let (dp, dv) = (largest(&p32, &p16), largest(&v32, &v16));
        assert!(dp > 0.0 && dp < 0.02, "policy differs by {dp}");
        assert!(dv < 0.05, "value differs by {dv}");
        assert_eq!(answer(&bf16_net), (p16, v16), "bfloat16 answers repeat");
    }

    #[test]
    fn evaluate_refuses_buffers_too_small() {
        let n = net(1);
        let e = n
            .evaluate(&[0.0; 27], 2, &mut [0.0; 18], &mut [0.0; 2])
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot evaluate 2 positions"), "{e}");
    }
}
