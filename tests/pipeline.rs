//! The AlphaZero pipeline end to end on tic-tac-toe: a tiny cycle runs, resumes, and learns.

use std::path::PathBuf;

use zero::agent::Agent;
use zero::alphazero::config::RunConfig;
use zero::alphazero::player::net_player::net_agent;
use zero::alphazero::report::rows::iteration_rows;
use zero::alphazero::run::best::ensure_best;
use zero::alphazero::run::cycle::run_cycle;
use zero::alphazero::run::metrics::{read_metrics, StageRecord};
use zero::alphazero::run::paths::RunPaths;
use zero::alphazero::run::state::{read_state, Stage};
use zero::alphazero::selfplay::records::read_iteration;
use zero::arena::{play_match, MatchOptions};
use zero::games::{GameKind, TicTacToe};
use zero::nn::{default_device, Net, Shape};

fn lines(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path)
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

#[test]
fn tiny_cycle_runs_and_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let paths = RunPaths::new(&dir.join("models"), &dir.join("data"), "tictactoe");
    let cfg = RunConfig::preset("tiny", GameKind::TicTacToe, false).unwrap();
    let mut reports = Vec::new();
    let state = run_cycle::<TicTacToe>(&cfg, &paths, 2, None, false, &mut |v| {
        reports.push(v.clone())
    })
    .unwrap();
    assert_eq!(state.iteration, 3);
    assert_eq!(state.stage, Stage::SelfPlay);
    assert_eq!(reports.len(), 6);
    assert!(matches!(&reports[0], StageRecord::SelfPlay(r) if r.games == 16));
    // How the games ended, as the files the stage wrote say.
    let StageRecord::SelfPlay(selfplay) = &reports[0] else {
        panic!("the first stage is self-play")
    };
    let games = read_iteration(&paths.data, "tictactoe", 9, 1).unwrap();
    let ended = |o: i8| games.iter().filter(|g| g.outcome == o).count() as u64;
    let results = selfplay
        .results
        .expect("the whole stage counts its results");
    assert_eq!(
        (
            results.first_player_wins,
            results.draws,
            results.second_player_wins
        ),
        (ended(1), ended(0), ended(-1))
    );
    assert_eq!(ended(1) + ended(0) + ended(-1), 16);
    assert!(paths.best().exists() && paths.latest().exists());
    assert!(
        !paths.models.join("best.json").exists(),
        "a model is one file"
    );
    assert_eq!(lines(&paths.metrics()), 6);
    let rows = iteration_rows(&read_metrics(&paths.metrics()).unwrap());
    assert_eq!(rows.len(), 2);
    assert!(rows
        .iter()
        .all(|r| r.policy_loss.is_some() && r.score_vs_best.is_some()));
    // Every iteration grades best on the evaluation set: the tiny preset on a handful of
    // positions, the network alone and with search.
    let StageRecord::Evaluate(e) = &reports[2] else {
        panic!("the third stage is the evaluation")
    };
    let (net, search) = (
        e.grade_net.as_ref().unwrap(),
        e.grade_search.as_ref().unwrap(),
    );
    assert_eq!((net.positions, search.positions), (8, 4));
    assert_eq!(net.set_positions, 300);
    assert!(rows.iter().all(|r| r.net_mistake_rate.is_some()
        && r.search_mistake_rate.is_some()
        && r.net_groups.as_ref().is_some_and(|g| !g.is_empty())));
    let minutes: Vec<f64> = rows.iter().map(|r| r.minutes.unwrap()).collect();
    assert!(minutes[0] > 0.0 && minutes[1] > minutes[0], "{minutes:?}");
    let meta = Net::read_meta(&paths.latest()).unwrap();
    assert_eq!(meta.game, "tictactoe");
    assert_eq!(meta.training_steps, 2 * cfg.train.steps);

    // Running again to the same target does nothing; a higher target continues.
    run_cycle::<TicTacToe>(&cfg, &paths, 2, None, false, &mut |_| {}).unwrap();
    assert_eq!(lines(&paths.metrics()), 6);
    run_cycle::<TicTacToe>(&cfg, &paths, 3, None, false, &mut |_| {}).unwrap();
    assert_eq!(read_state(&paths).unwrap().iteration, 4);
    assert_eq!(lines(&paths.metrics()), 9);

    // A model of another game is refused with a clear message.
    let e = Net::load(
        &paths.best(),
        "connect4",
        Shape::of::<zero::games::Connect4>(),
        default_device(),
    )
    .err()
    .expect("loading a tic-tac-toe model as Connect Four must fail")
    .to_string();
    assert!(e.contains("tictactoe model"), "{e}");
}

