//! A network prepared for inference: each batch norm folded into the convolution or linear
//! layer before it, and the convolutions' weights cast and laid out once, as the forward pass
//! computes with them.
//!
//! Why: in inference batch norm is a fixed affine map per channel (its running statistics),
//! so `bn(conv(x))` is one convolution with scaled weights and a bias. A forward pass of the
//! `cpu` network then runs 11 operations fewer over the whole activation, and no longer casts
//! or re-lays out each convolution's weights at every call. Measured in docs/ablations.md
//! ("Batch norm folded for inference").
//!
//! A snapshot: it owns copies of the weights, so training the [`Net`] it was made from
//! afterwards does not change it. Self-play, players and the server, which evaluate one
//! network for a whole stage or game, each make one.

use anyhow::{anyhow, Result};
use tch::{nn, Device, Kind, TchError, Tensor};

use super::arch::{ModelMeta, Shape};
use super::evaluator::Evaluator;
use super::layers::{channels_last, is_wdl_output, value_from_head, Bn, Compute, Conv};
use super::net::{evaluate_batch, Net};
use super::resnet::ResnetBody;

/// A convolution with the batch norm after it folded in, in the kind and layout it computes.
struct FoldedConv {
    ws: Tensor,
    bs: Tensor,
    cfg: nn::ConvConfig,
}

impl FoldedConv {
    fn new(conv: &Conv, bn: &Bn, compute: Compute) -> Result<FoldedConv, TchError> {
        let (ws, bs) = fold(&conv.layer.ws, conv.layer.bs.as_ref(), bn)?;
        let ws = ws.f_to_kind(compute.kind)?;
        let ws = if compute.channels_last {
            channels_last(&ws)?
        } else {
            ws
        };
        Ok(FoldedConv {
            ws,
            bs: bs.f_to_kind(compute.kind)?,
            cfg: conv.cfg,
        })
    }

    fn f_forward(&self, xs: &Tensor) -> Result<Tensor, TchError> {
        let c = &self.cfg;
        xs.f_conv2d(
            &self.ws,
            Some(&self.bs),
            [c.stride; 2],
            [c.padding; 2],
            [c.dilation; 2],
            c.groups,
        )
    }
}

/// A fully connected layer (32-bit).
struct Linear {
    ws: Tensor,
    bs: Option<Tensor>,
}

impl Linear {
    /// A copy of `l`'s weights.
    fn copy(l: &nn::Linear) -> Result<Linear, TchError> {
        Ok(Linear {
            ws: own_copy(&l.ws)?,
            bs: l.bs.as_ref().map(own_copy).transpose()?,
        })
    }

    fn f_forward(&self, xs: &Tensor) -> Result<Tensor, TchError> {
        xs.f_linear(&self.ws, self.bs.as_ref())
    }
}

/// A fresh tensor with `t`'s values, shared with nothing.
fn own_copy(t: &Tensor) -> Result<Tensor, TchError> {
    t.f_detach()?.f_to_dtype(t.kind(), false, true)
}

/// The weights and bias of one layer computing what layer (`ws`, `bs`) followed by `bn` in
/// inference does: batch norm's scale `gamma / sqrt(var + eps)` multiplies each output
/// channel's weights, and the bias becomes `(bs - mean) * scale + beta`. New tensors.
fn fold(ws: &Tensor, bs: Option<&Tensor>, bn: &Bn) -> Result<(Tensor, Tensor), TchError> {
    let l = &bn.layer;
    let mut scale = l.running_var.f_add_scalar(bn.cfg.eps)?.f_rsqrt()?;
    if let Some(gamma) = &l.ws {
        scale = scale.f_mul(gamma)?;
    }
    // One factor an output channel, broadcast over the rest of its weights.
    let mut per_output = vec![1i64; ws.dim()];
    per_output[0] = -1;
    let folded_ws = ws.f_mul(&scale.f_view(per_output.as_slice())?)?;
    let centred = match bs {
        Some(b) => b.f_sub(&l.running_mean)?,
        None => l.running_mean.f_neg()?,
    };
    let mut folded_bs = centred.f_mul(&scale)?;
    if let Some(beta) = &l.bs {
        folded_bs = folded_bs.f_add(beta)?;
    }
    Ok((folded_ws, folded_bs))
}

