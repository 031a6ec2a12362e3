//! Training: the replay window's records made into samples, and `latest` trained on them,
//! resumably.

mod adam;
pub mod checkpoint;
pub mod samples;
pub mod stage;
pub mod train;
