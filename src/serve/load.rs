//! The load test (`zero bench serve`, and a small one in the test suite): many clients at once,
//! each playing a whole game through the API on loopback as a person would (its own moves at
//! random among the legal ones, the engine's asked for), then ending it. It stops by itself:
//! every game ends within the game's longest length, and each client's requests are bounded.

use std::net::SocketAddr;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use rand::Rng;
use serde::Serialize;

use super::client::request;
use crate::core::rng::{rng_from_seed, SeedStream};
use crate::games::GameKind;

/// The seeds of the clients' own moves.
const CLIENT_SEEDS: SeedStream = SeedStream::new(0x10ad_7e57_c11e_4700);
/// No game here lasts this many plies; a client that gets this far gives up.
const MAX_PLIES: usize = 64;

/// What to run.
#[derive(Clone, Debug)]
pub struct LoadPlan {
    pub clients: usize,
    pub rounds: usize,
    pub game: GameKind,
    /// The engine the clients play against.
    pub opponent: String,
    pub sims: Option<u32>,
    pub seed: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct RoundReport {
    pub round: usize,
    pub games_finished: usize,
    pub moves: u64,
    pub errors: usize,
    pub first_error: Option<String>,
    pub seconds: f64,
    /// This process's resident memory after the round, in KiB.
    pub rss_kib_after: Option<u64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct LoadReport {
    pub game: String,
    pub opponent: String,
    pub clients: usize,
    pub rss_kib_before: Option<u64>,
    pub rounds: Vec<RoundReport>,
}

impl LoadReport {
    pub fn errors(&self) -> usize {
        self.rounds.iter().map(|r| r.errors).sum()
    }
    pub fn games_finished(&self) -> usize {
        self.rounds.iter().map(|r| r.games_finished).sum()
    }
}

/// Runs the plan against the server at `addr`; `rss` reads the resident memory to report.
pub fn run_load(addr: SocketAddr, plan: &LoadPlan, rss: impl Fn() -> Option<u64>) -> LoadReport {
    let rss_kib_before = rss();
    let rounds = (0..plan.rounds)
        .map(|round| {
            let started = Instant::now();
            let results: Vec<Result<u64>> = std::thread::scope(|s| {
                let clients: Vec<_> = (0..plan.clients)
                    .map(|i| {
                        s.spawn(move || play_one(addr, plan, (round * plan.clients + i) as u64))
                    })
                    .collect();
                clients
                    .into_iter()
                    .map(|c| c.join().unwrap_or_else(|_| bail!("a client panicked")))
                    .collect()
            });
            let errors: Vec<String> = results
                .iter()
                .filter_map(|r| r.as_ref().err().map(|e| format!("{e:#}")))
                .collect();
            RoundReport {
                round: round + 1,
                games_finished: results.iter().filter(|r| r.is_ok()).count(),
                moves: results.iter().flatten().sum(),
                errors: errors.len(),
                first_error: errors.into_iter().next(),
                seconds: started.elapsed().as_secs_f64(),
                rss_kib_after: rss(),
            }
        })
        .collect();
    LoadReport {
        game: plan.game.name().into(),
        opponent: plan.opponent.clone(),
        clients: plan.clients,
        rss_kib_before,
        rounds,
    }
}

/// One client's game: it moves first in even games, second in odd ones. Returns the plies.
fn play_one(addr: SocketAddr, plan: &LoadPlan, index: u64) -> Result<u64> {
    let mut rng = rng_from_seed(CLIENT_SEEDS.seed(plan.seed, index));
    let (first, second) = if index.is_multiple_of(2) {
        ("human", plan.opponent.as_str())
    } else {
        (plan.opponent.as_str(), "human")
    };
    let body = serde_json::json!({
        "game": plan.game.name(), "first": first, "second": second,
        "sims": plan.sims, "seed": plan.seed ^ index,
    });
    let created = request(addr, "POST", "/api/games", Some(&body.to_string()))?;
    if created.status != 201 {
        bail!("creating a game: {} {}", created.status, created.text());
    }
    let mut view = created.json()?;
    let id = view["id"].as_str().context("no game id")?.to_string();
    for _ in 0..MAX_PLIES {
        if !view["result"].is_null() {
            let ended = request(addr, "DELETE", &format!("/api/games/{id}"), None)?;
            if ended.status != 204 {
                bail!("ending game {id}: {} {}", ended.status, ended.text());
            }
            return Ok(view["moves"].as_array().map_or(0, |m| m.len() as u64));
        }
        let side = view["to_move"].as_u64().context("no side to move")? as usize;
        let answer = if view["sides"][side]["human"].as_bool() == Some(true) {
            let legal = view["legal"].as_array().context("no legal moves")?;
            if legal.is_empty() {
                bail!("no legal move in an unfinished game");
            }
            let m = &legal[rng.random_range(0..legal.len())];
            let body = serde_json::json!({ "move": m });
            request(
                addr,
                "POST",
                &format!("/api/games/{id}/move"),
                Some(&body.to_string()),
            )?
        } else {
            request(addr, "POST", &format!("/api/games/{id}/engine-move"), None)?
        };
        if answer.status != 200 {
            bail!("game {id}: {} {}", answer.status, answer.text());
        }
        view = answer.json()?;
    }
    bail!("game {id} did not end within {MAX_PLIES} plies")
}
