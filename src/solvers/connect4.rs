//! A perfect Connect Four solver after Pascal Pons' (http://blog.gamesolver.org): bitboards,
//! negamax with null windows inside his score-narrowing loop, pruning of moves that lose at
//! once, move ordering by the threats a move creates, and a transposition table. On top of his
//! design, after ideas of ChristopheSteininger/c4: the table keys positions up to mirror
//! symmetry, holds two-entry buckets (one kept by the work behind it, one always replaced), both
//! a lower and an upper bound and the move that last cut off; that move is tried first;
//! children are probed before being searched (enhanced transposition cutoff).
//!
//! Scores follow Pons: 0 for a draw; if the side to move wins with its k-th stone (all its
//! stones counted, the winning one included) the score is 22 - k, and -(22 - k) if it loses to
//! the opponent's k-th stone.

use crate::games::connect4::{bottom_mask_col, column_mask, BOARD, BOTTOM, HEIGHT, WIDTH};
use std::path::Path;

use anyhow::{bail, Context, Result};

use crate::games::{Connect4, Game};

const H1: u32 = HEIGHT as u32 + 1;
const CELLS: i32 = (WIDTH * HEIGHT) as i32;
/// Below every score a position can have.
pub const MIN_SCORE: i32 = -(CELLS / 2) + 3;
/// Above every score a position can have.
pub const MAX_SCORE: i32 = (CELLS + 1) / 2 - 3;

/// Columns from the centre out: the static order moves are tried in when nothing else differs.
const COLUMN_ORDER: [usize; WIDTH] = [3, 2, 4, 1, 5, 0, 6];

/// Cells where `position`'s stones would complete four in a row, among the cells not in `mask`.
#[inline]
fn winning_cells(position: u64, mask: u64) -> u64 {
    // vertical: three stones below
    let mut r = (position << 1) & (position << 2) & (position << 3);
    for shift in [H1, H1 - 1, H1 + 1] {
        let p = (position << shift) & (position << (2 * shift));
        r |= p & (position << (3 * shift));
        r |= p & (position >> shift);
        let p = (position >> shift) & (position >> (2 * shift));
        r |= p & (position << shift);
        r |= p & (position >> (3 * shift));
    }
    r & (BOARD ^ mask)
}

/// Whether the stones in `pos` contain four in a row.
#[inline]
fn has_four(pos: u64) -> bool {
    for shift in [1, H1, H1 - 1, H1 + 1] {
        let m = pos & (pos >> shift);
        if m & (m >> (2 * shift)) != 0 {
            return true;
        }
    }
    false
}

/// The board seen in a mirror (column c becomes column 6 - c); keys mirror the same way, since
/// `current + mask` never carries from one column into the next.
#[inline]
fn mirror(b: u64) -> u64 {
    let c = |i: u32| b & (0x7f << (i * H1));
    (c(0) << (6 * H1))
        | (c(1) << (4 * H1))
        | (c(2) << (2 * H1))
        | c(3)
        | (c(4) >> (2 * H1))
        | (c(5) >> (4 * H1))
        | (c(6) >> (6 * H1))
}

