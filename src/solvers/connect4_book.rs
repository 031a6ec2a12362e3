//! What makes the Connect Four solver answer at once for positions it has seen: an opening
//! book (every position up to some number of stones with its exact score, built once) and a
//! cache of solved positions that persists between runs; and the `solver` player built on both.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use rand::Rng;
use serde::{Deserialize, Serialize};

use super::connect4::{Position, ScoreSource, Solver};
use crate::agent::Agent;
use crate::core::files::write_atomic;
use crate::core::progress;
use crate::core::rng::{rng_from_seed, Rng64};
use crate::games::connect4::WIDTH;
use crate::games::{Connect4, Game, Move};

const BOOK_VERSION: u32 = 1;
const CACHE_FILE: &str = "cache.bin";
/// Bytes of one cache record: the canonical key (u64, little-endian), then a lower and an
/// upper bound on the score (i8 each; equal for an exact score).
const RECORD: usize = 10;

/// Exact scores of every position with at most `depth` stones, keyed by canonical key.
pub struct Book {
    depth: u32,
    keys: Vec<u64>,
    scores: Vec<i8>,
}

#[derive(Serialize, Deserialize)]
struct BookFile {
    version: u32,
    depth: u32,
    /// Sorted by key.
    entries: Vec<(u64, i8)>,
}

impl Book {
    fn from_map(depth: u32, map: &HashMap<u64, i8>) -> Book {
        let mut entries: Vec<(u64, i8)> = map.iter().map(|(&k, &s)| (k, s)).collect();
        entries.sort_unstable();
        Book {
            depth,
            keys: entries.iter().map(|e| e.0).collect(),
            scores: entries.iter().map(|e| e.1).collect(),
        }
    }
    pub fn depth(&self) -> u32 {
        self.depth
    }
    pub fn len(&self) -> usize {
        self.keys.len()
    }
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
    pub fn get(&self, canonical_key: u64) -> Option<i32> {
        self.keys
            .binary_search(&canonical_key)
            .ok()
            .map(|i| self.scores[i] as i32)
    }
    pub fn path(dir: &Path, depth: u32) -> PathBuf {
        dir.join(format!("book-{depth}.bin"))
    }
    pub fn load(path: &Path) -> Result<Book> {
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        let file: BookFile = postcard::from_bytes(&bytes)
            .with_context(|| format!("{} is not a Connect Four book", path.display()))?;
        if file.version != BOOK_VERSION {
            bail!(
                "{} is a book of version {}, this program reads version {BOOK_VERSION}",
                path.display(),
                file.version
            );
        }
        if file.entries.windows(2).any(|w| w[0].0 >= w[1].0) {
            bail!("{} is corrupt: its keys are not sorted", path.display());
        }
        Ok(Book {
            depth: file.depth,
            keys: file.entries.iter().map(|e| e.0).collect(),
            scores: file.entries.iter().map(|e| e.1).collect(),
        })
    }
    /// Writes the book to a temporary file, then renames it into place.
    pub fn save(&self, path: &Path) -> Result<()> {
        let file = BookFile {
            version: BOOK_VERSION,
            depth: self.depth,
            entries: self
                .keys
                .iter()
                .copied()
                .zip(self.scores.iter().copied())
                .collect(),
        };
        let bytes = postcard::to_allocvec(&file)?;
        write_atomic(path, &bytes)
    }
    /// The deepest `book-N.bin` in `dir`, if any.
    pub fn find_deepest(dir: &Path) -> Option<PathBuf> {
        let entries = std::fs::read_dir(dir).ok()?;
        entries
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().to_string();
                let depth: u32 = name
                    .strip_prefix("book-")?
                    .strip_suffix(".bin")?
                    .parse()
                    .ok()?;
                Some((depth, e.path()))
            })
            .max_by_key(|(d, _)| *d)
            .map(|(_, p)| p)
    }
}

impl ScoreSource for Arc<Book> {
    fn max_moves(&self) -> i32 {
        self.depth as i32
    }
    fn score(&self, canonical_key: u64) -> Option<i32> {
        self.get(canonical_key)
    }
}

/// Every position solved so far, appended to a file of fixed-size records (a record cut short
/// by a crash is ignored on loading). A record holds bounds on the score: equal bounds for a
/// solved position; a lower bound alone for a move the player refuted without its exact score.
pub struct Cache {
    /// Canonical key to (lower, upper) bounds on the score.
    map: HashMap<u64, (i8, i8)>,
    file: Option<File>,
    path: PathBuf,
}

