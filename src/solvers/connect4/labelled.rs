//! Pascal Pons' test sets (tests/data/connect4): lines of `POSITION SCORE`, the position as
//! the columns played (1-7) and its exact score.

use std::path::Path;

use anyhow::{bail, Context, Result};

use super::possible_scores;
use crate::games::{Connect4, Game};

/// Reads a file of `POSITION SCORE` lines (Pascal Pons' test sets): each position as written,
/// parsed, and its exact score. A malformed line or a finished game is an error naming the line.
pub fn read_labelled_positions(path: &Path) -> Result<Vec<(String, Connect4, i32)>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read test file {}", path.display()))?;
    parse_labelled_positions(&text, &path.display().to_string())
}

/// The `POSITION SCORE` lines of `text`, as [`read_labelled_positions`] reads a file; `source`
/// names the text in errors.
pub fn parse_labelled_positions(text: &str, source: &str) -> Result<Vec<(String, Connect4, i32)>> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let at = || format!("{source} line {}", n + 1);
        let mut parts = line.split_whitespace();
        let (Some(moves), Some(score), None) = (parts.next(), parts.next(), parts.next()) else {
            bail!("{}: expected `POSITION SCORE`, got '{line}'", at());
        };
        let pos = Connect4::parse_position(moves).with_context(at)?;
        if pos.outcome().is_some() {
            bail!("{}: the game is already over", at());
        }
        let score: i32 = score
            .parse()
            .with_context(|| format!("{}: '{score}' is not a score", at()))?;
        let possible = possible_scores(pos.moves() as i32);
        if !possible.contains(&score) {
            bail!(
                "{}: score {score} is impossible after {} moves (scores are {} to {})",
                at(),
                pos.moves(),
                possible.start(),
                possible.end()
            );
        }
        out.push((moves.to_string(), pos, score));
    }
    Ok(out)
}
