//! alpha-zero-general's Connect Four network: four plain convolutions and two fully
//! connected layers before the heads, for comparing speed with that project.

use tch::{nn, Kind, TchError, Tensor};

use super::arch::Shape;
use super::layers::{conv3, f_linear, Bn, Compute, Conv, Heads};

/// alpha-zero-general's Connect Four network's layers.
pub(super) struct AzgBody {
    pub(super) convs: Vec<(Conv, Bn)>,
    pub(super) fc1: nn::Linear,
    pub(super) fc1_bn: Bn,
    pub(super) fc2: nn::Linear,
    pub(super) fc2_bn: Bn,
    pub(super) policy: nn::Linear,
    pub(super) value: nn::Linear,
}

impl AzgBody {
    /// alpha-zero-general's Connect Four network's layers, `channels` wide.
    pub(super) fn new(p: nn::Path, channels: usize, shape: Shape) -> AzgBody {
        let c = channels as i64;
        let bn2 = |q: nn::Path| Bn::new(q, channels, 2);
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
        AzgBody {
            convs,
            fc1: nn::linear(&p / "fc1", flat, 1024, Default::default()),
            fc1_bn: Bn::new(&p / "fc1_bn", 1024, 1),
            fc2: nn::linear(&p / "fc2", 1024, 512, Default::default()),
            fc2_bn: Bn::new(&p / "fc2_bn", 512, 1),
            policy: nn::linear(&p / "policy", 512, shape.actions as i64, Default::default()),
            value: nn::linear(&p / "value", 512, 1, Default::default()),
        }
    }

    /// Policy logits and values for inputs `xs`, the convolutions computing as `trunk` says.
    pub(super) fn forward_heads(
        &self,
        xs: &Tensor,
        train: bool,
        trunk: Compute,
    ) -> Result<Heads, TchError> {
        let mut x = xs.f_to_kind(trunk.kind)?;
        for (c, b) in &self.convs {
            x = b.f_forward(&c.f_forward(&x, trunk)?, train)?.f_relu()?;
        }
        let x = x.f_to_kind(Kind::Float)?;
        let x = f_linear(&x.f_flatten(1, -1)?, &self.fc1)?;
        let x = self.fc1_bn.f_forward(&x, train)?.f_relu()?;
        let x = self
            .fc2_bn
            .f_forward(&f_linear(&x, &self.fc2)?, train)?
            .f_relu()?;
        Ok(Heads {
            policy: f_linear(&x, &self.policy)?,
            value: f_linear(&x, &self.value)?.f_tanh()?.f_view([-1])?,
            value_logits: None,
        })
    }
}
