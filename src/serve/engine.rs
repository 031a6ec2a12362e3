//! The engines a web game plays with: which player specs a request may name, and how they
//! are built so that games share what is expensive.
//!
//! A network is loaded once per model file and owned by one inference thread
//! ([`InferenceServer`]); every game playing it holds a client. libtorch's tensors are `Send`
//! but not `Sync`, so one network cannot be shared by reference; a `Mutex` around it would
//! make games take turns for whole searches, while the inference thread takes each game's
//! leaf evaluations as they come and merges those that arrive together into one batch, so
//! fifty games cost fewer forward passes, not fifty times the memory. A model file that
//! changes (the cycle promoted a new `best`) is loaded anew for the next game.
//!
//! The `solver` of a game whose solvers are shared (Connect Four's) plays on the server's
//! [`SharedSolvers`]; every other player is built by [`PlayerSpec::build`] as on the command
//! line, one per game.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use crate::agent::Agent;
use crate::catalog::{pretrained_model, Catalogued};
use crate::core::stop::Stop;
use crate::games::{Game, GameKind};
use crate::nn::{default_device, InferenceNet, InferenceServer, Net, Shape};
use crate::players::{network_player, search_for, BuildContext, PlayerSpec};
use crate::search::mcts::SearchKind;

use super::errors::ApiError;
use super::solver_pool::{PooledSolver, SharedSolvers};

/// Limits on what one request may ask of an engine, so that no move takes hours.
pub const MAX_MINIMAX_DEPTH: u32 = 9;
pub const MAX_MCTS_SIMS: u32 = 50_000;
pub const MAX_NET_SIMS: u32 = 10_000;
/// Positions the inference thread of a model merges into one forward pass (a power of two:
/// batches are padded to one, see [`InferenceServer::start_padded`]).
const MAX_BATCH: usize = 256;

/// Who sits on one side of a web game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seat {
    Human,
    Engine {
        spec: PlayerSpec,
        /// Simulations a move, for network players.
        sims: Option<u32>,
    },
}

impl Seat {
    /// The seat as a person reads it: `human`, `mcts:800`, `best (gumbel, 400 sims)`, where
    /// `search` is the tree search its engine plays (a network's own, [`Engine::search`]).
    pub fn label(&self, search: Option<SearchKind>) -> String {
        match self {
            Seat::Human => "human".into(),
            Seat::Engine { spec, sims } if is_network(spec) => {
                let sims = sims.unwrap_or(crate::players::DEFAULT_NET_SIMS);
                match (sims, search) {
                    (0, _) => format!("{spec} (network alone)"),
                    (n, Some(search)) => format!("{spec} ({search}, {n} sims)"),
                    (n, None) => format!("{spec} ({n} sims)"),
                }
            }
            Seat::Engine { spec, .. } => spec.to_string(),
        }
    }
}

fn is_network(spec: &PlayerSpec) -> bool {
    matches!(
        spec,
        PlayerSpec::Best | PlayerSpec::Latest | PlayerSpec::Pretrained | PlayerSpec::Model(_)
    )
}

/// The name the shipped network is loaded under: not a model name (it has a space), so no
/// file of the models directory can take its place.
const PRETRAINED: &str = "pretrained (shipped)";

/// Whether `name` can only name a file in the models directory: letters, digits, `-` and `_`
/// (no dot, no slash, so never a path).
pub fn is_model_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Parses a seat as a request names it: `human` or a player spec, with the simulations of a
/// network player. Refuses what would reach the file system (`model:PATH`, `ql:PATH`) and
/// what would take too long.
pub fn parse_seat(text: &str, sims: Option<u32>) -> Result<Seat, ApiError> {
    let text = text.trim();
    if text.len() > 80 {
        return Err(ApiError::bad("a player spec is at most 80 characters"));
    }
    let spec: PlayerSpec = text.parse().map_err(|e: anyhow::Error| {
        let message = e.to_string();
        // The command line's list names players that read files, which HTTP refuses.
        if message.starts_with("unknown player") {
            ApiError::bad(format!(
                "unknown player '{text}'; players here are: {}",
                http_players()
            ))
        } else {
            ApiError::bad(message)
        }
    })?;
    match &spec {
        PlayerSpec::Human => return Ok(Seat::Human),
        PlayerSpec::Model(path) if !path.to_str().is_some_and(is_model_name) => {
            return Err(ApiError::bad(format!(
                "'{text}': model paths are refused over HTTP; name a model of the server's \
                 models directory instead (model:NAME for <models>/<game>/NAME.safetensors; \
                 GET /api/info lists them)"
            )))
        }
        PlayerSpec::QTable(_) => {
            return Err(ApiError::bad(format!(
                "'{text}': Q-table players read a file, so they are not offered over HTTP"
            )))
        }
        PlayerSpec::Minimax(d) if *d > MAX_MINIMAX_DEPTH => {
            return Err(ApiError::bad(format!(
                "'{text}': the depth is at most {MAX_MINIMAX_DEPTH} here"
            )))
        }
        PlayerSpec::Mcts(n) if *n > MAX_MCTS_SIMS => {
            return Err(ApiError::bad(format!(
                "'{text}': at most {MAX_MCTS_SIMS} simulations here"
            )))
        }
        _ => {}
    }
    if let Some(n) = sims.filter(|&n| n > MAX_NET_SIMS) {
        return Err(ApiError::bad(format!(
            "{n} simulations: network players take at most {MAX_NET_SIMS} here"
        )));
    }
    Ok(Seat::Engine { spec, sims })
}

