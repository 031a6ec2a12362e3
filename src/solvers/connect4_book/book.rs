//! The opening book: the exact score of every position with at most some number of stones,
//! keyed by canonical key, built once by [`build_book`] and consulted inside the search.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::cache::{Cache, KEY_LIMIT};
use crate::core::bundled::{Bundled, Origin};
use crate::core::files::{ensure, write_atomic, Format};
use crate::core::progress;
use crate::games::connect4::{HEIGHT, WIDTH};
use crate::games::{Connect4, Game};
use crate::solvers::connect4::{Position, ScoreSource, Solver, MAX_SCORE, MIN_SCORE};

/// The book file: version 2 puts the book inside the checked header of [`Format`].
const BOOK: Format = Format {
    kind: "c4-book",
    version: 2,
    remedy: "rebuild it with `zero solve --build-book DEPTH`",
};

/// The book of depth 4 compiled in: what the solver uses where its folder has no book (the
/// binary run outside its clone), so the first plies never take minutes. A deeper book in the
/// folder wins.
pub const BUILT_IN_BOOK: Bundled = Bundled {
    name: "data/connect4/book-4.bin",
    bytes: include_bytes!("../../../data/connect4/book-4.bin"),
};

/// Exact scores of every position with at most `depth` stones, keyed by canonical key.
pub struct Book {
    depth: u32,
    /// Sorted, without repeats.
    keys: Vec<u64>,
    scores: Vec<i8>,
}

/// The payload of a book file.
#[derive(Serialize, Deserialize)]
struct BookFile {
    depth: u32,
    keys: Vec<u64>,
    scores: Vec<i8>,
}

impl Book {
    /// The book of the scores in `map` (by canonical key) of positions of at most `depth`
    /// stones.
    pub fn from_map(depth: u32, map: &HashMap<u64, i8>) -> Book {
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
    /// Loads a book, checking its header and that its keys are sorted, its scores possible
    /// and its depth within the board.
    pub fn load(path: &Path) -> Result<Book> {
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        Book::from_bytes(path, &bytes)
    }
    /// The book in a file's bytes, checked as [`Book::load`] checks it; `path` names the file
    /// in errors.
    pub fn from_bytes(path: &Path, bytes: &[u8]) -> Result<Book> {
        let file: BookFile = BOOK.decode_value(path, bytes)?;
        let check = |condition: bool, problem: &str| ensure(&BOOK, path, condition, problem);
        check(
            file.depth as usize <= WIDTH * HEIGHT,
            &format!(
                "depth {} on a board of {} cells",
                file.depth,
                WIDTH * HEIGHT
            ),
        )?;
        check(
            file.keys.len() == file.scores.len(),
            &format!("{} keys for {} scores", file.keys.len(), file.scores.len()),
        )?;
        check(
            file.keys.windows(2).all(|w| w[0] < w[1]),
            "its keys are not sorted",
        )?;
        check(
            file.keys.last().is_none_or(|&k| k < KEY_LIMIT),
            "a key is not a position's",
        )?;
        check(
            file.scores
                .iter()
                .all(|&s| (MIN_SCORE..=MAX_SCORE).contains(&(s as i32))),
            &format!("a score is outside {MIN_SCORE}..={MAX_SCORE}"),
        )?;
        Ok(Book {
            depth: file.depth,
            keys: file.keys,
            scores: file.scores,
        })
    }
    /// Writes the book atomically.
    pub fn save(&self, path: &Path) -> Result<()> {
        let bytes = self
            .to_bytes()
            .with_context(|| format!("cannot encode {}", path.display()))?;
        write_atomic(path, &bytes)
    }
    /// The bytes of the file [`Book::save`] writes.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        BOOK.encode_value(&BookFile {
            depth: self.depth,
            keys: self.keys.clone(),
            scores: self.scores.clone(),
        })
    }
    /// The deepest book of `dir` loaded and ready to share between solvers, if it has one.
    pub fn load_deepest(dir: &Path) -> Result<Option<Arc<Book>>> {
        match Book::find_deepest(dir) {
            Some(path) => Ok(Some(Arc::new(Book::load(&path)?))),
            None => Ok(None),
        }
    }
    /// The deepest book of `dir`, or the book built in ([`BUILT_IN_BOOK`]) where `dir` has
    /// none, ready to share between solvers, and where it came from. A damaged book in `dir`
    /// is an error, never a quiet fall back.
    pub fn load_or_built_in(dir: &Path) -> Result<(Arc<Book>, Origin)> {
        let (book, origin) = BUILT_IN_BOOK.load(Book::find_deepest(dir), Book::from_bytes)?;
        Ok((Arc::new(book), origin))
    }
    /// Where [`Book::load_or_built_in`] reads the book of `dir` from, without reading it.
    pub fn origin(dir: &Path) -> Origin {
        BUILT_IN_BOOK.origin(Book::find_deepest(dir))
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
    /// Positions whose score came from the cache of solved positions (an interrupted build's,
    /// or earlier `zero solve` runs'), not from a search.
    pub from_cache: usize,
    pub seconds: f64,
    pub nodes: u64,
    pub path: String,
    pub bytes: u64,
}

