//! The dual policy/value network: its shapes ([`Arch`]), the layers they share (convolution,
//! batch norm), saving and loading, and the forward pass, which its layers compute: a residual
//! network with a policy head (logits over the game's actions) and a value head (resnet.rs),
//! or a plain convolutional shape like alpha-zero-general's Connect Four network, for
//! comparing speed with it (azg.rs).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use tch::nn;
use tch::{Device, Kind, TchError, Tensor};

use super::azg::AzgBody;
use super::precision::Precision;
use super::resnet::ResnetBody;
use super::tensors::{
    from_safetensors_bytes, read_safetensors_metadata, to_safetensors_bytes, FileMetadata,
};
use crate::core::files::write_atomic;

/// The key of a model's description ([`ModelMeta`] as JSON) in the `__metadata__` of its
/// safetensors header: a model is one file.
pub const META_KEY: &str = "zero.model";

/// The shape of a network.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Arch {
    /// `blocks` residual blocks of `filters` 3x3 filters, AlphaGo Zero's one-plane value head.
    Resnet {
        blocks: usize,
        filters: usize,
        /// The value head's last layer gives three logits, the mover's win, draw and loss
        /// (Lc0's WDL head), trained by cross-entropy, instead of one number through tanh
        /// trained by squared error; the value searches use is the expected result, win
        /// minus loss. A sure draw and an even fight then differ to the network. Absent
        /// from the descriptions of networks with the scalar head.
        #[serde(default, skip_serializing_if = "is_false")]
        wdl: bool,
    },
    /// alpha-zero-general's Connect Four network: 4 conv layers of `channels` (two padded,
    /// two valid), then fully connected 1024 and 512 with dropout-free batch norm.
    AzgConv { channels: usize },
}

fn is_false(x: &bool) -> bool {
    !*x
}

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

impl Arch {
    /// A residual network with AlphaGo Zero's scalar value head.
    pub const fn resnet(blocks: usize, filters: usize) -> Arch {
        Arch::Resnet {
            blocks,
            filters,
            wdl: false,
        }
    }

    /// The same network with the win/draw/loss value head (a residual network; other
    /// shapes have no such head and are returned as they are).
    pub const fn with_wdl_head(mut self) -> Arch {
        if let Arch::Resnet { wdl, .. } = &mut self {
            *wdl = true;
        }
        self
    }

    /// Whether the value head answers win/draw/loss logits instead of one number.
    pub fn has_wdl_head(&self) -> bool {
        matches!(self, Arch::Resnet { wdl: true, .. })
    }

    /// The multiply-adds of the residual trunk's convolutions for one position of `shape` (the
    /// bulk of a step's arithmetic on small boards); `None` for other shapes, or when it does
    /// not fit in a `u64`.
    pub fn trunk_multiply_adds(&self, shape: Shape) -> Option<u64> {
        let Arch::Resnet {
            blocks, filters, ..
        } = *self
        else {
            return None;
        };
        let n = |x: usize| u64::try_from(x).ok();
        let (cells, f) = (n(shape.height)?.checked_mul(n(shape.width)?)?, n(filters)?);
        // The input convolution, then two 3x3 convolutions a block.
        let inputs = n(shape.planes)?.checked_add(n(blocks)?.checked_mul(2)?.checked_mul(f)?)?;
        cells.checked_mul(9)?.checked_mul(f)?.checked_mul(inputs)
    }