/// A game's engine: its player, its stop flag, and the shared network it is a client of, kept
/// alive for as long as the player (the field order drops the client first, so the network's
/// thread, when this was its last user, finds no client left and ends at once).
pub struct Engine<G: Game> {
    pub agent: Box<dyn Agent<G>>,
    /// The tree search a network player plays (none for other players).
    pub search: Option<SearchKind>,
    /// The agent's stop flag: raised, a searching player moves at once with what it has.
    pub stop: Stop,
    model: Option<Arc<SharedModel>>,
}

impl<G: Game> Engine<G> {
    /// A player that needs no shared network (a solver, minimax, random...).
    fn standalone(agent: Box<dyn Agent<G>>) -> Engine<G> {
        Engine {
            agent,
            search: None,
            stop: Stop::new(),
            model: None,
        }
    }

    /// The network's own win, draw and loss probabilities for the mover in `pos`, for a
    /// network with that head (one forward pass, no search); `None` for other players.
    pub fn win_draw_loss(&self, pos: &G) -> Option<[f32; 3]> {
        let net = self.model.as_ref()?.wdl.as_ref()?;
        let mut inputs = vec![0.0; G::input_size()];
        pos.encode(&mut inputs);
        // What the page shows beside the move: a failure here costs only that figure.
        lock(net).win_draw_loss(&inputs).ok().flatten()
    }
}

/// A network owned by its inference thread; for a network with a win/draw/loss head, a copy
/// that reads those three figures of a position (the inference thread answers values only).
pub struct SharedModel {
    server: InferenceServer,
    wdl: Option<Mutex<InferenceNet>>,
}

/// A loaded model and the file it came from, as it was then (modified time and length).
struct CachedModel {
    stamp: (Option<SystemTime>, u64),
    model: Arc<SharedModel>,
}

/// What building engines needs and what games share.
pub struct Engines {
    /// `<models>/`: each game's networks in `<models>/<game>/`.
    models: PathBuf,
    /// How network players search (the simulations come with each seat).
    network_play: BuildContext,
    nets: Mutex<HashMap<(GameKind, String), CachedModel>>,
    pub solvers: Arc<SharedSolvers>,
    /// The most time one move of the `solver` player may take.
    pub solver_seconds: Duration,
}

impl Engines {
    pub fn new(
        models: PathBuf,
        search: Option<SearchKind>,
        symmetries: bool,
        solvers: Arc<SharedSolvers>,
        solver_seconds: Duration,
    ) -> Engines {
        let network_play = BuildContext {
            search,
            symmetries,
            ..BuildContext::default()
        };
        Engines {
            models,
            network_play,
            nets: Mutex::new(HashMap::new()),
            solvers,
            solver_seconds,
        }
    }

    pub fn models_dir(&self) -> &Path {
        &self.models
    }

    /// The engine of a seat (none for a person), seeded for a new game. May load a network:
    /// call it off the async threads.
    pub fn build<G: Catalogued>(
        &self,
        seat: &Seat,
        seed: u64,
    ) -> Result<Option<Engine<G>>, ApiError> {
        let Seat::Engine { spec, sims } = seat else {
            return Ok(None);
        };
        let mut engine = match spec {
            PlayerSpec::Best => self.network::<G>("best", *sims)?,
            PlayerSpec::Latest => self.network::<G>("latest", *sims)?,
            PlayerSpec::Pretrained => self.network::<G>(PRETRAINED, *sims)?,
            PlayerSpec::Model(name) => self.network::<G>(&name.to_string_lossy(), *sims)?,
            PlayerSpec::Solver if G::SHARED_SOLVERS => {
                let pool = self
                    .solvers
                    .pool::<G>()
                    .map_err(|e| ApiError::internal(format!("{e:#}")))?;
                Engine::standalone(Box::new(PooledSolver::new(pool, self.solver_seconds)))
            }
            other => plain::<G>(other)?,
        };
        engine.agent.new_game(seed);
        engine.agent.set_stop(engine.stop.clone());
        Ok(Some(engine))
    }