/// Best's weights after a tiny tic-tac-toe cycle of two iterations, and the cycle's records.
fn tiny_cycle_best(cfg: &RunConfig) -> (Vec<(String, Vec<f32>)>, Vec<StageRecord>) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let paths = RunPaths::new(&dir.join("models"), &dir.join("data"), "tictactoe");
    let mut records = Vec::new();
    run_cycle::<TicTacToe>(cfg, &paths, 2, None, false, &mut |r| {
        records.push(r.clone())
    })
    .unwrap();
    let best = Net::load(
        &paths.best(),
        "tictactoe",
        Shape::of::<TicTacToe>(),
        default_device(),
    )
    .unwrap();
    (weights(&best), records)
}

#[test]
fn a_cycle_without_the_match_promotes_latest_and_learns_as_an_always_promoting_one() {
    let mut cfg = RunConfig::preset("tiny", GameKind::TicTacToe, false).unwrap();
    cfg.eval.games = 0;
    let (best, records) = tiny_cycle_best(&cfg);
    let evaluations: Vec<_> = records
        .iter()
        .filter_map(|r| match r {
            StageRecord::Evaluate(e) => Some(e),
            _ => None,
        })
        .collect();
    assert_eq!(evaluations.len(), 2);
    for (k, e) in evaluations.iter().enumerate() {
        assert!(e.latest_vs_best.is_none() && e.score_vs_best.is_none());
        assert!(e.promoted);
        assert_eq!(e.generation, k as u32 + 1);
        assert!(e.grade_net.is_some(), "the stage still grades best");
    }
    let rows = iteration_rows(&records);
    assert!(rows.iter().all(|r| r.minutes.is_some()));
    let table = zero::alphazero::report::table::table(&rows);
    assert!(table.contains("no match"), "{table}");
    // The match decides nothing when latest always wins promotion: a run that plays it with a
    // threshold of 0 trains the same best, bit for bit.
    cfg.eval.games = 4;
    cfg.eval.promote_threshold = 0.0;
    let (gated, records) = tiny_cycle_best(&cfg);
    assert!(records
        .iter()
        .any(|r| matches!(r, StageRecord::Evaluate(e) if e.latest_vs_best.is_some())));
    assert!(best == gated, "best differs with the match played");
}

#[test]
fn a_trained_network_beats_the_untrained_one() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let paths = RunPaths::new(&dir.join("models"), &dir.join("data"), "tictactoe");
    let mut cfg = RunConfig::preset("tiny", GameKind::TicTacToe, false).unwrap();
    cfg.net.arch = zero::nn::Arch::resnet(1, 32);
    cfg.selfplay.games = 150;
    cfg.selfplay.sims = 24;
    cfg.selfplay.parallel_games = 50;
    cfg.selfplay.chunk_games = 150;
    cfg.train.steps = 150;
    cfg.eval.games = 2;
    ensure_best::<TicTacToe>(&cfg, &paths).unwrap();
    let untrained = dir.join("untrained.safetensors");
    Net::load(
        &paths.best(),
        "tictactoe",
        Shape::of::<TicTacToe>(),
        default_device(),
    )
    .unwrap()
    .save(&untrained)
    .unwrap();
    run_cycle::<TicTacToe>(&cfg, &paths, 2, None, false, &mut |_| {}).unwrap();
    // Two simulations: the root's expansion and one visit to the child with the highest
    // prior, so the network's policy alone decides each move; two opening plies are sampled
    // so that games differ.
    let sims = 2;
    let make = |path: PathBuf| {
        move || -> anyhow::Result<Box<dyn Agent<TicTacToe>>> {
            Ok(Box::new(net_agent::<TicTacToe>(
                &path,
                sims,
                2,
                Default::default(),
                Default::default(),
            )?))
        }
    };
    let opts = MatchOptions {
        games: 200,
        seed: 5,
        threads: 2,
        progress: false,
        opening_plies: 0,
    };
    let r = play_match::<TicTacToe>(
        "trained",
        "untrained",
        &make(paths.latest()),
        &make(untrained),
        &opts,
    )
    .unwrap();
    assert!(
        r.total.score() > 0.65 && r.total.wins > 2 * r.total.losses,
        "trained vs untrained: {:?}",
        r.total
    );
}

