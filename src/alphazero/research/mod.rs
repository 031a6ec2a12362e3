//! The parts that serve research only: MuZero Reanalyse (a training option no preset uses),
//! the audit of self-play's value targets (`zero targets`) and the count of lines a run's games
//! share (`zero lines`).

pub mod line_count;
pub mod reanalyse;
pub mod target_audit;
