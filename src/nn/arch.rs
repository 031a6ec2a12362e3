//! What a network is: its shape ([`Arch`]) and how many numbers it holds, what it is for (the
//! game's sizes, [`Shape`]), and a model's description ([`ModelMeta`]).

use serde::{Deserialize, Serialize};

use super::layers::value_outputs;

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
}

fn is_false(x: &bool) -> bool {
    !*x
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

    /// The same network with the win/draw/loss value head.
    pub const fn with_wdl_head(self) -> Arch {
        let Arch::Resnet {
            blocks, filters, ..
        } = self;
        Arch::Resnet {
            blocks,
            filters,
            wdl: true,
        }
    }

    /// Whether the value head answers win/draw/loss logits instead of one number.
    pub fn has_wdl_head(&self) -> bool {
        matches!(self, Arch::Resnet { wdl: true, .. })
    }

    /// The multiply-adds of the residual trunk's convolutions for one position of `shape` (the
    /// bulk of a step's arithmetic on small boards); `None` when it does not fit in a `u64`.
    pub fn trunk_multiply_adds(&self, shape: Shape) -> Option<u64> {
        let Arch::Resnet {
            blocks, filters, ..
        } = *self;
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
    ///
    /// [`Net::new`]: super::Net::new
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
///
/// [`META_KEY`]: super::model_file::META_KEY
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
