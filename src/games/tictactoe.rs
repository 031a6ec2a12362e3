//! Tic-tac-toe on two 9-bit boards. Cells are numbered 0..9 in reading order; people see and
//! type them as `1`-`9` (coordinates `a1`-`c3`, column letter and row 1 at the top, are read
//! too, for older scripts).

use super::coords::parse_cell;
use super::{square_symmetries, Game, GameError, Move, Moves, Outcome, Player, Symmetry};

pub const LINES: [u16; 8] = [
    0b000_000_111,
    0b000_111_000,
    0b111_000_000,
    0b001_001_001,
    0b010_010_010,
    0b100_100_100,
    0b100_010_001,
    0b001_010_100,
];
const FULL: u16 = 0b111_111_111;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct TicTacToe {
    /// Stones of the first player (X) and the second (O).
    boards: [u16; 2],
}

// Tests whether a line is a subset of `b`; clippy mistakes this for a membership test.
#[allow(clippy::manual_contains)]
fn has_line(b: u16) -> bool {
    LINES.iter().any(|&l| b & l == l)
}

impl TicTacToe {
    /// Stones of `player` as a 9-bit mask.
    pub fn stones(&self, player: Player) -> u16 {
        self.boards[player.index()]
    }
    /// Empty cells as a 9-bit mask.
    pub fn empty(&self) -> u16 {
        FULL & !(self.boards[0] | self.boards[1])
    }
    fn winner(&self) -> Option<Player> {
        if has_line(self.boards[0]) {
            Some(Player::First)
        } else if has_line(self.boards[1]) {
            Some(Player::Second)
        } else {
            None
        }
    }
}

impl Game for TicTacToe {
    const NAME: &'static str = "tictactoe";
    const NUM_ACTIONS: usize = 9;
    const HEIGHT: usize = 3;
    const WIDTH: usize = 3;
    const MAX_PLIES: usize = 9;

