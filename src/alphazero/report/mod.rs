//! A run's log shown: its rows, one an iteration, as a text table (`zero report`) and an SVG
//! chart (`zero serve`).

pub mod chart;
pub mod rows;
pub mod table;
