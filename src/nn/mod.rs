//! The network (`net`; its layers: the residual `resnet`, or alpha-zero-general's plain
//! convolutions, `azg`) and the number format it computes in (`precision`), the network
//! folded for inference (`folded`), batched inference (`inference`), named tensors as
//! safetensors bytes (`tensors`: how models and training checkpoints are stored) and how many
//! threads libtorch computes with (`torch_threads`, `training_threads`).

pub mod azg;
pub mod folded;
pub mod inference;
pub mod net;
pub mod precision;
pub mod resnet;
pub mod tensors;
pub mod torch_threads;
pub mod training_threads;

pub use folded::InferenceNet;
pub use inference::{Evaluator, InferenceClient, InferenceServer, InferenceStats, Metered};
pub use net::{Arch, ModelMeta, Net, Shape};
pub use precision::{CpuMatrixUnits, Precision};
pub use torch_threads::{caller_threads, set_caller_threads, use_caller_threads, TorchThreads};
pub use training_threads::training_threads;

/// The device to run on: CUDA where available, else CPU.
pub fn default_device() -> tch::Device {
    tch::Device::cuda_if_available()
}