/// One finished level of a book being built: the positions with `ply` stones.
#[derive(Clone, Debug, Serialize)]
pub struct BookLevel {
    pub ply: u32,
    pub positions: usize,
    pub from_cache: usize,
    pub seconds: f64,
}

/// Solves every position with at most `depth` stones, deepest first so that each shallower
/// level is answered from the book after one ply, and writes the book to `dir`. Each score
/// is appended to the cache of solved positions in `dir` as soon as it is found, and scores
/// already there are not searched again: an interrupted build resumes where it stopped.
/// `on_level` hears of each level as it is finished.
pub fn build_book(
    depth: u32,
    dir: &Path,
    table_entries: usize,
    progress: bool,
    on_level: &mut dyn FnMut(&BookLevel),
) -> Result<BookReport> {
    let start = std::time::Instant::now();
    let mut solver = Solver::new(table_entries);
    let mut cache = Cache::open(dir)?;
    let mut map: HashMap<u64, i8> = HashMap::new();
    let mut from_cache = 0;
    for d in (0..=depth).rev() {
        let level_start = std::time::Instant::now();
        let level = positions_at(d);
        let task = progress::task(
            level.len() as u64,
            &format!("positions of ply {d}"),
            progress,
        );
        let level_cached = solve_level(&level, &mut solver, &mut cache, &mut map, &task)?;
        drop(task);
        from_cache += level_cached;
        on_level(&BookLevel {
            ply: d,
            positions: level.len(),
            from_cache: level_cached,
            seconds: level_start.elapsed().as_secs_f64(),
        });
        solver.set_book(Box::new(Arc::new(Book::from_map(depth, &map))));
    }
    let book = Book::from_map(depth, &map);
    let path = Book::path(dir, depth);
    book.save(&path)?;
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    Ok(BookReport {
        depth,
        positions: book.len(),
        from_cache,
        seconds: start.elapsed().as_secs_f64(),
        nodes: solver.nodes(),
        path: path.display().to_string(),
        bytes,
    })
}

