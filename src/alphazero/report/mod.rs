//! A run's log shown: a text table (`zero report`) and an SVG chart (`zero serve`).

pub mod chart;
pub mod table;
