//! The layers networks are built from: convolution and batch norm with fallible forward
//! passes, how they compute (number kind, channels-last layout), fully connected layers, and
//! what the heads answer.

use tch::nn;
use tch::{Kind, TchError, Tensor};

/// A win/draw/loss value head's outputs: the mover's win, draw and loss logits, in that order.
const WDL_OUTPUTS: i64 = 3;

/// The outputs of the value head's last layer.
pub(super) fn value_outputs(wdl: bool) -> i64 {
    if wdl {
        WDL_OUTPUTS
    } else {
        1
    }
}

/// The values `[n]`, in [-1, 1] from the mover's view, of the value head's last layer's
/// output `[n, outputs]`: one number through tanh, or the expected result (win minus loss) of
/// win/draw/loss logits. The layer's width says which, so a model file needs no flag for it.
pub(super) fn value_from_head(out: &Tensor) -> Result<Tensor, TchError> {
    if is_wdl_output(out) {
        let p = out.f_softmax(-1, Kind::Float)?;
        p.f_select(1, 0)?.f_sub(&p.f_select(1, 2)?)
    } else {
        out.f_tanh()?.f_view([-1])
    }
}

/// Whether the value head's last layer's output `[n, outputs]` is win/draw/loss logits.
pub(super) fn is_wdl_output(out: &Tensor) -> bool {
    out.size().last() == Some(&WDL_OUTPUTS)
}

/// What a network's heads answer: policy logits `[n, actions]`, values `[n]`, and the value
/// head's win/draw/loss logits `[n, 3]` for a network with that head (training's target).
pub struct Heads {
    pub policy: Tensor,
    pub value: Tensor,
    pub value_logits: Option<Tensor>,
}

/// A 2-D convolution and the settings it was made with, so that the forward pass can call
/// libtorch's fallible `f_conv2d` with exactly the arguments tch's `Module::forward` passes
/// (which panics on a libtorch error). Padding is always zeros, tch's default.
pub(super) struct Conv {
    pub(super) layer: nn::Conv2D,
    pub(super) cfg: nn::ConvConfig,
}

/// How the convolutions compute: the number kind, and whether in the channels-last layout.
#[derive(Clone, Copy)]
pub(super) struct Compute {
    pub(super) kind: Kind,
    pub(super) channels_last: bool,
}

/// `t` (`[n, c, h, w]`) with the same values laid out channels last (NHWC in memory): a copy,
/// unless it is laid out so already (a convolution's output from such inputs is).
///
/// Why: on a CPU, oneDNN computes 32-bit convolutions on channels-last data directly, while
/// for the default layout libtorch reorders the inputs and weights into oneDNN's own layout at
/// every call, which on boards of 6x7 costs as much as the arithmetic: a probe of the `cpu`
/// network on a 2-core AVX2 machine (PyTorch 2.11, one thread) ran a forward pass of 64
/// positions in 18-20 ms instead of 29-31, a training step of 256 in 140-150 ms instead of
/// 166-182 (docs/ablations.md).
pub(super) fn channels_last(t: &Tensor) -> Result<Tensor, TchError> {
    t.f_permute([0, 2, 3, 1])?
        .f_contiguous()?
        .f_permute([0, 3, 1, 2])
}

impl Conv {
    /// The convolution computed as `compute` says (the weights cast and laid out so: a no-op
    /// for their own kind and layout, and on the autograd tape in training, so gradients reach
    /// the 32-bit weights).
    pub(super) fn f_forward(&self, xs: &Tensor, compute: Compute) -> Result<Tensor, TchError> {
        let c = &self.cfg;
        let ws = self.layer.ws.f_to_kind(compute.kind)?;
        let (xs, ws) = if compute.channels_last {
            (channels_last(xs)?, channels_last(&ws)?)
        } else {
            (xs.shallow_clone(), ws)
        };
        xs.f_conv2d(
            &ws,
            self.layer.bs.as_ref(),
            [c.stride; 2],
            [c.padding; 2],
            [c.dilation; 2],
            c.groups,
        )
    }
}

/// Batch norm and its settings, for the fallible forward pass (as [`Conv`]).
pub(super) struct Bn {
    pub(super) layer: nn::BatchNorm,
    pub(super) cfg: nn::BatchNormConfig,
}

