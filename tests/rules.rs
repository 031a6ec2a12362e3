//! Move generation checked against known counts, and 4x4 Othello and 5x5 Domineering against
//! implementations of their own written in this file.

use std::collections::{HashMap, HashSet};

use zero::catalog::Catalogued;
use zero::games::{perft, Connect4, Domineering, Game, Othello4, TicTacToe};

#[test]
fn connect4_perft_matches_the_known_counts() {
    let rows = perft::<Connect4>(8);
    let sequences: Vec<u64> = rows.iter().map(|r| r.sequences).collect();
    let positions: Vec<u64> = rows.iter().map(|r| r.positions).collect();
    assert_eq!(
        sequences,
        [7, 49, 343, 2401, 16807, 117649, 823536, 5673234]
    );
    assert_eq!(positions, [7, 49, 238, 1120, 4263, 16422, 54859, 184275]);
}

#[test]
fn tictactoe_has_5478_positions_and_255168_games() {
    let rows = perft::<TicTacToe>(9);
    let positions: u64 = 1 + rows.iter().map(|r| r.positions).sum::<u64>();
    assert_eq!(positions, 5478);
    // Games end at a win or a full board: the number of complete games is well known.
    let mut games = 0u64;
    fn count(p: TicTacToe, games: &mut u64) {
        use zero::games::Game;
        if p.outcome().is_some() {
            *games += 1;
            return;
        }
        for m in p.legal_moves() {
            let mut q = p;
            q.play(m);
            count(q, games);
        }
    }
    count(zero::games::Game::new(), &mut games);
    assert_eq!(games, 255168);
}

/// 4x4 Othello written again for the test, on a board of rows (none of the crate's code):
/// the centre `W B / B W`, Black first, a disc placed where it brackets a line of the other's
/// discs in any of the eight directions, the bracketed lines flipped; a side that cannot place
/// passes, and the game ends when neither side can place.
mod reference {
    /// 0 empty, 1 Black, 2 White.
    pub type Board = [[u8; 4]; 4];

    pub fn start() -> Board {
        let mut b = [[0; 4]; 4];
        (b[1][1], b[1][2], b[2][1], b[2][2]) = (2, 1, 1, 2);
        b
    }

    /// The board after `side` places at (r, c), or `None` if that brackets nothing.
    pub fn place(b: &Board, side: u8, r: usize, c: usize) -> Option<Board> {
        if b[r][c] != 0 {
            return None;
        }
        let other = 3 - side;
        let mut next = *b;
        let mut flipped = false;
        for dr in -1i32..=1 {
            for dc in -1i32..=1 {
                if (dr, dc) == (0, 0) {
                    continue;
                }
                let mut line = Vec::new();
                let (mut rr, mut cc) = (r as i32 + dr, c as i32 + dc);
                while (0..4).contains(&rr) && (0..4).contains(&cc) {
                    match b[rr as usize][cc as usize] {
                        x if x == other => line.push((rr as usize, cc as usize)),
                        x if x == side && !line.is_empty() => {
                            for &(fr, fc) in &line {
                                next[fr][fc] = side;
                            }
                            flipped = true;
                            break;
                        }
                        _ => break,
                    }
                    rr += dr;
                    cc += dc;
                }
            }
        }
        next[r][c] = side;
        flipped.then_some(next)
    }

    /// Every placement of `side`.
    pub fn placements(b: &Board, side: u8) -> Vec<Board> {
        (0..16)
            .filter_map(|i| place(b, side, i / 4, i % 4))
            .collect()
    }

    pub fn discs(b: &Board, side: u8) -> usize {
        b.iter().flatten().filter(|&&x| x == side).count()
    }
}

/// One ply of a perft: positions reached (distinct, and as sequences of moves), how many of
/// the sequences' last moves were passes, and the games that ended there, by result.
#[derive(Debug, Default, PartialEq, Eq)]
struct OthelloPly {
    positions: u64,
    sequences: u64,
    passes: u64,
    black_wins: u64,
    white_wins: u64,
    draws: u64,
}

