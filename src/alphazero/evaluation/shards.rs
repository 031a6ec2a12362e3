//! The evaluation match in shards: `latest` against `best` for a range of the match's game
//! numbers, played anywhere, and the merge of every shard into the match the evaluation stage
//! decides on. Game `i`'s players are seeded from the match seed and `i` alone, and who moves
//! first follows `i`'s parity, so the merged match is the one a single process plays, game for
//! game; only its seconds differ (the shards' added up).

use std::ops::Range;
use std::path::Path;

use anyhow::{bail, ensure, Context, Result};
use serde::{Deserialize, Serialize};

use crate::alphazero::config::RunConfig;
use crate::alphazero::player::net_player::stage_net;
use crate::alphazero::run::paths::RunPaths;
use crate::arena::{match_result, play_match_games, MatchOptions, MatchResult};
use crate::core::files::{parse_json, write_json};
use crate::core::rng::streams;
use crate::core::threads::default_threads;
use crate::games::Game;

/// Latest's value of each game of one range of an iteration's evaluation match: a shard file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvalShard {
    pub game: String,
    pub iteration: u32,
    /// The match's game numbers this shard played, `from..to`.
    pub from: u64,
    pub to: u64,
    /// Latest's value of each game (1 a win, 0 a draw, -1 a loss), game `from` first.
    pub values: Vec<f32>,
    pub seconds: f64,
}

/// Games in an iteration's evaluation match: none in a run without it (`eval_games` 0), else
/// at least a pair, so that each network moves first once.
pub fn evaluation_games(cfg: &RunConfig) -> u64 {
    match cfg.eval.games {
        0 => 0,
        games => games.max(2),
    }
}

/// The options of iteration `iteration`'s match of latest against best.
pub(super) fn evaluation_options(cfg: &RunConfig, iteration: u32, progress: bool) -> MatchOptions {
    MatchOptions {
        games: evaluation_games(cfg),
        seed: streams::EVALUATION.seed(cfg.seed, iteration as u64),
        threads: default_threads(),
        progress,
        opening_plies: cfg.eval.opening_plies,
    }
}

/// Plays games `games` of iteration `iteration`'s evaluation match, latest against best.
pub fn play_eval_shard<G: Game>(
    cfg: &RunConfig,
    paths: &RunPaths,
    iteration: u32,
    games: Range<u64>,
    progress: bool,
) -> Result<EvalShard> {
    let total = evaluation_games(cfg);
    if total == 0 {
        bail!("this run plays no evaluation match (eval_games is 0): there are no games to shard");
    }
    if games.start >= games.end || games.end > total {
        bail!(
            "the evaluation plays games 0 to {total} (exclusive); {}..{} is not a range of them",
            games.start,
            games.end
        );
    }
    let (latest, best) = (paths.latest(), paths.best());
    for (path, name) in [(&latest, "latest"), (&best, "best")] {
        ensure!(
            path.exists(),
            "no {name} model to evaluate: {} is missing",
            path.display()
        );
    }
    let started = std::time::Instant::now();
    let opts = evaluation_options(cfg, iteration, progress);
    let (sims, plies) = (cfg.eval.sims, cfg.eval.random_plies);
    let (latest_net, best_net) = (stage_net::<G>(cfg, &latest)?, stage_net::<G>(cfg, &best)?);
    let values = play_match_games::<G>(
        &|| latest_net.player::<G>(sims, plies),
        &|| best_net.player::<G>(sims, plies),
        games.clone(),
        &opts,
    )?;
    Ok(EvalShard {
        game: G::NAME.to_string(),
        iteration,
        from: games.start,
        to: games.end,
        values,
        seconds: started.elapsed().as_secs_f64(),
    })
}

pub fn write_shard(path: &Path, shard: &EvalShard) -> Result<()> {
    write_json(path, shard)
}

