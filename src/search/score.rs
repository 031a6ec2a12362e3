//! The integer score scale that alpha-beta and the exact solvers share, from the mover's view:
//! a finished game scores `WIN - ply` for a win and `-(WIN - ply)` for a loss, where `ply` is
//! the ply at which the game ended, so faster wins and slower losses score higher and the score
//! keeps the distance to the end; a draw scores 0; a heuristic value in [-1, 1] scores at most
//! `HEURISTIC_SCALE` in size, far from any finished game.

use crate::games::{Game, Outcome};

/// The score of a win at ply 0; no game here lasts more than 64 plies.
pub const WIN: i32 = 1_000_000;
/// Scores at least this large in size are finished games.
pub const DECIDED: i32 = WIN - 64;
/// The largest heuristic score in size.
pub const HEURISTIC_SCALE: i32 = 10_000;

/// The score of a finished game from the view of the side to move in `pos` (ended at `pos.ply()`).
pub fn outcome_score<G: Game>(pos: &G, outcome: Outcome) -> i32 {
    let v = outcome.value_for(pos.to_move());
    let decisive = WIN - pos.ply() as i32;
    if v > 0.0 {
        decisive
    } else if v < 0.0 {
        -decisive
    } else {
        0
    }
}

/// The score of a position with no legal move (the game is over).
pub fn terminal_score<G: Game>(pos: &G) -> i32 {
    // `legal_moves` is empty exactly when the game is over, so `outcome` is `Some` here; a
    // game that says otherwise is scored as a draw rather than a panic.
    pos.outcome().map_or(0, |o| outcome_score(pos, o))
}

/// The game's heuristic of an unfinished position on the integer scale.
pub fn heuristic_score<G: Game>(pos: &G) -> i32 {
    (pos.heuristic().clamp(-1.0, 1.0) * HEURISTIC_SCALE as f32).round() as i32
}

/// The game-theoretic result a score stands for: +1 win, 0 draw (or undecided), -1 loss.
pub fn score_sign(score: i32) -> i32 {
    if score >= DECIDED {
        1
    } else if score <= -DECIDED {
        -1
    } else {
        0
    }
}

/// For a decided score of `pos`, the number of plies until the game ends with best play.
pub fn plies_to_end<G: Game>(pos: &G, score: i32) -> Option<u32> {
    (score_sign(score) != 0).then(|| ((WIN - score.abs()) as u32).saturating_sub(pos.ply() as u32))
}

/// A transposition key: the game's key and the ply, since scores depend on the ply and
/// `Game::key` need not include it (Othello's passes).
pub fn position_key<G: Game>(pos: &G) -> u64 {
    // Every game's key fits in 56 bits (Connect Four's in 49) and no game lasts 256 plies.
    pos.key() ^ ((pos.ply() as u64) << 56)
}
