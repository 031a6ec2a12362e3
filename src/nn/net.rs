//! The dual policy/value network: input conv → BN → ReLU, residual blocks, a policy head
//! (logits over the game's actions) and a value head (tanh). Also a plain convolutional shape
//! like alpha-zero-general's Connect Four network, for comparing speed with it.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use tch::nn;
use tch::{Device, Kind, Tensor};

/// The shape of a network.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Arch {
    /// `blocks` residual blocks of `filters` 3x3 filters.
    Resnet { blocks: usize, filters: usize },
    /// alpha-zero-general's Connect Four network: 4 conv layers of `channels` (two padded,
    /// two valid), then fully connected 1024 and 512 with dropout-free batch norm.
    AzgConv { channels: usize },
}

impl std::fmt::Display for Arch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Arch::Resnet { blocks, filters } => write!(f, "resnet {blocks}x{filters}"),
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

/// The JSON sidecar saved beside the weights.
#[derive(Clone, Debug, Serialize, Deserialize)]
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

struct ResBlock {
    conv1: nn::Conv2D,
    bn1: nn::BatchNorm,
    conv2: nn::Conv2D,
    bn2: nn::BatchNorm,
}

// One per network: the size difference does not matter.
#[allow(clippy::large_enum_variant)]
enum Body {
    Resnet {
        conv: nn::Conv2D,
        bn: nn::BatchNorm,
        blocks: Vec<ResBlock>,
        policy_conv: nn::Conv2D,
        policy_bn: nn::BatchNorm,
        policy_fc: nn::Linear,
        value_conv: nn::Conv2D,
        value_bn: nn::BatchNorm,
        value_fc1: nn::Linear,
        value_fc2: nn::Linear,
    },
    AzgConv {
        convs: Vec<(nn::Conv2D, nn::BatchNorm)>,
        fc1: nn::Linear,
        fc1_bn: nn::BatchNorm,
        fc2: nn::Linear,
        fc2_bn: nn::BatchNorm,
        policy: nn::Linear,
        value: nn::Linear,
    },
}

/// A network and its variables. Owned by one thread (tensors are not `Sync`).
pub struct Net {
    pub vs: nn::VarStore,
    body: Body,
    pub meta: ModelMeta,
}

fn conv3(p: nn::Path, cin: usize, cout: usize, padding: i64) -> nn::Conv2D {
    let cfg = nn::ConvConfig {
        padding,
        bias: false,
        ..Default::default()
    };
    nn::conv2d(p, cin as i64, cout as i64, 3, cfg)
}

