//! Tic-tac-toe's facts: cells marked X and O, and a rule-based player.

use super::{Board, Catalogued, Layout, PresetFamily, Pretrained, Side, Stones};
use crate::agent::Agent;
use crate::games::{Move, TicTacToe};
use crate::search::mcts::SearchKind;
use crate::search::rules::RulesAgent;

impl Catalogued for TicTacToe {
    const TITLE: &'static str = "Tic-tac-toe";
    const BOARD: Board = Board {
        layout: Layout::Cells,
        stones: Stones::Marks,
        colour: "#e3e7ee",
        cell: "#ffffff",
    };
    const SIDES: [Side; 2] = [
        Side {
            name: "X",
            mark: "X",
            colour: "#2357c6",
        },
        Side {
            name: "O",
            mark: "O",
            colour: "#e06a1b",
        },
    ];
    const PRESETS: PresetFamily = PresetFamily::SmallBoard {
        search: SearchKind::Puct,
        games: 200,
        random_opening_plies: 0,
        temperature_plies: 3,
        train_steps: 300,
    };

    fn refusal(&self, m: Move) -> String {
        format!("cell {} is taken", m + 1)
    }
    fn pretrained() -> Option<Pretrained> {
        crate::shipped_network!("tictactoe")
    }
    fn rules_agent() -> Option<Box<dyn Agent<Self>>> {
        Some(Box::new(RulesAgent::new()))
    }
}
