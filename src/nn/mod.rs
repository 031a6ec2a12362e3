//! The network (`net`), batched inference (`inference`) and named tensors as safetensors
//! bytes (`tensors`: how models and training checkpoints are stored).

pub mod inference;
pub mod net;
pub mod tensors;

pub use inference::{Evaluator, InferenceClient, InferenceServer, InferenceStats};
pub use net::{Arch, ModelMeta, Net, Shape};

/// The device to run on: CUDA where available, else CPU.
pub fn default_device() -> tch::Device {
    tch::Device::cuda_if_available()
}
