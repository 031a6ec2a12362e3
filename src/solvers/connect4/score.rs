//! Pons' score scale, and what a score means in words.
//!
//! 0 is a draw. A side has at most `CELLS / 2` = 21 stones; winning with its k-th scores
//! `WIN_BASE - k` = 22 - k, so that a quicker win scores more and a win with the last stone
//! still scores 1. Losing to the opponent's k-th stone scores -(22 - k).

use crate::games::connect4::{HEIGHT, WIDTH};

/// Cells on the board; scores are computed from it, hence `i32`.
pub(super) const CELLS: i32 = (WIDTH * HEIGHT) as i32;
/// Winning with the k-th stone scores `WIN_BASE - k`.
const WIN_BASE: i32 = CELLS / 2 + 1;
/// The lowest score a position can have: losing to the opponent's 4th stone.
pub const MIN_SCORE: i32 = -(CELLS / 2) + 3;
/// The highest score a position can have: winning with the 4th stone.
pub const MAX_SCORE: i32 = (CELLS + 1) / 2 - 3;

/// The scores a position with `moves` stones can have: the side to move wins at the soonest
/// with its next stone, and loses at the soonest to the opponent's next one.
pub fn possible_scores(moves: i32) -> std::ops::RangeInclusive<i32> {
    (-(CELLS - moves) / 2).max(MIN_SCORE)..=((CELLS + 1 - moves) / 2).min(MAX_SCORE)
}

/// The outcome a score means, in words, naming the side to move (first or second player).
pub fn describe_score(score: i32, moves: i32) -> String {
    let (mover, other) = if moves % 2 == 0 {
        ("first player", "second player")
    } else {
        ("second player", "first player")
    };
    if score == 0 {
        return format!("draw with best play ({mover} to move)");
    }
    let k = WIN_BASE - score.abs();
    if score > 0 {
        // The mover has played moves / 2 stones (rounded down).
        let from_now = k - moves / 2;
        format!(
            "{mover} (to move) wins with its {} stone, the {} from now",
            ordinal(k),
            ordinal(from_now)
        )
    } else {
        // The other side has played (moves + 1) / 2 stones (rounded down).
        let from_now = k - (moves + 1) / 2;
        format!(
            "{mover} (to move) loses: the {other} wins with its {} stone, the {} from now",
            ordinal(k),
            ordinal(from_now)
        )
    }
}

/// For a won or lost score (not 0) of a position with `moves` stones, the stones played from
/// now until the game ends with best play, the winning one included.
pub fn stones_to_end(score: i32, moves: i32) -> Option<u32> {
    if score == 0 {
        return None;
    }
    // The winner wins with its k-th stone; the first player's k-th stone is the game's
    // (2k - 1)-th, the second player's its 2k-th.
    let k = WIN_BASE - score.abs();
    let mover_first = moves % 2 == 0;
    let winner_first = (score > 0) == mover_first;
    let last = if winner_first { 2 * k - 1 } else { 2 * k };
    Some((last - moves).max(0) as u32)
}

fn ordinal(n: i32) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scale_ends_at_a_win_with_the_fourth_stone() {
        assert_eq!((MIN_SCORE, MAX_SCORE), (-(WIN_BASE - 4), WIN_BASE - 4));
    }

    #[test]
    fn possible_scores_are_the_soonest_win_and_loss() {
        assert_eq!(possible_scores(0), MIN_SCORE..=MAX_SCORE);
        // The first player to move with 10 stones down has 5; its 6th can win (22 - 6).
        assert_eq!(possible_scores(10), -16..=16);
        // The second player with 11 down: 5 of its own, its 6th wins; the first's 7th loses.
        assert_eq!(possible_scores(11), -15..=16);
        assert_eq!(possible_scores(41), 0..=1);
    }

    #[test]
    fn stones_to_the_end() {
        // The first player wins with its 4th stone, the game's 7th, 3 stones after the 4th.
        assert_eq!(stones_to_end(18, 4), Some(3));
        // The first player wins with its 7th stone, the game's 13th: 2 after the 11th.
        assert_eq!(stones_to_end(-15, 11), Some(2));
        assert_eq!(stones_to_end(0, 11), None);
    }

    #[test]
    fn scores_in_words() {
        assert_eq!(
            describe_score(18, 4),
            "first player (to move) wins with its 4th stone, the 2nd from now"
        );
        assert_eq!(
            describe_score(-15, 11),
            "second player (to move) loses: the first player wins with its 7th stone, the 1st from now"
        );
        assert_eq!(
            describe_score(0, 3),
            "draw with best play (second player to move)"
        );
    }
}