const UNKNOWN_LOW: i8 = -64;
const UNKNOWN_HIGH: i8 = 64;

impl Cache {
    /// Loads the cache in `dir` (empty when there is none yet); new entries are appended to it.
    pub fn open(dir: &Path) -> Result<Cache> {
        let path = dir.join(CACHE_FILE);
        let mut map: HashMap<u64, (i8, i8)> = HashMap::new();
        match std::fs::read(&path) {
            Ok(bytes) => {
                for rec in bytes.chunks_exact(RECORD) {
                    let mut key = [0u8; 8];
                    key.copy_from_slice(&rec[..8]);
                    let (lower, upper) = (rec[8] as i8, rec[9] as i8);
                    let e = map
                        .entry(u64::from_le_bytes(key))
                        .or_insert((UNKNOWN_LOW, UNKNOWN_HIGH));
                    *e = (e.0.max(lower), e.1.min(upper));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
        Ok(Cache {
            map,
            file: None,
            path,
        })
    }
    pub fn len(&self) -> usize {
        self.map.len()
    }
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
    /// The exact score, if known.
    pub fn get(&self, canonical_key: u64) -> Option<i32> {
        match self.map.get(&canonical_key) {
            Some(&(lower, upper)) if lower == upper => Some(lower as i32),
            _ => None,
        }
    }
    /// The known lower bound on the score, if any.
    pub fn lower_bound(&self, canonical_key: u64) -> Option<i32> {
        match self.map.get(&canonical_key) {
            Some(&(lower, _)) if lower > UNKNOWN_LOW => Some(lower as i32),
            _ => None,
        }
    }
    /// Records the exact score.
    pub fn insert(&mut self, canonical_key: u64, score: i32) -> Result<()> {
        self.record(canonical_key, score as i8, score as i8)
    }
    /// Records that the score is at least `lower`.
    pub fn insert_lower_bound(&mut self, canonical_key: u64, lower: i32) -> Result<()> {
        self.record(canonical_key, lower as i8, UNKNOWN_HIGH)
    }
    fn record(&mut self, canonical_key: u64, lower: i8, upper: i8) -> Result<()> {
        let e = self
            .map
            .entry(canonical_key)
            .or_insert((UNKNOWN_LOW, UNKNOWN_HIGH));
        let merged = (e.0.max(lower), e.1.min(upper));
        if merged == *e {
            return Ok(());
        }
        *e = merged;
        if self.file.is_none() {
            if let Some(dir) = self.path.parent() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
            }
            let f = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.path)
                .with_context(|| format!("cannot open {}", self.path.display()))?;
            self.file = Some(f);
        }
        let mut rec = [0u8; RECORD];
        rec[..8].copy_from_slice(&canonical_key.to_le_bytes());
        rec[8] = lower as u8;
        rec[9] = upper as u8;
        if let Some(f) = &mut self.file {
            // One write per record, so concurrent appenders do not interleave within one.
            f.write_all(&rec)
                .with_context(|| format!("cannot append to {}", self.path.display()))?;
        }
        Ok(())
    }
}

/// A solver with the book inside its search and the cache in front of it.
pub struct Oracle {
    pub solver: Solver,
    book: Option<Arc<Book>>,
    cache: Option<Cache>,
}

/// Where an answer came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Book,
    Cache,
    Search,
}