    /// How many numbers a network of this shape holds for a game of `shape`: every variable
    /// of its store, batch norm's running statistics included (the tensors of its file).
    /// `None` when that does not fit in an `i64`, libtorch's sizes. It mirrors [`Net::new`],
    /// so that a model file's description can be checked against its tensors before a
    /// network of that size is built.
    pub fn numbers(&self, shape: Shape) -> Option<i64> {
        let n = |x: usize| i64::try_from(x).ok();
        let (planes, actions) = (n(shape.planes)?, n(shape.actions)?);
        let cells = n(shape.height)?.checked_mul(n(shape.width)?)?;
        // A convolution without bias, a batch norm (weight, bias, mean, variance), a linear
        // layer with bias.
        let conv = |cin: i64, cout: i64, k: i64| cin.checked_mul(cout)?.checked_mul(k * k);
        let bn = |c: i64| c.checked_mul(4);
        let linear = |cin: i64, cout: i64| cin.checked_mul(cout)?.checked_add(cout);
        let sum = |parts: &[Option<i64>]| {
            parts
                .iter()
                .try_fold(0i64, |total, p| total.checked_add((*p)?))
        };
        match *self {
            Arch::Resnet {
                blocks,
                filters,
                wdl,
            } => {
                let (b, f) = (n(blocks)?, n(filters)?);
                let block = sum(&[conv(f, f, 3), bn(f), conv(f, f, 3), bn(f)])?;
                sum(&[
                    conv(planes, f, 3),
                    bn(f),
                    block.checked_mul(b),
                    conv(f, 2, 1),
                    bn(2),
                    linear(cells.checked_mul(2)?, actions),
                    conv(f, 1, 1),
                    bn(1),
                    linear(cells, 64),
                    linear(64, value_outputs(wdl)),
                ])
            }
            Arch::AzgConv { channels } => {
                let c = n(channels)?;
                // Two valid convolutions take 4 off each side; the board needs 5x5 at least.
                let valid = |x: usize| n(x)?.checked_sub(4).filter(|&x| x > 0);
                let flat = c
                    .checked_mul(valid(shape.height)?)?
                    .checked_mul(valid(shape.width)?)?;
                sum(&[
                    conv(planes, c, 3),
                    bn(c),
                    conv(c, c, 3).and_then(|x| x.checked_mul(3)),
                    bn(c).and_then(|x| x.checked_mul(3)),
                    linear(flat, 1024),
                    bn(1024),
                    linear(1024, 512),
                    bn(512),
                    linear(512, actions),
                    linear(512, 1),
                ])
            }
        }
    }
}

impl std::fmt::Display for Arch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Arch::Resnet {
                blocks,
                filters,
                wdl,
            } => {
                write!(f, "resnet {blocks}x{filters}")?;
                if *wdl {
                    write!(f, ", win/draw/loss value")?;
                }
                Ok(())
            }
            Arch::AzgConv { channels } => write!(f, "azg-conv {channels}"),
        }
    }
}

/// What a network is for: the game's board and action sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shape {
    pub planes: usize,
    pub height: usize,
    pub width: usize,
    pub actions: usize,
}

impl Shape {
    pub fn of<G: crate::games::Game>() -> Shape {
        Shape {
            planes: G::PLANES,
            height: G::HEIGHT,
            width: G::WIDTH,
            actions: G::NUM_ACTIONS,
        }
    }
    pub fn input_size(&self) -> usize {
        self.planes * self.height * self.width
    }
}

/// What a model is: saved as JSON in its file's header (under [`META_KEY`]); models saved before
/// that have it in a sidecar `.json` beside the weights, and still load.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelMeta {
    pub game: String,
    pub arch: Arch,
    pub shape: Shape,
    /// Which promotion this is (0 for the random initial network).
    pub generation: u32,
    /// Training steps taken in total.
    pub training_steps: u64,
    /// The iteration of the cycle that produced it.
    pub iteration: u32,
    /// Free-form configuration of the run that made it.
    #[serde(default)]
    pub config: serde_json::Value,
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

/// A network's layers: a residual network, or alpha-zero-general's plain convolutions.
// One per network: the size difference does not matter.
#[allow(clippy::large_enum_variant)]
pub(super) enum Body {
    Resnet(ResnetBody),
    AzgConv(AzgBody),
}

