//! The games by name, for choosing one at run time.

use super::{Connect4, Game, Othello4, TicTacToe};

/// The games on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GameKind {
    Connect4,
    TicTacToe,
    Othello4,
    Blackjack,
}

impl GameKind {
    /// Every game, in the order the command line lists them.
    pub const ALL: [GameKind; 4] = [
        GameKind::Connect4,
        GameKind::TicTacToe,
        GameKind::Othello4,
        GameKind::Blackjack,
    ];

    pub fn name(self) -> &'static str {
        match self {
            GameKind::Connect4 => Connect4::NAME,
            GameKind::TicTacToe => TicTacToe::NAME,
            GameKind::Othello4 => Othello4::NAME,
            GameKind::Blackjack => "blackjack",
        }
    }
}

impl std::fmt::Display for GameKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Runs a generic function for a board game chosen at run time:
/// `with_board_game!(kind, G => body)` with `G` bound to the game type inside `body`.
/// Blackjack is not a board game and gives an error; `with_board_game!(kind, G => body,
/// else error)` names the value to give instead.
#[macro_export]
macro_rules! with_board_game {
    ($kind:expr, $g:ident => $body:expr) => {
        $crate::with_board_game!($kind, $g => $body, else Err(anyhow::anyhow!(
            "blackjack is a single-player game with chance: use `zero mces` / `zero blackjack`"
        )))
    };
    ($kind:expr, $g:ident => $body:expr, else $other:expr) => {
        match $kind {
            $crate::games::GameKind::Connect4 => {
                type $g = $crate::games::Connect4;
                $body
            }
            $crate::games::GameKind::TicTacToe => {
                type $g = $crate::games::TicTacToe;
                $body
            }
            $crate::games::GameKind::Othello4 => {
                type $g = $crate::games::Othello4;
                $body
            }
            $crate::games::GameKind::Blackjack => $other,
        }
    };
}
