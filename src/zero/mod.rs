//! The AlphaZero loop: self-play, training, evaluation and the cycle that runs them.

pub mod accuracy;
pub mod agent;
pub mod config;
pub mod cycle;
pub mod files;
pub mod records;
pub mod report;
pub mod selfplay;
pub mod train;
