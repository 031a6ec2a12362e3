//! `zero bench`: speed figures (never timed tests). `selfplay` measures the pipeline's
//! self-play against the raw forward rate of the same network at the same batch size;
//! `mcts` measures the search alone with a uniform evaluator.

use std::time::Instant;

use anyhow::{bail, Result};
use rand::Rng;
use serde::Serialize;

use crate::alphazero::config::RunConfig;
use crate::alphazero::selfplay::records::GameRecord;
use crate::alphazero::training::samples::{samples_from, Samples};
use crate::alphazero::training::train::time_steps;
use crate::catalog::Catalogued;
use crate::core::limits::{at_most, MAX_BATCH, MAX_SIMS, MAX_THREADS};
use crate::core::rng::rng_from_seed;
use crate::games::{Game, GameKind, Player};
use crate::nn::{
    default_device, training_threads, Arch, InferenceNet, Net, Precision, Shape, TorchThreads,
};
use crate::search::mcts::{search, MctsConfig, SearchKind, Tree, UniformEvaluator};

#[derive(clap::Subcommand, Debug)]
pub enum Bench {
    /// Self-play speed against the network's raw forward rate.
    Selfplay(SelfplayArgs),
    /// Search speed with a uniform evaluator (no network).
    Mcts(MctsArgs),
    /// Training speed: milliseconds a step, phase by phase, on positions of random games.
    Train(TrainArgs),
    /// The web server under load: many clients each play a whole game at once, on loopback.
    Serve(super::bench_serve::Args),
}

#[derive(clap::Args, Debug)]
pub struct SelfplayArgs {
    #[arg(long, value_enum, default_value_t = GameKind::Connect4)]
    game: GameKind,
    #[arg(long, default_value = "default")]
    preset: String,
    /// Network shape instead of the preset's: BLOCKSxFILTERS such as 4x64 under the preset's
    /// heads.
    #[arg(long)]
    arch: Option<String>,
    /// Simulations per move instead of the preset's.
    #[arg(long)]
    sims: Option<u32>,
    /// The tree search: puct or gumbel, with the preset's budget for it (as `zero cycle
    /// --search`); the preset's when not given.
    #[arg(long)]
    search: Option<SearchKind>,
    /// Games to play (default: one chunk a worker).
    #[arg(long)]
    games: Option<u64>,
    /// Games in lockstep instead of the preset's.
    #[arg(long)]
    parallel: Option<usize>,
    /// Self-play worker threads instead of the preset's.
    #[arg(long)]
    workers: Option<usize>,
    /// Games a worker plays together (a chunk) instead of the preset's.
    #[arg(long)]
    chunk: Option<u64>,
    /// Inference threads on a GPU instead of the preset's (each with a copy of the network
    /// and its share of the workers; a CPU's workers evaluate their own copies).
    #[arg(long)]
    inference_threads: Option<usize>,
    /// libtorch threads (default: one on CPU, see `zero --help`).
    #[arg(long)]
    threads: Option<i32>,
    /// What the network computes in: f32, or bf16 (fast on processors with bfloat16
    /// instructions); the preset's when not given.
    #[arg(long)]
    precision: Option<Precision>,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args, Debug)]
pub struct MctsArgs {
    #[arg(long, value_enum, default_value_t = GameKind::Connect4)]
    game: GameKind,
    /// Simulations per move.
    #[arg(long, default_value_t = 800)]
    sims: u32,
    /// Games to play with the uniform evaluator.
    #[arg(long, default_value_t = 20)]
    games: u64,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args, Debug)]
pub struct TrainArgs {
    #[arg(long, value_enum, default_value_t = GameKind::Connect4)]
    game: GameKind,
    #[arg(long, default_value = "default")]
    preset: String,
    /// Network shape instead of the preset's: BLOCKSxFILTERS such as 4x64 under the preset's
    /// heads.
    #[arg(long)]
    arch: Option<String>,
    /// Positions a step instead of the preset's.
    #[arg(long)]
    batch: Option<usize>,
    /// Steps timed, after a few untimed ones.
    #[arg(long, default_value_t = 50)]
    steps: u64,
    /// libtorch threads (default: as the cycle's training, every core unless a step is too
    /// small to share).
    #[arg(long)]
    threads: Option<usize>,
    /// What the network's trunk computes in (the preset's when not given).
    #[arg(long)]
    precision: Option<Precision>,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[arg(long)]
    json: bool,
}

pub fn run(b: Bench) -> Result<()> {
    match b {
        Bench::Selfplay(a) => crate::with_board_game!(a.game, G => selfplay::<G>(&a)),
        Bench::Mcts(a) => crate::with_board_game!(a.game, G => mcts::<G>(&a)),
        Bench::Train(a) => crate::with_board_game!(a.game, G => train::<G>(&a)),
        Bench::Serve(a) => super::bench_serve::run(a),
    }
}