/// A residual block's two convolutions.
struct FoldedBlock {
    conv1: FoldedConv,
    conv2: FoldedConv,
}

/// The residual network's layers, each batch norm folded into the layer before it.
struct FoldedBody {
    input: FoldedConv,
    blocks: Vec<FoldedBlock>,
    policy_conv: FoldedConv,
    policy_fc: Linear,
    value_conv: FoldedConv,
    value_fc1: Linear,
    value_fc2: Linear,
}

/// A network folded for inference (see the module's comment). Evaluates only: no training.
pub struct InferenceNet {
    body: FoldedBody,
    /// How the trunk computes (the heads: 32-bit floats, in the same layout).
    trunk: Compute,
    device: Device,
    pub meta: ModelMeta,
}

impl InferenceNet {
    /// `net` folded, on its device and in its precision.
    pub fn new(net: &Net) -> Result<InferenceNet> {
        let _guard = tch::no_grad_guard();
        let trunk = net.inference_trunk_compute();
        let heads = Compute {
            kind: Kind::Float,
            ..trunk
        };
        let fold_body = || -> Result<FoldedBody, TchError> {
            let ResnetBody {
                conv,
                bn,
                blocks,
                policy,
                value_conv,
                value_bn,
                value_fc1,
                value_fc2,
            } = &net.body;
            Ok(FoldedBody {
                input: FoldedConv::new(conv, bn, trunk)?,
                blocks: blocks
                    .iter()
                    .map(|b| {
                        Ok(FoldedBlock {
                            conv1: FoldedConv::new(&b.conv1, &b.bn1, trunk)?,
                            conv2: FoldedConv::new(&b.conv2, &b.bn2, trunk)?,
                        })
                    })
                    .collect::<Result<_, TchError>>()?,
                policy_conv: FoldedConv::new(&policy.conv, &policy.bn, heads)?,
                policy_fc: Linear::copy(&policy.fc)?,
                value_conv: FoldedConv::new(value_conv, value_bn, heads)?,
                value_fc1: Linear::copy(value_fc1)?,
                value_fc2: Linear::copy(value_fc2)?,
            })
        };
        let body =
            fold_body().map_err(|e| anyhow!("cannot prepare the network for inference: {e}"))?;
        Ok(InferenceNet {
            body,
            trunk,
            device: net.device(),
            meta: net.meta.clone(),
        })
    }

    /// Policy logits `[n, actions]` and values `[n]` for inputs `[n, planes, h, w]`, as
    /// [`Net::forward`] computes them in inference.
    pub fn forward(&self, xs: &Tensor) -> Result<(Tensor, Tensor), TchError> {
        let (policy, value) = self.forward_heads(xs)?;
        Ok((policy, value_from_head(&value)?))
    }

    /// The win, draw and loss probabilities of one encoded position (`inputs`, as
    /// [`crate::games::Game::encode`] writes it) for the mover, from a network with a
    /// win/draw/loss value head; `None` for a network with one value.
    pub fn win_draw_loss(&self, inputs: &[f32]) -> Result<Option<[f32; 3]>> {
        let shape = self.meta.shape;
        if inputs.len() != shape.input_size() {
            return Err(anyhow!(
                "{} inputs for a position of {}",
                inputs.len(),
                shape.input_size()
            ));
        }
        let _guard = tch::no_grad_guard();
        let run = || -> Result<Option<[f32; 3]>, TchError> {
            let dims = [
                1,
                shape.planes as i64,
                shape.height as i64,
                shape.width as i64,
            ];
            let xs = Tensor::f_from_slice(inputs)?
                .f_view(dims)?
                .f_to_device(self.device)?;
            let (_, value) = self.forward_heads(&xs)?;
            if !is_wdl_output(&value) {
                return Ok(None);
            }
            let p = value
                .f_softmax(-1, Kind::Float)?
                .f_to_device(Device::Cpu)?
                .f_contiguous()?;
            let mut wdl = [0.0f32; 3];
            p.f_copy_data(&mut wdl, 3)?;
            Ok(Some(wdl))
        };
        run().map_err(|e| anyhow!("the network failed on a position: {e}"))
    }

