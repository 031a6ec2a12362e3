//! The solver's position: Pons' bitboard pair (the stones of the side to move, and all stones;
//! the layout is that of `games::connect4`), the cells where a side would complete four, the
//! moves that do not lose at once, and keys up to mirror symmetry.

use super::score::CELLS;
use crate::games::connect4::{bottom_mask_col, column_mask, has_four, BOARD, BOTTOM, H1, WIDTH};
use crate::games::Connect4;

/// Cells where `stones` would complete four in a row, among the cells not in `mask`.
#[inline]
fn winning_cells(stones: u64, mask: u64) -> u64 {
    // Vertical: the three stones right below.
    let mut r = (stones << 1) & (stones << 2) & (stones << 3);
    // Horizontal and both diagonals: the cell is the end or one of the two middle cells of a
    // line whose other three cells hold stones.
    for shift in [H1, H1 - 1, H1 + 1] {
        let p = (stones << shift) & (stones << (2 * shift));
        r |= p & (stones << (3 * shift));
        r |= p & (stones >> shift);
        let p = (stones >> shift) & (stones >> (2 * shift));
        r |= p & (stones << shift);
        r |= p & (stones >> (3 * shift));
    }
    r & (BOARD ^ mask)
}

/// The bits of column 0, sentinel included.
const COLUMN_BITS: u64 = (1 << H1) - 1;

/// The board seen in a mirror: column c becomes column 6 - c, a shift by 6 - 2c columns (each
/// written out, so that every shift is a constant). Keys mirror the same way, since
/// `current + mask` never carries from one column into the next.
#[inline]
fn mirror(b: u64) -> u64 {
    let c = |i: usize| b & (COLUMN_BITS << (i * H1));
    (c(0) << (6 * H1))
        | (c(1) << (4 * H1))
        | (c(2) << (2 * H1))
        | c(3)
        | (c(4) >> (2 * H1))
        | (c(5) >> (4 * H1))
        | (c(6) >> (6 * H1))
}

/// `col` as seen in the orientation of the canonical key: mirrored when `mirrored`. Its own
/// inverse, so it also turns a column stored with a canonical key back.
#[inline]
pub(super) fn orient(col: usize, mirrored: bool) -> usize {
    if mirrored {
        WIDTH - 1 - col
    } else {
        col
    }
}

/// The solver's view of a position: Pons' bitboard pair and the number of stones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    /// Stones of the side to move.
    current: u64,
    /// All stones.
    mask: u64,
    moves: i32,
}

impl Position {
    pub fn from_game(g: &Connect4) -> Position {
        Position {
            current: g.current(),
            mask: g.mask(),
            moves: g.moves() as i32,
        }
    }
    /// The number of stones played.
    #[inline]
    pub fn moves(&self) -> i32 {
        self.moves
    }
    /// Cells where a stone can go now.
    #[inline]
    fn possible(&self) -> u64 {
        (self.mask + BOTTOM) & BOARD
    }
    /// The empty cells where the opponent would complete four: its threats.
    #[inline]
    pub(super) fn opponent_winning_cells(&self) -> u64 {
        winning_cells(self.current ^ self.mask, self.mask)
    }
    #[inline]
    fn own_winning_cells(&self) -> u64 {
        winning_cells(self.current, self.mask)
    }
    /// The empty cells where the side to move would complete four after playing `cell`.
    #[inline]
    pub(super) fn winning_cells_after(&self, cell: u64) -> u64 {
        winning_cells(self.current | cell, self.mask | cell)
    }
    /// Whether the side to move can win with its next stone.
    #[inline]
    pub(super) fn can_win_next(&self) -> bool {
        self.own_winning_cells() & self.possible() != 0
    }
    pub fn can_play(&self, col: usize) -> bool {
        self.mask & column_mask(col) != column_mask(col)
    }
    pub fn is_winning_move(&self, col: usize) -> bool {
        self.own_winning_cells() & self.possible() & column_mask(col) != 0
    }
    /// Plays the stone `cell` (a single playable bit).
    #[inline]
    pub(super) fn play_cell(&mut self, cell: u64) {
        self.current ^= self.mask;
        self.mask |= cell;
        self.moves += 1;
    }
    pub fn play_col(&mut self, col: usize) {
        let cell = (self.mask + bottom_mask_col(col)) & column_mask(col);
        self.play_cell(cell);
    }
    /// The playable cells that do not hand the opponent (whose winning cells are `opponent_win`)
    /// a win at once; empty when every move loses (the opponent has two immediate wins, or one
    /// under a cell it also wins on).
    #[inline]
    pub(super) fn non_losing_moves(&self, opponent_win: u64) -> u64 {
        let mut possible = self.possible();
        let forced = possible & opponent_win;
        if forced != 0 {
            if forced & (forced - 1) != 0 {
                // Two cells to block at once.
                return 0;
            }
            possible = forced;
        }
        // Not right below an opponent's winning cell: it would play there next.
        possible & !(opponent_win >> 1)
    }
    /// Pons' key, unique per position: `current + mask` (the mask with a bit added above each
    /// column's stones, and the mover's stones).
    #[inline]
    fn key(&self) -> u64 {
        self.current + self.mask
    }
    /// The key of the position or of its mirror image, whichever is smaller, and whether it
    /// was the mirror's.
    #[inline]
    pub fn canonical_key(&self) -> (u64, bool) {
        let k = self.key();
        let m = mirror(k);
        if m < k {
            (m, true)
        } else {
            (k, false)
        }
    }
    /// Whether the side to move could still make four with every empty cell its own.
    #[inline]
    pub(super) fn can_ever_win(&self) -> bool {
        has_four(self.current | (BOARD & !self.mask))
    }
    /// Whether the opponent could still make four with every empty cell its own.
    #[inline]
    pub(super) fn opponent_can_ever_win(&self) -> bool {
        has_four((self.current ^ self.mask) | (BOARD & !self.mask))
    }
    /// The score when the side to move wins with its next stone.
    pub fn win_now_score(&self) -> i32 {
        (CELLS + 1 - self.moves) / 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::Game;

    fn pos(s: &str) -> Position {
        Position::from_game(&Connect4::parse_position(s).unwrap())
    }

    #[test]
    fn mirror_is_an_involution_and_flips_columns() {
        let p = pos("1123");
        let q = pos("7765");
        assert_eq!(mirror(p.key()), q.key());
        assert_eq!(mirror(mirror(p.key())), p.key());
        assert_eq!(p.canonical_key().0, q.canonical_key().0);
    }

    #[test]
    fn threats_and_moves_that_do_not_lose() {
        // The first player has three on the bottom row (columns 1-3); the second is to move.
        let p = pos("16263");
        let threats = p.opponent_winning_cells();
        assert_eq!(threats, bottom_mask_col(3));
        // The only move that does not lose is the block in column 4.
        assert_eq!(p.non_losing_moves(threats), bottom_mask_col(3));
        // The first player, to move, wins there at once.
        let q = pos("162637");
        assert!(q.can_win_next() && q.is_winning_move(3) && !q.is_winning_move(4));
    }
}
