//! Domineering on a 5x5 board (Göran Andersson's game, in Gardner's column of 1974 and
//! Berlekamp, Conway and Guy's *Winning Ways*). Each move covers two empty adjacent cells with
//! a domino: Vertical (first) places them upright, Horizontal (second) lying down. A side that
//! cannot place one on its turn loses; there are no draws and no passes.
//!
//! A move is named by the domino's top or left cell, `a1`-`e5` (column letter, row 1 at the
//! top): Vertical's `b2` covers b2 and b3, Horizontal's `b2` covers b2 and c2. Cells are
//! numbered 0..25 in reading order and move `i` covers cell `i` and the one below (Vertical)
//! or to its right (Horizontal), so a click on a cell plays the domino that starts there.

use super::coords::{cell_name, parse_cell};
use super::{Game, GameError, Move, Moves, Outcome, Player, Symmetry};

const SIZE: usize = 5;
const CELLS: usize = SIZE * SIZE;
const FULL: u32 = (1 << CELLS) - 1;
/// Every cell but those of the bottom row: where a vertical domino can start.
const ABOVE_BOTTOM: u32 = FULL >> SIZE;
/// Every cell but those of the right column: where a horizontal domino can start.
const LEFT_OF_RIGHT: u32 = {
    let mut mask = 0;
    let mut i = 0;
    while i < CELLS {
        if i % SIZE != SIZE - 1 {
            mask |= 1 << i;
        }
        i += 1;
    }
    mask
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Domineering {
    /// The cells covered by Vertical's dominoes and by Horizontal's.
    covered: [u32; 2],
}

impl Domineering {
    /// The cells covered by `player`'s dominoes, as a 25-bit mask in reading order.
    pub fn covered_by(&self, player: Player) -> u32 {
        self.covered[player.index()]
    }
    fn empty(&self) -> u32 {
        FULL & !(self.covered[0] | self.covered[1])
    }
    /// The cells where `player` can start a domino: its top or left cell.
    fn starts(&self, player: Player) -> u32 {
        let empty = self.empty();
        match player {
            Player::First => empty & (empty >> SIZE) & ABOVE_BOTTOM,
            Player::Second => empty & (empty >> 1) & LEFT_OF_RIGHT,
        }
    }
    /// The second cell of `player`'s domino that starts on cell `m`.
    pub fn partner(player: Player, m: Move) -> usize {
        match player {
            Player::First => m as usize + SIZE,
            Player::Second => m as usize + 1,
        }
    }
    /// A cell's name, `a1`-`e5`.
    pub fn cell_name(cell: usize) -> String {
        cell_name(cell, SIZE)
    }
}

impl Game for Domineering {
    const NAME: &'static str = "domineering";
    const NUM_ACTIONS: usize = CELLS;
    const HEIGHT: usize = SIZE;
    const WIDTH: usize = SIZE;
    /// Each move covers two of the 25 cells.
    const MAX_PLIES: usize = CELLS / 2;

    fn new() -> Self {
        Domineering::default()
    }
    fn to_move(&self) -> Player {
        if self.ply().is_multiple_of(2) {
            Player::First
        } else {
            Player::Second
        }
    }
    fn ply(&self) -> usize {
        (self.covered[0] | self.covered[1]).count_ones() as usize / 2
    }
    fn legal_moves(&self) -> Moves {
        let mut starts = self.starts(self.to_move());
        let mut out = Moves::new();
        while starts != 0 {
            out.push(starts.trailing_zeros() as Move);
            starts &= starts - 1;
        }
        out
    }
    fn is_legal(&self, m: Move) -> bool {
        (m as usize) < CELLS && self.starts(self.to_move()) >> m & 1 == 1
    }
    fn play(&mut self, m: Move) {
        debug_assert!(self.is_legal(m));
        let me = self.to_move();
        self.covered[me.index()] |= 1 << m | 1 << Self::partner(me, m);
    }
    fn outcome(&self) -> Option<Outcome> {
        let me = self.to_move();
        (self.starts(me) == 0).then_some(Outcome::Win(me.other()))
    }
    fn key(&self) -> u64 {
        self.covered[0] as u64 | (self.covered[1] as u64) << CELLS
    }
    fn encode(&self, out: &mut [f32]) {
        let me = self.to_move();
        let (mine, theirs) = (self.covered_by(me), self.covered_by(me.other()));
        let flag = if me == Player::First { 1.0 } else { 0.0 };
        for i in 0..CELLS {
            out[i] = (mine >> i & 1) as f32;
            out[CELLS + i] = (theirs >> i & 1) as f32;
            out[2 * CELLS + i] = flag;
        }
    }
    /// Only the identity: a mirror maps a domino's top or left cell to its bottom or right one
    /// for one of the two sides, so no map of moves fits both sides' dominoes at once.
    fn symmetries() -> Vec<Symmetry> {
        vec![Symmetry {
            cells: (0..CELLS).collect(),
            actions: (0..CELLS).collect(),
        }]
    }
    /// The mover's room against the opponent's: the places each can still start a domino.
    fn heuristic(&self) -> f32 {
        let me = self.to_move();
        let mine = self.starts(me).count_ones() as f32;
        let theirs = self.starts(me.other()).count_ones() as f32;
        ((mine - theirs) / 10.0).clamp(-1.0, 1.0)
    }
    /// Column letters above, row numbers on the left; `▮` Vertical's cells, `▬` Horizontal's.
    fn display(&self) -> String {
        let mut s = String::from("   a b c d e\n");
        for r in 0..SIZE {
            s.push_str(&format!("{} ", r + 1));
            for c in 0..SIZE {
                let bit = 1 << (r * SIZE + c);
                s.push(' ');
                s.push(if self.covered[0] & bit != 0 {
                    '▮'
                } else if self.covered[1] & bit != 0 {
                    '▬'
                } else {
                    '.'
                });
            }
            s.push('\n');
        }
        s
    }
    fn parse_move(&self, s: &str) -> Result<Move, GameError> {
        match parse_cell(&s.trim().to_ascii_lowercase(), SIZE, SIZE) {
            Some(cell) => Ok(cell as Move),
            None => Err(GameError::BadMove {
                input: s.to_string(),
                reason: "a domineering move is the domino's top or left cell, a1-e5 \
                         (column a-e, row 1 at the top)"
                    .into(),
            }),
        }
    }
    fn format_move(&self, m: Move) -> String {
        Self::cell_name(m as usize)
    }
    fn parse_position(s: &str) -> Result<Self, GameError> {
        let mut pos = Domineering::new();
        let text: Vec<char> = s.trim().chars().collect();
        for (i, pair) in text.chunks(2).enumerate() {
            let mv: String = pair.iter().collect();
            let bad = |reason: String| GameError::BadPosition {
                input: s.to_string(),
                reason: format!("move {} ('{mv}'): {reason}", i + 1),
            };
            let m = pos
                .parse_move(&mv)
                .map_err(|_| bad("moves are cells a1-e5 written one after another".into()))?;
            pos.try_play(m).map_err(|e| bad(e.to_string()))?;
        }
        Ok(pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_side_without_room_loses_and_moves_name_their_first_cell() {
        let start = Domineering::new();
        assert_eq!(start.legal_moves().len(), 20);
        assert_eq!(start.parse_move("b2"), Ok(6));
        assert_eq!(start.format_move(24), "e5");
        // Vertical may not start on the bottom row, Horizontal not in the right column.
        assert!(!start.is_legal(20));
        let mut pos = Domineering::parse_position("a1").unwrap();
        assert_eq!(pos.covered_by(Player::First), 1 | 1 << 5);
        assert!(!pos.is_legal(4) && pos.is_legal(3) && !pos.is_legal(0));
        pos.play(3);
        assert_eq!(pos.covered_by(Player::Second), 1 << 3 | 1 << 4);
        // A covered cell, a cell off the board, an odd letter are refused with the move's number.
        let taken = Domineering::parse_position("b2b3").unwrap_err();
        assert!(taken.to_string().contains("move 2 ('b3')"), "{taken}");
        assert!(Domineering::parse_position("b2x9").is_err());
        assert!(Domineering::parse_position("b2c").is_err());
        assert!(Domineering::parse_position("a5").is_err());
    }

    #[test]
    fn the_game_ends_when_the_mover_has_no_domino_to_place() {
        let mut pos = Domineering::new();
        let mut plies = 0;
        while pos.outcome().is_none() {
            let m = pos.legal_moves()[0];
            pos.play(m);
            plies += 1;
        }
        let loser = pos.to_move();
        assert_eq!(pos.outcome(), Some(Outcome::Win(loser.other())));
        assert!(pos.legal_moves().is_empty());
        assert!(plies <= Domineering::MAX_PLIES);
    }

    #[test]
    fn the_board_shows_each_sides_cells_by_its_mark() {
        let p = Domineering::parse_position("b2a1").unwrap();
        assert_eq!(
            p.display(),
            "   a b c d e\n1  ▬ ▬ . . .\n2  . ▮ . . .\n3  . ▮ . . .\n4  . . . . .\n5  . . . . .\n"
        );
    }
}
