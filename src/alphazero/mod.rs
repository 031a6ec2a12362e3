//! The AlphaZero pipeline: self-play with tree search and the best network ([`selfplay`],
//! records in [`records`]), training on a replay window ([`train`]), evaluation and promotion
//! ([`stages`]), and the resumable loop that runs them ([`cycle`]), with the run's settings
//! ([`config`], [`presets`]), files ([`paths`], [`state`]) and log ([`metrics`]). The network meets the
//! search in [`net_evaluator`]; [`player`] is the network as a player. [`report`] and [`chart`]
//! show a run's log as a table and an SVG chart (for `zero report` and `zero serve`).

mod adam;
pub mod chart;
pub mod config;
pub mod cycle;
pub mod eval_shards;
pub mod line_count;
pub mod metrics;
pub mod net_evaluator;
pub mod paths;
pub mod player;
pub mod policy_player;
pub mod reanalyse;
pub mod records;
pub mod report;
pub mod samples;
pub mod selfplay;
pub mod stage_clock;
pub mod stages;
pub mod state;
pub mod target_audit;
pub mod train;
pub mod train_checkpoint;
pub mod trained_search;
pub mod worker;