impl OthelloPly {
    fn ended(&mut self, count: u64, black: usize, white: usize) {
        match black.cmp(&white) {
            std::cmp::Ordering::Greater => self.black_wins += count,
            std::cmp::Ordering::Less => self.white_wins += count,
            std::cmp::Ordering::Equal => self.draws += count,
        }
    }
}

/// The whole game tree of 4x4 Othello, ply by ply, by the test's own rules.
fn reference_othello_perft() -> Vec<OthelloPly> {
    use reference::*;
    use std::collections::HashMap;
    // (board, side to move) -> sequences reaching it; every game still going.
    let mut level: HashMap<(Board, u8), u64> = HashMap::from([((start(), 1), 1)]);
    let mut rows = Vec::new();
    while !level.is_empty() {
        let mut row = OthelloPly::default();
        let mut next: HashMap<(Board, u8), u64> = HashMap::new();
        for (&(board, side), &count) in &level {
            let mut children = placements(&board, side);
            let passed = children.is_empty();
            if passed {
                // Its only move is a pass (the game is not over, so the other side can place).
                children.push(board);
            }
            for child in children {
                let entry = next.entry((child, 3 - side)).or_insert(0);
                if *entry == 0 {
                    row.positions += 1;
                }
                *entry += count;
                row.sequences += count;
                if passed {
                    row.passes += count;
                }
            }
        }
        // The games that end here: neither side can place.
        next.retain(|(board, _), count| {
            let over = placements(board, 1).is_empty() && placements(board, 2).is_empty();
            if over {
                row.ended(*count, discs(board, 1), discs(board, 2));
            }
            !over
        });
        rows.push(row);
        level = next;
    }
    rows
}

/// The same ply by ply with the crate's `Othello4` (its `legal_moves`, `play` and `outcome`).
fn crate_othello_perft() -> Vec<OthelloPly> {
    use std::collections::HashMap;
    use zero::games::{Game, Outcome, Player};
    let mut level: HashMap<Othello4, u64> = HashMap::from([(Othello4::new(), 1)]);
    let mut rows = Vec::new();
    while !level.is_empty() {
        let mut row = OthelloPly::default();
        let mut next: HashMap<Othello4, u64> = HashMap::new();
        for (pos, &count) in &level {
            for m in pos.legal_moves() {
                let mut child = *pos;
                child.play(m);
                *next.entry(child).or_insert(0) += count;
                if m == zero::games::othello4::PASS {
                    row.passes += count;
                }
            }
        }
        row.positions = next.len() as u64;
        row.sequences = next.values().sum();
        next.retain(|pos, count| match pos.outcome() {
            None => true,
            Some(outcome) => {
                let (black, white) = match outcome {
                    Outcome::Win(Player::First) => (1, 0),
                    Outcome::Win(Player::Second) => (0, 1),
                    Outcome::Draw => (0, 0),
                };
                row.ended(*count, black, white);
                false
            }
        });
        rows.push(row);
        level = next;
    }
    rows
}

#[test]
fn othello4_perft_counts_passes_as_plies() {
    // The whole game tree, by the crate and by the test's own rules: at every ply the same
    // positions and sequences, the same passes, the same games ended with the same results.
    let reference = reference_othello_perft();
    let ours = crate_othello_perft();
    for (ply, (a, b)) in reference.iter().zip(&ours).enumerate() {
        assert_eq!(a, b, "ply {}", ply + 1);
    }
    assert_eq!(ours.len(), reference.len());
    // The crate's own perft counts the same positions and sequences.
    let perft = perft::<Othello4>(ours.len());
    for (row, p) in ours.iter().zip(&perft) {
        assert_eq!(
            (row.positions, row.sequences),
            (p.positions, p.sequences),
            "ply {}",
            p.ply
        );
    }
    // From the start each side has 4 replies. The first passes come at ply 5 and the first
    // games end at ply 7 (before the board is full); the longest end at ply 17 (12 discs
    // placed, so at least 5 passes). Of the 60,060 games White wins 30,116, Black 24,632.
    assert_eq!((ours[0].sequences, ours[0].positions), (4, 4));
    assert_eq!(ours[1].sequences, 12);
    let first = |f: fn(&OthelloPly) -> u64| ours.iter().position(|r| f(r) > 0).map(|i| i + 1);
    assert_eq!(first(|r| r.passes), Some(5));
    assert_eq!(first(|r| r.black_wins + r.white_wins + r.draws), Some(7));
    assert_eq!(ours.len(), 17);
    let total = |f: fn(&OthelloPly) -> u64| ours.iter().map(f).sum::<u64>();
    assert_eq!(
        (
            total(|r| r.black_wins),
            total(|r| r.white_wins),
            total(|r| r.draws)
        ),
        (24_632, 30_116, 5_312)
    );
    assert_eq!(total(|r| r.passes), 33_420);
}