    fn new() -> Self {
        TicTacToe::default()
    }
    fn to_move(&self) -> Player {
        if (self.boards[0] | self.boards[1])
            .count_ones()
            .is_multiple_of(2)
        {
            Player::First
        } else {
            Player::Second
        }
    }
    fn ply(&self) -> usize {
        (self.boards[0] | self.boards[1]).count_ones() as usize
    }
    fn legal_moves(&self) -> Moves {
        let mut out = Moves::new();
        if self.winner().is_some() {
            return out;
        }
        let empty = self.empty();
        for i in 0..9 {
            if empty & (1 << i) != 0 {
                out.push(i as Move);
            }
        }
        out
    }
    fn is_legal(&self, m: Move) -> bool {
        m < 9 && self.empty() & (1 << m) != 0 && self.winner().is_none()
    }
    fn play(&mut self, m: Move) {
        debug_assert!(self.is_legal(m));
        let p = self.to_move().index();
        self.boards[p] |= 1 << m;
    }
    fn outcome(&self) -> Option<Outcome> {
        match self.winner() {
            Some(p) => Some(Outcome::Win(p)),
            None if self.empty() == 0 => Some(Outcome::Draw),
            None => None,
        }
    }
    fn key(&self) -> u64 {
        self.boards[0] as u64 | (self.boards[1] as u64) << 9
    }
    fn encode(&self, out: &mut [f32]) {
        let me = self.to_move();
        let (mine, theirs) = (self.stones(me), self.stones(me.other()));
        for i in 0..9 {
            out[i] = (mine >> i & 1) as f32;
            out[9 + i] = (theirs >> i & 1) as f32;
            out[18 + i] = if me == Player::First { 1.0 } else { 0.0 };
        }
    }
    fn symmetries() -> Vec<Symmetry> {
        square_symmetries(3)
            .into_iter()
            .map(|cells| Symmetry {
                actions: cells.clone(),
                cells,
            })
            .collect()
    }
    fn winning_cells(&self) -> Vec<usize> {
        let Some(winner) = self.winner() else {
            return Vec::new();
        };
        let own = self.stones(winner);
        let lines = LINES
            .iter()
            .filter(|&&l| own & l == l)
            .fold(0, |a, &l| a | l);
        (0..9).filter(|&i| lines >> i & 1 != 0).collect()
    }
    /// Each empty cell shows the digit that plays it, the notation of the prompts and moves.
    fn display(&self) -> String {
        let mut s = String::new();
        for r in 0..3 {
            for c in 0..3 {
                let i = r * 3 + c;
                let bit = 1 << i;
                let mark = if self.boards[0] & bit != 0 {
                    'X'
                } else if self.boards[1] & bit != 0 {
                    'O'
                } else {
                    char::from(b'1' + i as u8)
                };
                s.push(' ');
                s.push(mark);
                s.push(' ');
            }
            s.push('\n');
        }
        s
    }
    fn parse_move(&self, s: &str) -> Result<Move, GameError> {
        let t = s.trim().to_ascii_lowercase();
        let bad = |reason: &str| GameError::BadMove {
            input: s.to_string(),
            reason: reason.to_string(),
        };
        let cell = match t.as_bytes() {
            [d @ b'1'..=b'9'] => Some(usize::from(d - b'1')),
            _ => parse_cell(&t, 3, 3),
        };
        cell.map(|c| c as Move).ok_or_else(|| {
            bad("a tic-tac-toe move is a cell 1-9 (reading order) or a coordinate a1-c3")
        })
    }
    fn format_move(&self, m: Move) -> String {
        (m + 1).to_string()
    }
    fn parse_position(s: &str) -> Result<Self, GameError> {
        let mut pos = TicTacToe::new();
        for (i, ch) in s.trim().chars().enumerate() {
            let bad = |reason: String| GameError::BadPosition {
                input: s.to_string(),
                reason: format!("move {} ('{}'): {}", i + 1, ch, reason),
            };
            let m = pos
                .parse_move(&ch.to_string())
                .map_err(|_| bad("cells are the digits 1-9".into()))?;
            pos.try_play(m).map_err(|e| bad(e.to_string()))?;
        }
        Ok(pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn reachable(p: TicTacToe, seen: &mut HashSet<TicTacToe>) {
        if !seen.insert(p) {
            return;
        }
        for m in p.legal_moves() {
            let mut q = p;
            q.play(m);
            reachable(q, seen);
        }
    }

    #[test]
    fn the_winning_line_is_marked() {
        let pos = |s: &str| TicTacToe::parse_position(s).unwrap();
        // X on 1 2 3 (the top row), O on 4 5.
        assert_eq!(pos("14253").winning_cells(), vec![0, 1, 2]);
        // O down the middle column.
        assert_eq!(pos("123548").winning_cells(), vec![1, 4, 7]);
        // X's last stone in the centre completes both diagonals at once.
        assert_eq!(pos("123476985").winning_cells(), vec![0, 2, 4, 6, 8]);
        assert!(pos("1234").winning_cells().is_empty());
        // A draw has no line.
        assert!(pos("519328746").winning_cells().is_empty());
    }

    #[test]
    fn reachable_positions() {
        let mut seen = HashSet::new();
        reachable(TicTacToe::new(), &mut seen);
        assert_eq!(seen.len(), 5478);
        let syms = TicTacToe::symmetries();
        let canonical: HashSet<u64> = seen
            .iter()
            .map(|p| {
                syms.iter()
                    .map(|s| {
                        let mut q = TicTacToe::new();
                        for side in 0..2 {
                            for i in 0..9 {
                                if p.boards[side] >> i & 1 == 1 {
                                    q.boards[side] |= 1 << s.cells[i];
                                }
                            }
                        }
                        q.key()
                    })
                    .min()
                    .unwrap()
            })
            .collect();
        assert_eq!(canonical.len(), 765);
    }

    #[test]
    fn the_board_shows_each_empty_cell_by_the_digit_that_plays_it() {
        let p = TicTacToe::parse_position("519").unwrap();
        assert_eq!(p.display(), " O  2  3 \n 4  X  6 \n 7  8  X \n");
    }

    #[test]
    fn moves_parse_and_errors() {
        let p = TicTacToe::new();
        assert_eq!(p.parse_move("5"), Ok(4));
        assert_eq!(p.parse_move("b2"), Ok(4));
        assert_eq!(p.parse_move("C1"), Ok(2));
        assert!(p.parse_move("0").is_err());
        assert!(p.parse_move("d1").is_err());
        let e = TicTacToe::parse_position("55").unwrap_err();
        assert!(e.to_string().contains("illegal"), "{e}");
        // X wins on the top row; a further move is rejected
        let won = TicTacToe::parse_position("14253").unwrap();
        assert_eq!(won.outcome(), Some(Outcome::Win(Player::First)));
        assert!(TicTacToe::parse_position("142536").is_err());
    }
}