/// Tic-tac-toe positions from random games, with uniform policies over the legal moves and
/// random values: enough for training to have something to fit.
fn random_samples(n: usize, seed: u64) -> zero::alphazero::training::samples::Samples {
    use rand::{Rng, SeedableRng};
    use zero::games::Game;
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    let (isz, a) = (TicTacToe::input_size(), TicTacToe::NUM_ACTIONS);
    let mut s = zero::alphazero::training::samples::Samples::default();
    while s.values.len() < n {
        let mut pos = TicTacToe::new();
        for _ in 0..rng.random_range(0..8) {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            pos.play(moves[rng.random_range(0..moves.len())]);
        }
        let moves = pos.legal_moves();
        if moves.is_empty() {
            continue;
        }
        let at = s.inputs.len();
        s.inputs.resize(at + isz, 0.0);
        pos.encode(&mut s.inputs[at..]);
        let mut policy = vec![0.0; a];
        for &m in &moves {
            policy[m as usize] = 1.0 / moves.len() as f32;
        }
        s.policies.extend(policy);
        s.values.push(if rng.random::<bool>() { 1.0 } else { -1.0 });
    }
    s
}

fn weights(net: &Net) -> Vec<(String, Vec<f32>)> {
    let mut w: Vec<(String, Vec<f32>)> = net
        .vs
        .variables()
        .into_iter()
        .map(|(n, t)| {
            let flat = t.flatten(0, -1).to_kind(tch::Kind::Float);
            (n, Vec::<f32>::try_from(&flat).unwrap())
        })
        .collect();
    w.sort_by(|a, b| a.0.cmp(&b.0));
    w
}

/// The training tests' trainee: the tiny tic-tac-toe preset trained `steps` steps a stage, and
/// 300 random positions to train on.
fn tictactoe_trainee(steps: u64) -> (RunConfig, zero::alphazero::training::samples::Samples) {
    let mut cfg = RunConfig::preset("tiny", GameKind::TicTacToe, false).unwrap();
    cfg.train.steps = steps;
    (cfg, random_samples(300, 3))
}

/// A checkpoint at `path` for `iteration`'s training, saved only when training stops (at
/// `stop_after`, if given, as Ctrl-C would stop it) or finishes.
fn checkpointing(
    path: PathBuf,
    iteration: u32,
    stop_after: Option<u64>,
) -> zero::alphazero::training::train::Checkpointing {
    zero::alphazero::training::train::Checkpointing {
        path,
        iteration,
        every_seconds: 1e9,
        stop_after,
    }
}

