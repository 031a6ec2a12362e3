//! What makes the Connect Four solver answer at once for positions it has seen: an opening
//! book ([`Book`]: every position up to some number of stones with its exact score, built once
//! by [`build_book`]) and a cache of solved positions that persists between runs ([`Cache`]);
//! the solver with both in front of it ([`Oracle`]); and the `solver` player built on it
//! ([`SolverAgent`]).
//!
//! Where a folder has no book, the book of depth 4 compiled into the binary stands in
//! ([`BUILT_IN_BOOK`]), so the solver is quick on the first plies wherever the binary runs.
//!
//! Both files are checked when loaded (see [`crate::core::files`]): a truncated, corrupt or
//! foreign book or cache is an error naming the file and what to do, never a wrong score.

mod book;
mod cache;
mod oracle;
mod player;

pub use book::{build_book, Book, BookLevel, BookReport, BUILT_IN_BOOK};
pub use cache::Cache;
pub use oracle::{Oracle, OutOfTime, Source};
pub use player::SolverAgent;