fn conv1(p: nn::Path, cin: usize, cout: usize) -> nn::Conv2D {
    let cfg = nn::ConvConfig {
        bias: false,
        ..Default::default()
    };
    nn::conv2d(p, cin as i64, cout as i64, 1, cfg)
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
        let vs = nn::VarStore::new(device);
        let p = vs.root();
        let cells = shape.height * shape.width;
        let body = match arch {
            Arch::Resnet { blocks, filters } => {
                if blocks == 0 || filters == 0 {
                    bail!("a network needs at least one block and one filter");
                }
                let bn = |q: nn::Path, c: usize| nn::batch_norm2d(q, c as i64, Default::default());
                Body::Resnet {
                    conv: conv3(&p / "input_conv", shape.planes, filters, 1),
                    bn: bn(&p / "input_bn", filters),
                    blocks: (0..blocks)
                        .map(|i| {
                            let q = &p / format!("block{i}");
                            ResBlock {
                                conv1: conv3(&q / "conv1", filters, filters, 1),
                                bn1: bn(&q / "bn1", filters),
                                conv2: conv3(&q / "conv2", filters, filters, 1),
                                bn2: bn(&q / "bn2", filters),
                            }
                        })
                        .collect(),
                    policy_conv: conv1(&p / "policy_conv", filters, 2),
                    policy_bn: bn(&p / "policy_bn", 2),
                    policy_fc: nn::linear(
                        &p / "policy_fc",
                        (2 * cells) as i64,
                        shape.actions as i64,
                        Default::default(),
                    ),
                    value_conv: conv1(&p / "value_conv", filters, 1),
                    value_bn: bn(&p / "value_bn", 1),
                    value_fc1: nn::linear(&p / "value_fc1", cells as i64, 64, Default::default()),
                    value_fc2: nn::linear(&p / "value_fc2", 64, 1, Default::default()),
                }
            }
            Arch::AzgConv { channels } => {
                if shape.height < 5 || shape.width < 5 {
                    bail!("the azg-conv shape needs a board of at least 5x5");
                }
                let c = channels as i64;
                let bn2 = |q: nn::Path| nn::batch_norm2d(q, c, Default::default());
                let convs = vec![
                    (
                        conv3(&p / "conv1", shape.planes, channels, 1),
                        bn2(&p / "bn1"),
                    ),
                    (conv3(&p / "conv2", channels, channels, 1), bn2(&p / "bn2")),
                    (conv3(&p / "conv3", channels, channels, 0), bn2(&p / "bn3")),
                    (conv3(&p / "conv4", channels, channels, 0), bn2(&p / "bn4")),
                ];
                let flat = c * (shape.height as i64 - 4) * (shape.width as i64 - 4);
                Body::AzgConv {
                    convs,
                    fc1: nn::linear(&p / "fc1", flat, 1024, Default::default()),
                    fc1_bn: nn::batch_norm1d(&p / "fc1_bn", 1024, Default::default()),
                    fc2: nn::linear(&p / "fc2", 1024, 512, Default::default()),
                    fc2_bn: nn::batch_norm1d(&p / "fc2_bn", 512, Default::default()),
                    policy: nn::linear(
                        &p / "policy",
                        512,
                        shape.actions as i64,
                        Default::default(),
                    ),
                    value: nn::linear(&p / "value", 512, 1, Default::default()),
                }
            }
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
        })
    }

    pub fn device(&self) -> Device {
        self.vs.device()
    }

    /// Number of trainable parameters.
    pub fn parameters(&self) -> i64 {
        self.vs
            .trainable_variables()
            .iter()
            .map(|t| t.numel() as i64)
            .sum()
    }

    /// Policy logits `[n, actions]` and values `[n]` for inputs `[n, planes, h, w]`.
    pub fn forward(&self, xs: &Tensor, train: bool) -> (Tensor, Tensor) {
        match &self.body {
            Body::Resnet {
                conv,
                bn,
                blocks,
                policy_conv,
                policy_bn,
                policy_fc,
                value_conv,
                value_bn,
                value_fc1,
                value_fc2,
            } => {
                let mut x = xs.apply(conv).apply_t(bn, train).relu();
                for b in blocks {
                    let y = x
                        .apply(&b.conv1)
                        .apply_t(&b.bn1, train)
                        .relu()
                        .apply(&b.conv2)
                        .apply_t(&b.bn2, train);
                    x = (y + x).relu();
                }
                let policy = x
                    .apply(policy_conv)
                    .apply_t(policy_bn, train)
                    .relu()
                    .flatten(1, -1)
                    .apply(policy_fc);
                let value = x
                    .apply(value_conv)
                    .apply_t(value_bn, train)
                    .relu()
                    .flatten(1, -1)
                    .apply(value_fc1)
                    .relu()
                    .apply(value_fc2)
                    .tanh()
                    .view([-1]);
                (policy, value)
            }
            Body::AzgConv {
                convs,
                fc1,
                fc1_bn,
                fc2,
                fc2_bn,
                policy,
                value,
            } => {
                let mut x = xs.shallow_clone();
                for (c, b) in convs {
                    x = x.apply(c).apply_t(b, train).relu();
                }
                let x = x
                    .flatten(1, -1)
                    .apply(fc1)
                    .apply_t(fc1_bn, train)
                    .relu()
                    .apply(fc2)
                    .apply_t(fc2_bn, train)
                    .relu();
                (x.apply(policy), x.apply(value).tanh().view([-1]))
            }
        }
    }

    /// Evaluates `n` encoded positions (no gradient): writes softmax policies over all actions
    /// (the caller masks illegal ones) and values.
    pub fn evaluate(&self, inputs: &[f32], n: usize, policies: &mut [f32], values: &mut [f32]) {
        let s = self.meta.shape;
        let _guard = tch::no_grad_guard();
        let xs = Tensor::from_slice(&inputs[..n * s.input_size()])
            .view([n as i64, s.planes as i64, s.height as i64, s.width as i64])
            .to_device(self.device());
        let (logits, v) = self.forward(&xs, false);
        let p = logits
            .softmax(-1, Kind::Float)
            .to_device(Device::Cpu)
            .contiguous();
        let v = v.to_device(Device::Cpu).contiguous();
        p.copy_data(&mut policies[..n * s.actions], n * s.actions);
        v.copy_data(&mut values[..n], n);
    }

    /// Saves the weights as `.safetensors` and the sidecar as `.json`, each written to a
    /// temporary file and renamed, so a crash never leaves a half-written model.
    pub fn save(&self, path: &Path) -> Result<()> {
        if path.extension().and_then(|e| e.to_str()) != Some("safetensors") {
            bail!("model files end in .safetensors (got {})", path.display());
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let tmp = path.with_extension("tmp.safetensors");
        self.vs
            .save(&tmp)
            .with_context(|| format!("cannot write {}", tmp.display()))?;
        let meta = serde_json::to_string_pretty(&self.meta)?;
        crate::core::files::write_atomic(&sidecar(path), meta.as_bytes())?;
        std::fs::rename(&tmp, path)
            .with_context(|| format!("cannot rename {} to {}", tmp.display(), path.display()))?;
        Ok(())
    }

    /// Reads a model's sidecar.
    pub fn read_meta(path: &Path) -> Result<ModelMeta> {
        let side = sidecar(path);
        let text = std::fs::read_to_string(&side).with_context(|| {
            format!(
                "cannot read the model description {} (is {} a model saved by zero?)",
                side.display(),
                path.display()
            )
        })?;
        serde_json::from_str(&text).with_context(|| format!("{} is not valid", side.display()))
    }

    /// Loads a model for `game`, checking it was made for that game and shape.
    pub fn load(path: &Path, game: &str, shape: Shape, device: Device) -> Result<Net> {
        if !path.exists() {
            bail!(
                "no model at {} (train one with `zero cycle --game {game}`, or give another \
                 --models directory)",
                path.display()
            );
        }
        let meta = Self::read_meta(path)?;
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
        let mut net = Net::new(game, meta.arch, shape, device)?;
        net.vs
            .load(path)
            .map_err(|e| anyhow!("cannot load weights from {}: {e}", path.display()))?;
        net.meta = meta;
        Ok(net)
    }

    /// A copy of this network on `device` (for the inference thread).
    pub fn try_clone(&self, device: Device) -> Result<Net> {
        let mut net = Net::new(&self.meta.game, self.meta.arch, self.meta.shape, device)?;
        net.vs.copy(&self.vs)?;
        net.meta = self.meta.clone();
        Ok(net)
    }
}

/// Every network made in this process draws its initial weights under this lock, so that a
/// seeded one ([`Net::new_seeded`]) is not disturbed by another drawn at the same time.
fn lock_torch_generator() -> std::sync::MutexGuard<'static, ()> {
    static TORCH_GENERATOR: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TORCH_GENERATOR
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The sidecar's path: `best.safetensors` → `best.json`.
pub fn sidecar(path: &Path) -> PathBuf {
    path.with_extension("json")
}
