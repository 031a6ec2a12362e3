//! The HTTP routes: the page and its files, and the JSON API under `/api/` (listed in the
//! README with curl examples). Handlers only check, look up and hand over: engines, solvers
//! and model loads run on blocking threads, and no game stays locked across an `await`.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::{header, Method, StatusCode, Uri};
use axum::middleware::map_response;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::timeout::TimeoutLayer;

use super::app::{analysis_deadline, blocking, App};
use super::assets;
use super::engine::{self, parse_seat};
use super::errors::{json_errors, ApiError, BODY_LIMIT};
use super::game_routes;
use super::perfect::{perfect_scores, PerfectView};
use super::sessions::lock;
use super::table::{new_table, NewTable};
use super::training;
use super::views::GameView;
use crate::catalog::Facts;
use crate::core::rng::SeedStream;
use crate::games::GameKind;

/// Seeds of games that do not name one, under the server's seed.
const GAME_SEEDS: SeedStream = SeedStream::new(0x9a3e_5eed_5e55_1011);

type Shared = State<Arc<App>>;

pub fn router(app: Arc<App>) -> Router {
    // A backstop: the handlers bound their own waits well within it.
    let backstop = app.config.engine_wait + Duration::from_secs(30);
    Router::new()
        .route("/", get(page))
        .route("/{file}", get(file))
        .route("/api/info", get(info))
        .route("/api/games", post(create))
        .route("/api/games/{id}", get(state).delete(end))
        .route("/api/games/{id}/move", post(human_move))
        .route("/api/games/{id}/engine-move", post(engine_move))
        .route("/api/games/{id}/undo", post(undo))
        .route("/api/games/{id}/analysis", get(game_analysis))
        .route("/api/games/{id}/stop", post(game_routes::stop))
        .route("/api/games/{id}/board", get(game_routes::board))
        .route("/api/games/{id}/review", get(game_routes::review))
        .route("/api/analysis", get(analysis))
        .route("/api/training", get(training_runs))
        .route("/api/training/{game}/chart.svg", get(training_chart))
        .fallback(no_route)
        .layer(RequestBodyLimitLayer::new(BODY_LIMIT))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            backstop,
        ))
        .layer(map_response(json_errors))
        .with_state(app)
}

/// Expires idle games every little while, for as long as the server runs.
pub async fn sweep_idle_games(app: Arc<App>) {
    let every = (app.config.idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(30));
    loop {
        tokio::time::sleep(every).await;
        app.sessions.expire();
    }
}

async fn no_route(method: Method, uri: Uri) -> ApiError {
    ApiError::not_found(format!("no route {method} {}", uri.path()))
}

async fn page() -> Response {
    file(Path("index.html".into())).await
}

async fn file(Path(name): Path<String>) -> Response {
    match assets::asset(&name) {
        Some(asset) => (
            [
                (header::CONTENT_TYPE, asset.content_type),
                (header::CACHE_CONTROL, "no-cache"),
                (
                    header::CONTENT_SECURITY_POLICY,
                    assets::CONTENT_SECURITY_POLICY,
                ),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            ],
            asset.body,
        )
            .into_response(),
        None => ApiError::not_found(format!("no file '{name}'")).into_response(),
    }
}

#[derive(Serialize)]
struct Info {
    version: &'static str,
    games: Vec<GameInfo>,
    players: String,
    default_sims: u32,
    limits: Limits,
    live_games: usize,
    /// Models loaded now (`game/name`), each shared by all the games that play it.
    loaded_models: Vec<String>,
}

/// A game: its name and title, its board (layout, size, look), its sides and the moves a
/// click plays (what the page draws it from), and its models.
#[derive(Serialize)]
struct GameInfo {
    #[serde(flatten)]
    facts: Facts,
    /// The models a request may name: `best`, `latest`, or `model:NAME`.
    models: Vec<String>,
}

#[derive(Serialize)]
struct Limits {
    max_games: usize,
    idle_seconds: u64,
    minimax_depth: u32,
    mcts_sims: u32,
    network_sims: u32,
    analysis_seconds: f64,
    solver_seconds: u64,
    body_bytes: usize,
}

async fn info(State(app): Shared) -> Json<Info> {
    let games = GameKind::ALL
        .into_iter()
        .map(|kind| GameInfo {
            facts: kind.facts(),
            models: app.engines.model_names(kind),
        })
        .collect();
    Json(Info {
        version: env!("CARGO_PKG_VERSION"),
        games,
        players: engine::http_players(),
        default_sims: crate::players::DEFAULT_NET_SIMS,
        limits: Limits {
            max_games: app.sessions.max(),
            idle_seconds: app.sessions.idle().as_secs(),
            minimax_depth: engine::MAX_MINIMAX_DEPTH,
            mcts_sims: engine::MAX_MCTS_SIMS,
            network_sims: engine::MAX_NET_SIMS,
            analysis_seconds: app.config.analysis_seconds,
            solver_seconds: app.config.solver_seconds.as_secs(),
            body_bytes: BODY_LIMIT,
        },
        live_games: app.sessions.len(),
        loaded_models: app.engines.loaded_models(),
    })
}

/// `POST /api/games`: who plays each side; `human` for a person.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewGame {
    #[serde(default = "default_game")]
    game: GameKind,
    first: Option<String>,
    second: Option<String>,
    /// Simulations a move of network players (both sides, unless set for one).
    sims: Option<u32>,
    first_sims: Option<u32>,
    second_sims: Option<u32>,
    seed: Option<u64>,
    /// Moves already played, as the game writes positions (`4453`); none: the start.
    #[serde(default)]
    position: String,
}

