//! The network (`net`) and batched inference (`inference`).

pub mod inference;
pub mod net;

pub use inference::{Evaluator, InferenceClient, InferenceServer, InferenceStats};
pub use net::{Arch, ModelMeta, Net, Shape};

/// The device to run on: CUDA where available, else CPU.
pub fn default_device() -> tch::Device {
    tch::Device::cuda_if_available()
}