    /// A network player on the shared model `<models>/<game>/<name>.safetensors`.
    fn network<G: Catalogued>(&self, name: &str, sims: Option<u32>) -> Result<Engine<G>, ApiError> {
        let model = self.model::<G>(name)?;
        let client = model
            .server
            .client()
            .map_err(|e| ApiError::internal(format!("model '{name}': {e:#}")))?;
        let ctx = BuildContext {
            sims,
            ..self.network_play.clone()
        };
        let search = search_for(&self.model_path::<G>(name)?, &ctx)
            .map_err(|e| ApiError::bad(format!("model '{name}': {e:#}")))?;
        Ok(Engine {
            agent: network_player::<G, _>(client, search, &ctx),
            search: Some(search.kind),
            stop: Stop::new(),
            model: Some(model),
        })
    }

    /// The file of model `name` of game `G`: the shipped network's, or one of the models
    /// directory.
    fn model_path<G: Catalogued>(&self, name: &str) -> Result<PathBuf, ApiError> {
        if name == PRETRAINED {
            return pretrained_model::<G>()
                .map_err(|e| ApiError::internal(format!("{e:#}")))?
                .ok_or_else(|| ApiError::bad(format!("no network is shipped for {}", G::NAME)));
        }
        Ok(self
            .models
            .join(G::NAME)
            .join(format!("{name}.safetensors")))
    }

    /// The shared model of that name, loaded now if it is not loaded yet or its file changed.
    fn model<G: Catalogued>(&self, name: &str) -> Result<Arc<SharedModel>, ApiError> {
        let kind = game_kind::<G>()?;
        let path = self.model_path::<G>(name)?;
        let meta = std::fs::metadata(&path).map_err(|_| {
            ApiError::bad(format!(
                "no model '{name}' for {}: the server has no {} (train one with \
                 `zero cycle --game {}`)",
                G::NAME,
                path.display(),
                G::NAME
            ))
        })?;
        let stamp = (meta.modified().ok(), meta.len());
        let key = (kind, name.to_string());
        if let Some(cached) = lock(&self.nets).get(&key) {
            if cached.stamp == stamp {
                return Ok(cached.model.clone());
            }
        }
        // Loaded outside the lock, so that other games are not held up by it; two games that
        // load the same new file at once each load it, and the later one stays cached.
        let bad = |e: anyhow::Error| ApiError::bad(format!("model '{name}': {e:#}"));
        let net = Net::load(&path, G::NAME, Shape::of::<G>(), default_device()).map_err(bad)?;
        let wdl = match net.meta.arch.has_wdl_head() {
            true => Some(Mutex::new(InferenceNet::new(&net).map_err(bad)?)),
            false => None,
        };
        let model = Arc::new(SharedModel {
            server: InferenceServer::start_padded(InferenceNet::new(&net).map_err(bad)?, MAX_BATCH),
            wdl,
        });
        let replaced = lock(&self.nets).insert(
            key,
            CachedModel {
                stamp,
                model: model.clone(),
            },
        );
        // An older model's thread ends once its last game is gone.
        drop(replaced);
        Ok(model)
    }

    /// The models loaded now, as `game/name` (each has one inference thread).
    pub fn loaded_models(&self) -> Vec<String> {
        let mut names: Vec<String> = lock(&self.nets)
            .keys()
            .map(|(game, name)| format!("{game}/{name}"))
            .collect();
        names.sort();
        names
    }

    /// The models a request may name for `game`: `pretrained` where the game ships a network,
    /// and the `.safetensors` files of its directory.
    pub fn model_names(&self, game: GameKind) -> Vec<String> {
        let shipped = crate::with_board_game!(game, G => G::pretrained().is_some());
        let shipped = shipped.then(|| "pretrained".to_string());
        let Ok(entries) = std::fs::read_dir(self.models.join(game.name())) else {
            return shipped.into_iter().collect();
        };
        let mut names: Vec<String> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let stem = name.strip_suffix(".safetensors")?;
                (is_model_name(stem) && !stem.contains("checkpoint")).then(|| stem.to_string())
            })
            .chain(shipped)
            .collect();
        names.sort();
        names.dedup();
        names
    }
}

/// A player of its own for one game, built as the command line builds it.
fn plain<G: Catalogued>(spec: &PlayerSpec) -> Result<Engine<G>, ApiError> {
    let agent = spec
        .build::<G>(&BuildContext::default())
        .map_err(|e| ApiError::bad(format!("{e:#}")))?;
    Ok(Engine::standalone(agent))
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The kind of game `G`.
pub fn game_kind<G: Game>() -> Result<GameKind, ApiError> {
    GameKind::of::<G>().ok_or_else(|| ApiError::internal(format!("{} has no game kind", G::NAME)))
}

/// The players a request may name, for `GET /api/info`; `rules` names the games that have
/// one.
pub fn http_players() -> String {
    let rules: Vec<String> = GameKind::ALL
        .into_iter()
        .map(GameKind::facts)
        .filter(|f| f.rules_player)
        .map(|f| f.title.to_lowercase())
        .collect();
    format!(
        "human, random, rules ({}), minimax:DEPTH, solver, mcts:SIMS, best, latest, pretrained, \
         model:NAME (NAME.safetensors in the server's models directory)",
        rules.join(", ")
    )
}