/// 5x5 Domineering written again for the test, on a grid of who covers each cell (none of the
/// crate's code): Vertical (1) covers a cell and the one below it, Horizontal (2) a cell and
/// the one to its right, Vertical first; a side with no room on its turn loses.
mod domineering_reference {
    use std::collections::HashMap;

    pub const N: usize = 5;
    pub type Grid = [[u8; N]; N];

    /// The grids after each move of `side`.
    pub fn children(g: &Grid, side: u8) -> Vec<Grid> {
        let (dr, dc) = if side == 1 { (1, 0) } else { (0, 1) };
        let mut out = Vec::new();
        for r in 0..N - dr {
            for c in 0..N - dc {
                if g[r][c] == 0 && g[r + dr][c + dc] == 0 {
                    let mut child = *g;
                    (child[r][c], child[r + dr][c + dc]) = (side, side);
                    out.push(child);
                }
            }
        }
        out
    }

    /// Whether `side`, to move on `g`, wins; only the covered cells matter, not whose.
    pub fn wins(g: &Grid, side: u8, memo: &mut HashMap<(u32, u8), bool>) -> bool {
        let covered = g
            .iter()
            .flatten()
            .enumerate()
            .fold(0u32, |m, (i, &v)| m | u32::from(v != 0) << i);
        if let Some(&w) = memo.get(&(covered, side)) {
            return w;
        }
        let w = children(g, side)
            .iter()
            .any(|child| !wins(child, 3 - side, memo));
        memo.insert((covered, side), w);
        w
    }
}

#[test]
fn domineering_counts_match_a_grid_of_its_own_ply_by_ply() {
    use domineering_reference::{children, Grid, N};
    let rows = perft::<Domineering>(Domineering::MAX_PLIES);
    let mut level: HashSet<Grid> = HashSet::from([[[0; N]; N]]);
    let mut counts = Vec::new();
    for ply in 0..Domineering::MAX_PLIES {
        let side = 1 + (ply % 2) as u8;
        level = level.iter().flat_map(|g| children(g, side)).collect();
        counts.push(level.len() as u64);
    }
    assert_eq!(rows.iter().map(|r| r.positions).collect::<Vec<_>>(), counts);
    // 20 upright dominoes at the start; 723,995 positions in all after it.
    assert_eq!(rows[0].sequences, 20);
    assert_eq!(counts.iter().sum::<u64>(), 723_995);
}

/// Breuker, Uiterwijk and van den Herik, "Solving 8x8 Domineering" (Theoretical Computer
/// Science 230, 2000), table of m x n boards: 5x5 is won by the second player. The grid of
/// this file and the crate's exact solver both say so, and agree on every first move.
#[test]
fn domineering_5x5_is_won_by_the_second_player_as_published() {
    use domineering_reference::{children, wins, N};
    let mut memo = HashMap::new();
    let start = [[0; N]; N];
    assert!(!wins(&start, 1, &mut memo));
    let mut exact = Domineering::exact(None).unwrap();
    assert!(exact.value(&Domineering::new()).unwrap() < 0);
    // Each first move, in the crate's order (reading order of the domino's top cell) and the
    // grid's (the same): Horizontal wins after every one.
    let results = exact.move_results(&Domineering::new());
    let firsts = children(&start, 1);
    assert_eq!(results.len(), firsts.len());
    for ((m, solved), grid) in results.into_iter().zip(firsts) {
        assert!(wins(&grid, 2, &mut memo), "after {m}");
        assert_eq!(solved.map(|s| s.0), Some(-1), "after {m}");
    }
}
