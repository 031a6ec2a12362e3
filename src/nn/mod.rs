//! The network (`net`, its blocks' `squeeze_excite`) and the number format it computes in
//! (`precision`), the network folded
//! for inference (`folded`), batched inference (`inference`) and named tensors as safetensors
//! bytes (`tensors`: how models and training checkpoints are stored).

pub mod folded;
pub mod inference;
pub mod net;
pub mod precision;
pub mod squeeze_excite;
pub mod tensors;
pub mod training_threads;

pub use folded::InferenceNet;
pub use inference::{Evaluator, InferenceClient, InferenceServer, InferenceStats, Metered};
pub use net::{Arch, ModelMeta, Net, Shape};
pub use precision::Precision;
pub use training_threads::training_threads;

/// libtorch's CPU threads for as long as the guard lives, then what they were before: a stage
/// that runs alone (training) takes every core (one for small steps: [`training_threads`]),
/// while stages whose search threads each evaluate on their own keep libtorch at one thread a
/// caller.
pub struct TorchThreads {
    previous: i32,
}

impl TorchThreads {
    pub fn set(threads: usize) -> TorchThreads {
        let previous = tch::get_num_threads();
        tch::set_num_threads(threads.max(1) as i32);
        TorchThreads { previous }
    }
}

impl Drop for TorchThreads {
    fn drop(&mut self) {
        tch::set_num_threads(self.previous);
    }
}

/// The device to run on: CUDA where available, else CPU.
pub fn default_device() -> tch::Device {
    tch::Device::cuda_if_available()
}
