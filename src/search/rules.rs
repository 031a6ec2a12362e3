//! The `rules` player of tic-tac-toe: the material's strongest hand-written rule set, applied
//! in priority order, each rule narrowing the candidate moves:
//!
//! 1. win now if a move does;
//! 2. never leave the opponent an immediate win: keep the moves after which the opponent has
//!    the fewest "two of theirs and an empty cell" lines (none when a block exists);
//! 3. make a fork: a move that leaves two or more "two of mine and an empty cell" lines;
//! 4. after three moves, with the opponent on both ends of a diagonal and us in the centre,
//!    play an edge (a corner would let the opponent fork);
//! 5. otherwise score each move by the lines it leaves: +2 for exactly one "two of mine and an
//!    empty cell", +0.5 for each "one of mine and two empty", -1 for each "one of theirs and
//!    two empty", and keep the best.
//!
//! The player picks at random (seeded) among the moves that survive.

use anyhow::{bail, Result};
use rand::Rng;

use crate::agent::Agent;
use crate::core::rng::{rng_from_seed, Rng64};
use crate::games::tictactoe::LINES;
use crate::games::{Game, Move, Moves, TicTacToe};

const CENTRE: u16 = 1 << 4;
const EDGES: u16 = (1 << 1) | (1 << 3) | (1 << 5) | (1 << 7);
const DIAGONALS: [u16; 2] = [(1 << 0) | (1 << 8), (1 << 2) | (1 << 6)];

/// Lines holding exactly `k` of `own`'s stones and none of `other`'s.
fn open_lines(own: u16, other: u16, k: u32) -> i32 {
    LINES
        .iter()
        .filter(|&&l| (own & l).count_ones() == k && other & l == 0)
        .count() as i32
}

fn keep_best(moves: &Moves, score: impl Fn(Move) -> i32) -> Moves {
    let best = moves.iter().map(|&m| score(m)).max().unwrap_or(0);
    moves
        .iter()
        .copied()
        .filter(|&m| score(m) == best)
        .collect()
}

/// The moves the rules allow in `pos` (the player picks one at random); empty if it is over.
pub fn rule_moves(pos: &TicTacToe) -> Moves {
    let me = pos.to_move();
    let (mine, theirs) = (pos.stones(me), pos.stones(me.other()));
    let moves = pos.legal_moves();
    let after = |m: Move| mine | 1 << m;

    let wins: Moves = moves
        .iter()
        .copied()
        .filter(|&m| LINES.iter().any(|&l| after(m) & l == l))
        .collect();
    if !wins.is_empty() {
        return wins;
    }

    let safe = keep_best(&moves, |m| -open_lines(theirs, after(m), 2));

    let forks: Moves = safe
        .iter()
        .copied()
        .filter(|&m| open_lines(after(m), theirs, 2) >= 2)
        .collect();
    if !forks.is_empty() {
        return forks;
    }

    if pos.ply() == 3 && mine == CENTRE && DIAGONALS.contains(&theirs) {
        let edges: Moves = safe
            .iter()
            .copied()
            .filter(|&m| EDGES >> m & 1 == 1)
            .collect();
        if !edges.is_empty() {
            return edges;
        }
    }

    // The material's weights +2, +0.5 and -1, doubled to stay in integers.
    keep_best(&safe, |m| {
        let mine = after(m);
        let threat = if open_lines(mine, theirs, 2) == 1 {
            4
        } else {
            0
        };
        threat + open_lines(mine, theirs, 1) - 2 * open_lines(theirs, mine, 1)
    })
}

/// The `rules` player.
pub struct RulesAgent {
    rng: Rng64,
}

impl RulesAgent {
    pub fn new() -> Self {
        RulesAgent {
            rng: rng_from_seed(0),
        }
    }
}

impl Default for RulesAgent {
    fn default() -> Self {
        Self::new()
    }
}

impl Agent<TicTacToe> for RulesAgent {
    fn new_game(&mut self, seed: u64) {
        self.rng = rng_from_seed(seed);
    }
    fn choose(&mut self, pos: &TicTacToe) -> Result<Move> {
        let moves = rule_moves(pos);
        if moves.is_empty() {
            bail!("no legal move: the game is over");
        }
        Ok(moves[self.rng.random_range(0..moves.len())])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::{Outcome, Player};

    fn moves_of(s: &str) -> Vec<Move> {
        let pos = TicTacToe::parse_position(s).unwrap();
        rule_moves(&pos).to_vec()
    }

    #[test]
    fn wins_blocks_forks_and_the_diagonal_case() {
        // X 1 2, O 4 5: X wins at 3 rather than blocking 6
        assert_eq!(moves_of("1425"), [2]);
        // X 1 2, O 5: O must block at 3
        assert_eq!(moves_of("152"), [2]);
        // X 1 9, O 5: an edge, not a corner
        let mut edges = moves_of("159");
        edges.sort();
        assert_eq!(edges, [1, 3, 5, 7]);
        // X at cells 1 and 5, O at 9 and 2: X forks at 4 (1-4-7 and 4-5-6) or 7 (1-4-7 and
        // 3-5-7)
        let mut forks = moves_of("1952");
        forks.sort();
        assert_eq!(forks, [3, 6]);
        // the opening: X takes the centre or a corner (each leaves the most open lines)
        assert_eq!(moves_of(""), [4]);
    }

    /// Every game the rules can play against every possible opponent, both sides: the rules
    /// never lose.
    #[test]
    fn rules_never_lose_to_any_opponent() {
        fn walk(pos: TicTacToe, rules_side: Player, games: &mut u64) {
            match pos.outcome() {
                Some(Outcome::Win(p)) => {
                    assert_eq!(p, rules_side, "the rules lost:\n{}", pos.display());
                    *games += 1;
                    return;
                }
                Some(Outcome::Draw) => {
                    *games += 1;
                    return;
                }
                None => {}
            }
            let moves = if pos.to_move() == rules_side {
                rule_moves(&pos)
            } else {
                pos.legal_moves()
            };
            for m in moves {
                let mut next = pos;
                next.play(m);
                walk(next, rules_side, games);
            }
        }
        for side in [Player::First, Player::Second] {
            let mut games = 0;
            walk(TicTacToe::new(), side, &mut games);
            assert!(games > 100);
        }
    }
}
