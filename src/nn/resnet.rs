//! The residual network's layers (AlphaGo Zero's shape): input convolution, batch norm and
//! ReLU, residual blocks, a policy head and a value head (one number, or win/draw/loss).

use anyhow::{bail, Result};
use tch::{nn, Kind, TchError, Tensor};

use super::arch::{Arch, Shape};
use super::layers::{
    conv1, conv3, f_linear, is_wdl_output, value_from_head, value_outputs, Bn, Compute, Conv, Heads,
};

/// A residual block: two 3x3 convolutions, each with batch norm, ReLU after the first, then
/// the skip connection and ReLU.
pub(super) struct ResBlock {
    pub(super) conv1: Conv,
    pub(super) bn1: Bn,
    pub(super) conv2: Conv,
    pub(super) bn2: Bn,
}

/// The policy head's layers: a 1x1 convolution to two planes, batch norm and ReLU, then a
/// fully connected layer to one logit an action.
pub(super) struct PolicyLayers {
    pub(super) conv: Conv,
    pub(super) bn: Bn,
    pub(super) fc: nn::Linear,
}

impl PolicyLayers {
    /// New layers named `{prefix}_conv`, `{prefix}_bn` and `{prefix}_fc` under `p`, made in
    /// that order (the order draws their initial weights).
    fn new(p: &nn::Path, prefix: &str, filters: usize, shape: Shape) -> PolicyLayers {
        let cells = shape.height * shape.width;
        PolicyLayers {
            conv: conv1(p / format!("{prefix}_conv"), filters, 2),
            bn: Bn::new(p / format!("{prefix}_bn"), 2, 2),
            fc: nn::linear(
                p / format!("{prefix}_fc"),
                (2 * cells) as i64,
                shape.actions as i64,
                Default::default(),
            ),
        }
    }

    /// The logits for the trunk's output `x` (32-bit floats).
    fn f_forward(&self, x: &Tensor, train: bool, compute: Compute) -> Result<Tensor, TchError> {
        let p = self
            .bn
            .f_forward(&self.conv.f_forward(x, compute)?, train)?
            .f_relu()?;
        f_linear(&p.f_flatten(1, -1)?, &self.fc)
    }
}

/// A residual network's layers.
pub(super) struct ResnetBody {
    pub(super) conv: Conv,
    pub(super) bn: Bn,
    pub(super) blocks: Vec<ResBlock>,
    pub(super) policy: PolicyLayers,
    pub(super) value_conv: Conv,
    pub(super) value_bn: Bn,
    pub(super) value_fc1: nn::Linear,
    pub(super) value_fc2: nn::Linear,
}

impl ResnetBody {
    /// The layers of `arch`, made in the order that seeded weights depend on.
    pub(super) fn new(p: nn::Path, arch: Arch, shape: Shape) -> Result<ResnetBody> {
        let Arch::Resnet {
            blocks,
            filters,
            wdl,
        } = arch;
        let cells = shape.height * shape.width;
        if blocks == 0 || filters == 0 {
            bail!("a network needs at least one block and one filter");
        }
        // The value head reduces the trunk to one plane before its fully connected layers.
        let value_channels = 1;
        let bn = |q: nn::Path, c: usize| Bn::new(q, c, 2);
        Ok(ResnetBody {
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
            policy: PolicyLayers::new(&p, "policy", filters, shape),
            value_conv: conv1(&p / "value_conv", filters, value_channels),
            value_bn: bn(&p / "value_bn", value_channels),
            value_fc1: nn::linear(
                &p / "value_fc1",
                (cells * value_channels) as i64,
                64,
                Default::default(),
            ),
            value_fc2: nn::linear(&p / "value_fc2", 64, value_outputs(wdl), Default::default()),
        })
    }

    /// The heads' answers for inputs `xs` (see [`super::Net::forward_heads`]): the trunk
    /// computes as `trunk` says, the heads in 32-bit floats.
    pub(super) fn forward_heads(
        &self,
        xs: &Tensor,
        train: bool,
        trunk: Compute,
    ) -> Result<Heads, TchError> {
        let x = self.trunk_forward(xs, train, trunk)?;
        // The heads are small: 32-bit floats, whatever the trunk computed in.
        let float = Compute {
            kind: Kind::Float,
            ..trunk
        };
        let x = x.f_to_kind(float.kind)?;
        let policy = self.policy.f_forward(&x, train, float)?;
        let value_out = self.value_head(&x, train, float)?;
        let value = value_from_head(&value_out)?;
        let value_logits = is_wdl_output(&value_out).then_some(value_out);
        Ok(Heads {
            policy,
            value,
            value_logits,
        })
    }

    /// The trunk's output for inputs `xs`: the input convolution and the residual blocks.
    fn trunk_forward(&self, xs: &Tensor, train: bool, trunk: Compute) -> Result<Tensor, TchError> {
        let xs = xs.f_to_kind(trunk.kind)?;
        let mut x = self
            .bn
            .f_forward(&self.conv.f_forward(&xs, trunk)?, train)?
            .f_relu()?;
        for b in &self.blocks {
            let y = b.conv1.f_forward(&x, trunk)?;
            let y = b.bn1.f_forward(&y, train)?.f_relu()?;
            let y = b.bn2.f_forward(&b.conv2.f_forward(&y, trunk)?, train)?;
            x = y.f_add(&x)?.f_relu()?;
        }
        Ok(x)
    }

    /// The value head's last layer's output (one number, or win/draw/loss logits) for the
    /// trunk's output `x` in 32-bit floats.
    fn value_head(&self, x: &Tensor, train: bool, float: Compute) -> Result<Tensor, TchError> {
        let value = self
            .value_bn
            .f_forward(&self.value_conv.f_forward(x, float)?, train)?
            .f_relu()?
            .f_flatten(1, -1)?;
        let value = f_linear(&value, &self.value_fc1)?.f_relu()?;
        f_linear(&value, &self.value_fc2)
    }
}
