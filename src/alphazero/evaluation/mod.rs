//! Evaluation: the match of `latest` against `best` that decides a promotion, played whole or
//! in shards, and the grading of `best` on the game's evaluation set.

pub mod grading;
pub mod shards;
pub mod stage;
