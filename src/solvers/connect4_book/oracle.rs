//! The solver with the book inside its search and the cache in front of it: exact scores of
//! positions and of moves, and the optimal moves.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Result};
use serde::Serialize;

use super::{Book, Cache};
use crate::games::connect4::{COLUMN_ORDER, WIDTH};
use crate::solvers::connect4::{Position, Solver};

/// A search stopped at the deadline set with [`Oracle::set_deadline`].
#[derive(Debug, thiserror::Error)]
#[error("the solver ran out of time")]
pub struct OutOfTime;

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
    /// A solver with a table of `table_entries`; with `dir`, the deepest book found there (the
    /// book built in where there is none) and the cache there.
    pub fn new(table_entries: usize, dir: Option<&Path>) -> Result<Oracle> {
        let mut solver = Solver::new(table_entries);
        let (mut book, mut cache) = (None, None);
        if let Some(dir) = dir {
            let (b, _) = Book::load_or_built_in(dir)?;
            solver.set_book(Box::new(b.clone()));
            book = Some(b);
            cache = Some(Cache::open(dir)?);
        }
        Ok(Oracle {
            solver,
            book,
            cache,
        })
    }
    /// Makes searches stop at `deadline` (never, with `None`): a call that needs a search past
    /// it fails with [`OutOfTime`], and nothing it found is cached.
    pub fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.solver.set_deadline(deadline);
    }
    /// Makes searches also stop once `stop` is raised, failing with [`OutOfTime`] as at the
    /// deadline.
    pub fn set_stop(&mut self, stop: Option<crate::core::stop::Stop>) {
        self.solver.set_stop(stop);
    }
    fn check_time(&self) -> Result<()> {
        if self.solver.timed_out() {
            return Err(OutOfTime.into());
        }
        Ok(())
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
        self.check_time()?;
        self.remember(p, s)?;
        Ok((s, Source::Search))
    }
    /// -1, 0 or 1: whether the side to move in a position that is not over loses, draws or
    /// wins. A weak solve, much faster than an exact score where the game is long; what it
    /// finds is cached as a bound on the exact score (at least 1, at most -1, or exactly 0),
    /// which exact scores found later tighten.
    pub fn solve_weak(&mut self, p: &Position) -> Result<(i32, Source)> {
        if let Some((s, source)) = self.known(p) {
            return Ok((s.signum(), source));
        }
        let key = p.canonical_key().0;
        match self.cache.as_ref().and_then(|c| c.bounds(key)) {
            Some((lower, _)) if lower > 0 => return Ok((1, Source::Cache)),
            Some((_, upper)) if upper < 0 => return Ok((-1, Source::Cache)),
            _ => {}
        }
        let value = self.solver.solve_weak(p).signum();
        self.check_time()?;
        if let Some(c) = &mut self.cache {
            match value {
                1 => c.insert_lower_bound(key, 1)?,
                -1 => c.insert_upper_bound(key, -1)?,
                _ => c.insert(key, 0)?,
            }
        }
        Ok((value, Source::Search))
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
        self.check_time()?;
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
            if p.can_play(col) {
                *slot = Some(self.move_score(p, col)?);
            }
        }
        Ok(out)
    }
    /// The exact score of playing `col` (legal) in a position that is not over, from the
    /// mover's view.
    pub fn move_score(&mut self, p: &Position, col: usize) -> Result<i32> {
        if p.is_winning_move(col) {
            return Ok(p.win_now_score());
        }
        let mut child = *p;
        child.play_col(col);
        Ok(-self.solve(&child)?.0)
    }
    /// The columns of the optimal moves and their score. A child only needs an exact score
    /// when it is at least as good as the best so far, so the others are refuted by a single
    /// null-window search each.
    pub fn best_moves(&mut self, p: &Position) -> Result<(Vec<usize>, i32)> {
        let mut best = i32::MIN / 2;
        let mut cols = Vec::new();
        for col in COLUMN_ORDER {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::{Connect4, Game};
    use crate::solvers::connect4::Solver;

    #[test]
    fn a_search_past_its_deadline_fails_and_leaves_nothing_wrong_behind() {
        let dir = tempfile::tempdir().unwrap();
        // An empty book in the folder wins over the book built in; the empty board then takes
        // minutes to solve.
        Book::from_map(0, &Default::default())
            .save(&Book::path(dir.path(), 0))
            .unwrap();
        let mut oracle = Oracle::new(1 << 16, Some(dir.path())).unwrap();
        let empty = Position::from_game(&Connect4::new());
        let started = Instant::now();
        oracle.set_deadline(Some(started + std::time::Duration::from_millis(30)));
        let e = oracle.move_scores(&empty).unwrap_err();
        assert!(e.is::<OutOfTime>(), "{e}");
        assert!(
            started.elapsed().as_secs_f64() < 2.0,
            "{:?}",
            started.elapsed()
        );
        assert!(oracle.best_moves(&empty).unwrap_err().is::<OutOfTime>());
        // Nothing of the stopped searches reached the cache or spoils the next answer.
        assert!(Cache::open(dir.path()).unwrap().is_empty());
        oracle.set_deadline(None);
        let mut p = empty;
        for c in "2252576253462244111563365343671351441".bytes() {
            p.play_col((c - b'1') as usize);
        }
        assert_eq!(oracle.solve(&p).unwrap(), (-1, Source::Search));
    }

    #[test]
    fn without_a_book_in_its_folder_the_oracle_answers_the_empty_board_from_the_book_built_in() {
        let dir = tempfile::tempdir().unwrap();
        let mut oracle = Oracle::new(1 << 16, Some(dir.path())).unwrap();
        let empty = Position::from_game(&Connect4::new());
        oracle.set_deadline(Some(Instant::now() + std::time::Duration::from_secs(60)));
        assert_eq!(oracle.solve(&empty).unwrap(), (1, Source::Book));
        // Every first move is known at once: the overlay's seven answers on the empty board.
        let scores = oracle.move_scores(&empty).unwrap();
        assert_eq!(scores[3], Some(1));
        assert!(
            scores.iter().all(|s| s.is_some_and(|s| s <= 1)),
            "{scores:?}"
        );
    }

    #[test]
    fn a_damaged_book_stops_the_oracle_and_a_damaged_cache_is_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        // 2252576253462244111563365343671351441: score -1 (Pons' Test_L3_R1).
        let mut p = Position::from_game(&Connect4::new());
        for c in "2252576253462244111563365343671351441".bytes() {
            p.play_col((c - b'1') as usize);
        }
        {
            let mut oracle = Oracle::new(1 << 16, Some(dir)).unwrap();
            assert_eq!(oracle.solve(&p).unwrap(), (-1, Source::Search));
        }
        assert_eq!(
            Oracle::new(1 << 16, Some(dir)).unwrap().solve(&p).unwrap(),
            (-1, Source::Cache)
        );
        let cache = dir.join("cache.bin");
        let mut bytes = std::fs::read(&cache).unwrap();
        let n = bytes.len();
        bytes[n - 3] ^= 0x01;
        std::fs::write(&cache, &bytes).unwrap();
        // A damaged cache is only set aside: the oracle solves again, and caches anew.
        let mut oracle = Oracle::new(1 << 16, Some(dir)).unwrap();
        assert!(dir.join("cache.bin.corrupt-1").is_file());
        assert_eq!(oracle.solve(&p).unwrap(), (-1, Source::Search));
        drop(oracle);
        assert_eq!(
            Oracle::new(1 << 16, Some(dir)).unwrap().solve(&p).unwrap(),
            (-1, Source::Cache)
        );
        std::fs::remove_file(&cache).unwrap();
        std::fs::write(Book::path(dir, 4), b"garbage").unwrap();
        let e = Oracle::new(1 << 16, Some(dir)).err().unwrap().to_string();
        assert!(
            e.contains("book-4.bin") && e.contains("--build-book"),
            "{e}"
        );
        // Without the files nothing is read.
        assert!(Oracle::new(1 << 16, None).is_ok());
    }

    #[test]
    fn weak_values_are_cached_as_bounds_and_answered_from_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        // Endgames of Pons' Test_L3_R1, and their children: wins, draws and losses.
        let text = include_str!("../../../tests/data/connect4/Test_L3_R1");
        let positions: Vec<Position> = text
            .lines()
            .take(12)
            .flat_map(|line| {
                let moves = line.split_whitespace().next().unwrap_or("");
                let mut p = Position::from_game(&Connect4::new());
                for c in moves.bytes() {
                    p.play_col((c - b'1') as usize);
                }
                let children = (0..WIDTH)
                    .filter(move |&c| p.can_play(c) && !p.is_winning_move(c))
                    .map(move |c| {
                        let mut child = p;
                        child.play_col(c);
                        child
                    });
                std::iter::once(p).chain(children)
            })
            .collect();
        let mut plain = Solver::new(1 << 16);
        let truth: Vec<i32> = positions.iter().map(|p| plain.solve_weak(p)).collect();
        for v in [-1, 0, 1] {
            assert!(
                truth.contains(&v),
                "the sample has no position of value {v}"
            );
        }
        let mut oracle = Oracle::new(1 << 16, Some(dir)).unwrap();
        for (p, &v) in positions.iter().zip(&truth) {
            assert_eq!(oracle.solve_weak(p).unwrap().0, v);
        }
        // A new oracle on the same directory answers every one from the cache, and an exact
        // score found later agrees with the bound and replaces it.
        let mut again = Oracle::new(1 << 16, Some(dir)).unwrap();
        for (p, &v) in positions.iter().zip(&truth) {
            assert_eq!(again.solve_weak(p).unwrap(), (v, Source::Cache));
        }
        let exact = again.solve(&positions[0]).unwrap().0;
        assert_eq!(exact.signum(), truth[0]);
        let mut third = Oracle::new(1 << 16, Some(dir)).unwrap();
        assert_eq!(third.solve(&positions[0]).unwrap(), (exact, Source::Cache));
    }
}
