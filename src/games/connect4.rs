//! Connect Four, 7 columns x 6 rows, on Pascal Pons' bitboard: 7 bits a column (6 cells and a
//! sentinel), bit `col * 7 + row` with row 0 at the bottom. `current` holds the stones of the
//! side to move, `mask` all stones; `current + mask` is a unique key of the position.

use super::{Game, GameError, Move, Moves, Outcome, Player, Symmetry};

pub const WIDTH: usize = 7;
pub const HEIGHT: usize = 6;
/// Bits a column takes: its cells and a sentinel above them that stays empty, so that no line
/// wraps from the top of one column into the next and `current + mask` never carries out of a
/// column. A shift by 1 is a step up, by `H1` one column over, `H1 - 1` and `H1 + 1` the diagonals.
pub const H1: usize = HEIGHT + 1;
/// Columns from the centre out, the order in which moves are worth trying when nothing else
/// tells them apart: a central stone lies on more lines of four.
pub const COLUMN_ORDER: [usize; WIDTH] = [3, 2, 4, 1, 5, 0, 6];

const fn bottom_mask() -> u64 {
    let mut m = 0u64;
    let mut c = 0;
    while c < WIDTH {
        m |= 1u64 << (c * H1);
        c += 1;
    }
    m
}
/// The lowest cell of every column.
pub const BOTTOM: u64 = bottom_mask();
/// Every playable cell.
pub const BOARD: u64 = BOTTOM * ((1u64 << HEIGHT) - 1);

pub const fn top_mask_col(col: usize) -> u64 {
    1u64 << (HEIGHT - 1 + col * H1)
}
pub const fn bottom_mask_col(col: usize) -> u64 {
    1u64 << (col * H1)
}
pub const fn column_mask(col: usize) -> u64 {
    ((1u64 << HEIGHT) - 1) << (col * H1)
}