/// The solver's view of a position: Pons' bitboard pair and the number of stones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    current: u64,
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
    pub fn moves(&self) -> i32 {
        self.moves
    }
    /// Cells where a stone can go now.
    #[inline]
    fn possible(&self) -> u64 {
        (self.mask + BOTTOM) & BOARD
    }
    #[inline]
    fn opponent_winning_cells(&self) -> u64 {
        winning_cells(self.current ^ self.mask, self.mask)
    }
    #[inline]
    fn own_winning_cells(&self) -> u64 {
        winning_cells(self.current, self.mask)
    }
    /// Whether the side to move can win with its next stone.
    #[inline]
    pub fn can_win_next(&self) -> bool {
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
    fn play_cell(&mut self, cell: u64) {
        self.current ^= self.mask;
        self.mask |= cell;
        self.moves += 1;
    }
    pub fn play_col(&mut self, col: usize) {
        let cell = (self.mask + bottom_mask_col(col)) & column_mask(col);
        self.play_cell(cell);
    }
    /// The playable cells that do not hand the opponent (whose winning cells are `opponent_win`)
    /// a win at once; empty when every move
    /// loses (the opponent has two immediate wins, or one under a cell it also wins on).
    #[inline]
    fn non_losing_moves(&self, opponent_win: u64) -> u64 {
        let mut possible = self.possible();
        let forced = possible & opponent_win;
        if forced != 0 {
            if forced & (forced - 1) != 0 {
                return 0;
            }
            possible = forced;
        }
        possible & !(opponent_win >> 1)
    }
    /// How promising `cell` looks: the open cells where the mover would then have four, not
    /// counting those right above an opponent's such cell (the opponent fills the cell below
    /// first, or both are blocked). Pons counts them all; leaving those out saves nodes.
    #[inline]
    fn move_score(&self, cell: u64, opponent_threats: u64) -> u32 {
        let own = winning_cells(self.current | cell, self.mask | cell);
        (own & !(opponent_threats << 1)).count_ones()
    }
    /// Pons' key, unique per position: `current + mask`.
    #[inline]
    pub fn key(&self) -> u64 {
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
    fn can_ever_win(&self) -> bool {
        has_four(self.current | (BOARD & !self.mask))
    }
    #[inline]
    fn opponent_can_ever_win(&self) -> bool {
        has_four((self.current ^ self.mask) | (BOARD & !self.mask))
    }
    /// The score when the side to move wins with its next stone.
    pub fn win_now_score(&self) -> i32 {
        (CELLS + 1 - self.moves) / 2
    }
}

/// One table entry, packed in a u64: bits 0-31 the low half of the key (with the bucket index,
/// which is the key modulo a prime above 2^17, it pins the 49-bit key down exactly), 32-37 the
/// lower bound + 32, 38-43 the upper bound + 32, 44-46 the cut-off move's column (7: none),
/// 47-54 the table generation (entries of older generations count as empty, which clears the
/// table in O(1)), 55-60 log2 of the nodes searched to find it.
#[derive(Clone, Copy)]
struct Entry(u64);

const NO_MOVE: u64 = 7;
/// An empty entry: generation 0, which no search uses.
const EMPTY: u64 = 0x5555_5555;

impl Entry {
    fn new(key: u64, lower: i32, upper: i32, mv: u64, generation: u8, work: u64) -> Entry {
        Entry(
            (key & 0xffff_ffff)
                | (((lower + 32) as u64) << 32)
                | (((upper + 32) as u64) << 38)
                | (mv << 44)
                | ((generation as u64) << 47)
                | (work << 55),
        )
    }
    #[inline]
    fn matches(self, key: u64, generation: u8) -> bool {
        (self.0 as u32) == (key as u32) && self.generation() == generation
    }
    #[inline]
    fn lower(self) -> i32 {
        ((self.0 >> 32) & 63) as i32 - 32
    }
    #[inline]
    fn upper(self) -> i32 {
        ((self.0 >> 38) & 63) as i32 - 32
    }
    #[inline]
    fn mv(self) -> u64 {
        (self.0 >> 44) & 7
    }
    #[inline]
    fn generation(self) -> u8 {
        (self.0 >> 47) as u8
    }
    #[inline]
    fn work(self) -> u64 {
        (self.0 >> 55) & 63
    }
}

/// The transposition table: buckets of two entries, the first kept by the larger work, the
/// second always replaced.
pub struct Table {
    buckets: Vec<[u64; 2]>,
    /// 1 / the number of buckets, for a division-free modulo.
    inverse: f64,
    generation: u8,
}

/// Asks Linux to back the table with 2 MiB pages: its accesses are random, and with 4 KiB
/// pages nearly every probe would also miss the TLB.
fn advise_huge_pages(addr: usize, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = addr.next_multiple_of(HUGE);
        let end = (addr + len) / HUGE * HUGE;
        if end > start {
            // SAFETY: the range lies inside an allocation this table owns; the advice changes
            // only how pages are backed, never their contents, and a failure is harmless.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (addr, len);
}

/// Primes used as bucket counts, each the largest below a power of two.
fn prime_at_most(n: u64) -> u64 {
    let is_prime = |p: u64| {
        p >= 2
            && (2..)
                .take_while(|d| d * d <= p)
                .all(|d| !p.is_multiple_of(d))
    };
    (2..=n.max(2)).rev().find(|&p| is_prime(p)).unwrap_or(2)
}

impl Table {
    /// A table of about `entries` entries (rounded to a prime number of two-entry buckets,
    /// at least 2^17 + 1 of them so that the stored half key plus the index is exact).
    pub fn new(entries: usize) -> Table {
        let buckets = prime_at_most(((entries / 2) as u64).max(1 << 18)) as usize;
        let mut storage: Vec<[u64; 2]> = Vec::with_capacity(buckets);
        advise_huge_pages(storage.as_mut_ptr() as usize, buckets * 16);
        // Entries of generation 0 are empty. Filling with a non-zero pattern (not calloc's
        // lazily mapped zero pages) takes the page faults now rather than during a search.
        storage.resize(buckets, [EMPTY; 2]);
        Table {
            buckets: storage,
            inverse: 1.0 / buckets as f64,
            generation: 1,
        }
    }
    /// Forgets every entry (in O(1), by moving to a new generation).
    pub fn clear(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.buckets.iter_mut().for_each(|b| *b = [EMPTY; 2]);
            self.generation = 1;
        }
    }
    pub fn len(&self) -> usize {
        self.buckets.len() * 2
    }
    pub fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }
    /// `key` modulo the number of buckets, through a floating-point reciprocal: keys are below
    /// 2^49, so the quotient is off by at most one and one correction makes it exact.
    #[inline]
    fn index(&self, key: u64) -> usize {
        let n = self.buckets.len() as i64;
        let q = (key as f64 * self.inverse) as i64;
        let mut r = key as i64 - q * n;
        if r < 0 {
            r += n;
        } else if r >= n {
            r -= n;
        }
        r as usize
    }
    /// Asks the processor to start loading `key`'s bucket.
    #[inline]
    fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let ptr = self.buckets.as_ptr().wrapping_add(self.index(key)) as *const i8;
            // SAFETY: a prefetch is a hint; it never faults nor changes memory.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(ptr) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }
    #[inline]
    fn get(&self, key: u64) -> Option<Entry> {
        let bucket = &self.buckets[self.index(key)];
        bucket
            .iter()
            .map(|&e| Entry(e))
            .find(|e| e.matches(key, self.generation))
    }
    #[inline]
    fn put(&mut self, key: u64, lower: i32, upper: i32, mv: u64, work: u64) {
        let generation = self.generation;
        let i = self.index(key);
        let bucket = &mut self.buckets[i];
        for slot in bucket.iter_mut() {
            let e = Entry(*slot);
            if e.matches(key, generation) {
                // Both the old and the new bounds hold: keep the tighter of each.
                let lower = lower.max(e.lower());
                let upper = upper.min(e.upper());
                let mv = if mv == NO_MOVE { e.mv() } else { mv };
                *slot = Entry::new(key, lower, upper, mv, generation, work.max(e.work())).0;
                return;
            }
        }
        let new = Entry::new(key, lower, upper, mv, generation, work).0;
        let first = Entry(bucket[0]);
        if first.generation() != generation || work >= first.work() {
            bucket[1] = bucket[0];
            bucket[0] = new;
        } else {
            bucket[1] = new;
        }
    }
}

