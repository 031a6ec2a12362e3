//! The residual network's layers (AlphaGo Zero's shape): input convolution, batch norm and
//! ReLU, residual blocks (optionally with squeeze-and-excitation), a policy head and a value
//! head, and the training-only heads an [`Arch::Resnet`] may add (final board, opponent policy,
//! soft policy).

use anyhow::{bail, Result};
use tch::{nn, Kind, TchError, Tensor};

use super::line_threats::with_threat_planes;
use super::net::{
    conv1, conv3, f_linear, is_wdl_output, value_from_head, value_outputs, Arch, Bn, Compute, Conv,
    Heads, Shape,
};
use super::squeeze_excite::SqueezeExcite;

/// A residual block: two 3x3 convolutions, each with batch norm, ReLU after the first,
/// squeeze-and-excitation after the second where the network has it, then the skip connection
/// and ReLU.
pub(super) struct ResBlock {
    pub(super) conv1: Conv,
    pub(super) bn1: Bn,
    pub(super) conv2: Conv,
    pub(super) bn2: Bn,
    pub(super) se: Option<SqueezeExcite>,
}

/// A policy head's layers: a 1x1 convolution to two planes, batch norm and ReLU, then a fully
/// connected layer to one logit an action. The policy head and the opponent-policy head
/// each have their own.
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
    /// The final-board head ([`Arch::Resnet`]'s `board_head`): a 1x1 convolution to one
    /// plane, batch norm, tanh.
    pub(super) board: Option<(Conv, Bn)>,
    /// The opponent-policy head ([`Arch::Resnet`]'s `opponent_policy_head`): the policy
    /// head's layers, its own weights.
    pub(super) opponent_policy: Option<PolicyLayers>,
    /// The soft-policy head ([`Arch::Resnet`]'s `soft_policy_head`): the policy head's
    /// layers, its own weights.
    pub(super) soft_policy: Option<PolicyLayers>,
    /// Whether the input gets the line-threat planes ([`Arch::Resnet`]'s `line_threats`).
    pub(super) line_threats: bool,
}

impl ResnetBody {
    /// The layers of `arch` (a residual one) for `game`, made in the order that seeded
    /// weights depend on.
    pub(super) fn new(p: nn::Path, game: &str, arch: Arch, shape: Shape) -> Result<ResnetBody> {
        let Arch::Resnet {
            blocks,
            filters,
            value_channels,
            board_head,
            wdl,
            squeeze_excite,
            opponent_policy_head,
            soft_policy_head,
            line_threats,
        } = arch
        else {
            bail!("a {arch} network is not a residual one");
        };
        let cells = shape.height * shape.width;
        if blocks == 0 || filters == 0 || value_channels == 0 {
            bail!("a network needs at least one block, one filter and one value channel");
        }
        if line_threats && game != "connect4" {
            bail!("line-threat planes (lines of four) are Connect Four's, not {game}'s");
        }
        let bn = |q: nn::Path, c: usize| Bn::new(q, c, 2);
        Ok(ResnetBody {
            conv: conv3(&p / "input_conv", arch.input_planes(shape), filters, 1),
            bn: bn(&p / "input_bn", filters),
            blocks: (0..blocks)
                .map(|i| {
                    let q = &p / format!("block{i}");
                    ResBlock {
                        conv1: conv3(&q / "conv1", filters, filters, 1),
                        bn1: bn(&q / "bn1", filters),
                        conv2: conv3(&q / "conv2", filters, filters, 1),
                        bn2: bn(&q / "bn2", filters),
                        se: squeeze_excite.then(|| SqueezeExcite::new(q, filters)),
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
            // Made last, so that the other variables draw the same initial weights
            // with the head as without it.
            board: board_head
                .then(|| (conv1(&p / "board_conv", filters, 1), bn(&p / "board_bn", 1))),
            opponent_policy: opponent_policy_head
                .then(|| PolicyLayers::new(&p, "opponent_policy", filters, shape)),
            soft_policy: soft_policy_head
                .then(|| PolicyLayers::new(&p, "soft_policy", filters, shape)),
            line_threats,
        })
    }

    /// The heads' answers for inputs `xs` (see [`super::Net::forward_heads`]): the trunk
    /// computes as `trunk` says, the heads in 32-bit floats.
    pub(super) fn forward_heads(
        &self,
        xs: &Tensor,
        train: bool,
        training_heads: bool,
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
        let training_head =
            |head: &Option<PolicyLayers>| match head.as_ref().filter(|_| training_heads) {
                Some(head) => head.f_forward(&x, train, float).map(Some),
                None => Ok(None),
            };
        let opponent_policy = training_head(&self.opponent_policy)?;
        let soft_policy = training_head(&self.soft_policy)?;
        let board = match self.board.as_ref().filter(|_| training_heads) {
            Some((c, b)) => Some(
                b.f_forward(&c.f_forward(&x, float)?, train)?
                    .f_tanh()?
                    .f_flatten(1, -1)?,
            ),
            None => None,
        };
        Ok(Heads {
            policy,
            value,
            value_logits,
            board,
            opponent_policy,
            soft_policy,
        })
    }

    /// The trunk's output for inputs `xs`: the input convolution and the residual blocks.
    fn trunk_forward(&self, xs: &Tensor, train: bool, trunk: Compute) -> Result<Tensor, TchError> {
        let xs = if self.line_threats {
            with_threat_planes(xs)?.f_to_kind(trunk.kind)?
        } else {
            xs.f_to_kind(trunk.kind)?
        };
        let mut x = self
            .bn
            .f_forward(&self.conv.f_forward(&xs, trunk)?, train)?
            .f_relu()?;
        for b in &self.blocks {
            let y = b.conv1.f_forward(&x, trunk)?;
            let y = b.bn1.f_forward(&y, train)?.f_relu()?;
            let mut y = b.bn2.f_forward(&b.conv2.f_forward(&y, trunk)?, train)?;
            if let Some(se) = &b.se {
                y = se.f_forward(&y)?;
            }
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
