//! Squeeze-and-excitation (Hu, Shen and Sun, CVPR 2018), as Lc0's residual blocks use it:
//! each channel's mean over the board goes through two small fully connected layers, which
//! give every channel a gate (through a sigmoid) and a bias; the block's second convolution's
//! output is gated and shifted by them before the skip connection adds in.
//!
//! Why: a 3x3 convolution sees a cell's neighbours only, so a narrow trunk learns board-wide
//! facts (whose threats there are, how full the board is) slowly, over several blocks. The
//! channel means give every cell those facts at once, for a few thousand parameters and
//! arithmetic small beside the convolutions'.

use tch::{nn, Kind, TchError, Tensor};

/// The hidden layer's width: a quarter of the channels (Lc0's and the paper's ratio), at
/// least one.
pub fn hidden_width(channels: usize) -> usize {
    (channels / 4).max(1)
}

/// A block's squeeze-and-excitation: `fc1` channels → hidden, `fc2` hidden → 2 x channels
/// (the gates' logits, then the biases). 32-bit floats, whatever the trunk computes in.
pub struct SqueezeExcite {
    pub fc1: nn::Linear,
    pub fc2: nn::Linear,
}

impl SqueezeExcite {
    /// New layers under `p` for a trunk of `channels`.
    pub fn new(p: nn::Path, channels: usize) -> SqueezeExcite {
        let hidden = hidden_width(channels) as i64;
        let c = channels as i64;
        SqueezeExcite {
            fc1: nn::linear(&p / "se_fc1", c, hidden, Default::default()),
            fc2: nn::linear(&p / "se_fc2", hidden, 2 * c, Default::default()),
        }
    }

    /// `y` (`[n, c, h, w]`, any kind and layout) gated and shifted channel by channel:
    /// `sigmoid(gate) * y + bias`, gate and bias computed from `y`'s channel means.
    pub fn f_forward(&self, y: &Tensor) -> Result<Tensor, TchError> {
        let channels = y.size().get(1).copied().unwrap_or(0);
        let means = y.f_mean_dim([2i64, 3].as_slice(), false, Kind::Float)?;
        let hidden = means
            .f_linear(&self.fc1.ws, self.fc1.bs.as_ref())?
            .f_relu()?;
        let out = hidden
            .f_linear(&self.fc2.ws, self.fc2.bs.as_ref())?
            .f_view([-1, 2 * channels, 1, 1])?;
        let gate = out.f_narrow(1, 0, channels)?.f_sigmoid()?;
        let bias = out.f_narrow(1, channels, channels)?;
        // bias + y * gate in one pass, in 32 bits: in bfloat16 libtorch's broadcasting
        // addcmul took 13% of self-play's time (a profile of `zero bench selfplay --arch
        // 4x48+se` on an AMD Zen 4); with the casts self-play loses 18% instead of 23%.
        bias.f_addcmul(&y.f_to_kind(Kind::Float)?, &gate)?
            .f_to_kind(y.kind())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::Device;

    #[test]
    fn a_channel_is_gated_and_shifted_by_what_its_mean_and_the_others_say() {
        let vs = nn::VarStore::new(Device::Cpu);
        let se = SqueezeExcite::new(vs.root(), 4);
        let y = Tensor::randn([2, 4, 3, 3], (Kind::Float, Device::Cpu));
        let out = se.f_forward(&y).unwrap();
        assert_eq!(out.size(), vec![2, 4, 3, 3]);
        // By hand for position 0, channel 1: sigmoid(gate) * y + bias, from the means.
        let means = y.mean_dim([2i64, 3].as_slice(), false, Kind::Float);
        let h = means.linear(&se.fc1.ws, se.fc1.bs.as_ref()).relu();
        let g = h.linear(&se.fc2.ws, se.fc2.bs.as_ref());
        let (gate, bias) = (g.double_value(&[0, 1]), g.double_value(&[0, 5]));
        let expect = y.double_value(&[0, 1, 2, 0]) / (1.0 + (-gate).exp()) + bias;
        assert!((out.double_value(&[0, 1, 2, 0]) - expect).abs() < 1e-5);
    }

    #[test]
    fn the_hidden_layer_is_a_quarter_of_the_channels_and_never_empty() {
        assert_eq!(hidden_width(48), 12);
        assert_eq!(hidden_width(2), 1);
    }
}