#[derive(Serialize)]
struct SelfplayBench {
    game: String,
    arch: String,
    parameters: i64,
    precision: Precision,
    sims: u32,
    games: u64,
    seconds: f64,
    games_per_min: f64,
    positions_per_s: f64,
    nn_evals_per_s: f64,
    raw_forward_per_s: f64,
    nn_share_of_raw: f64,
    mean_batch: f64,
    cache_hit_rate: f64,
    /// Forward passes' time over the run's, added up over the threads that evaluate (the
    /// workers on a CPU, the inference threads on a GPU): above 1 when they overlap.
    nn_busy: f64,
    /// The inference threads serving the workers on a GPU; absent on a CPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    inference_threads: Option<usize>,
}

/// The network `--arch` names, on the preset's network `preset`: a residual trunk of
/// BLOCKSxFILTERS under the preset's value head, so that a shape is timed with the head its
/// runs would have.
fn parse_arch(s: &str, preset: Arch) -> Result<Arch> {
    let (blocks, filters) = s
        .split_once('x')
        .and_then(|(b, f)| Some((b.parse().ok()?, f.parse().ok()?)))
        .ok_or_else(|| anyhow::anyhow!("--arch is BLOCKSxFILTERS such as 4x64 (got '{s}')"))?;
    let arch = Arch::resnet(blocks, filters);
    Ok(match preset.has_wdl_head() {
        true => arch.with_wdl_head(),
        false => arch,
    })
}

/// Positions per second of plain forward passes over the same mix of batch sizes that
/// self-play sent (each size as often as it occurred, cycled for at least `seconds`).
fn raw_forward_rate(net: &InferenceNet, batch_sizes: &[u64], seconds: f64) -> Result<f64> {
    let s = net.meta.shape;
    let largest = batch_sizes.len().saturating_sub(1).max(1);
    let mut rng = rng_from_seed(7);
    let input: Vec<f32> = (0..largest * s.input_size())
        .map(|_| if rng.random::<bool>() { 1.0 } else { 0.0 })
        .collect();
    let mut policies = vec![0.0; largest * s.actions];
    let mut values = vec![0.0; largest];
    let mut sizes: Vec<usize> = Vec::new();
    for (size, &count) in batch_sizes.iter().enumerate() {
        sizes.extend(std::iter::repeat_n(size, count as usize).filter(|&n| n > 0));
    }
    if sizes.is_empty() {
        sizes.push(1);
    }
    // warm up every size once, as self-play did
    let mut distinct = sizes.clone();
    distinct.sort_unstable();
    distinct.dedup();
    for &n in &distinct {
        net.evaluate(&input, n, &mut policies, &mut values)?;
    }
    let started = Instant::now();
    let mut positions = 0usize;
    let mut i = 0;
    while i < sizes.len() || started.elapsed().as_secs_f64() < seconds {
        let n = sizes[i % sizes.len()];
        net.evaluate(&input, n, &mut policies, &mut values)?;
        positions += n;
        i += 1;
    }
    Ok(positions as f64 / started.elapsed().as_secs_f64())
}

fn selfplay<G: Catalogued>(a: &SelfplayArgs) -> Result<()> {
    let cfg = selfplay_config(a)?;
    let net = Net::new_seeded(
        G::NAME,
        cfg.net.arch,
        Shape::of::<G>(),
        default_device(),
        a.seed,
    )?
    .with_precision(cfg.net.precision);
    let parameters = net.parameters();
    // Folded as self-play folds it.
    let raw_net = InferenceNet::new(&net)?;
    let dir = std::env::temp_dir().join(format!("zero-bench-{}", std::process::id()));
    let stats = crate::alphazero::selfplay::play::self_play::<G>(&cfg, net, 1, &dir, !a.json);
    let _ = std::fs::remove_dir_all(&dir);
    let stats = stats?;
    let raw = raw_forward_rate(&raw_net, &stats.batch_sizes, 5.0)?;
    let out = SelfplayBench {
        game: G::NAME.into(),
        arch: cfg.net.arch.to_string(),
        parameters,
        precision: cfg.net.precision,
        sims: cfg.selfplay.sims,
        games: stats.games,
        seconds: stats.seconds,
        games_per_min: stats.games as f64 * 60.0 / stats.seconds,
        positions_per_s: stats.positions_per_s(),
        nn_evals_per_s: stats.nn_evals_per_s(),
        raw_forward_per_s: raw,
        nn_share_of_raw: stats.nn_evals_per_s() / raw,
        mean_batch: stats.mean_batch(),
        cache_hit_rate: stats.cache_hit_rate(),
        nn_busy: stats.forward_seconds / stats.seconds.max(1e-9),
        inference_threads: stats.inference_threads,
    };
    if a.json {
        return super::print_json(&out);
    }
    print_selfplay_bench(&out);
    Ok(())
}

