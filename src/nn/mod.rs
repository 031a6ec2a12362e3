//! The network: what it is (`arch`: its shape, size and description), the layers it is built
//! from (`layers`), building it and its forward pass (`net`; its layers: the residual `resnet`), its file (`model_file`) and the number
//! format it computes in (`precision`); what search asks of a network (`evaluator`), the
//! network folded for inference (`folded`), batched inference (`inference`), named tensors as
//! safetensors bytes (`tensors`: how models and training checkpoints are stored) and how many
//! threads libtorch computes with (`torch_threads`, `training_threads`).

pub mod arch;
pub mod evaluator;
pub mod folded;
pub mod inference;
pub mod layers;
pub mod model_file;
pub mod net;
pub mod precision;
pub mod resnet;
pub mod tensors;
pub mod torch_threads;
pub mod training_threads;

pub use arch::{Arch, ModelMeta, Shape};
pub use evaluator::Evaluator;
pub use folded::InferenceNet;
pub use inference::{InferenceClient, InferenceServer, InferenceStats, Metered};
pub use net::Net;
pub use precision::{CpuMatrixUnits, Precision};
pub use torch_threads::{caller_threads, set_caller_threads, use_caller_threads, TorchThreads};
pub use training_threads::training_threads;

/// The device to run on: CUDA where available, else CPU.
pub fn default_device() -> tch::Device {
    tch::Device::cuda_if_available()
}
