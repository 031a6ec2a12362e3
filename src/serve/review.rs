//! The solver's review of a web game: every move that threw away a win or a draw, as
//! `zero review` grades the games of a match ([`game_mistakes`]), for any game with an exact
//! solver. A game whose solvers are shared (Connect Four's) is graded on one of them until a
//! deadline; moves not graded by then are left out and the answer says so (every position
//! solved meanwhile stays in the solver's cache, so asking again gets further).

use std::time::Instant;

use serde::Serialize;

use super::errors::ApiError;
use super::solver_pool::SharedSolvers;
use super::table::moves_of;
use crate::arena::review::{game_mistakes, GameMistake, GameVerdict};
use crate::catalog::{side_name, Catalogued};
use crate::games::{GameKind, Player};

#[derive(Clone, Debug, Serialize)]
pub struct ReviewView {
    pub game: &'static str,
    /// The moves from the start, as `zero solve` and `zero review` read them.
    pub position: String,
    /// Plies at the start that were given, not played: not graded.
    pub opening_plies: usize,
    pub mistakes: Vec<MistakeView>,
    /// Moves graded after the opening; all of them when `complete`.
    pub graded: usize,
    pub complete: bool,
    pub seconds: f64,
    /// The verdict in one sentence for people.
    pub summary: String,
    /// Why some moves were not graded.
    pub note: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct MistakeView {
    pub move_number: usize,
    pub side: u8,
    pub side_name: &'static str,
    /// The moves before it.
    pub position: String,
    pub played: String,
    /// The mover's result with perfect play before and after the move: win, draw or loss.
    pub before: &'static str,
    pub after: &'static str,
    /// The moves that kept `before`.
    pub best: Vec<String>,
}

/// The review of the game `position` (the moves from the start), its first `opening` plies
/// not graded, each position solved until `deadline`. Runs a solver: call it off the async
/// threads.
pub fn review_game(
    kind: GameKind,
    position: &str,
    opening: usize,
    solvers: &SharedSolvers,
    deadline: Instant,
) -> Result<ReviewView, ApiError> {
    crate::with_board_game!(kind, G => review::<G>(position, opening, solvers, deadline))
}

fn review<G: Catalogued>(
    position: &str,
    opening: usize,
    solvers: &SharedSolvers,
    deadline: Instant,
) -> Result<ReviewView, ApiError> {
    let started = Instant::now();
    let moves = moves_of::<G>(position)?;
    let failed = |e: anyhow::Error| ApiError::internal(format!("the review failed: {e:#}"));
    let verdict = if G::SHARED_SOLVERS {
        let pool = solvers.pool::<G>().map_err(failed)?;
        match pool.with_solver(deadline, |s| game_mistakes(s, &moves, opening)) {
            // No solver was free in time: nothing graded.
            Err(e) if e.is::<crate::solvers::connect4_book::OutOfTime>() => GameVerdict {
                mistakes: Vec::new(),
                graded: 0,
                complete: moves.len() <= opening,
            },
            other => other.map_err(failed)?,
        }
    } else {
        let mut exact = G::exact(None).map_err(failed)?;
        game_mistakes(exact.as_mut(), &moves, opening).map_err(failed)?
    };
    let mistakes: Vec<MistakeView> = verdict.mistakes.iter().map(mistake_view::<G>).collect();
    let note = (!verdict.complete).then(|| {
        format!(
            "graded {} of {} moves within {:.0} s: {}; ask again to go on",
            verdict.graded,
            moves.len().saturating_sub(opening),
            deadline.saturating_duration_since(started).as_secs_f64(),
            G::SOLVER_NOTE
        )
    });
    Ok(ReviewView {
        game: G::NAME,
        position: position.to_string(),
        opening_plies: opening,
        summary: summary(&mistakes, verdict.complete),
        mistakes,
        graded: verdict.graded,
        complete: verdict.complete,
        seconds: started.elapsed().as_secs_f64(),
        note,
    })
}

fn result_word(v: i32) -> &'static str {
    match v {
        1 => "win",
        -1 => "loss",
        _ => "draw",
    }
}

fn mistake_view<G: Catalogued>(m: &GameMistake) -> MistakeView {
    let side = if m.side == 0 {
        Player::First
    } else {
        Player::Second
    };
    MistakeView {
        move_number: m.move_number,
        side: m.side,
        side_name: side_name::<G>(side),
        position: m.position.clone(),
        played: m.played.clone(),
        before: result_word(m.before),
        after: result_word(m.after),
        best: m.best.clone(),
    }
}

/// The verdict for people: no mistake, or each side's first.
fn summary(mistakes: &[MistakeView], complete: bool) -> String {
    let graded = if complete { "" } else { " in the moves graded" };
    if mistakes.is_empty() {
        return format!(
            "No mistakes{graded}: every move kept its side's result with perfect play."
        );
    }
    let mut firsts: Vec<&MistakeView> = [0, 1]
        .iter()
        .filter_map(|&side| mistakes.iter().find(|m| m.side == side))
        .collect();
    firsts.sort_by_key(|m| m.move_number);
    let firsts: Vec<String> = firsts
        .into_iter()
        .map(|m| {
            format!(
                "{}'s first mistake was move {} ({}), a {} turned into a {} ({} kept it)",
                m.side_name,
                m.move_number,
                m.played,
                m.before,
                m.after,
                m.best.join(" or ")
            )
        })
        .collect();
    let count = match mistakes.len() {
        1 => "1 mistake".to_string(),
        n => format!("{n} mistakes"),
    };
    format!("{count}{graded}. {}.", firsts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_game_is_reviewed_with_its_mistakes_in_words() {
        let dir = tempfile::tempdir().unwrap();
        let solvers = SharedSolvers::new(dir.path().into(), 1);
        let soon = || Instant::now() + Duration::from_secs(60);
        // X 1, O 2 (loses), X 5, O 9, X 3 (gives the win away: 4 or 7 kept it).
        let v = review_game(GameKind::TicTacToe, "12593", 0, &solvers, soon()).unwrap();
        assert!(v.complete && v.graded == 5 && v.note.is_none());
        let last = v.mistakes.last().unwrap();
        assert_eq!(
            (last.side_name, last.before, last.after),
            ("X", "win", "draw")
        );
        assert!(
            v.summary.starts_with(
                "2 mistakes. O's first mistake was move 2 (2), a draw turned into a loss"
            ) && v
                .summary
                .contains("X's first mistake was move 5 (3), a win turned into a draw"),
            "{}",
            v.summary
        );
        // Connect Four late in a game, on the shared solver; a given opening is not graded.
        let line = "2252576253462244111563365343671351441";
        let v = review_game(GameKind::Connect4, line, 30, &solvers, soon()).unwrap();
        assert!(v.complete && v.graded == 7, "{v:?}");
        // The first four stones are graded from the opening book (built in) at once; past it
        // a move needs the solver, which a deadline of a millisecond cuts short.
        let v = review_game(GameKind::Connect4, "4444", 0, &solvers, soon()).unwrap();
        assert!(v.complete && v.graded == 4, "{v:?}");
        let soon = Instant::now() + Duration::from_millis(1);
        let v = review_game(GameKind::Connect4, "444433", 0, &solvers, soon).unwrap();
        assert!(!v.complete && v.note.is_some(), "{v:?}");
        let e = review_game(GameKind::Connect4, "48", 0, &solvers, soon).unwrap_err();
        assert!(e.message.contains("1-7"), "{e}");
    }
}