/// The default table size for benchmarks and the command line: 2^23 entries (64 MiB).
pub const DEFAULT_TABLE_ENTRIES: usize = 1 << 23;

/// Known exact scores consulted inside the search (an opening book): canonical key to score,
/// for positions of at most `max_moves` stones.
pub trait ScoreSource {
    fn max_moves(&self) -> i32;
    fn score(&self, canonical_key: u64) -> Option<i32>;
}

/// A solver with its own table and node counter.
pub struct Solver {
    table: Table,
    nodes: u64,

    book: Option<Box<dyn ScoreSource + Send>>,
}

/// log2 of a node count, the "work" an entry stands for.
#[inline]
fn work_of(nodes: u64) -> u64 {
    (64 - nodes.leading_zeros() as u64).min(63)
}

impl Solver {
    pub fn new(table_entries: usize) -> Solver {
        Solver {
            table: Table::new(table_entries),
            nodes: 0,
            book: None,
        }
    }
    /// Consults `book` for every position with few enough stones.
    pub fn set_book(&mut self, book: Box<dyn ScoreSource + Send>) {
        self.book = Some(book);
    }
    /// Nodes searched since the last reset.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }
    pub fn reset_nodes(&mut self) {
        self.nodes = 0;
    }
    pub fn clear_table(&mut self) {
        self.table.clear();
    }