impl Oracle {
    /// A solver with a table of `table_entries`; with `dir`, the deepest book and the cache
    /// found there.
    pub fn new(table_entries: usize, dir: Option<&Path>) -> Result<Oracle> {
        let mut solver = Solver::new(table_entries);
        let (mut book, mut cache) = (None, None);
        if let Some(dir) = dir {
            if let Some(path) = Book::find_deepest(dir) {
                let b = Arc::new(Book::load(&path)?);
                solver.set_book(Box::new(b.clone()));
                book = Some(b);
            }
            cache = Some(Cache::open(dir)?);
        }
        Ok(Oracle {
            solver,
            book,
            cache,
        })
    }
    pub fn book_depth(&self) -> Option<u32> {
        self.book.as_ref().map(|b| b.depth())
    }
    fn known(&self, p: &Position) -> Option<(i32, Source)> {
        let (key, _) = p.canonical_key();
        if let Some(b) = &self.book {
            if p.moves() as u32 <= b.depth() {
                if let Some(s) = b.get(key) {
                    return Some((s, Source::Book));
                }
            }
        }
        self.cache
            .as_ref()
            .and_then(|c| c.get(key))
            .map(|s| (s, Source::Cache))
    }
    fn remember(&mut self, p: &Position, score: i32) -> Result<()> {
        if let Some(c) = &mut self.cache {
            c.insert(p.canonical_key().0, score)?;
        }
        Ok(())
    }
    /// The exact score of a position that is not over.
    pub fn solve(&mut self, p: &Position) -> Result<(i32, Source)> {
        if let Some(known) = self.known(p) {
            return Ok(known);
        }
        let s = self.solver.solve(p);
        self.remember(p, s)?;
        Ok((s, Source::Search))
    }
    /// The score of a position that is not over if it is below `hi`, else some value >= `hi`.
    fn solve_below(&mut self, p: &Position, hi: i32) -> Result<i32> {
        if let Some((s, _)) = self.known(p) {
            return Ok(s);
        }
        let key = p.canonical_key().0;
        if let Some(lower) = self.cache.as_ref().and_then(|c| c.lower_bound(key)) {
            if lower >= hi {
                return Ok(lower);
            }
        }
        let s = self.solver.solve_range(p, i32::MIN / 2, hi);
        if let Some(c) = &mut self.cache {
            if s < hi {
                c.insert(key, s)?;
            } else {
                c.insert_lower_bound(key, s)?;
            }
        }
        Ok(s)
    }
    /// The exact score of every legal move (by column), from the mover's view.
    pub fn move_scores(&mut self, p: &Position) -> Result<[Option<i32>; WIDTH]> {
        let mut out = [None; WIDTH];
        for (col, slot) in out.iter_mut().enumerate() {
            if !p.can_play(col) {
                continue;
            }
            *slot = Some(if p.is_winning_move(col) {
                p.win_now_score()
            } else {
                let mut child = *p;
                child.play_col(col);
                -self.solve(&child)?.0
            });
        }
        Ok(out)
    }
    /// The columns of the optimal moves and their score. A child only needs an exact score
    /// when it is at least as good as the best so far, so the others are refuted by a single
    /// null-window search each.
    pub fn best_moves(&mut self, p: &Position) -> Result<(Vec<usize>, i32)> {
        let mut best = i32::MIN / 2;
        let mut cols = Vec::new();
        for col in [3, 2, 4, 1, 5, 0, 6] {
            if !p.can_play(col) {
                continue;
            }
            let score = if p.is_winning_move(col) {
                p.win_now_score()
            } else {
                let mut child = *p;
                child.play_col(col);
                // The child's score is exact when below -best + 1, i.e. when the move is no
                // worse than the best so far.
                -self.solve_below(&child, -best + 1)?
            };
            if score > best {
                best = score;
                cols.clear();
            }
            if score == best {
                cols.push(col);
            }
        }
        if cols.is_empty() {
            bail!("no legal move: the game is over");
        }
        cols.sort_unstable();
        Ok((cols, best))
    }
}

/// Every distinct position (up to mirror symmetry) with `depth` stones that is not over.
fn positions_at(depth: u32) -> Vec<Position> {
    let mut level = vec![Connect4::new()];
    for _ in 0..depth {
        let mut seen = std::collections::HashSet::new();
        let mut next = Vec::new();
        for g in &level {
            for m in g.legal_moves() {
                let mut c = *g;
                c.play(m);
                if c.outcome().is_some() {
                    continue;
                }
                if seen.insert(Position::from_game(&c).canonical_key().0) {
                    next.push(c);
                }
            }
        }
        level = next;
    }
    level.iter().map(Position::from_game).collect()
}

/// Statistics of a finished book.
#[derive(Clone, Debug, Serialize)]
pub struct BookReport {
    pub depth: u32,
    pub positions: usize,
    pub seconds: f64,
    pub nodes: u64,
    pub path: String,
    pub bytes: u64,
}

