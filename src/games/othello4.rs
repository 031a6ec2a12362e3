//! 4x4 Othello as in the material: centre `W B / B W`, Black moves first, flips in eight
//! directions, a player with no legal move passes, the game ends when neither can move, and
//! the side with more discs wins. Cells are numbered 0..16 in reading order; the pass is
//! action 16. People type moves as `b2` (column letter a-d, row 1-4 from the top) or `pass`.

use super::coords::{cell_name, parse_cell};
use super::{Game, GameError, Move, Moves, Outcome, Player, Symmetry};

pub const N: usize = 4;
pub const PASS: Move = 16;
/// The material's positional weights (corners 2, the rest 1).
pub const WEIGHTS: [i32; 16] = [2, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 2];

const DIRS: [(i32, i32); 8] = [
    (-1, -1),
    (-1, 0),
    (-1, 1),
    (0, -1),
    (0, 1),
    (1, -1),
    (1, 0),
    (1, 1),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Othello4 {
    /// Discs of Black (first) and White (second).
    boards: [u16; 2],
    to_move: Player,
    plies: u8,
}

/// The discs `m` would flip for `me` against `them`; 0 if `m` is not a legal placement.
fn flips(me: u16, them: u16, m: usize) -> u16 {
    if (me | them) >> m & 1 != 0 {
        return 0;
    }
    let (r, c) = ((m / N) as i32, (m % N) as i32);
    let mut total = 0u16;
    for (dr, dc) in DIRS {
        let (mut rr, mut cc) = (r + dr, c + dc);
        let mut line = 0u16;
        while (0..N as i32).contains(&rr) && (0..N as i32).contains(&cc) {
            let bit = 1u16 << (rr as usize * N + cc as usize);
            if them & bit != 0 {
                line |= bit;
            } else {
                if me & bit != 0 {
                    total |= line;
                }
                break;
            }
            rr += dr;
            cc += dc;
        }
    }
    total
}

/// Placements (not passes) available to `me`.
fn placements(me: u16, them: u16) -> u16 {
    let mut out = 0u16;
    for m in 0..N * N {
        if flips(me, them, m) != 0 {
            out |= 1 << m;
        }
    }
    out
}

impl Othello4 {
    /// Discs of `player`.
    pub fn discs(&self, player: Player) -> u16 {
        self.boards[player.index()]
    }
    fn mine_theirs(&self) -> (u16, u16) {
        let me = self.to_move.index();
        (self.boards[me], self.boards[1 - me])
    }
}

impl Game for Othello4 {
    const NAME: &'static str = "othello4";
    const NUM_ACTIONS: usize = N * N + 1;
    const HEIGHT: usize = N;
    const WIDTH: usize = N;
    // 12 placements plus at most one pass before each of them and at the end
    const MAX_PLIES: usize = 2 * (N * N - 4) + 1;

    fn new() -> Self {
        // row 1: W at b2, B at c2; row 2: B at b3, W at c3 (0-based cells 5,6,9,10)
        let black = (1 << 6) | (1 << 9);
        let white = (1 << 5) | (1 << 10);
        Othello4 {
            boards: [black, white],
            to_move: Player::First,
            plies: 0,
        }
    }
    fn to_move(&self) -> Player {
        self.to_move
    }
    fn ply(&self) -> usize {
        self.plies as usize
    }
    fn legal_moves(&self) -> Moves {
        let (me, them) = self.mine_theirs();
        let mut out = Moves::new();
        let mine = placements(me, them);
        if mine != 0 {
            for m in 0..N * N {
                if mine >> m & 1 != 0 {
                    out.push(m as Move);
                }
            }
        } else if placements(them, me) != 0 {
            out.push(PASS);
        }
        out
    }
    fn play(&mut self, m: Move) {
        debug_assert!(self.is_legal(m));
        if m != PASS {
            let me = self.to_move.index();
            let f = flips(self.boards[me], self.boards[1 - me], m as usize);
            self.boards[me] |= f | (1 << m);
            self.boards[1 - me] &= !f;
        }
        self.to_move = self.to_move.other();
        self.plies += 1;
    }
    fn outcome(&self) -> Option<Outcome> {
        let (me, them) = self.mine_theirs();
        if placements(me, them) != 0 || placements(them, me) != 0 {
            return None;
        }
        let (b, w) = (self.boards[0].count_ones(), self.boards[1].count_ones());
        Some(match b.cmp(&w) {
            std::cmp::Ordering::Greater => Outcome::Win(Player::First),
            std::cmp::Ordering::Less => Outcome::Win(Player::Second),
            std::cmp::Ordering::Equal => Outcome::Draw,
        })
    }
    fn key(&self) -> u64 {
        // The plies too: two positions with the same discs and mover but a different number
        // of passes behind them are different positions (their `ply()` differs), so they must
        // not share a key.
        self.boards[0] as u64
            | (self.boards[1] as u64) << 16
            | (self.to_move.index() as u64) << 32
            | (self.plies as u64) << 33
    }
    fn encode(&self, out: &mut [f32]) {
        let (me, them) = self.mine_theirs();
        let first = if self.to_move == Player::First {
            1.0
        } else {
            0.0
        };
        for i in 0..N * N {
            out[i] = (me >> i & 1) as f32;
            out[16 + i] = (them >> i & 1) as f32;
            out[32 + i] = first;
        }
    }
    fn symmetries() -> Vec<Symmetry> {
        // Only the symmetries that keep the starting position: identity, rotation by 180
        // degrees and the two diagonal reflections.
        let start = Othello4::new();
        super::square_symmetries(N)
            .into_iter()
            .filter(|cells| {
                (0..2).all(|side| {
                    (0..N * N).all(|i| {
                        (start.boards[side] >> i & 1) == (start.boards[side] >> cells[i] & 1)
                    })
                })
            })
            .map(|cells| {
                let mut actions = cells.clone();
                actions.push(PASS as usize);
                Symmetry { cells, actions }
            })
            .collect()
    }
    fn heuristic(&self) -> f32 {
        let (me, them) = self.mine_theirs();
        let score: i32 = (0..N * N)
            .map(|i| WEIGHTS[i] * ((me >> i & 1) as i32 - (them >> i & 1) as i32))
            .sum();
        score as f32 / 20.0
    }
    fn display(&self) -> String {
        let mut s = String::from("   a b c d\n");
        for r in 0..N {
            s.push_str(&format!(" {}", r + 1));
            for c in 0..N {
                let bit = 1 << (r * N + c);
                s.push(' ');
                s.push(if self.boards[0] & bit != 0 {
                    '●'
                } else if self.boards[1] & bit != 0 {
                    '◯'
                } else {
                    '.'
                });
            }
            s.push('\n');
        }
        s
    }
    fn parse_move(&self, s: &str) -> Result<Move, GameError> {
        let t = s.trim().to_ascii_lowercase();
        if t == "pass" || t == "--" {
            return Ok(PASS);
        }
        parse_cell(&t, N, N)
            .map(|cell| cell as Move)
            .ok_or_else(|| GameError::BadMove {
                input: s.to_string(),
                reason: "an Othello move is a coordinate a1-d4 (column, row) or 'pass'".into(),
            })
    }
    fn format_move(&self, m: Move) -> String {
        if m == PASS {
            "pass".into()
        } else {
            cell_name(m as usize, N)
        }
    }
    /// A sequence of moves such as `c1 d1 pass` or `c1d1`; `pass` or `--` for a pass.
    fn parse_position(s: &str) -> Result<Self, GameError> {
        let mut pos = Othello4::new();
        let compact: String = s.split_whitespace().collect::<Vec<_>>().join("");
        let mut rest = compact.as_str();
        let mut index = 0;
        while !rest.is_empty() {
            index += 1;
            let take = if rest.to_ascii_lowercase().starts_with("pass") {
                4
            } else {
                rest.char_indices().nth(2).map_or(rest.len(), |(i, _)| i)
            };
            let (token, tail) = rest.split_at(take);
            rest = tail;
            let bad = |reason: String| GameError::BadPosition {
                input: s.to_string(),
                reason: format!("move {index} ('{token}'): {reason}"),
            };
            let m = pos.parse_move(token).map_err(|e| bad(e.to_string()))?;
            pos.try_play(m).map_err(|e| bad(e.to_string()))?;
        }
        Ok(pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The character `display` draws at a move's coordinates, found through the board's own
    /// labels: the column letter in the header, the row number at the start of a line.
    fn drawn_at(board: &str, name: &str) -> char {
        let (letter, row) = name.split_at(1);
        let lines: Vec<&str> = board.lines().collect();
        let column = lines[0].find(letter).unwrap();
        let line = lines
            .iter()
            .find(|l| l.split_whitespace().next() == Some(row))
            .unwrap();
        line.chars().nth(column).unwrap()
    }

    #[test]
    fn the_board_is_drawn_with_the_coordinates_moves_are_named_by() {
        let mut pos = Othello4::new();
        for _ in 0..3 {
            let board = pos.display();
            let m = pos.legal_moves()[0];
            let name = pos.format_move(m);
            assert_eq!(drawn_at(&board, &name), '.', "{name} on\n{board}");
            let mark = if pos.to_move() == Player::First {
                '●'
            } else {
                '◯'
            };
            pos.play(m);
            assert_eq!(drawn_at(&pos.display(), &name), mark, "{name}");
        }
    }

    #[test]
    fn opening_moves() {
        let p = Othello4::new();
        let moves: Vec<String> = p.legal_moves().iter().map(|&m| p.format_move(m)).collect();
        assert_eq!(moves, ["b1", "a2", "d3", "c4"]);
        let mut q = p;
        q.try_play(q.parse_move("b1").unwrap()).unwrap();
        // b1 flips b2 (white) to black
        assert_eq!(q.discs(Player::First).count_ones(), 4);
        assert_eq!(q.discs(Player::Second).count_ones(), 1);
        assert!(q.try_play(q.parse_move("d4").unwrap()).is_err());
    }

    /// Plays random games to the end and checks passes and the double-pass end.
    #[test]
    fn passes_and_end_by_double_pass() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        let (mut passes, mut early_ends) = (0, 0);
        for _ in 0..2000 {
            let mut p = Othello4::new();
            while p.outcome().is_none() {
                let moves = p.legal_moves();
                assert!(!moves.is_empty());
                if moves[0] == PASS {
                    assert_eq!(moves.len(), 1);
                    passes += 1;
                    // the opponent must be able to move after a pass
                    let mut q = p;
                    q.play(PASS);
                    assert!(q.legal_moves().iter().all(|&m| m != PASS));
                }
                p.play(moves[rng.random_range(0..moves.len())]);
            }
            assert!(p.legal_moves().is_empty());
            let filled = (p.discs(Player::First) | p.discs(Player::Second)).count_ones();
            if filled < 16 {
                early_ends += 1;
            }
        }
        assert!(passes > 0, "random games should contain passes");
        assert!(
            early_ends > 0,
            "some games end with empty cells, by a double pass"
        );
    }

    #[test]
    fn a_known_double_pass_ending() {
        // Black takes everything quickly: after b1 a1? Construct by search instead: find the
        // shortest game that ends with empty cells and check both sides have no placement.
        fn search(p: Othello4, depth: usize) -> Option<Othello4> {
            if p.outcome().is_some() {
                let filled = (p.discs(Player::First) | p.discs(Player::Second)).count_ones();
                return (filled < 16).then_some(p);
            }
            if depth == 0 {
                return None;
            }
            for m in p.legal_moves() {
                let mut q = p;
                q.play(m);
                if let Some(r) = search(q, depth - 1) {
                    return Some(r);
                }
            }
            None
        }
        let end = (1..12).find_map(|d| search(Othello4::new(), d)).unwrap();
        let (b, w) = (end.discs(Player::First), end.discs(Player::Second));
        assert_eq!(placements(b, w), 0);
        assert_eq!(placements(w, b), 0);
    }

    #[test]
    fn symmetries_keep_the_start() {
        assert_eq!(Othello4::symmetries().len(), 4);
    }

    #[test]
    fn position_parsing() {
        let p = Othello4::parse_position("b1 a1").unwrap();
        assert_eq!(p.ply(), 2);
        assert_eq!(Othello4::parse_position("b1a1").unwrap(), p);
        assert!(Othello4::parse_position("e5").is_err());
        assert!(Othello4::parse_position("pass").is_err());
        assert!(Othello4::parse_position("a1").is_err());
    }
}