/// The preset's run with the command line's changes, and libtorch's threads as it asks.
fn selfplay_config(a: &SelfplayArgs) -> Result<RunConfig> {
    if let Some(t) = a.threads {
        if t < 1 {
            bail!("--threads must be at least 1");
        }
        at_most("--threads", t as u64, MAX_THREADS)?;
        // Each worker and inference thread takes this count when it starts.
        crate::nn::set_caller_threads(t as usize);
        crate::nn::use_caller_threads();
    }
    let mut cfg =
        RunConfig::preset_for_search(&a.preset, a.game, tch::Cuda::is_available(), a.search)?;
    if let Some(arch) = &a.arch {
        cfg.net.arch = parse_arch(arch, cfg.net.arch)?;
    }
    if let Some(s) = a.sims {
        cfg.selfplay.sims = s;
    }
    if let Some(p) = a.parallel {
        cfg.selfplay.parallel_games = p.max(1);
    }
    if let Some(w) = a.workers {
        cfg.selfplay.workers = w.max(1);
    }
    if let Some(c) = a.chunk {
        cfg.selfplay.chunk_games = c.max(1);
    }
    if let Some(n) = a.inference_threads {
        if n < 1 {
            bail!("--inference-threads must be at least 1");
        }
        cfg.selfplay.inference_threads = n;
    }
    cfg.selfplay.games = a
        .games
        .unwrap_or(cfg.selfplay.chunk_games * cfg.selfplay.workers as u64);
    cfg.seed = a.seed;
    if let Some(p) = a.precision {
        cfg.net.precision = p;
    }
    let problems = cfg.problems();
    if !problems.is_empty() {
        bail!("these settings cannot run: {}", problems.join("; "));
    }
    Ok(cfg)
}

fn print_selfplay_bench(out: &SelfplayBench) {
    println!(
        "{} self-play, {} ({} parameters, {}), {} sims/move: {} games in {:.1} s",
        out.game, out.arch, out.parameters, out.precision, out.sims, out.games, out.seconds
    );
    println!("  games/min            {:>10.1}", out.games_per_min);
    println!("  positions/s          {:>10.1}", out.positions_per_s);
    println!("  network evals/s      {:>10.0}", out.nn_evals_per_s);
    println!(
        "  raw forward/s        {:>10.0}  (same batch sizes; self-play reaches {:.0}% of it)",
        out.raw_forward_per_s,
        100.0 * out.nn_share_of_raw
    );
    println!("  mean batch           {:>10.1}", out.mean_batch);
    println!(
        "  cache hit rate       {:>9.1}%",
        100.0 * out.cache_hit_rate
    );
    println!("  network busy         {:>9.1}%", 100.0 * out.nn_busy);
    if let Some(n) = out.inference_threads {
        println!("  inference threads    {n:>10}");
    }
}

#[derive(Serialize)]
struct MctsBench {
    game: String,
    sims_per_move: u32,
    games: u64,
    simulations: u64,
    seconds: f64,
    simulations_per_s: f64,
}