/// Solves every position with at most `depth` stones, deepest first so that each shallower
/// level is answered from the book after one ply, and writes the book to `dir`.
pub fn build_book(
    depth: u32,
    dir: &Path,
    table_entries: usize,
    progress: bool,
) -> Result<BookReport> {
    let start = std::time::Instant::now();
    let mut solver = Solver::new(table_entries);
    let mut map: HashMap<u64, i8> = HashMap::new();
    for d in (0..=depth).rev() {
        let level = positions_at(d);
        let task = progress::task(
            level.len() as u64,
            &format!("positions of ply {d}"),
            progress,
        );
        for p in &level {
            let s = solver.solve(p);
            map.insert(p.canonical_key().0, s as i8);
            task.inc(1);
        }
        drop(task);
        solver.set_book(Box::new(Arc::new(Book::from_map(depth, &map))));
    }
    let book = Book::from_map(depth, &map);
    let path = Book::path(dir, depth);
    book.save(&path)?;
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    Ok(BookReport {
        depth,
        positions: book.len(),
        seconds: start.elapsed().as_secs_f64(),
        nodes: solver.nodes(),
        path: path.display().to_string(),
        bytes,
    })
}

/// Table entries of the `solver` player: 2^22 (32 MiB), several players may run at once.
const PLAYER_TABLE_ENTRIES: usize = 1 << 22;

/// The perfect player: among the optimal moves (the fastest win, or the slowest loss), one at
/// random with its seeded generator. Uses the book and cache in the directory it is given.
pub struct SolverAgent {
    oracle: Option<Oracle>,
    dir: PathBuf,
    rng: Rng64,
}

impl SolverAgent {
    pub fn new(dir: impl Into<PathBuf>) -> SolverAgent {
        SolverAgent {
            oracle: None,
            dir: dir.into(),
            rng: rng_from_seed(0),
        }
    }
}

impl Agent<Connect4> for SolverAgent {
    fn new_game(&mut self, seed: u64) {
        self.rng = rng_from_seed(seed);
    }
    fn choose(&mut self, pos: &Connect4) -> Result<Move> {
        if pos.outcome().is_some() {
            bail!("no legal move: the game is over");
        }
        // The table and files are loaded on the first move, not when the player is built.
        if self.oracle.is_none() {
            self.oracle = Some(Oracle::new(PLAYER_TABLE_ENTRIES, Some(&self.dir))?);
        }
        let Some(oracle) = self.oracle.as_mut() else {
            bail!("the solver could not start");
        };
        let (cols, _) = oracle.best_moves(&Position::from_game(pos))?;
        Ok(cols[self.rng.random_range(0..cols.len())] as Move)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_counted_up_to_mirror_images() {
        assert_eq!(positions_at(0).len(), 1);
        // Columns 1/7, 2/6, 3/5 and 4.
        assert_eq!(positions_at(1).len(), 4);
        // 49 two-stone positions, all distinct; mirroring pairs them up except 4-4.
        let two = positions_at(2);
        assert_eq!(two.len(), 25);
        let mut keys: Vec<u64> = two.iter().map(|p| p.canonical_key().0).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), 25);
    }

    #[test]
    fn book_round_trips_and_refuses_garbage() {
        let dir = std::env::temp_dir().join(format!("zero-c4-book-{}", std::process::id()));
        let mut map = HashMap::new();
        map.insert(12345u64, 3i8);
        map.insert(7u64, -2i8);
        let book = Book::from_map(1, &map);
        let path = Book::path(&dir, 1);
        book.save(&path).unwrap();
        assert_eq!(Book::find_deepest(&dir), Some(path.clone()));
        let back = Book::load(&path).unwrap();
        assert_eq!((back.depth(), back.len()), (1, 2));
        assert_eq!(back.get(7), Some(-2));
        assert_eq!(back.get(12345), Some(3));
        assert_eq!(back.get(8), None);
        std::fs::write(&path, b"not a book").unwrap();
        assert!(Book::load(&path).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn cache_keeps_exact_scores_and_bounds_across_runs() {
        let dir = std::env::temp_dir().join(format!("zero-c4-cachet-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        {
            let mut c = Cache::open(&dir).unwrap();
            c.insert(1, -3).unwrap();
            c.insert_lower_bound(2, 5).unwrap();
            c.insert_lower_bound(2, 7).unwrap();
        }
        // A record cut short by a crash is ignored.
        let path = dir.join(CACHE_FILE);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(&[9, 9, 9]);
        std::fs::write(&path, bytes).unwrap();
        let c = Cache::open(&dir).unwrap();
        assert_eq!(c.get(1), Some(-3));
        assert_eq!(c.get(2), None);
        assert_eq!(c.lower_bound(2), Some(7));
        assert_eq!(c.lower_bound(3), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