    /// Negamax with alpha-beta for a position where the side to move cannot win at once.
    /// Returns v: if v <= alpha the score is at most v, if v >= beta at least v, else exactly v.
    fn negamax(&mut self, p: &Position, mut alpha: i32, mut beta: i32) -> i32 {
        debug_assert!(alpha < beta);
        debug_assert!(!p.can_win_next());
        self.nodes += 1;
        let nodes_before = self.nodes;
        let (key, mirrored) = p.canonical_key();
        self.table.prefetch(key);

        let opp_threats = p.opponent_winning_cells();
        let next = p.non_losing_moves(opp_threats);
        if next == 0 {
            // Every move lets the opponent win with its next stone.
            return -(CELLS - p.moves) / 2;
        }
        if p.moves >= CELLS - 2 {
            // Two cells left, no one can win with them.
            return 0;
        }
        // The opponent cannot win with its next stone, so the worst is losing after that.
        let min = -(CELLS - 2 - p.moves) / 2;
        if alpha < min {
            alpha = min;
            if alpha >= beta {
                return alpha;
            }
        }
        // We cannot win with this stone, at best with the next.
        let mut max = (CELLS - 1 - p.moves) / 2;
        if !p.can_ever_win() {
            max = 0;
        }
        if beta > max {
            beta = max;
            if alpha >= beta {
                return beta;
            }
        }
        if !p.opponent_can_ever_win() && alpha < 0 {
            alpha = 0;
            if alpha >= beta {
                return alpha;
            }
        }

        if let Some(book) = &self.book {
            if p.moves <= book.max_moves() {
                if let Some(score) = book.score(key) {
                    return score;
                }
            }
        }
        let mut table_move = None;
        if let Some(e) = self.table.get(key) {
            let lower = e.lower();
            if alpha < lower {
                alpha = lower;
                if alpha >= beta {
                    return alpha;
                }
            }
            let upper = e.upper();
            if beta > upper {
                beta = upper;
                if alpha >= beta {
                    return beta;
                }
            }
            if e.mv() != NO_MOVE {
                let col = e.mv() as usize;
                table_move = Some(if mirrored { WIDTH - 1 - col } else { col });
            }
        }

        // Order the moves: the table's move, then by threats made, then centre first.
        let mut moves: [(u64, u32, usize); WIDTH] = [(0, 0, 0); WIDTH];
        let mut n = 0;
        for &col in COLUMN_ORDER.iter() {
            let cell = next & column_mask(col);
            if cell == 0 {
                continue;
            }
            let mut score = p.move_score(cell, opp_threats);
            if table_move == Some(col) {
                score += 1000;
            }
            let mut j = n;
            while j > 0 && moves[j - 1].1 < score {
                moves[j] = moves[j - 1];
                j -= 1;
            }
            moves[j] = (cell, score, col);
            n += 1;
        }

        // Enhanced transposition cutoff: a child already known to be good enough ends the
        // search before any child is searched; one known to be no better than alpha is
        // skipped (it stays so as alpha rises).
        let mut known_bad = [false; WIDTH];
        if n > 1 {
            // Fetch every child's bucket at once rather than one cache miss after another.
            let mut child_keys = [0u64; WIDTH];
            for (k, &(cell, _, _)) in child_keys.iter_mut().zip(&moves[..n]) {
                let mut child = *p;
                child.play_cell(cell);
                *k = child.canonical_key().0;
                self.table.prefetch(*k);
            }
            for (i, (&ckey, &(_, _, col))) in child_keys.iter().zip(&moves[..n]).enumerate() {
                if let Some(e) = self.table.get(ckey) {
                    let score = -e.upper();
                    if score >= beta {
                        self.table
                            .put(key, score, MAX_SCORE + 3, stored_move(col, mirrored), 0);
                        return score;
                    }
                    known_bad[i] = -e.lower() <= alpha;
                }
            }
        }

        for (i, &(cell, _, col)) in moves[..n].iter().enumerate() {
            if known_bad[i] {
                continue;
            }
            let mut child = *p;
            child.play_cell(cell);
            let score = -self.negamax(&child, -beta, -alpha);
            if score >= beta {
                let work = work_of(self.nodes - nodes_before + 1);
                self.table
                    .put(key, score, MAX_SCORE + 3, stored_move(col, mirrored), work);
                return score;
            }
            if score > alpha {
                alpha = score;
            }
        }
        let work = work_of(self.nodes - nodes_before + 1);
        self.table.put(key, MIN_SCORE - 3, alpha, NO_MOVE, work);
        alpha
    }

    /// The exact score if it lies in `[lo, hi]`; otherwise `lo` when it is at most `lo`, `hi`
    /// when it is at least `hi`. Pons' loop: null-window searches that halve the interval,
    /// probing near 0 first (most positions are close calls).
    pub fn solve_range(&mut self, p: &Position, lo: i32, hi: i32) -> i32 {
        if p.can_win_next() {
            return p.win_now_score().clamp(lo, hi);
        }
        let mut min = (-(CELLS - p.moves) / 2).max(lo);
        let mut max = ((CELLS + 1 - p.moves) / 2).min(hi);
        while min < max {
            let mut med = min + (max - min) / 2;
            if med <= 0 && min / 2 < med {
                med = min / 2;
            } else if med >= 0 && max / 2 > med {
                med = max / 2;
            }
            let r = self.negamax(p, med, med + 1);
            if r <= med {
                max = r;
            } else {
                min = r;
            }
        }
        // A search may return a bound beyond the window (below `lo` or above `hi`).
        min.clamp(lo, hi)
    }