/// A learning-rate drop trains the iterations it reaches exactly as a run whose rate is the
/// dropped one, and leaves the iterations before it alone.
#[test]
fn a_learning_rate_drop_sets_the_rate_of_its_iterations() {
    use zero::alphazero::config::LearningRateDrop;
    let latest_after_one_iteration = |cfg: &RunConfig| {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let paths = RunPaths::new(&dir.join("models"), &dir.join("data"), "tictactoe");
        run_cycle::<TicTacToe>(cfg, &paths, 1, None, false, &mut |_| {}).unwrap();
        let shape = Shape::of::<TicTacToe>();
        weights(&Net::load(&paths.latest(), "tictactoe", shape, default_device()).unwrap())
    };
    let plain = RunConfig::preset("tiny", GameKind::TicTacToe, false).unwrap();
    let mut lower = plain.clone();
    lower.train.learning_rate = plain.train.learning_rate / 4.0;
    let drop_from = |from_iteration| {
        let mut cfg = plain.clone();
        cfg.train.learning_rate_drops = vec![LearningRateDrop {
            from_iteration,
            learning_rate: lower.train.learning_rate,
        }];
        cfg
    };
    let (plain_w, lower_w) = (
        latest_after_one_iteration(&plain),
        latest_after_one_iteration(&lower),
    );
    assert_ne!(plain_w, lower_w, "the rate changes what training learns");
    assert!(latest_after_one_iteration(&drop_from(1)) == lower_w);
    assert!(latest_after_one_iteration(&drop_from(2)) == plain_w);
}

/// Training stopped midway (as by Ctrl-C) and run again continues from its checkpoint and ends
/// with exactly the weights of an uninterrupted run.
#[test]
fn interrupted_training_resumes_exactly() {
    use zero::alphazero::training::train::{train, Checkpointing};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (cfg, samples) = tictactoe_trainee(40);
    let new_net = |seed| tictactoe_net_seeded(&cfg, seed);

    let mut whole = new_net(1);
    let whole_stats = train::<TicTacToe>(&cfg, &mut whole, &samples, 7, None, false).unwrap();

    let mut ck = checkpointing(dir.join("train-checkpoint.safetensors"), 1, Some(15));
    let mut first = new_net(1);
    let e = train::<TicTacToe>(&cfg, &mut first, &samples, 7, Some(&ck), false)
        .expect_err("training stops at step 15")
        .to_string();
    assert!(e.contains("interrupted at step 15 of 40"), "{e}");
    assert!(ck.path.exists());

    // A fresh process would start from a different network: the checkpoint must override it.
    ck.stop_after = None;
    let mut resumed = new_net(2);
    let resumed_stats =
        train::<TicTacToe>(&cfg, &mut resumed, &samples, 7, Some(&ck), false).unwrap();
    assert_eq!(weights(&resumed), weights(&whole));
    assert_eq!(resumed_stats.policy_loss, whole_stats.policy_loss);
    assert_eq!(resumed_stats.value_loss, whole_stats.value_loss);

    // The finished training left its checkpoint: training again is a no-op with the same
    // result, whatever network the process starts from.
    let mut again = new_net(3);
    let again_stats = train::<TicTacToe>(&cfg, &mut again, &samples, 7, Some(&ck), false).unwrap();
    assert_eq!(weights(&again), weights(&whole));
    assert_eq!(again_stats.policy_loss, whole_stats.policy_loss);

    // A checkpoint of another iteration is not used (a copy: training overwrites it).
    let other_ck = Checkpointing {
        path: dir.join("other-checkpoint.safetensors"),
        iteration: 2,
        ..ck.clone()
    };
    std::fs::copy(&ck.path, &other_ck.path).unwrap();
    let mut other = new_net(2);
    train::<TicTacToe>(&cfg, &mut other, &samples, 7, Some(&other_ck), false).unwrap();
    assert_ne!(weights(&other), weights(&whole));

    // A checkpoint of another network shape is refused, not broadcast into this one.
    ck.iteration = 1;
    let mut small = cfg.clone();
    small.net.arch = zero::nn::Arch::resnet(1, 3);
    let mut net = tictactoe_net_seeded(&small, 1);
    let e = train::<TicTacToe>(&small, &mut net, &samples, 7, Some(&ck), false)
        .expect_err("another shape")
        .to_string();
    assert!(e.contains("unusable") && e.contains("shape"), "{e}");
}

/// The self-play tests' tic-tac-toe network: `cfg`'s shape, fixed first weights.
fn tictactoe_net(cfg: &RunConfig) -> Net {
    tictactoe_net_seeded(cfg, 7)
}