impl Bn {
    pub(super) fn new(p: nn::Path, channels: usize, dims: usize) -> Bn {
        let cfg = nn::BatchNormConfig::default();
        let c = channels as i64;
        let layer = match dims {
            1 => nn::batch_norm1d(p, c, cfg),
            _ => nn::batch_norm2d(p, c, cfg),
        };
        Bn { layer, cfg }
    }

    pub(super) fn f_forward(&self, xs: &Tensor, train: bool) -> Result<Tensor, TchError> {
        let b = &self.layer;
        xs.f_batch_norm(
            b.ws.as_ref(),
            b.bs.as_ref(),
            Some(&b.running_mean),
            Some(&b.running_var),
            train,
            self.cfg.momentum,
            self.cfg.eps,
            self.cfg.cudnn_enabled,
        )
    }
}

/// A fully connected layer's forward pass, fallible.
pub(super) fn f_linear(xs: &Tensor, l: &nn::Linear) -> Result<Tensor, TchError> {
    xs.f_linear(&l.ws, l.bs.as_ref())
}

fn conv(p: nn::Path, cin: usize, cout: usize, kernel: i64, padding: i64) -> Conv {
    let cfg = nn::ConvConfig {
        padding,
        bias: false,
        ..Default::default()
    };
    Conv {
        layer: nn::conv2d(p, cin as i64, cout as i64, kernel, cfg),
        cfg,
    }
}

pub(super) fn conv3(p: nn::Path, cin: usize, cout: usize, padding: i64) -> Conv {
    conv(p, cin, cout, 3, padding)
}

pub(super) fn conv1(p: nn::Path, cin: usize, cout: usize) -> Conv {
    conv(p, cin, cout, 1, 0)
}

/// Every network made in this process draws its initial weights under this lock, so that a
/// seeded one ([`Net::new_seeded`]) is not disturbed by another drawn at the same time. Nothing
/// else seeds or draws from libtorch's generator: training draws nothing from it, and a seed set
/// outside this lock (training once set one) landed between another thread's seeding and its
/// drawing, which then built other weights than its seed's.
///
/// [`Net::new_seeded`]: super::Net::new_seeded
pub(super) fn lock_torch_generator() -> std::sync::MutexGuard<'static, ()> {
    static TORCH_GENERATOR: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TORCH_GENERATOR
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::Device;

    #[test]
    fn a_convolution_laid_out_channels_last_computes_what_the_default_layout_does() {
        let vs = nn::VarStore::new(Device::Cpu);
        // Their initial weights come from libtorch's one generator, which seeded tests share.
        let (c3, c1) = {
            let _guard = lock_torch_generator();
            (conv3(vs.root(), 3, 16, 1), conv1(vs.root(), 16, 2))
        };
        let mut rng = crate::core::rng::rng_from_seed(5);
        let values: Vec<f32> = (0..4 * 3 * 6 * 7)
            .map(|_| rand::Rng::random_range(&mut rng, -1.0..1.0f32))
            .collect();
        let x = Tensor::from_slice(&values).view([4, 3, 6, 7]);
        // In each precision the trunk can compute in, to within that precision.
        for (kind, tolerance) in [(Kind::Float, 1e-5), (Kind::BFloat16, 0.05)] {
            let compute = |channels_last| Compute {
                kind,
                channels_last,
            };
            let check = |c: &Conv, x: &Tensor| {
                let x = x.to_kind(kind);
                let plain = c.f_forward(&x, compute(false)).unwrap();
                let last = c.f_forward(&x, compute(true)).unwrap();
                assert_eq!(last.size(), plain.size());
                assert_eq!(last.kind(), kind);
                // NHWC in memory: a cell's channels lie side by side.
                assert_eq!(last.stride()[1], 1);
                let diff = (&last - &plain).abs().max().double_value(&[]);
                assert!(diff < tolerance, "{kind:?}: the layouts differ by {diff}");
                plain
            };
            // A 3x3 convolution on the input planes, then a 1x1 one (a head's) on its output.
            let hidden = check(&c3, &x);
            let _ = check(&c1, &hidden);
        }
    }
}
