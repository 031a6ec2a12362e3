//! The order children are searched in. Alpha-beta cuts off sooner the sooner it meets a good
//! move, so: the move that last cut off here (from the table) first, then the moves that create
//! the most threats, then centre first.

use super::position::Position;
use crate::games::connect4::{column_mask, COLUMN_ORDER, WIDTH};

/// Above every threat count (there are at most 42 cells), so the table's move sorts first.
const TABLE_MOVE_BONUS: u32 = 1000;

/// A move to search.
#[derive(Clone, Copy, Default)]
pub(super) struct Move {
    /// The stone's cell (a single bit).
    pub cell: u64,
    pub col: usize,
    /// How promising the move looks; higher first.
    score: u32,
}

/// The moves of a position, best first.
pub(super) struct MoveList {
    moves: [Move; WIDTH],
    len: usize,
}

impl MoveList {
    #[inline]
    pub(super) fn as_slice(&self) -> &[Move] {
        &self.moves[..self.len]
    }
    /// Inserts `m` after every move that scores at least as high: among equals the earlier
    /// one (the more central, as moves come in `COLUMN_ORDER`) stays first.
    #[inline]
    fn insert(&mut self, m: Move) {
        let mut j = self.len;
        while j > 0 && self.moves[j - 1].score < m.score {
            self.moves[j] = self.moves[j - 1];
            j -= 1;
        }
        self.moves[j] = m;
        self.len += 1;
    }
}

/// How promising playing `cell` looks: the open cells where the mover would then complete
/// four, not counting those right above an opponent's such cell (the opponent fills the cell
/// below first, or both are blocked). Pons counts them all; leaving those out saves nodes.
#[inline]
fn threat_score(p: &Position, cell: u64, opponent_threats: u64) -> u32 {
    (p.winning_cells_after(cell) & !(opponent_threats << 1)).count_ones()
}

impl MoveList {
    #[inline]
    pub(super) fn new() -> MoveList {
        MoveList {
            moves: [Move::default(); WIDTH],
            len: 0,
        }
    }
    /// Fills the list with the moves among `candidates` (playable cells), best first:
    /// `table_move`, then by `threat_score`, then centre first. Filled in place, as returning
    /// the list costs a copy of it at every node.
    #[inline]
    pub(super) fn order(
        &mut self,
        p: &Position,
        candidates: u64,
        opponent_threats: u64,
        table_move: Option<usize>,
    ) {
        for &col in COLUMN_ORDER.iter() {
            let cell = candidates & column_mask(col);
            if cell == 0 {
                continue;
            }
            let mut score = threat_score(p, cell, opponent_threats);
            if table_move == Some(col) {
                score += TABLE_MOVE_BONUS;
            }
            self.insert(Move { cell, col, score });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::connect4::bottom_mask_col;
    use crate::games::{Connect4, Game};

    fn columns(p: &Position, candidates: u64, table_move: Option<usize>) -> Vec<usize> {
        let mut list = MoveList::new();
        list.order(p, candidates, 0, table_move);
        list.as_slice().iter().map(|m| m.col).collect()
    }

    #[test]
    fn table_move_then_threats_then_centre() {
        let empty = Position::from_game(&Connect4::new());
        let all = (0..WIDTH).map(bottom_mask_col).sum();
        assert_eq!(columns(&empty, all, None), COLUMN_ORDER.to_vec());
        assert_eq!(columns(&empty, all, Some(6)), [6, 3, 2, 4, 1, 5, 0]);
        // The first player has stones in columns 2 and 3 (bottom row); a stone in column 4
        // makes two threats (columns 1 and 5), one in column 1 a single one (column 4).
        let p = Position::from_game(&Connect4::parse_position("2737").unwrap());
        let cells = bottom_mask_col(0) | bottom_mask_col(3) | bottom_mask_col(5);
        assert_eq!(columns(&p, cells, None), [3, 0, 5]);
    }
}