fn default_game() -> GameKind {
    GameKind::Connect4
}

async fn create(
    State(app): Shared,
    Json(req): Json<NewGame>,
) -> Result<(StatusCode, Json<GameView>), ApiError> {
    let first = parse_seat(
        req.first.as_deref().unwrap_or("human"),
        req.first_sims.or(req.sims),
    )?;
    let second = parse_seat(
        req.second.as_deref().unwrap_or("best"),
        req.second_sims.or(req.sims),
    )?;
    // Refused before any model is loaded for it.
    app.sessions.check_room()?;
    let (id, n) = app.sessions.next_id();
    let seed = req
        .seed
        .unwrap_or_else(|| GAME_SEEDS.seed(app.config.seed, n));
    let spec = NewTable {
        kind: req.game,
        id: id.clone(),
        seats: [first, second],
        seed,
        position: req.position,
    };
    let shared = app.clone();
    let table = blocking(move || new_table(spec, &shared.engines)).await?;
    let session = app.sessions.insert(id, table)?;
    let view = lock(&session).table.view();
    Ok((StatusCode::CREATED, Json(view)))
}

async fn state(State(app): Shared, Path(id): Path<String>) -> Result<Json<GameView>, ApiError> {
    let session = app.sessions.get(&id)?;
    let view = lock(&session).table.view();
    Ok(Json(view))
}

async fn end(State(app): Shared, Path(id): Path<String>) -> Result<StatusCode, ApiError> {
    app.sessions.remove(&id)?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MoveRequest {
    #[serde(rename = "move")]
    text: String,
}

async fn human_move(
    State(app): Shared,
    Path(id): Path<String>,
    Json(req): Json<MoveRequest>,
) -> Result<Json<GameView>, ApiError> {
    let session = app.sessions.get(&id)?;
    let mut s = lock(&session);
    s.table.play(&req.text)?;
    Ok(Json(s.table.view()))
}

/// Has the engine whose turn it is move, and answers once it has. The move is computed by a
/// task of its own: a client that gives up waiting does not stop it, and the move shows in
/// the game's state when found.
async fn engine_move(
    State(app): Shared,
    Path(id): Path<String>,
) -> Result<Json<GameView>, ApiError> {
    let session = app.sessions.get(&id)?;
    let job = lock(&session).table.begin_engine_move()?;
    let task = tokio::spawn(async move {
        let done = tokio::task::spawn_blocking(move || job.run())
            .await
            .map_err(|e| ApiError::internal(format!("the engine's thread failed: {e}")))?;
        let mut s = lock(&session);
        s.table.finish_engine_move(done)?;
        Ok::<_, ApiError>(s.table.view())
    });
    match tokio::time::timeout(app.config.engine_wait, task).await {
        Ok(Ok(view)) => view.map(Json),
        Ok(Err(e)) => Err(ApiError::internal(format!("the engine's task failed: {e}"))),
        Err(_) => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the engine is still thinking after {} s; its move will show in GET /api/games/{id}",
                app.config.engine_wait.as_secs()
            ),
        )),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UndoQuery {
    plies: Option<usize>,
}

async fn undo(
    State(app): Shared,
    Path(id): Path<String>,
    Query(q): Query<UndoQuery>,
) -> Result<Json<GameView>, ApiError> {
    let session = app.sessions.get(&id)?;
    let mut s = lock(&session);
    s.table.undo(q.plies)?;
    Ok(Json(s.table.view()))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SecondsQuery {
    seconds: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AnalysisQuery {
    game: GameKind,
    #[serde(default)]
    position: String,
    seconds: Option<f64>,
}

/// `GET /api/games/{id}/analysis`: the perfect-play overlay of the game's position.
async fn game_analysis(
    State(app): Shared,
    Path(id): Path<String>,
    Query(q): Query<SecondsQuery>,
) -> Result<Json<PerfectView>, ApiError> {
    let session = app.sessions.get(&id)?;
    let (kind, position) = {
        let s = lock(&session);
        (s.table.kind(), s.table.position())
    };
    perfect(app, kind, position, q.seconds).await
}

/// `GET /api/analysis?game=G&position=P`: the same for any position.
async fn analysis(
    State(app): Shared,
    Query(q): Query<AnalysisQuery>,
) -> Result<Json<PerfectView>, ApiError> {
    perfect(app, q.game, q.position, q.seconds).await
}

async fn perfect(
    app: Arc<App>,
    kind: GameKind,
    position: String,
    seconds: Option<f64>,
) -> Result<Json<PerfectView>, ApiError> {
    if let Some(view) = app.perfect.get(kind, &position) {
        return Ok(Json(view));
    }
    let limit = app.config.analysis_seconds;
    let deadline = analysis_deadline(seconds, limit, limit)?;
    let Ok(_slot) = app.analyses.try_acquire() else {
        return Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "too many perfect-play analyses are running: try again in a few seconds",
        ));
    };
    let shared = app.clone();
    let view = blocking(move || perfect_scores(kind, &position, &shared.engines.solvers, deadline))
        .await?;
    app.perfect.put(kind, &view);
    Ok(Json(view))
}

async fn training_runs(State(app): Shared) -> Result<Json<training::Runs>, ApiError> {
    let models = app.config.models.clone();
    Ok(Json(blocking(move || Ok(training::runs(&models))).await?))
}

async fn training_chart(
    State(app): Shared,
    Path(game): Path<GameKind>,
) -> Result<Response, ApiError> {
    let models = app.config.models.clone();
    let svg = blocking(move || training::chart(&models, game)).await?;
    Ok(([(header::CONTENT_TYPE, "image/svg+xml")], svg).into_response())
}