    /// The exact score of a position that is not over.
    pub fn solve(&mut self, p: &Position) -> i32 {
        self.solve_range(p, i32::MIN / 2, i32::MAX / 2)
    }

    /// -1, 0 or 1: whether the side to move loses, draws or wins.
    pub fn solve_weak(&mut self, p: &Position) -> i32 {
        self.solve_range(p, -1, 1)
    }

    /// The exact score of playing `col` (legal) in a position that is not over, from the view
    /// of the side playing it.
    pub fn move_score(&mut self, p: &Position, col: usize) -> i32 {
        if p.is_winning_move(col) {
            return p.win_now_score();
        }
        let mut child = *p;
        child.play_col(col);
        -self.solve(&child)
    }
}

/// The cut-off move as stored: in the orientation of the canonical key.
#[inline]
fn stored_move(col: usize, mirrored: bool) -> u64 {
    (if mirrored { WIDTH - 1 - col } else { col }) as u64
}

/// The outcome a score means, in words, naming the side to move (first or second player).
pub fn describe_score(score: i32, moves: i32) -> String {
    let (mover, other) = if moves % 2 == 0 {
        ("first player", "second player")
    } else {
        ("second player", "first player")
    };
    if score == 0 {
        return format!("draw with best play ({mover} to move)");
    }
    let k = 22 - score.abs();
    if score > 0 {
        let from_now = k - moves / 2;
        format!(
            "{mover} (to move) wins with its {} stone, the {} from now",
            ordinal(k),
            ordinal(from_now)
        )
    } else {
        let from_now = k - (moves + 1) / 2;
        format!(
            "{mover} (to move) loses: the {other} wins with its {} stone, the {} from now",
            ordinal(k),
            ordinal(from_now)
        )
    }
}

fn ordinal(n: i32) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// Reads a file of `POSITION SCORE` lines (Pascal Pons' test sets): each position as written,
/// parsed, and its exact score. A malformed line or a finished game is an error naming the line.
pub fn read_labelled_positions(path: &Path) -> Result<Vec<(String, Connect4, i32)>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read test file {}", path.display()))?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let at = || format!("{} line {}", path.display(), n + 1);
        let mut parts = line.split_whitespace();
        let (Some(moves), Some(score), None) = (parts.next(), parts.next(), parts.next()) else {
            bail!("{}: expected `POSITION SCORE`, got '{line}'", at());
        };
        let pos = Connect4::parse_position(moves).with_context(at)?;
        if pos.outcome().is_some() {
            bail!("{}: the game is already over", at());
        }
        let score: i32 = score
            .parse()
            .with_context(|| format!("{}: '{score}' is not a score", at()))?;
        out.push((moves.to_string(), pos, score));
    }
    Ok(out)
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
    fn index_is_the_key_modulo_the_bucket_count() {
        let t = Table::new(1 << 19);
        let n = t.buckets.len() as u64;
        for key in [
            0,
            1,
            n - 1,
            n,
            n + 1,
            (1 << 49) - 1,
            0x1234_5678_9abc,
            1 << 48,
        ] {
            assert_eq!(t.index(key) as u64, key % n, "key {key}");
        }
    }

    #[test]
    fn entries_round_trip() {
        let e = Entry::new(0x1_2345_6789, -18, 21, 5, 200, 40);
        assert!(e.matches(0x1_2345_6789, 200));
        assert!(!e.matches(0x1_2345_6789, 199));
        assert_eq!((e.lower(), e.upper(), e.mv(), e.work()), (-18, 21, 5, 40));
    }

    #[test]
    fn small_scores() {
        let mut s = Solver::new(1 << 18);
        assert_eq!(s.solve(&pos("4455")), 18);
        assert_eq!(s.solve(&pos("44455554221")), -15);
        assert_eq!(
            describe_score(18, 4),
            "first player (to move) wins with its 4th stone, the 2nd from now"
        );
        assert_eq!(
            describe_score(-15, 11),
            "second player (to move) loses: the first player wins with its 7th stone, the 1st from now"
        );
    }
}