/// A tic-tac-toe network of `cfg`'s shape whose first weights come from `seed`.
fn tictactoe_net_seeded(cfg: &RunConfig, seed: u64) -> Net {
    let shape = Shape::of::<TicTacToe>();
    Net::new_seeded("tictactoe", cfg.net.arch, shape, default_device(), seed).unwrap()
}

/// A chunk of games is the same whichever worker plays it and however many workers there are:
/// one worker and two play the same games, bit for bit, and write the same chunk files.
#[test]
fn self_play_does_not_depend_on_the_number_of_workers() {
    use zero::alphazero::selfplay::play::self_play;
    use zero::alphazero::selfplay::records::read_iteration;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut cfg = RunConfig::preset("tiny", GameKind::TicTacToe, false).unwrap();
    cfg.selfplay.games = 30;
    cfg.selfplay.chunk_games = 8;
    cfg.selfplay.parallel_games = 5;
    let mut runs = Vec::new();
    for workers in [1, 2] {
        cfg.selfplay.workers = workers;
        let data = dir.join(format!("data-{workers}"));
        let stats = self_play::<TicTacToe>(&cfg, tictactoe_net(&cfg), 1, &data, false).unwrap();
        assert_eq!(stats.games, 30);
        let mut chunks: Vec<(String, Vec<u8>)> = std::fs::read_dir(data.join("iter-0001"))
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let name = e.file_name().to_string_lossy().into_owned();
                (name, std::fs::read(e.path()).unwrap())
            })
            .collect();
        chunks.sort();
        let names: Vec<&str> = chunks.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(
            names,
            [
                "chunk-000000.bin",
                "chunk-000008.bin",
                "chunk-000016.bin",
                "chunk-000024.bin"
            ]
        );
        let games = read_iteration(&data, "tictactoe", 9, 1).unwrap();
        runs.push((chunks, games));
    }
    assert_eq!(runs[0].1.len(), 30);
    assert!(
        runs[0] == runs[1],
        "two workers played other games than one"
    );
}

/// Playout cap randomization: about the asked share of moves gets the full search and a
/// policy target (summing to 1); the others none (all zero); the games still do not depend on
/// the number of workers.
#[test]
fn a_playout_cap_leaves_most_moves_without_a_policy_target() {
    use zero::alphazero::config::PlayoutCap;
    use zero::alphazero::selfplay::play::self_play;
    use zero::alphazero::selfplay::records::read_iteration;
    let tmp = tempfile::tempdir().unwrap();
    let mut cfg = RunConfig::preset("tiny", GameKind::TicTacToe, false).unwrap();
    cfg.selfplay.games = 40;
    cfg.selfplay.chunk_games = 10;
    cfg.selfplay.parallel_games = 5;
    cfg.research.playout_cap = Some(PlayoutCap {
        full_fraction: 0.25,
        fast_sims: 2,
    });
    let mut runs = Vec::new();
    for workers in [1, 2] {
        cfg.selfplay.workers = workers;
        let net = tictactoe_net(&cfg);
        let data = tmp.path().join(format!("data-{workers}"));
        self_play::<TicTacToe>(&cfg, net, 1, &data, false).unwrap();
        runs.push(read_iteration(&data, "tictactoe", 9, 1).unwrap());
    }
    assert!(
        runs[0] == runs[1],
        "two workers played other games than one"
    );
    let (mut full, mut plies) = (0, 0);
    for r in &runs[0] {
        for p in r.policies.chunks(9) {
            let total: f32 = p.iter().sum();
            assert!(total == 0.0 || (total - 1.0).abs() < 1e-4, "{p:?}");
            full += usize::from(total > 0.0);
            plies += 1;
        }
    }
    let share = full as f64 / plies as f64;
    assert!(
        (0.15..0.35).contains(&share),
        "{full} of {plies} plies searched fully"
    );
}