/// A network and its variables. Owned by one thread (tensors are not `Sync`).
pub struct Net {
    pub vs: nn::VarStore,
    pub(super) body: Body,
    pub meta: ModelMeta,
    /// What the trunk computes in (not part of the model: the same weights either way).
    precision: Precision,
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
        let azg = matches!(arch, Arch::AzgConv { .. });
        if azg && (shape.height < 5 || shape.width < 5) {
            bail!("the azg-conv shape needs a board of at least 5x5");
        }
        if arch.numbers(shape).is_none() {
            bail!("a {arch} network is too large to build");
        }
        let vs = nn::VarStore::new(device);
        let p = vs.root();
        let body = match arch {
            Arch::Resnet { .. } => Body::Resnet(ResnetBody::new(p, arch, shape)?),
            Arch::AzgConv { channels } => Body::AzgConv(AzgBody::new(p, channels, shape)),
        };
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
        match &self.body {
            Body::Resnet(body) => body.forward_heads(xs, train, trunk),
            Body::AzgConv(body) => body.forward_heads(xs, train, trunk),
        }
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

    /// Saves the model as one safetensors file, its description in the header, written
    /// atomically: a crash leaves the old file or the new one, never a mix. A sidecar `.json`
    /// left beside it by an older version is removed afterwards.
    pub fn save(&self, path: &Path) -> Result<()> {
        if path.extension().and_then(|e| e.to_str()) != Some("safetensors") {
            bail!("model files end in .safetensors (got {})", path.display());
        }
        let bytes = self
            .to_bytes()
            .with_context(|| format!("cannot save {}", path.display()))?;
        write_atomic(path, &bytes)?;
        remove_stale_sidecar(path)
    }

