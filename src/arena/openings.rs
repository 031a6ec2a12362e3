//! Random openings for matches: games 2k and 2k + 1 start from the same position, `plies`
//! uniformly random moves from the empty board, with the players' colours swapped.
//!
//! Why: two strong networks searching from the empty board play nearly the same game every
//! time (temperature over a sharp policy picks the same moves), so a 40-game match of
//! Connect Four ended 20-0 to whoever moved first and decided nothing. Openings drawn
//! uniformly, each played from both sides, spread the games over positions where the better
//! player shows, and a pair in which each side wins as the same colour is an honest draw.

use rand::Rng;

use crate::core::rng::{item_seed, rng_from_seed, streams};
use crate::games::{Game, Move};

/// The start of game `game` of a match seeded `seed`: the empty board after `plies` random
/// moves, the same for both games of a pair. A move that would end the game is never drawn,
/// and the opening stops early where only such moves are left.
pub fn opening<G: Game>(seed: u64, game: u64, plies: u32) -> G {
    opening_moves::<G>(seed, game, plies).0
}

/// [`opening`] and the moves that lead to it from the empty board.
pub fn opening_moves<G: Game>(seed: u64, game: u64, plies: u32) -> (G, Vec<Move>) {
    let mut pos = G::new();
    let mut moves = Vec::new();
    if plies == 0 {
        return (pos, moves);
    }
    let mut rng = rng_from_seed(streams::OPENINGS.seed(item_seed(seed, game / 2), 0));
    for _ in 0..plies {
        let open: Vec<_> = pos
            .legal_moves()
            .into_iter()
            .filter(|&m| {
                let mut next = pos.clone();
                next.play(m);
                next.outcome().is_none()
            })
            .collect();
        if open.is_empty() {
            break;
        }
        let m = open[rng.random_range(0..open.len())];
        pos.play(m);
        moves.push(m);
    }
    (pos, moves)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::connect4::Connect4;
    use crate::games::tictactoe::TicTacToe;
    use std::collections::HashSet;

    #[test]
    fn pairs_share_an_opening_and_openings_spread() {
        let at = |g: u64| opening::<Connect4>(3, g, 4);
        for pair in 0..50 {
            assert_eq!(at(2 * pair), at(2 * pair + 1));
            assert_eq!(at(2 * pair).ply(), 4);
        }
        let distinct: HashSet<_> = (0..50).map(|p| at(2 * p).key()).collect();
        // 50 of 2,401 move orders: nearly all distinct.
        assert!(distinct.len() >= 45, "{}", distinct.len());
        // No plies: the empty board; another seed: other openings.
        assert_eq!(opening::<Connect4>(3, 0, 0), Connect4::new());
        let other: HashSet<_> = (0..50)
            .map(|p| opening::<Connect4>(4, 2 * p, 4).key())
            .collect();
        assert!(other != distinct);
    }

    #[test]
    fn an_opening_never_ends_the_game() {
        // Tic-tac-toe has 9 plies: asking for all of them stops before the end.
        for game in 0..200 {
            let pos = opening::<TicTacToe>(1, game, 9);
            assert!(pos.outcome().is_none(), "{}", pos.display());
            assert!(pos.ply() >= 5);
        }
    }
}