/// Whether the stones in `pos` contain four in a row in any direction.
#[inline]
pub fn has_four(pos: u64) -> bool {
    // vertical, horizontal, the two diagonals
    for shift in [1, H1, H1 - 1, H1 + 1] {
        let m = pos & (pos >> shift);
        if m & (m >> (2 * shift)) != 0 {
            return true;
        }
    }
    false
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Connect4 {
    current: u64,
    mask: u64,
    moves: u8,
    /// Whether the last move made four in a row.
    won: bool,
}

impl Connect4 {
    /// Stones of the side to move.
    pub fn current(&self) -> u64 {
        self.current
    }
    /// All stones.
    pub fn mask(&self) -> u64 {
        self.mask
    }
    /// Number of stones played.
    pub fn moves(&self) -> usize {
        self.moves as usize
    }
    /// Whether a stone can go into `col` (0-based).
    pub fn can_play(&self, col: usize) -> bool {
        self.mask & top_mask_col(col) == 0
    }
    /// Whether playing `col` wins at once for the side to move.
    pub fn is_winning_move(&self, col: usize) -> bool {
        let stone = (self.mask + bottom_mask_col(col)) & column_mask(col);
        has_four(self.current | stone)
    }
    /// Stones of `player`.
    pub fn stones(&self, player: Player) -> u64 {
        if player == self.to_move() {
            self.current
        } else {
            self.current ^ self.mask
        }
    }

    fn cell(&self, row: usize, col: usize) -> Option<Player> {
        let bit = 1u64 << (col * H1 + row);
        if self.mask & bit == 0 {
            None
        } else if self.current & bit != 0 {
            Some(self.to_move())
        } else {
            Some(self.to_move().other())
        }
    }
}

/// Counts, for a window evaluation, lines of four holding only `own` stones and empties.
fn window_score(own: u64, empty: u64) -> i32 {
    let mut score = 0;
    for col in 0..WIDTH {
        for row in 0..HEIGHT {
            for (dc, dr) in [(1i32, 0i32), (0, 1), (1, 1), (1, -1)] {
                let (ec, er) = (col as i32 + 3 * dc, row as i32 + 3 * dr);
                if ec < 0 || ec >= WIDTH as i32 || er < 0 || er >= HEIGHT as i32 {
                    continue;
                }
                let (mut mine, mut blocked) = (0, false);
                for k in 0..4 {
                    let bit = 1u64
                        << ((col as i32 + k * dc) as usize * H1 + (row as i32 + k * dr) as usize);
                    if own & bit != 0 {
                        mine += 1;
                    } else if empty & bit == 0 {
                        blocked = true;
                        break;
                    }
                }
                if !blocked {
                    score += match mine {
                        3 => 8,
                        2 => 2,
                        _ => 0,
                    };
                }
            }
        }
    }
    score
}

impl Game for Connect4 {
    const NAME: &'static str = "connect4";
    const NUM_ACTIONS: usize = WIDTH;
    const HEIGHT: usize = HEIGHT;
    const WIDTH: usize = WIDTH;
    const MAX_PLIES: usize = WIDTH * HEIGHT;

    fn new() -> Self {
        Connect4 {
            current: 0,
            mask: 0,
            moves: 0,
            won: false,
        }
    }
    fn to_move(&self) -> Player {
        if self.moves.is_multiple_of(2) {
            Player::First
        } else {
            Player::Second
        }
    }
    fn ply(&self) -> usize {
        self.moves as usize
    }
    fn legal_moves(&self) -> Moves {
        let mut out = Moves::new();
        if self.won {
            return out;
        }
        for col in 0..WIDTH {
            if self.can_play(col) {
                out.push(col as Move);
            }
        }
        out
    }
    fn is_legal(&self, m: Move) -> bool {
        !self.won && (m as usize) < WIDTH && self.can_play(m as usize)
    }
    fn play(&mut self, m: Move) {
        let col = m as usize;
        debug_assert!(self.is_legal(m));
        self.current ^= self.mask;
        self.mask |= self.mask + bottom_mask_col(col);
        self.moves += 1;
        // `current ^ mask` is now the stones of the player who just moved.
        self.won = has_four(self.current ^ self.mask);
    }
    fn outcome(&self) -> Option<Outcome> {
        if self.won {
            Some(Outcome::Win(self.to_move().other()))
        } else if self.moves as usize == WIDTH * HEIGHT {
            Some(Outcome::Draw)
        } else {
            None
        }
    }
    fn key(&self) -> u64 {
        self.current + self.mask
    }
    fn encode(&self, out: &mut [f32]) {
        let cells = HEIGHT * WIDTH;
        out[..3 * cells].fill(0.0);
        let opponent = self.current ^ self.mask;
        for col in 0..WIDTH {
            for row in 0..HEIGHT {
                let bit = 1u64 << (col * H1 + row);
                let i = (HEIGHT - 1 - row) * WIDTH + col;
                if self.current & bit != 0 {
                    out[i] = 1.0;
                } else if opponent & bit != 0 {
                    out[cells + i] = 1.0;
                }
            }
        }
        if self.to_move() == Player::First {
            out[2 * cells..3 * cells].fill(1.0);
        }
    }
    fn symmetries() -> Vec<Symmetry> {
        let identity = Symmetry {
            cells: (0..HEIGHT * WIDTH).collect(),
            actions: (0..WIDTH).collect(),
        };
        let mirror = Symmetry {
            cells: (0..HEIGHT * WIDTH)
                .map(|i| (i / WIDTH) * WIDTH + (WIDTH - 1 - i % WIDTH))
                .collect(),
            actions: (0..WIDTH).map(|c| WIDTH - 1 - c).collect(),
        };
        vec![identity, mirror]
    }
    fn heuristic(&self) -> f32 {
        let empty = BOARD & !self.mask;
        let opponent = self.current ^ self.mask;
        let centre = column_mask(WIDTH / 2);
        let score = window_score(self.current, empty) - window_score(opponent, empty)
            + 3 * ((self.current & centre).count_ones() as i32
                - (opponent & centre).count_ones() as i32);
        (score as f32 / 64.0).tanh()
    }
    fn winning_cells(&self) -> Vec<usize> {
        if !self.won {
            return Vec::new();
        }
        // The stones of the player who just moved; a cell is marked when it starts a run of
        // four in some direction, and so are the three after it.
        let own = self.current ^ self.mask;
        let mut marked = 0u64;
        for shift in [1, H1, H1 - 1, H1 + 1] {
            let pairs = own & (own >> shift);
            let starts = pairs & (pairs >> (2 * shift));
            for k in 0..4 {
                marked |= starts << (k * shift);
            }
        }
        let mut cells: Vec<usize> = (0..WIDTH * H1)
            .filter(|&bit| marked >> bit & 1 != 0)
            .map(|bit| (HEIGHT - 1 - bit % H1) * WIDTH + bit / H1)
            .collect();
        cells.sort_unstable();
        cells
    }
    fn display(&self) -> String {
        let mut s = String::new();
        s.push_str(" 1 2 3 4 5 6 7\n");
        for row in (0..HEIGHT).rev() {
            for col in 0..WIDTH {
                s.push(' ');
                s.push(match self.cell(row, col) {
                    None => '.',
                    Some(Player::First) => '●',
                    Some(Player::Second) => '◯',
                });
            }
            s.push('\n');
        }
        s
    }
    fn parse_move(&self, s: &str) -> Result<Move, GameError> {
        let t = s.trim();
        let bad = |reason: &str| GameError::BadMove {
            input: s.to_string(),
            reason: reason.to_string(),
        };
        let col: usize = t
            .parse()
            .map_err(|_| bad("a Connect Four move is a column number 1-7"))?;
        if !(1..=WIDTH).contains(&col) {
            return Err(bad("columns are numbered 1-7"));
        }
        Ok((col - 1) as Move)
    }
    fn format_move(&self, m: Move) -> String {
        (m + 1).to_string()
    }
    fn parse_position(s: &str) -> Result<Self, GameError> {
        let mut pos = Connect4::new();
        for (i, ch) in s.trim().chars().enumerate() {
            let bad = |reason: String| GameError::BadPosition {
                input: s.to_string(),
                reason: format!("move {} ('{}'): {}", i + 1, ch, reason),
            };
            let col = match ch.to_digit(10) {
                Some(d @ 1..=7) => d as usize - 1,
                _ => return Err(bad("columns are the digits 1-7".into())),
            };
            if pos.won {
                return Err(bad("the game was already won".into()));
            }
            if !pos.can_play(col) {
                return Err(bad(format!("column {} is full", col + 1)));
            }
            pos.play(col as Move);
        }
        Ok(pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(s: &str) -> Connect4 {
        Connect4::parse_position(s).expect("valid position")
    }

    #[test]
    fn wins_in_all_four_directions() {
        // vertical: first player stacks column 1
        assert_eq!(pos("1212121").outcome(), Some(Outcome::Win(Player::First)));
        // horizontal on the bottom row
        assert_eq!(pos("1122334").outcome(), Some(Outcome::Win(Player::First)));
        // diagonal up-right: first at (c1,r0),(c2,r1),(c3,r2),(c4,r3)
        assert_eq!(
            pos("12234334544").outcome(),
            Some(Outcome::Win(Player::First))
        );
        // diagonal down-right: first at (c4,r0),(c3,r1),(c2,r2),(c1,r3)
        assert_eq!(
            pos("43321221411").outcome(),
            Some(Outcome::Win(Player::First))
        );
        // the second player can win too
        assert_eq!(
            pos("71212121").outcome(),
            Some(Outcome::Win(Player::Second))
        );
        assert!(pos("12234334544").legal_moves().is_empty());
    }

    #[test]
    fn the_winning_line_is_marked_top_row_first() {
        // Cells are numbered as `encode` lays them out: row 0 at the top, column 1 on the left.
        assert_eq!(pos("1212121").winning_cells(), vec![14, 21, 28, 35]);
        assert_eq!(pos("1122334").winning_cells(), vec![35, 36, 37, 38]);
        assert_eq!(pos("12234334544").winning_cells(), vec![17, 23, 29, 35]);
        assert_eq!(pos("43321221411").winning_cells(), vec![14, 22, 30, 38]);
        assert_eq!(pos("71212121").winning_cells(), vec![14, 21, 28, 35]);
        // Five in a row: all five; the loser's three in a row above are not marked.
        assert_eq!(pos("112244553").winning_cells(), vec![35, 36, 37, 38, 39]);
        assert!(pos("121212").winning_cells().is_empty());
        let draw = pos("121212343434565656777777212121434343656565");
        assert!(draw.winning_cells().is_empty());
    }

    #[test]
    fn full_board_draw() {
        // Columns filled in pairs so that no four ever line up.
        let s = "121212343434565656777777212121434343656565";
        let mut p = Connect4::new();
        for ch in s.chars() {
            let m = p.parse_move(&ch.to_string()).unwrap();
            assert_eq!(p.outcome(), None, "ended early at {}", p.ply());
            p.try_play(m).unwrap();
        }
        assert_eq!(p.ply(), 42);
        assert_eq!(p.outcome(), Some(Outcome::Draw));
        assert!(p.legal_moves().is_empty());
    }

    #[test]
    fn illegal_and_malformed_input_is_an_error() {
        let e = Connect4::parse_position("4444444").unwrap_err();
        assert!(e.to_string().contains("column 4 is full"), "{e}");
        let e = Connect4::parse_position("48").unwrap_err();
        assert!(e.to_string().contains("1-7"), "{e}");
        assert!(Connect4::parse_position("0").is_err());
        assert!(Connect4::parse_position("4a").is_err());
        assert!(Connect4::parse_position("12121212").is_err());
        let mut p = pos("444444");
        assert!(p.try_play(3).is_err());
        assert!(p.parse_move("8").is_err());
        assert!(p.parse_move("x").is_err());
        assert_eq!(p.parse_move(" 3 "), Ok(2));
    }

    #[test]
    fn key_is_unique_and_mover_relative_encoding() {
        assert_ne!(pos("12").key(), pos("21").key());
        assert_eq!(pos("1234").key(), pos("3214").key());
        let p = pos("4");
        let mut planes = vec![0.0; 3 * 42];
        p.encode(&mut planes);
        // the mover (second) has no stone; the opponent's stone is bottom centre
        assert_eq!(planes[..42].iter().sum::<f32>(), 0.0);
        assert_eq!(planes[42 + 5 * 7 + 3], 1.0);
        assert_eq!(planes[84..].iter().sum::<f32>(), 0.0);
    }
}
