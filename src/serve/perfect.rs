//! The "perfect play" overlay: the exact result of every legal move of a position (win, draw
//! or loss for the side to move, and how soon the game ends with best play), so that people
//! see their own mistakes, from the game's exact solver ([`Catalogued::exact`]). The small
//! games are solved whole in milliseconds; a game whose solvers are shared (Connect Four's)
//! has its moves solved one by one on them until a deadline, and a move not solved by then is
//! reported as unknown rather than guessed.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use serde::Serialize;

use super::errors::ApiError;
use super::solver_pool::SharedSolvers;
use crate::catalog::Catalogued;
use crate::games::{GameKind, Move};
use crate::solvers::exact::Solved;

/// Complete answers kept for positions asked again; the map is emptied when it is full.
const CACHED_POSITIONS: usize = 4096;

#[derive(Clone, Debug, Serialize)]
pub struct PerfectView {
    pub game: &'static str,
    pub position: String,
    pub moves: Vec<MoveScore>,
    /// Whether every legal move was solved.
    pub complete: bool,
    pub seconds: f64,
    /// Why some moves are unknown.
    pub note: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct MoveScore {
    #[serde(rename = "move")]
    pub text: String,
    /// `win`, `draw` or `loss` for the side to move if it plays this move; none when the
    /// move was not solved in time.
    pub result: Option<&'static str>,
    /// For a win or a loss: plies until the game ends with best play, this move included.
    pub plies: Option<u32>,
}

/// The results of every legal move after `position` (the moves from the start, as the
/// game's `parse_position` reads them), each move given until `deadline`. Runs a solver:
/// call it off the async threads.
pub fn perfect_scores(
    kind: GameKind,
    position: &str,
    solvers: &SharedSolvers,
    deadline: Instant,
) -> Result<PerfectView, ApiError> {
    crate::with_board_game!(kind, G => view::<G>(position, solvers, deadline))
}

/// Each legal move's result: on a shared solver until `deadline` for a game whose solvers
/// are shared, else on a solver of its own.
fn move_results<G: Catalogued>(
    pos: &G,
    solvers: &SharedSolvers,
    deadline: Instant,
) -> Vec<(Move, Option<Solved>)> {
    let solved = if G::SHARED_SOLVERS {
        solvers
            .pool::<G>()
            .and_then(|pool| pool.with_solver(deadline, |s| Ok(s.move_results(pos))))
    } else {
        G::exact(None).map(|mut s| s.move_results(pos))
    };
    // No solver was free before the deadline (or none could start): nothing known.
    solved.unwrap_or_else(|_| pos.legal_moves().into_iter().map(|m| (m, None)).collect())
}

fn view<G: Catalogued>(
    position: &str,
    solvers: &SharedSolvers,
    deadline: Instant,
) -> Result<PerfectView, ApiError> {
    if position.len() > 200 {
        return Err(ApiError::bad("a position is at most 200 characters"));
    }
    let started = Instant::now();
    let pos = G::parse_position(position).map_err(|e| ApiError::bad(e.to_string()))?;
    let moves: Vec<MoveScore> = move_results(&pos, solvers, deadline)
        .into_iter()
        .map(|(m, solved)| MoveScore {
            text: pos.format_move(m),
            result: solved.map(|(sign, _)| match sign {
                1 => "win",
                -1 => "loss",
                _ => "draw",
            }),
            plies: solved.and_then(|(_, plies)| plies),
        })
        .collect();
    let complete = moves.iter().all(|m| m.result.is_some());
    let note = (!complete).then(|| {
        format!(
            "not solved within {:.1} s: {}",
            deadline.saturating_duration_since(started).as_secs_f64(),
            G::SOLVER_NOTE
        )
    });
    Ok(PerfectView {
        game: G::NAME,
        position: position.to_string(),
        moves,
        complete,
        seconds: started.elapsed().as_secs_f64(),
        note,
    })
}

/// Complete answers by game and position.
#[derive(Default)]
pub struct PerfectCache {
    views: Mutex<HashMap<(GameKind, String), PerfectView>>,
}

impl PerfectCache {
    fn views(&self) -> MutexGuard<'_, HashMap<(GameKind, String), PerfectView>> {
        self.views.lock().unwrap_or_else(|p| p.into_inner())
    }
    pub fn get(&self, kind: GameKind, position: &str) -> Option<PerfectView> {
        self.views().get(&(kind, position.to_string())).cloned()
    }
    /// Keeps a complete answer.
    pub fn put(&self, kind: GameKind, view: &PerfectView) {
        if !view.complete {
            return;
        }
        let mut views = self.views();
        if views.len() >= CACHED_POSITIONS {
            views.clear();
        }
        views.insert((kind, view.position.clone()), view.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn pool() -> (tempfile::TempDir, SharedSolvers) {
        let dir = tempfile::tempdir().unwrap();
        let pool = SharedSolvers::new(dir.path().into(), 1);
        (dir, pool)
    }

    #[test]
    fn every_move_is_scored_and_early_connect_four_is_partial() {
        let (_dir, pool) = pool();
        let soon = || Instant::now() + Duration::from_secs(30);
        // X to move: 3 wins at once (1 2 3 on top), the rest let O win or draw at best.
        let v = perfect_scores(GameKind::TicTacToe, "1425", &pool, soon()).unwrap();
        assert!(v.complete && v.moves.len() == 5);
        let three = v.moves.iter().find(|m| m.text == "3").unwrap();
        assert_eq!((three.result, three.plies), (Some("win"), Some(1)));
        // Connect Four near the end solves at once: Red wins in column 1 now.
        let v = perfect_scores(GameKind::Connect4, "121212", &pool, soon()).unwrap();
        assert!(v.complete);
        assert_eq!(
            (v.moves[0].result, v.moves[0].plies),
            (Some("win"), Some(1))
        );
        // Five stones, past the opening book built in, do not solve in 50 ms: unknown moves and
        // a note, no error.
        let v = perfect_scores(
            GameKind::Connect4,
            "44444",
            &pool,
            Instant::now() + Duration::from_millis(50),
        )
        .unwrap();
        assert!(!v.complete && v.note.is_some() && v.moves.len() == 7);
        let e = perfect_scores(GameKind::Connect4, "48", &pool, soon()).unwrap_err();
        assert!(e.message.contains("1-7"), "{e}");
    }
}
