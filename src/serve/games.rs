//! What the web page needs to know of each board game beyond its rules: its title, how a
//! person clicks a move (a column or a cell), the names of the sides, the board's cells, and
//! why a move is refused, in words for a person.

use serde::Serialize;

use super::solver_pool::PooledSolver;
use crate::agent::Agent;
use crate::games::othello4::PASS;
use crate::games::{Connect4, Game, Move, Othello4, Player, TicTacToe};
use crate::players::Playable;

/// How a person picks a move on the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// Click a column (Connect Four); the stone falls to the lowest empty cell.
    Columns,
    /// Click a cell (tic-tac-toe, Othello).
    Cells,
}

/// A board game as the web page shows it.
pub trait WebGame: Playable {
    /// The game's name for people.
    const TITLE: &'static str;
    const LAYOUT: Layout;
    /// The sides' names, first then second.
    const SIDES: [&'static str; 2];

    /// Why the legal-looking but refused move `m` cannot be played here (the game is not
    /// over): a full column, a taken cell, ...
    fn refusal(&self, m: Move) -> String;

    /// The `solver` player on the server's shared solvers, for a game whose solver needs them
    /// (Connect Four's); other games' solvers are cheap and built for each game.
    fn pooled_solver(_solver: PooledSolver) -> Option<Box<dyn Agent<Self>>> {
        None
    }

    /// Who holds each cell, top row first, left to right: 0 empty, 1 the first side's, 2 the second's.
    fn owners(&self) -> Vec<u8> {
        // The network input has the mover's stones in plane 0 and the opponent's in plane 1,
        // on the same top-first grid for every game, so no game needs its own code here.
        let n = <Self as Game>::cells();
        let mut planes = vec![0.0; Self::input_size()];
        self.encode(&mut planes);
        let (mover, other) = match self.to_move() {
            Player::First => (1, 2),
            Player::Second => (2, 1),
        };
        (0..n)
            .map(|i| {
                if planes[i] > 0.5 {
                    mover
                } else if planes[n + i] > 0.5 {
                    other
                } else {
                    0
                }
            })
            .collect()
    }
}

/// The name of a side of game `G`.
pub fn side_name<G: WebGame>(p: Player) -> &'static str {
    G::SIDES[p.index()]
}

impl WebGame for Connect4 {
    const TITLE: &'static str = "Connect Four";
    const LAYOUT: Layout = Layout::Columns;
    const SIDES: [&'static str; 2] = ["Red", "Yellow"];

    fn refusal(&self, m: Move) -> String {
        format!("column {} is full", m + 1)
    }
    fn pooled_solver(solver: PooledSolver) -> Option<Box<dyn Agent<Self>>> {
        Some(Box::new(solver))
    }
}

impl WebGame for TicTacToe {
    const TITLE: &'static str = "Tic-tac-toe";
    const LAYOUT: Layout = Layout::Cells;
    const SIDES: [&'static str; 2] = ["X", "O"];

    fn refusal(&self, m: Move) -> String {
        format!("cell {} is taken", m + 1)
    }
}

impl WebGame for Othello4 {
    const TITLE: &'static str = "4x4 Othello";
    const LAYOUT: Layout = Layout::Cells;
    const SIDES: [&'static str; 2] = ["Black", "White"];

    fn refusal(&self, m: Move) -> String {
        let must_pass = self.legal_moves().as_slice() == [PASS];
        let taken = m != PASS && self.owners()[m as usize] != 0;
        match (m == PASS, must_pass, taken) {
            (true, _, _) => "you cannot pass while you have a move".into(),
            (false, true, _) => "you have no move here: you must pass".into(),
            (false, false, true) => format!("{} is taken", self.format_move(m)),
            (false, false, false) => format!(
                "{} flips no disc: a move must outflank a line of the opponent's discs",
                self.format_move(m)
            ),
        }
    }
}

/// Runs a generic function for the board game a [`crate::games::GameKind`] names, with `G`
/// bound to its type; Blackjack, which is no board game, is a bad request.
#[macro_export]
macro_rules! with_web_game {
    ($kind:expr, $g:ident => $body:expr) => {
        $crate::with_board_game!($kind, $g => $body, else Err($crate::serve::errors::ApiError::bad(
            "blackjack is not a board game: the games here are connect4, tictactoe and othello4",
        )))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_top_first_whoever_moves() {
        // Connect Four: Red in column 4 then Yellow on top of it.
        let pos = Connect4::parse_position("44").unwrap();
        let cells = pos.owners();
        assert_eq!(cells.len(), 42);
        assert_eq!(cells[5 * 7 + 3], 1);
        assert_eq!(cells[4 * 7 + 3], 2);
        assert_eq!(cells.iter().filter(|&&c| c != 0).count(), 2);
        // Tic-tac-toe: X at 1, O at 5, X to move again.
        let pos = TicTacToe::parse_position("15").unwrap();
        assert_eq!(pos.owners(), vec![1, 0, 0, 0, 2, 0, 0, 0, 0]);
        // Othello's start: White on b2 and c3, Black on c2 and b3.
        let cells = Othello4::new().owners();
        assert_eq!((cells[5], cells[6], cells[9], cells[10]), (2, 1, 1, 2));
    }

    #[test]
    fn refusals_say_what_is_wrong() {
        let full = Connect4::parse_position("444444").unwrap();
        assert_eq!(full.refusal(3), "column 4 is full");
        let pos = Othello4::new();
        assert!(pos.refusal(5).contains("b2 is taken"));
        assert!(pos.refusal(0).contains("flips no disc"));
        assert!(pos.refusal(PASS).contains("cannot pass"));
    }
}
