//! The routes that act on a game beside playing it: stop a thinking engine
//! (`POST /api/games/ID/stop`), the board after any ply (`GET /api/games/ID/board?ply=N`, for
//! stepping through a game) and the solver's review of the game (`GET /api/games/ID/review`).

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;

use super::app::{analysis_deadline, blocking, App};
use super::errors::ApiError;
use super::review::{review_game, ReviewView};
use super::sessions::lock;
use super::views::{BoardView, GameView};

/// The most a review takes by default; `?seconds=` may ask for up to `--solver-seconds`.
const REVIEW_SECONDS: f64 = 60.0;

/// `POST /api/games/{id}/stop`: the engine that is thinking moves now, with what it has
/// found (its move shows in the game once made); 409 when no engine is thinking.
pub(super) async fn stop(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
) -> Result<Json<GameView>, ApiError> {
    let session = app.sessions.get(&id)?;
    let mut s = lock(&session);
    s.table.stop()?;
    Ok(Json(s.table.view()))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PlyQuery {
    ply: usize,
}

/// `GET /api/games/{id}/board?ply=N`: the board after N plies (0: the start).
pub(super) async fn board(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    Query(q): Query<PlyQuery>,
) -> Result<Json<BoardView>, ApiError> {
    let session = app.sessions.get(&id)?;
    let view = lock(&session).table.board_at(q.ply)?;
    Ok(Json(view))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ReviewQuery {
    seconds: Option<f64>,
}

/// `GET /api/games/{id}/review[?seconds=S]`: every move that threw away a win or a draw, as
/// `zero review` grades games, the plies the game was given at its start left out.
pub(super) async fn review(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    Query(q): Query<ReviewQuery>,
) -> Result<Json<ReviewView>, ApiError> {
    let session = app.sessions.get(&id)?;
    let (kind, position, opening) = {
        let s = lock(&session);
        (s.table.kind(), s.table.position(), s.table.opening_plies())
    };
    let limit = app.config.solver_seconds.as_secs_f64();
    let deadline = analysis_deadline(q.seconds, REVIEW_SECONDS.min(limit), limit)?;
    let Ok(_slot) = app.analyses.try_acquire() else {
        return Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "too many reviews and analyses are running: try again in a few seconds",
        ));
    };
    let shared = app.clone();
    let view =
        blocking(move || review_game(kind, &position, opening, &shared.engines.solvers, deadline))
            .await?;
    Ok(Json(view))
}