    /// Policy logits `[n, actions]` and the value head's last layer's output `[n, outputs]`
    /// (one number before tanh, or win/draw/loss logits).
    fn forward_heads(&self, xs: &Tensor) -> Result<(Tensor, Tensor), TchError> {
        let mut x = xs.f_to_kind(self.trunk.kind)?;
        if self.trunk.channels_last {
            // Once: every convolution's output keeps the layout of its input.
            x = channels_last(&x)?;
        }
        let FoldedBody {
            input,
            blocks,
            policy_conv,
            policy_fc,
            value_conv,
            value_fc1,
            value_fc2,
        } = &self.body;
        x = input.f_forward(&x)?.f_relu()?;
        for b in blocks {
            let y = b.conv1.f_forward(&x)?.f_relu()?;
            let y = b.conv2.f_forward(&y)?;
            x = y.f_add(&x)?.f_relu()?;
        }
        let x = x.f_to_kind(Kind::Float)?;
        let policy = policy_conv.f_forward(&x)?.f_relu()?.f_flatten(1, -1)?;
        let policy = policy_fc.f_forward(&policy)?;
        let value = value_conv.f_forward(&x)?.f_relu()?.f_flatten(1, -1)?;
        let value = value_fc1.f_forward(&value)?.f_relu()?;
        Ok((policy, value_fc2.f_forward(&value)?))
    }

    /// As [`Net::evaluate`]: softmax policies over all actions and values of `n` positions.
    pub fn evaluate(
        &self,
        inputs: &[f32],
        n: usize,
        policies: &mut [f32],
        values: &mut [f32],
    ) -> Result<()> {
        let forward = |xs: &Tensor| self.forward(xs);
        evaluate_batch(
            self.meta.shape,
            self.device,
            forward,
            inputs,
            n,
            policies,
            values,
        )
    }
}