/// One iteration of `games` tic-tac-toe self-play games (tiny preset, chunks of 20, without
/// noise or temperature, then `adjust`ed), read back in game order.
fn tictactoe_self_play(
    games: u64,
    adjust: impl FnOnce(&mut RunConfig),
) -> Vec<zero::alphazero::selfplay::records::GameRecord> {
    use zero::alphazero::selfplay::play::self_play;
    use zero::alphazero::selfplay::records::read_iteration;
    let tmp = tempfile::tempdir().unwrap();
    let mut cfg = RunConfig::preset("tiny", GameKind::TicTacToe, false).unwrap();
    cfg.selfplay.games = games;
    cfg.selfplay.chunk_games = 20;
    cfg.selfplay.temperature_plies = 0;
    cfg.mcts.noise_fraction = 0.0;
    adjust(&mut cfg);
    let net = tictactoe_net(&cfg);
    let data = tmp.path().join("data");
    self_play::<TicTacToe>(&cfg, net, 1, &data, false).unwrap();
    read_iteration(&data, "tictactoe", 9, 1).unwrap()
}

/// Forked games: each plays its searched moves (no random opening) up to its fork, another
/// move there, and trains only on the positions after the fork.
#[test]
fn forked_games_leave_the_main_line_once_and_train_after_it() {
    use zero::alphazero::training::samples::samples_from;
    let games = tictactoe_self_play(40, |cfg| {
        cfg.selfplay.random_opening_plies = 2;
        cfg.selfplay.fork_share = 1.0;
        cfg.selfplay.fork_plies = 4;
    });
    assert_eq!(games.len(), 40);
    // Tic-tac-toe lasts at least 5 plies: every game reached its fork.
    assert!(games.iter().all(|g| (1..=4).contains(&g.trains_from)));
    // And a forked game has no random opening, whatever the run's random plies.
    assert!(games.iter().all(|g| g.random_plies == 0));
    // Without noise and temperature the searched move is one of the most visited (ties are
    // broken at random); the fork's is another, which shows where one move was the most.
    let (mut forks, mut clear_forks) = (std::collections::HashSet::new(), 0);
    for g in &games {
        let fork = g.trains_from as usize - 1;
        for (ply, &m) in g.moves[..=fork].iter().enumerate() {
            let policy = &g.policies[ply * 9..(ply + 1) * 9];
            let most = policy.iter().copied().fold(0.0, f32::max);
            let searched = policy[m as usize] == most;
            if ply < fork {
                assert!(searched, "ply {ply} of {:?}", g.moves);
            } else if policy.iter().filter(|&&p| p == most).count() == 1 {
                assert!(!searched, "fork at {ply} of {:?}", g.moves);
                clear_forks += 1;
            }
        }
        forks.insert(fork);
    }
    assert!(
        forks.len() >= 3 && clear_forks >= 20,
        "{forks:?}, {clear_forks}"
    );
    let samples = samples_from::<TicTacToe>(&games, 0.0);
    let after: usize = games
        .iter()
        .map(|g| g.moves.len() - g.trains_from as usize)
        .sum();
    assert_eq!(samples.len(), after);
}

/// Random opening plies: the first plies of self-play are drawn uniformly from the legal moves
/// (nearly every first move and two-move opening of tic-tac-toe shows up in 60 games), and
/// their positions keep the search's policy as their target. Each record says how many plies
/// it opened with at random, for its value targets.
#[test]
fn random_opening_plies_spread_the_openings() {
    use std::collections::HashSet;
    // Without noise or temperature, self-play would play one opening.
    let games = tictactoe_self_play(60, |cfg| cfg.selfplay.random_opening_plies = 2);
    assert_eq!(games.len(), 60);
    let firsts: HashSet<u8> = games.iter().map(|g| g.moves[0]).collect();
    let openings: HashSet<&[u8]> = games.iter().map(|g| &g.moves[..2]).collect();
    // 60 uniform draws: 9 first moves and about 43 of the 81 openings expected.
    assert!(firsts.len() >= 8, "first moves {firsts:?}");
    assert!(openings.len() >= 30, "{} openings", openings.len());
    assert!(games.iter().all(|g| g.random_plies == 2));
    for g in &games {
        for p in g.policies.chunks(9) {
            let total: f32 = p.iter().sum();
            assert!((total - 1.0).abs() < 1e-4, "{p:?}");
        }
    }
}