    /// The bytes of the model file [`Net::save`] writes.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut named: Vec<(String, Tensor)> = self.vs.variables().into_iter().collect();
        named.sort_by(|a, b| a.0.cmp(&b.0));
        let meta = HashMap::from([(META_KEY.to_string(), serde_json::to_string(&self.meta)?)]);
        to_safetensors_bytes(&named, Some(meta))
    }

    /// The description in the bytes of a model file, as [`Net::read_meta`] reads it; `path`
    /// names the file in errors (and locates an older model's sidecar).
    pub fn read_meta_bytes(path: &Path, bytes: &[u8]) -> Result<ModelMeta> {
        let header = read_safetensors_metadata(bytes, bytes.len() as u64)
            .map_err(|e| not_a_model(path, e))?;
        meta_from_header(path, &header)
    }

    /// Reads a model's description from its header only (cheap, however large the model).
    pub fn read_meta(path: &Path) -> Result<ModelMeta> {
        let file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
                "no model at {} (train one with `zero cycle`, or point to another file)",
                path.display()
            ),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        let len = file
            .metadata()
            .with_context(|| format!("cannot read {}", path.display()))?
            .len();
        let header = read_safetensors_metadata(std::io::BufReader::new(file), len)
            .map_err(|e| not_a_model(path, e))?;
        meta_from_header(path, &header)
    }

    /// Loads a model for `game`, checking it was made for that game and shape.
    pub fn load(path: &Path, game: &str, shape: Shape, device: Device) -> Result<Net> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
                "no model at {} (train one with `zero cycle --game {game}`, or give another \
                 --models directory)",
                path.display()
            ),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        Net::load_bytes(path, &bytes, game, shape, device)
    }

    /// A model from the bytes of its file, checked as [`Net::load`] checks it; `path` names
    /// the file in errors (and locates an older model's sidecar).
    pub fn load_bytes(
        path: &Path,
        bytes: &[u8],
        game: &str,
        shape: Shape,
        device: Device,
    ) -> Result<Net> {
        let (named, header) = from_safetensors_bytes(bytes).map_err(|e| not_a_model(path, e))?;
        let meta = meta_from_header(path, &header)?;
        if meta.game != game {
            bail!(
                "{} is a {} model, not a {game} model",
                path.display(),
                meta.game
            );
        }
        if meta.shape != shape {
            bail!(
                "{} has input/output shape {:?}, the game needs {:?}",
                path.display(),
                meta.shape,
                shape
            );
        }
        // The description must fit the tensors before a network of its size is built: a
        // damaged description could otherwise ask for any amount of memory.
        let held = named
            .iter()
            .try_fold(0i64, |total, (_, t)| total.checked_add(t.numel() as i64));
        let needed = meta.arch.numbers(shape);
        if needed.is_none() || needed != held {
            let needed = needed.map_or("too many".to_string(), |n| n.to_string());
            let held = held.map_or("too many".to_string(), |n| n.to_string());
            return Err(not_a_model(
                path,
                format!(
                    "its tensors hold {held} numbers, the network shape its description gives \
                     ({}) has {needed}",
                    meta.arch
                ),
            ));
        }
        let mut net = Net::new(game, meta.arch, shape, device)?;
        net.copy_weights(path, named)?;
        net.meta = meta;
        Ok(net)
    }

    /// Copies the tensors of the file at `path` into the variables: every variable must be
    /// there with its shape and kind, and nothing else.
    fn copy_weights(&mut self, path: &Path, named: Vec<(String, Tensor)>) -> Result<()> {
        let mut file: HashMap<String, Tensor> = named.into_iter().collect();
        let mut vars: Vec<(String, Tensor)> = self.vs.variables().into_iter().collect();
        vars.sort_by(|a, b| a.0.cmp(&b.0));
        let _guard = tch::no_grad_guard();
        for (name, mut var) in vars {
            let src = file
                .remove(&name)
                .ok_or_else(|| not_a_model(path, format!("it has no tensor {name}")))?;
            if src.size() != var.size() || src.kind() != var.kind() {
                return Err(not_a_model(
                    path,
                    format!(
                        "{name} is {:?} of shape {:?}, the network needs {:?} of shape {:?}",
                        src.kind(),
                        src.size(),
                        var.kind(),
                        var.size()
                    ),
                ));
            }
            var.f_copy_(&src)
                .with_context(|| format!("cannot load {name} from {}", path.display()))?;
        }
        if let Some(extra) = file.keys().min() {
            return Err(not_a_model(
                path,
                format!(
                    "it holds {} tensors the network does not have, such as {extra}",
                    file.len()
                ),
            ));
        }
        Ok(())
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

/// The error for a file that is not a model this program can read.
fn not_a_model(path: &Path, why: impl std::fmt::Display) -> anyhow::Error {
    anyhow!(
        "{} is not a zero model ({why}); train it again or point to another file",
        path.display()
    )
}

/// Why a model's description in its header cannot be read. A field this program does not know
/// (serde's "unknown field" message, which `Arch` gives for any key it does not have) comes
/// from a newer `zero` that describes a network this one cannot build: training again would
/// not help, updating would.
fn description_error(path: &Path, e: serde_json::Error) -> anyhow::Error {
    let message = e.to_string();
    if message.starts_with("unknown field") {
        return anyhow!(
            "{} was made by a newer zero: its description has a field this zero does not know \
             ({message}); update zero (`git pull`, then `./zero info` builds it) to use it",
            path.display()
        );
    }
    not_a_model(path, format!("its description is not valid: {e}"))
}

/// The description in a model's header, or else (a model saved before descriptions moved into
/// the file) in its sidecar.
fn meta_from_header(path: &Path, header: &FileMetadata) -> Result<ModelMeta> {
    if let Some(json) = header.get(META_KEY) {
        return serde_json::from_str(json).map_err(|e| description_error(path, e));
    }
    let side = sidecar(path);
    match std::fs::read_to_string(&side) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| {
            not_a_model(
                path,
                format!("its description {} is not valid: {e}", side.display()),
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(not_a_model(
            path,
            format!(
                "no model description in it, and no {} beside it",
                side.display()
            ),
        )),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", side.display())),
    }
}

/// Removes the sidecar beside `path` if it is a model description (a stale one, from before
/// descriptions moved into the model file); any other file of that name is left alone.
fn remove_stale_sidecar(path: &Path) -> Result<()> {
    let side = sidecar(path);
    let is_description = std::fs::read_to_string(&side)
        .ok()
        .is_some_and(|text| serde_json::from_str::<ModelMeta>(&text).is_ok());
    if is_description {
        std::fs::remove_file(&side)
            .with_context(|| format!("cannot remove the old {}", side.display()))?;
    }
    Ok(())
}

/// Every network made in this process draws its initial weights under this lock, so that a
/// seeded one ([`Net::new_seeded`]) is not disturbed by another drawn at the same time.
fn lock_torch_generator() -> std::sync::MutexGuard<'static, ()> {
    static TORCH_GENERATOR: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TORCH_GENERATOR
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Where a model saved by an older version keeps its description: `best.safetensors` →
/// `best.json`.
pub fn sidecar(path: &Path) -> PathBuf {
    path.with_extension("json")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::tictactoe::TicTacToe;

    const GAME: &str = "tictactoe";

    fn net(seed: u64) -> Net {
        let arch = Arch::resnet(1, 8);
        let mut net =
            Net::new_seeded(GAME, arch, Shape::of::<TicTacToe>(), Device::Cpu, seed).unwrap();
        net.meta.generation = 3;
        net.meta.training_steps = 120;
        net.meta.iteration = 4;
        net.meta.config = serde_json::json!({ "sims": 16, "note": "a \"quoted\" word" });
        net
    }

    fn load(path: &Path) -> Result<Net> {
        Net::load(path, GAME, Shape::of::<TicTacToe>(), Device::Cpu)
    }

    fn weights(net: &Net) -> Vec<(String, Vec<f32>)> {
        let mut vars: Vec<_> = net.vs.variables().into_iter().collect();
        vars.sort_by(|a, b| a.0.cmp(&b.0));
        vars.into_iter()
            .map(|(n, t)| (n, Vec::<f32>::try_from(&t.flatten(0, -1)).unwrap()))
            .collect()
    }

    #[test]
    fn a_saved_model_is_one_file_and_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("models/best.safetensors");
        let original = net(1);
        original.save(&path).unwrap();
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("best.safetensors")]);
        assert_eq!(Net::read_meta(&path).unwrap(), original.meta);
        let back = load(&path).unwrap();
        assert_eq!(back.meta, original.meta);
        assert_eq!(weights(&back), weights(&original));
        assert_ne!(weights(&back), weights(&net(2)));
        // Both give the same answers.
        let x: Vec<f32> = (0..2 * 27).map(|i| (i % 3) as f32 / 2.0).collect();
        let (mut p1, mut v1, mut p2, mut v2) =
            (vec![0.0; 18], vec![0.0; 2], vec![0.0; 18], [0.0; 2]);
        original.evaluate(&x, 2, &mut p1, &mut v1).unwrap();
        back.evaluate(&x, 2, &mut p2, &mut v2).unwrap();
        assert_eq!((p1, v1), (p2, v2.to_vec()));
    }

    #[test]
    fn models_saved_with_a_sidecar_still_load_and_the_sidecar_goes_on_saving() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("best.safetensors");
        let old = net(1);
        // As older versions saved: tch's own safetensors, the description beside it.
        old.vs.save(&path).unwrap();
        let side = sidecar(&path);
        std::fs::write(&side, serde_json::to_string_pretty(&old.meta).unwrap()).unwrap();
        assert_eq!(Net::read_meta(&path).unwrap(), old.meta);
        let back = load(&path).unwrap();
        assert_eq!(back.meta, old.meta);
        assert_eq!(weights(&back), weights(&old));
        // Saving again makes it one file.
        back.save(&path).unwrap();
        assert!(!side.exists());
        assert_eq!(load(&path).unwrap().meta, back.meta);
        // A file of that name that is not a description is left alone.
        let other = dir.path().join("state.safetensors");
        std::fs::write(dir.path().join("state.json"), "{\"iteration\": 3}").unwrap();
        back.save(&other).unwrap();
        assert!(dir.path().join("state.json").exists());
    }

    #[test]
    fn a_model_of_a_newer_zero_says_to_update_not_to_train_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("best.safetensors");
        let model = net(1);
        // As a later version would describe a network with a head this one cannot build.
        let mut meta = serde_json::to_value(&model.meta).unwrap();
        meta["arch"]["future_head"] = serde_json::json!(true);
        let mut named: Vec<(String, Tensor)> = model.vs.variables().into_iter().collect();
        named.sort_by(|a, b| a.0.cmp(&b.0));
        let header = HashMap::from([(META_KEY.to_string(), meta.to_string())]);
        std::fs::write(&path, to_safetensors_bytes(&named, Some(header)).unwrap()).unwrap();
        for e in [
            load(&path).err().unwrap(),
            Net::read_meta(&path).unwrap_err(),
        ] {
            let e = e.to_string();
            assert!(
                e.starts_with(&format!("{} was made by a newer zero", path.display())),
                "{e}"
            );
            assert!(e.contains("unknown field `future_head`"), "{e}");
            assert!(e.ends_with("update zero (`git pull`, then `./zero info` builds it) to use it"));
        }
    }

    #[test]
    fn damaged_and_missing_models_are_clear_errors_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("best.safetensors");
        let shown = path.display().to_string();
        net(1).save(&path).unwrap();
        let good = std::fs::read(&path).unwrap();
        let not_a_model = |e: &str| {
            e.starts_with(&format!("{shown} is not a zero model ("))
                && e.ends_with("); train it again or point to another file")
        };
        for bytes in [
            &good[..good.len() - 100],
            &good[..good.len() / 2],
            &good[..20],
            &good[..3],
            b"",
            &[0xa5; 5000][..],
            &[0x17; 3][..],
        ] {
            std::fs::write(&path, bytes).unwrap();
            let e = load(&path).err().unwrap().to_string();
            assert!(not_a_model(&e), "{e}");
            let e = Net::read_meta(&path).unwrap_err().to_string();
            assert!(not_a_model(&e), "{e}");
        }
        // Random bytes.
        let mut state = 0x1234_5678_u64;
        let random: Vec<u8> = (0..4096)
            .map(|_| {
                state = crate::core::rng::mix64(state);
                state as u8
            })
            .collect();
        std::fs::write(&path, &random).unwrap();
        let e = load(&path).err().unwrap().to_string();
        assert!(not_a_model(&e), "{e}");
        // Valid safetensors without a description, and no sidecar.
        net(1).vs.save(&path).unwrap();
        let e = load(&path).err().unwrap().to_string();
        assert!(not_a_model(&e) && e.contains("no model description"), "{e}");
        // Missing.
        let missing = dir.path().join("none.safetensors");
        let e = load(&missing).err().unwrap().to_string();
        assert!(
            e.starts_with(&format!("no model at {}", missing.display())),
            "{e}"
        );
        let e = Net::read_meta(&missing).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("no model at {}", missing.display())),
            "{e}"
        );
    }

    #[test]
    fn a_model_of_another_shape_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("best.safetensors");
        let mut n = net(1);
        // The description says 2 filters, the weights have 8.
        n.meta.arch = Arch::resnet(1, 2);
        n.save(&path).unwrap();
        let e = load(&path).err().unwrap().to_string();
        assert!(
            e.contains("is not a zero model") && e.contains("shape"),
            "{e}"
        );
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
                Arch::AzgConv { channels: 4 },
            ] {
                let built = match Net::new(GAME, arch, shape, Device::Cpu) {
                    Ok(net) => net,
                    // azg-conv needs a board of 5x5 at least.
                    Err(_) => {
                        assert!(shape.height < 5 && matches!(arch, Arch::AzgConv { .. }));
                        assert_eq!(arch.numbers(shape), None);
                        continue;
                    }
                };
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
        let xs = Tensor::rand([5, 3, 3, 3], (Kind::Float, Device::Cpu));
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
    fn a_network_saved_while_computing_in_bfloat16_saves_32_bit_weights() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bf16.safetensors");
        let original = net(5).with_precision(Precision::Bf16);
        original.save(&path).unwrap();
        let back = load(&path).unwrap();
        assert_eq!(back.precision(), Precision::F32);
        assert_eq!(weights(&back), weights(&original));
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
