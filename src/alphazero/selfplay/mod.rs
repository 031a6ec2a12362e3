//! Self-play: the best network plays the iteration's games with tree search, and they are
//! written as records for training.

pub mod play;
pub mod records;
pub mod stage;
pub mod stats;
pub mod worker;
