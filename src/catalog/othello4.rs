//! 4x4 Othello's facts: discs on a green board, a pass, and why a move is refused.

use super::{owners, Board, Catalogued, Layout, PresetFamily, Pretrained, Side, Stones};
use crate::games::othello4::PASS;
use crate::games::{Game, Move, Othello4};
use crate::search::mcts::SearchKind;

impl Catalogued for Othello4 {
    const TITLE: &'static str = "4x4 Othello";
    const BOARD: Board = Board {
        layout: Layout::Cells,
        stones: Stones::Discs,
        colour: "#1f5a3a",
        cell: "#2f7d52",
    };
    const SIDES: [Side; 2] = [
        Side {
            name: "Black",
            mark: "●",
            colour: "#111111",
        },
        Side {
            name: "White",
            mark: "◯",
            colour: "#ffffff",
        },
    ];
    // More opening variety than tic-tac-toe's, and fewer steps an iteration
    // (docs/decisions.md, "The small games' preset").
    const PRESETS: PresetFamily = PresetFamily::SmallBoard {
        search: SearchKind::Puct,
        games: 200,
        random_opening_plies: 0,
        temperature_plies: 4,
        train_steps: 200,
    };

    fn pretrained() -> Option<Pretrained> {
        crate::shipped_network!("othello4")
    }
    fn refusal(&self, m: Move) -> String {
        let must_pass = self.legal_moves().as_slice() == [PASS];
        let taken = m != PASS && owners(self)[m as usize] != 0;
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
