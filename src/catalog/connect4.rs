//! Connect Four's facts: a board of columns, its book-backed solver shared by the server, the
//! evaluation set shipped with the binary, and presets of its own.

use std::path::Path;

use anyhow::Result;

use super::{Board, Catalogued, Layout, PresetFamily, Pretrained, Side, Stones};
use crate::agent::Agent;
use crate::arena::grading::{EvalSet, CONNECT4_EVALSET, CONNECT4_EVALSET_PATH};
use crate::games::{Connect4, Move};
use crate::solvers::connect4_book::{Oracle, SolverAgent};
use crate::solvers::exact::Exact;

/// Table entries of each solver of exact values: 2^22 (32 MiB), as the `solver` player's.
const TABLE_ENTRIES: usize = 1 << 22;

impl Catalogued for Connect4 {
    const TITLE: &'static str = "Connect Four";
    const BOARD: Board = Board {
        layout: Layout::Columns,
        stones: Stones::Discs,
        colour: "#2458c8",
        cell: "#eef2fb",
    };
    const SIDES: [Side; 2] = [
        Side {
            name: "Red",
            mark: "●",
            colour: "#e0413a",
        },
        Side {
            name: "Yellow",
            mark: "◯",
            colour: "#f4c430",
        },
    ];
    const PRESETS: PresetFamily = PresetFamily::Connect4;
    // The solver takes minutes from the empty board without a deep book.
    const PAGE_ENGINES: [&'static str; 2] = ["mcts:2000", "minimax:4"];
    const SHARED_SOLVERS: bool = true;
    const SOLVER_NOTE: &'static str =
        "positions of a few stones past the opening book take long to solve; a deeper book \
         helps (`zero solve --build-book 6 --data DIR` builds one in an hour or more, then \
         `zero serve --data DIR`)";

    fn refusal(&self, m: Move) -> String {
        format!("column {} is full", m + 1)
    }
    fn exact(files: Option<&Path>) -> Result<Box<dyn Exact<Self>>> {
        Ok(Box::new(Oracle::new(TABLE_ENTRIES, files)?))
    }
    fn solver_agent(files: &Path) -> Box<dyn Agent<Self>> {
        Box::new(SolverAgent::new(files))
    }
    fn pretrained() -> Option<Pretrained> {
        crate::shipped_network!("connect4")
    }
    fn eval_set() -> Result<EvalSet<Self>> {
        EvalSet::parse(CONNECT4_EVALSET, CONNECT4_EVALSET_PATH)
    }
}
