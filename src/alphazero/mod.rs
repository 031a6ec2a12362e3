//! The AlphaZero pipeline, in a folder a phase of an iteration: [`selfplay`] (games played by
//! the best network with tree search, and their records), [`training`] (the replay window's
//! samples and the training of `latest`), [`evaluation`] (the match that promotes `latest` to
//! `best`, and the grading of `best`), and [`run`], the run on disk: the resumable loop that
//! runs the stages ([`run::cycle`]), its files, state and log. [`config`] holds the run's
//! settings; [`player`] is the network as a player (and where it meets the search); [`report`]
//! shows a run's log as a table and an SVG chart (for `zero report` and `zero serve`).
//! [`research`] holds the parts that serve research only: an option no preset uses, and
//! diagnostics of a run's records.

pub mod config;
pub mod evaluation;
pub mod player;
pub mod report;
pub mod research;
pub mod run;
pub mod selfplay;
pub mod training;
