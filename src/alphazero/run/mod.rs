//! The run on disk: where its files are, its settings and next stage, the loop that runs the
//! stages resumably, each stage's wall time, and the run's log.

pub mod best;
pub mod cycle;
pub mod metrics;
pub mod paths;
pub mod stage_clock;
pub mod state;