/// A folded network evaluates inline, on the calling thread (players; self-play workers on a CPU).
impl Evaluator for InferenceNet {
    fn shape(&self) -> Shape {
        self.meta.shape
    }
    fn evaluate(
        &mut self,
        inputs: &[f32],
        n: usize,
        policies: &mut [f32],
        values: &mut [f32],
    ) -> Result<()> {
        InferenceNet::evaluate(self, inputs, n, policies, values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::{Connect4, Game};
    use crate::nn::{Arch, Precision};

    /// A network whose batch norms have statistics of their own (a few training-mode passes
    /// over random boards), so that folding them is not folding the identity.
    fn trained_statistics(arch: Arch, seed: u64) -> Net {
        let shape = Shape::of::<Connect4>();
        let net = Net::new_seeded(Connect4::NAME, arch, shape, Device::Cpu, seed).unwrap();
        let dims = [
            32,
            shape.planes as i64,
            shape.height as i64,
            shape.width as i64,
        ];
        let _guard = tch::no_grad_guard();
        for i in 0..5 {
            let xs = Tensor::from_slice(&boards(32, seed * 10 + i)).view(dims);
            let _ = net.forward(&xs, true).unwrap();
        }
        net
    }

    fn boards(n: usize, seed: u64) -> Vec<f32> {
        let mut rng = crate::core::rng::rng_from_seed(seed);
        (0..n * Shape::of::<Connect4>().input_size())
            .map(|_| f32::from(rand::Rng::random_range(&mut rng, 0..2u8)))
            .collect()
    }

    fn largest_difference(a: &[f32], b: &[f32]) -> f32 {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0f32, f32::max)
    }

    /// The folded network's answers against the network's own on 24 random boards.
    fn differences(net: &Net) -> (f32, f32) {
        let folded = InferenceNet::new(net).unwrap();
        let (n, a) = (24, Shape::of::<Connect4>().actions);
        let x = boards(n, 77);
        let (mut p, mut v) = (vec![0.0; n * a], vec![0.0; n]);
        net.evaluate(&x, n, &mut p, &mut v).unwrap();
        let (mut fp, mut fv) = (vec![0.0; n * a], vec![0.0; n]);
        folded.evaluate(&x, n, &mut fp, &mut fv).unwrap();
        (largest_difference(&p, &fp), largest_difference(&v, &fv))
    }

    #[test]
    fn win_draw_loss_add_up_to_one_and_agree_with_the_value() {
        let net = trained_statistics(Arch::resnet(1, 16).with_wdl_head(), 4);
        let folded = InferenceNet::new(&net).unwrap();
        let (isz, a) = (
            Shape::of::<Connect4>().input_size(),
            Shape::of::<Connect4>().actions,
        );
        let x = boards(3, 5);
        let (mut p, mut v) = (vec![0.0; 3 * a], vec![0.0; 3]);
        folded.evaluate(&x, 3, &mut p, &mut v).unwrap();
        for i in 0..3 {
            let [w, d, l] = folded
                .win_draw_loss(&x[i * isz..(i + 1) * isz])
                .unwrap()
                .unwrap();
            assert!((w + d + l - 1.0).abs() < 1e-5 && w.min(d).min(l) >= 0.0);
            // The value is the expected result, win minus loss.
            assert!((w - l - v[i]).abs() < 1e-5, "{w} {l} {}", v[i]);
        }
        // A network with one value has no such head; a wrong input size is an error.
        let plain = InferenceNet::new(&trained_statistics(Arch::resnet(1, 16), 4)).unwrap();
        assert_eq!(plain.win_draw_loss(&x[..isz]).unwrap(), None);
        assert!(folded.win_draw_loss(&x[..isz - 1]).is_err());
    }

    #[test]
    fn a_folded_network_answers_as_the_network_does() {
        let arch = Arch::resnet(2, 16);
        let wdl = Arch::resnet(1, 16).with_wdl_head();
        for arch in [arch, wdl] {
            let net = trained_statistics(arch, 3);
            let (dp, dv) = differences(&net);
            assert!(dp < 1e-5 && dv < 1e-5, "{arch}: {dp} {dv}");
        }
    }

    #[test]
    fn in_bfloat16_a_folded_network_answers_within_its_precision() {
        for arch in [Arch::resnet(2, 16), Arch::resnet(2, 16).with_wdl_head()] {
            let net = trained_statistics(arch, 4).with_precision(Precision::Bf16);
            let (dp, dv) = differences(&net);
            // As the unfolded network in bfloat16 against 32 bits (net.rs's test).
            assert!(dp < 0.02 && dv < 0.05, "{arch}: {dp} {dv}");
        }
    }

    #[test]
    fn a_folded_network_is_a_snapshot() {
        let net = trained_statistics(Arch::resnet(1, 8), 5);
        let folded = InferenceNet::new(&net).unwrap();
        let (n, a) = (4, Shape::of::<Connect4>().actions);
        let x = boards(n, 8);
        let answer = |f: &InferenceNet| {
            let (mut p, mut v) = (vec![0.0; n * a], vec![0.0; n]);
            f.evaluate(&x, n, &mut p, &mut v).unwrap();
            (p, v)
        };
        let before = answer(&folded);
        // Training changes every variable in place; the snapshot keeps its copies.
        let _guard = tch::no_grad_guard();
        for (_, mut t) in net.vs.variables() {
            let _ = t.f_add_scalar_(0.5).unwrap();
        }
        assert_eq!(answer(&folded), before);
        assert_ne!(answer(&InferenceNet::new(&net).unwrap()), before);
    }
}
