//! Domineering's facts: Vertical's and Horizontal's cells drawn by their marks, why a domino
//! cannot go where it was clicked, and its exact solver, the generic alpha-beta one.

use std::path::Path;

use anyhow::Result;

use super::{owners, Board, Catalogued, Layout, PresetFamily, Pretrained, Side, Stones};
use crate::agent::Agent;
use crate::games::{Domineering, Game, Move, Player};
use crate::search::mcts::SearchKind;
use crate::solvers::exact::Exact;
use crate::solvers::negamax::{NegamaxAgent, NegamaxSolver, Tactics};

/// Table slots of a solver (24 bytes each): the start is solved in well under a second.
const TABLE_ENTRIES: usize = 1 << 18;

impl Tactics for Domineering {}

impl Catalogued for Domineering {
    const TITLE: &'static str = "Domineering";
    const BOARD: Board = Board {
        layout: Layout::Cells,
        stones: Stones::Marks,
        colour: "#d9cfbd",
        cell: "#f6f1e7",
    };
    const SIDES: [Side; 2] = [
        Side {
            name: "Vertical",
            mark: "▮",
            colour: "#2357c6",
        },
        Side {
            name: "Horizontal",
            mark: "▬",
            colour: "#c2410c",
        },
    ];
    // Gumbel's search, twice the games and two random plies first, so that the early
    // positions of random games that the evaluation set has are learned, and more steps so
    // that every seed's are (docs/decisions.md, "Domineering's preset").
    const PRESETS: PresetFamily = PresetFamily::SmallBoard {
        search: SearchKind::Gumbel,
        games: 400,
        random_opening_plies: 2,
        temperature_plies: 3,
        train_steps: 500,
    };

    fn refusal(&self, m: Move) -> String {
        let me = self.to_move();
        let partner = Domineering::partner(me, m);
        let here = self.format_move(m);
        let (next_to, edge, off) = match me {
            Player::First => (
                "below",
                "on the bottom row",
                partner >= Domineering::cells(),
            ),
            Player::Second => (
                "to its right",
                "in the right column",
                partner.is_multiple_of(Domineering::WIDTH),
            ),
        };
        let shape = format!(
            "{}'s domino covers {here} and the cell {next_to}",
            Self::SIDES[me.index()].name
        );
        if owners(self)[m as usize] != 0 {
            format!("{here} is covered")
        } else if off {
            format!("{shape}, but {here} is {edge}")
        } else {
            format!(
                "{shape}, but {} is covered",
                Domineering::cell_name(partner)
            )
        }
    }
    fn pretrained() -> Option<Pretrained> {
        crate::shipped_network!("domineering")
    }
    fn exact(_files: Option<&Path>) -> Result<Box<dyn Exact<Self>>> {
        Ok(Box::new(NegamaxSolver::<Domineering>::new(TABLE_ENTRIES)))
    }
    fn solver_agent(_files: &Path) -> Box<dyn Agent<Self>> {
        Box::new(NegamaxAgent::<Domineering>::new(TABLE_ENTRIES))
    }
}