fn mcts<G: Game>(a: &MctsArgs) -> Result<()> {
    let mut rng = rng_from_seed(a.seed);
    let started = Instant::now();
    let mut simulations = 0u64;
    at_most("--sims", a.sims as u64, MAX_SIMS)?;
    let config = MctsConfig::default();
    for _ in 0..a.games {
        let mut tree = Tree::new(G::new(), config);
        while tree.root_pos().outcome().is_none() {
            let before = tree.root_visits();
            search(&mut tree, &mut UniformEvaluator, a.sims, 1, &mut rng)?;
            simulations += (tree.root_visits() - before) as u64;
            let m = tree.pick_move(1.0, &mut rng)?;
            tree.advance(m);
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let out = MctsBench {
        game: G::NAME.into(),
        sims_per_move: a.sims,
        games: a.games,
        simulations,
        seconds,
        simulations_per_s: simulations as f64 / seconds,
    };
    if a.json {
        return super::print_json(&out);
    }
    println!(
        "{} MCTS, uniform evaluator, one thread: {} simulations in {:.2} s = {:.0} simulations/s",
        out.game, out.simulations, out.seconds, out.simulations_per_s
    );
    Ok(())
}

#[derive(Serialize)]
struct TrainBench {
    game: String,
    arch: String,
    parameters: i64,
    precision: Precision,
    threads: usize,
    batch: usize,
    steps: u64,
    ms_per_step: f64,
    positions_per_s: f64,
    /// Milliseconds a step in each phase.
    batch_ms: f64,
    forward_ms: f64,
    backward_ms: f64,
    optimizer_ms: f64,
}

/// Training positions from `games` uniformly random games, each with a uniform policy over its
/// legal moves: what a step costs does not depend on the positions' values.
fn random_game_samples<G: Game>(games: usize, seed: u64) -> Samples {
    let mut rng = rng_from_seed(seed);
    let records: Vec<GameRecord> = (0..games)
        .map(|_| {
            let mut pos = G::new();
            let (mut moves, mut policies) = (Vec::new(), Vec::new());
            while pos.outcome().is_none() {
                let legal = pos.legal_moves();
                let mut policy = vec![0.0; G::NUM_ACTIONS];
                for &m in &legal {
                    policy[m as usize] = 1.0 / legal.len() as f32;
                }
                policies.extend(policy);
                let m = legal[rng.random_range(0..legal.len())];
                moves.push(m);
                pos.play(m);
            }
            let outcome = pos.outcome().map_or(0.0, |o| o.value_for(Player::First));
            GameRecord {
                moves,
                policies,
                root_values: Vec::new(),
                outcome: outcome as i8,
                trains_from: 0,
                random_plies: 0,
            }
        })
        .collect();
    samples_from::<G>(&records, 0.0)
}

fn train<G: Game>(a: &TrainArgs) -> Result<()> {
    if a.threads == Some(0) {
        bail!("--threads must be at least 1");
    }
    at_most("--threads", a.threads.unwrap_or(1) as u64, MAX_THREADS)?;
    if a.steps < 1 {
        bail!("--steps must be at least 1");
    }
    let mut cfg = RunConfig::preset(&a.preset, a.game, tch::Cuda::is_available())?;
    if let Some(arch) = &a.arch {
        cfg.net.arch = parse_arch(arch, cfg.net.arch)?;
    }
    if let Some(b) = a.batch {
        if b < 1 {
            bail!("--batch must be at least 1");
        }
        at_most("--batch", b as u64, MAX_BATCH)?;
        cfg.train.batch_size = b;
    }
    if let Some(p) = a.precision {
        cfg.net.precision = p;
    }
    cfg.seed = a.seed;
    let mut net = Net::new_seeded(
        G::NAME,
        cfg.net.arch,
        Shape::of::<G>(),
        default_device(),
        a.seed,
    )?
    .with_precision(cfg.net.precision);
    let threads = a
        .threads
        .unwrap_or_else(|| training_threads(&cfg.net.arch, Shape::of::<G>(), cfg.train.batch_size));
    let _threads = TorchThreads::set(threads);
    let samples = random_game_samples::<G>(1000, a.seed);
    let times = time_steps::<G>(&cfg, &mut net, &samples, 5, a.steps)?;
    let per_step = |s: f64| 1000.0 * s / times.steps as f64;
    let out = TrainBench {
        game: G::NAME.into(),
        arch: cfg.net.arch.to_string(),
        parameters: net.parameters(),
        precision: cfg.net.precision,
        threads,
        batch: cfg.train.batch_size,
        steps: times.steps,
        ms_per_step: per_step(times.total()),
        positions_per_s: (times.steps as usize * cfg.train.batch_size) as f64 / times.total(),
        batch_ms: per_step(times.batch),
        forward_ms: per_step(times.forward),
        backward_ms: per_step(times.backward),
        optimizer_ms: per_step(times.optimizer),
    };
    if a.json {
        return super::print_json(&out);
    }
    println!(
        "{} training, {} ({} parameters, {}), {} positions a step, {} libtorch thread{}: {} steps",
        out.game,
        out.arch,
        out.parameters,
        out.precision,
        out.batch,
        out.threads,
        if out.threads == 1 { "" } else { "s" },
        out.steps
    );
    println!("  ms/step              {:>10.2}", out.ms_per_step);
    println!("  positions/s          {:>10.0}", out.positions_per_s);
    println!("  batch                {:>10.2} ms", out.batch_ms);
    println!("  forward + losses     {:>10.2} ms", out.forward_ms);
    println!("  backward             {:>10.2} ms", out.backward_ms);
    println!("  optimizer            {:>10.2} ms", out.optimizer_ms);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_replaces_the_trunk_and_keeps_the_presets_heads() {
        let preset = Arch::resnet(4, 48).with_wdl_head();
        assert_eq!(
            parse_arch("5x128", preset).unwrap(),
            Arch::resnet(5, 128).with_wdl_head()
        );
        assert_eq!(
            parse_arch("2x8", Arch::resnet(1, 4)).unwrap(),
            Arch::resnet(2, 8)
        );
    }

    #[test]
    fn a_garbled_arch_is_refused_with_the_forms_it_takes() {
        for bad in [
            "4x", "x48", "4x48+se", "four", "4*48", "", "4x48+", "4x48x2",
        ] {
            let e = parse_arch(bad, Arch::resnet(4, 48))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("BLOCKSxFILTERS") && e.contains(bad),
                "{bad}: {e}"
            );
        }
    }
}