pub fn read_shard(path: &Path) -> Result<EvalShard> {
    let bytes =
        std::fs::read(path).with_context(|| format!("cannot read the shard {}", path.display()))?;
    parse_json(path, &bytes)
}

/// The whole match of iteration `iteration` from its shards (in any order): they must be of
/// this game and iteration and cover every game of the match exactly once.
pub fn merge_shards<G: Game>(
    cfg: &RunConfig,
    iteration: u32,
    mut shards: Vec<EvalShard>,
) -> Result<MatchResult> {
    shards.sort_by_key(|s| s.from);
    let total = evaluation_games(cfg);
    let mut values = Vec::with_capacity(total as usize);
    let mut seconds = 0.0;
    for s in &shards {
        ensure!(
            s.game == G::NAME && s.iteration == iteration,
            "a shard of {} iteration {} cannot be merged into {} iteration {iteration}",
            s.game,
            s.iteration,
            G::NAME
        );
        ensure!(
            s.from == values.len() as u64 && s.to - s.from == s.values.len() as u64,
            "the shards do not cover the evaluation's games once each: games {}..{} follow \
             game {} (a shard is missing, repeated or overlapping)",
            s.from,
            s.to,
            values.len() as i64 - 1
        );
        values.extend_from_slice(&s.values);
        seconds += s.seconds;
    }
    ensure!(
        values.len() as u64 == total,
        "the shards cover games 0..{} of the evaluation's {total}",
        values.len()
    );
    Ok(match_result::<G>("latest", "best", &values, seconds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::{GameKind, TicTacToe};

    fn shard(from: u64, values: &[f32]) -> EvalShard {
        EvalShard {
            game: "tictactoe".into(),
            iteration: 2,
            from,
            to: from + values.len() as u64,
            values: values.to_vec(),
            seconds: 1.0,
        }
    }

    #[test]
    fn shards_merge_in_game_order_and_gaps_or_overlaps_are_refused() {
        let cfg = RunConfig::preset("tiny", GameKind::TicTacToe, false).unwrap();
        assert_eq!(evaluation_games(&cfg), 4);
        let whole = match_result::<TicTacToe>("latest", "best", &[1.0, -1.0, 0.0, 1.0], 2.0);
        let merged =
            merge_shards::<TicTacToe>(&cfg, 2, vec![shard(2, &[0.0, 1.0]), shard(0, &[1.0, -1.0])])
                .unwrap();
        assert_eq!(merged, whole);
        let gap = vec![shard(0, &[1.0]), shard(2, &[0.0, 1.0])];
        let e = merge_shards::<TicTacToe>(&cfg, 2, gap).unwrap_err();
        assert!(e.to_string().contains("once each"), "{e}");
        let short = vec![shard(0, &[1.0, 1.0])];
        let e = merge_shards::<TicTacToe>(&cfg, 2, short).unwrap_err();
        assert!(e.to_string().contains("0..2 of the evaluation's 4"), "{e}");
        let e = merge_shards::<TicTacToe>(&cfg, 3, vec![shard(0, &[1.0; 4])]).unwrap_err();
        assert!(e.to_string().contains("iteration 2"), "{e}");
    }

    #[test]
    fn a_run_without_the_match_has_no_games_to_shard() {
        let mut cfg = RunConfig::preset("tiny", GameKind::TicTacToe, false).unwrap();
        cfg.eval.games = 1;
        assert_eq!(evaluation_games(&cfg), 2, "a match is at least a pair");
        cfg.eval.games = 0;
        assert_eq!(evaluation_games(&cfg), 0);
        let tmp = tempfile::tempdir().unwrap();
        let paths = RunPaths::new(&tmp.path().join("m"), &tmp.path().join("d"), "tictactoe");
        let e = play_eval_shard::<TicTacToe>(&cfg, &paths, 1, 0..1, false).unwrap_err();
        assert!(e.to_string().contains("eval_games is 0"), "{e}");
    }
}