/// Scores every position of `level` into `map`: from the cache when it has them, else by a
/// search whose score the cache keeps at once. Returns how many came from the cache.
fn solve_level(
    level: &[Position],
    solver: &mut Solver,
    cache: &mut Cache,
    map: &mut HashMap<u64, i8>,
    task: &progress::Task,
) -> Result<usize> {
    let mut cached = 0;
    for p in level {
        let key = p.canonical_key().0;
        let score = match cache.get(key) {
            Some(s) => {
                cached += 1;
                s
            }
            None => {
                let s = solver.solve(p);
                cache.insert(key, s)?;
                s
            }
        };
        map.insert(key, score as i8);
        task.inc(1);
    }
    Ok(cached)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_book_built_in_stands_in_for_a_folder_without_one_and_a_book_there_wins() {
        let dir = tempfile::tempdir().unwrap();
        let (book, origin) = Book::load_or_built_in(dir.path()).unwrap();
        assert_eq!(origin, Origin::BuiltIn("data/connect4/book-4.bin"));
        assert_eq!(Book::origin(dir.path()), origin);
        let positions: usize = (0..=4).map(|d| positions_at(d).len()).sum();
        assert_eq!((book.depth(), book.len()), (4, positions));
        // The first player wins the empty board with the last stone of the board.
        let empty = Position::from_game(&Connect4::new());
        assert_eq!(book.get(empty.canonical_key().0), Some(1));
        // The copy built in goes through the checks of a file: damaged, it is refused by name.
        let mut damaged = BUILT_IN_BOOK.bytes.to_vec();
        let n = damaged.len();
        damaged[n - 5] ^= 0x10;
        let damaged = Bundled {
            name: BUILT_IN_BOOK.name,
            bytes: Box::leak(damaged.into_boxed_slice()),
        };
        let e = damaged
            .load(None, Book::from_bytes)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("<built-in data/connect4/book-4.bin>"), "{e}");
        // A book in the folder wins, and a damaged one is an error, not the book built in.
        let path = Book::path(dir.path(), 1);
        Book::from_map(1, &HashMap::from([(empty.canonical_key().0, 1)]))
            .save(&path)
            .unwrap();
        let (book, origin) = Book::load_or_built_in(dir.path()).unwrap();
        assert_eq!(
            (book.depth(), book.len(), origin),
            (1, 1, Origin::File(path.clone()))
        );
        std::fs::write(&path, b"garbage").unwrap();
        let e = Book::load_or_built_in(dir.path())
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("book-1.bin") && e.ends_with(BOOK.remedy), "{e}");
    }

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
    fn a_build_takes_the_cached_scores_and_solves_only_the_rest() {
        // As an interrupted build leaves it: every position of plies 1 and 2 in the cache
        // (with made-up scores: a search would never give them all -3), the empty board not.
        let dir = tempfile::tempdir().unwrap();
        let mut cache = Cache::open(dir.path()).unwrap();
        for p in positions_at(2).iter().chain(&positions_at(1)) {
            cache.insert(p.canonical_key().0, -3).unwrap();
        }
        drop(cache);
        let mut levels = Vec::new();
        let r = build_book(2, dir.path(), 1 << 16, false, &mut |l| {
            levels.push(l.clone())
        })
        .unwrap();
        let heard: Vec<(u32, usize, usize)> = levels
            .iter()
            .map(|l| (l.ply, l.positions, l.from_cache))
            .collect();
        assert_eq!(heard, [(2, 25, 25), (1, 4, 4), (0, 1, 0)]);
        assert_eq!((r.positions, r.from_cache), (30, 29));
        let book = Book::load(&Book::path(dir.path(), 2)).unwrap();
        let key = |p: &Position| p.canonical_key().0;
        assert_eq!(book.get(key(&positions_at(1)[0])), Some(-3));
        // The empty board was searched, one ply deep into the book: every reply leaves the
        // opponent at -3, so it is worth 3; and the cache keeps it for the next build.
        let root = key(&positions_at(0)[0]);
        assert_eq!(book.get(root), Some(3));
        assert_eq!(Cache::open(dir.path()).unwrap().get(root), Some(3));
    }

    fn small_book() -> Book {
        let mut map = HashMap::new();
        map.insert(12345u64, 3i8);
        map.insert(7u64, -2i8);
        Book::from_map(1, &map)
    }

    #[test]
    fn book_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = Book::path(dir.path(), 1);
        small_book().save(&path).unwrap();
        assert_eq!(Book::find_deepest(dir.path()), Some(path.clone()));
        let back = Book::load(&path).unwrap();
        assert_eq!((back.depth(), back.len()), (1, 2));
        assert_eq!(back.get(7), Some(-2));
        assert_eq!(back.get(12345), Some(3));
        assert_eq!(back.get(8), None);
    }

    #[test]
    fn damaged_books_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = Book::path(dir.path(), 1);
        small_book().save(&path).unwrap();
        let good = std::fs::read(&path).unwrap();
        let mut flipped = good.clone();
        flipped[good.len() - 2] ^= 0x04;
        let foreign = Format {
            kind: "c4-cache",
            version: 2,
            remedy: "",
        }
        .stream_header();
        let cases: [(&str, Vec<u8>, &str); 5] = [
            ("truncated", good[..good.len() - 1].to_vec(), "truncated"),
            ("flipped", flipped, "checksum"),
            ("foreign", foreign, "a c4-cache file, not a c4-book file"),
            (
                "random",
                b"not a book at all, no".to_vec(),
                "no zero header",
            ),
            ("empty", Vec::new(), "no zero header"),
        ];
        for (case, bytes, problem) in cases {
            std::fs::write(&path, bytes).unwrap();
            let e = Book::load(&path).err().unwrap().to_string();
            assert!(
                e.contains(&path.display().to_string())
                    && e.contains(problem)
                    && e.ends_with(BOOK.remedy),
                "{case}: {e}"
            );
        }
    }

    #[test]
    fn books_with_impossible_contents_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = Book::path(dir.path(), 1);
        let file = |depth: u32, keys: Vec<u64>, scores: Vec<i8>| BookFile {
            depth,
            keys,
            scores,
        };
        let cases = [
            (file(43, vec![1], vec![0]), "depth 43"),
            (file(1, vec![1, 2], vec![0]), "2 keys for 1 scores"),
            (file(1, vec![2, 1], vec![0, 0]), "not sorted"),
            (file(1, vec![2, 2], vec![0, 0]), "not sorted"),
            (file(1, vec![1, 1 << 49], vec![0, 0]), "not a position's"),
            (
                file(1, vec![1], vec![MAX_SCORE as i8 + 1]),
                "a score is outside",
            ),
            (
                file(1, vec![1], vec![MIN_SCORE as i8 - 1]),
                "a score is outside",
            ),
        ];
        for (bad, problem) in cases {
            BOOK.save(&path, &bad).unwrap();
            let e = Book::load(&path).err().unwrap().to_string();
            assert!(
                e.contains("book-1.bin") && e.contains(problem) && e.ends_with(BOOK.remedy),
                "{e}"
            );
        }
    }
}