/// Reanalysis (MuZero Reanalyse): the asked number of the window's older positions get the
/// new network's search as their targets, the newest iteration's games stay as played, and
/// the result does not depend on the number of threads.
#[test]
fn reanalysis_refreshes_older_positions_only_and_the_same_way_on_any_thread_count() {
    use zero::alphazero::research::reanalyse::{candidates, reanalyse_window};
    use zero::alphazero::selfplay::play::self_play;
    use zero::alphazero::training::samples::window_records;
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let mut cfg = RunConfig::preset("tiny", GameKind::TicTacToe, false).unwrap();
    cfg.selfplay.games = 20;
    cfg.selfplay.chunk_games = 10;
    for iteration in [1, 2] {
        self_play::<TicTacToe>(&cfg, tictactoe_net(&cfg), iteration, &data, false).unwrap();
    }
    let window = window_records::<TicTacToe>(&cfg, &data, 2).unwrap();
    assert_eq!((window.records.len(), window.older), (40, 20));
    let older = candidates(&window.records, window.older, 9).len();
    assert!(older > 50, "{older}");
    // Another network than self-play's, so that its searches differ.
    let net = tictactoe_net_seeded(&cfg, 8);
    cfg.research.reanalyse_positions = 30;
    let mut runs = Vec::new();
    for workers in [1, 2] {
        cfg.selfplay.workers = workers;
        let mut records = window.records.clone();
        let r = reanalyse_window::<TicTacToe>(&cfg, &net, &mut records, window.older, 5, false)
            .unwrap();
        assert_eq!(r.positions, 30);
        runs.push(records);
    }
    assert!(
        runs[0] == runs[1],
        "two threads reanalysed otherwise than one"
    );
    let new = &runs[0];
    assert_eq!(
        new[20..],
        window.records[20..],
        "the newest games are as played"
    );
    let changed = (0..20)
        .flat_map(|g| (0..window.records[g].moves.len()).map(move |p| (g, p)))
        .filter(|&(g, p)| {
            new[g].policies[p * 9..(p + 1) * 9] != window.records[g].policies[p * 9..(p + 1) * 9]
        })
        .count();
    // Some searches agree with the old ones (a single legal move, a decided position).
    assert!((10..=30).contains(&changed), "{changed} targets changed");
    for r in new {
        for p in 0..r.moves.len() {
            let sum: f32 = r.policies[p * 9..(p + 1) * 9].iter().sum();
            assert!((sum - 1.0).abs() < 1e-4, "{sum}");
        }
        assert_eq!(r.moves.len(), r.root_values.len());
    }
    // Asking for more than there are reanalyses them all.
    cfg.research.reanalyse_positions = 1_000_000;
    let mut records = window.records.clone();
    let r =
        reanalyse_window::<TicTacToe>(&cfg, &net, &mut records, window.older, 5, false).unwrap();
    assert_eq!(r.positions, older as u64);
}

/// A cycle that reanalyses says so in its training records: none to refresh in its first
/// iteration, the asked number after.
#[test]
fn a_reanalysing_cycle_records_what_it_refreshed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let paths = RunPaths::new(&dir.join("models"), &dir.join("data"), "tictactoe");
    let mut cfg = RunConfig::preset("tiny", GameKind::TicTacToe, false).unwrap();
    cfg.research.reanalyse_positions = 25;
    run_cycle::<TicTacToe>(&cfg, &paths, 2, None, false, &mut |_| {}).unwrap();
    let trained: Vec<(Option<u64>, bool)> = read_metrics(&paths.metrics())
        .unwrap()
        .iter()
        .filter_map(|r| match r {
            StageRecord::Train(t) => Some((
                t.reanalysed,
                t.reanalyse_seconds
                    .is_some_and(|s| s >= 0.0 && s <= t.seconds),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(trained, [(Some(0), true), (Some(25), true)]);
}
