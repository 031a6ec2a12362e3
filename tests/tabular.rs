//! The tabular baselines, checked against exact values: the best possible scores against a
//! random tic-tac-toe player, the exact Blackjack optimum, learning that reaches them, and the
//! files the learners write.

use std::path::PathBuf;
use std::sync::OnceLock;

use rand::Rng;

use zero::agent::{Agent, RandomAgent};
use zero::arena::{play_game, play_match, MatchOptions};
use zero::core::files::Format;
use zero::core::rng::{rng_from_seed, Rng64};
use zero::games::blackjack::{play_hand, Deck};
use zero::games::othello4::WEIGHTS;
use zero::games::{Game, Move, Othello4, Outcome, Player, TicTacToe};
use zero::players::{BuildContext, PlayerSpec};
use zero::search::score_sign;
use zero::solvers::exhaustive::{solve_value, SolveTable, SolverAgent};
use zero::tabular::as_fraction;
use zero::tabular::blackjack_dp;
use zero::tabular::exact::{self, grade, Policy};
use zero::tabular::mces::Mces;
use zero::tabular::qlearning::{Config, Opponent, Side, Target, Trainer};
use zero::tabular::qtable::{QAgent, QTable, QTABLE};

fn config(episodes: u64, side: Side, target: Target, seed: u64) -> Config {
    Config {
        episodes,
        alpha: 0.5,
        alpha_final: 0.01,
        gamma: 1.0,
        epsilon: 0.3,
        epsilon_final: 0.0,
        side,
        target,
        seed,
    }
}

/// A path in a directory of its own, removed when the returned guard is dropped.
fn temp_path(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    (dir, path)
}

#[test]
fn best_scores_against_random_tictactoe_are_exact() {
    let first = exact::vs_random::<TicTacToe>(Player::First, Policy::Best, exact::score);
    let second = exact::vs_random::<TicTacToe>(Player::Second, Policy::Best, exact::score);
    assert_eq!(as_fraction(first), Some((191, 192)));
    assert_eq!(as_fraction(second), Some((874, 945)));
    // the best first player wins 191 games in 192 and never loses
    let wins = exact::vs_random::<TicTacToe>(Player::First, Policy::Best, exact::win);
    assert_eq!(as_fraction(wins), Some((191, 192)));
    // a random player against a random player: the known 58.49% wins for the first
    let random = QTable::<TicTacToe>::hashed();
    let w = exact::vs_random(Player::First, Policy::Greedy(&random), exact::win);
    assert!((w - 0.58492).abs() < 1e-5, "{w}");
}

#[test]
fn qlearning_second_player_against_random_nears_the_best_score() {
    let mut t = Trainer::<TicTacToe>::new(
        config(200_000, Side::Second, Target::Max, 1),
        Opponent::Random,
    )
    .unwrap();
    t.run(u64::MAX).unwrap();
    let table = t.into_table();
    let score = exact::vs_random(Player::Second, Policy::Greedy(&table), exact::score);
    let best = 874.0 / 945.0;
    assert!(score >= 0.99 * best, "{score} < 99% of {best}");
}

fn tictactoe_self_play() -> &'static QTable<TicTacToe> {
    static TABLE: OnceLock<QTable<TicTacToe>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = Trainer::<TicTacToe>::new(
            config(100_000, Side::Both, Target::Max, 1),
            Opponent::SelfPlay,
        )
        .unwrap();
        t.run(u64::MAX).unwrap();
        t.into_table()
    })
}

#[test]
fn tictactoe_self_play_never_loses_to_a_perfect_player() {
    let table = tictactoe_self_play();
    // exactly: whatever the opponent does, on either side
    let g = grade(table);
    assert_eq!((g.worst_case.first, g.worst_case.second), (0, 0));
    // and in 1,000 games against a perfect player choosing among its best moves at random
    let (_path_dir, path) = temp_path("ttt-self.bin");
    table.save(&path).unwrap();
    let spec: PlayerSpec = format!("ql:{}", path.display()).parse().unwrap();
    let opts = MatchOptions {
        games: 1000,
        seed: 5,
        threads: 2,
        progress: false,
        opening_plies: 0,
    };
    let r = play_match::<TicTacToe>(
        "ql",
        "solver",
        &|| spec.build::<TicTacToe>(&BuildContext::default()),
        &|| Ok(Box::new(SolverAgent::<TicTacToe>::new())),
        &opts,
    )
    .unwrap();
    assert_eq!(r.total.losses, 0, "{:?}", r.total);
    assert_eq!(r.a_first.games() + r.a_second.games(), 1000);
}

/// Depth-limited alpha-beta as in the material: the positional weights (corners 2, others 1),
/// mine minus theirs, at the horizon; ±1000 for a finished game; a random best move.
struct Minimax {
    depth: u32,
    rng: Rng64,
}

fn weighted(pos: &Othello4) -> i32 {
    let (me, them) = (pos.discs(pos.to_move()), pos.discs(pos.to_move().other()));
    (0..16)
        .map(|i| WEIGHTS[i] * ((me >> i & 1) as i32 - (them >> i & 1) as i32))
        .sum()
}

fn alphabeta(pos: &Othello4, depth: u32, mut alpha: i32, beta: i32) -> i32 {
    if let Some(o) = pos.outcome() {
        return 1000 * o.value_for(pos.to_move()) as i32;
    }
    if depth == 0 {
        return weighted(pos);
    }
    for m in pos.legal_moves() {
        let mut c = *pos;
        c.play(m);
        alpha = alpha.max(-alphabeta(&c, depth - 1, -beta, -alpha));
        if alpha >= beta {
            break;
        }
    }
    alpha
}

impl Agent<Othello4> for Minimax {
    fn new_game(&mut self, seed: u64) {
        self.rng = rng_from_seed(seed);
    }
    fn choose(&mut self, pos: &Othello4) -> anyhow::Result<Move> {
        let scored: Vec<(Move, i32)> = pos
            .legal_moves()
            .iter()
            .map(|&m| {
                let mut c = *pos;
                c.play(m);
                (m, -alphabeta(&c, self.depth - 1, -100_000, 100_000))
            })
            .collect();
        let best = scored.iter().map(|s| s.1).max().unwrap();
        let ties: Vec<Move> = scored.iter().filter(|s| s.1 == best).map(|s| s.0).collect();
        Ok(ties[self.rng.random_range(0..ties.len())])
    }
}

fn othello_self_play() -> &'static QTable<Othello4> {
    static TABLE: OnceLock<QTable<Othello4>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut c = config(300_000, Side::Both, Target::Expected, 2);
        c.epsilon_final = 0.1;
        let mut t = Trainer::<Othello4>::new(c, Opponent::SelfPlay).unwrap();
        t.run(u64::MAX).unwrap();
        t.into_table()
    })
}

/// Plays `games` games of the Q-player on `side` against `opponent`; returns its results.
fn play_side(
    table: &QTable<Othello4>,
    side: Player,
    opponent: &mut dyn Agent<Othello4>,
    games: u64,
) -> [u64; 3] {
    let (_path_dir, path) = temp_path(&format!("othello-{side:?}.bin"));
    table.save(&path).unwrap();
    let mut ql = QAgent::new(QTable::<Othello4>::load(&path).unwrap());
    let mut results = [0; 3];
    for g in 0..games {
        ql.new_game(g);
        opponent.new_game(1000 + g);
        let (o, _) = match side {
            Player::First => play_game(&mut ql, opponent, &Othello4::new()),
            Player::Second => play_game(opponent, &mut ql, &Othello4::new()),
        }
        .unwrap();
        results[match o {
            Outcome::Win(p) if p == side => 0,
            Outcome::Draw => 1,
            Outcome::Win(_) => 2,
        }] += 1;
    }
    results
}

#[test]
fn othello_self_play_white_wins_every_game_and_black_beats_random() {
    let table = othello_self_play();
    let g = grade(table);
    // 4x4 Othello is a win for White, and the greedy White wins against every opponent...
    let v = solve_value(&Othello4::new(), &mut SolveTable::new());
    assert_eq!(score_sign(v), -1);
    assert_eq!(g.worst_case.second, 1);
    // ... so in particular against a perfect Black and a depth-3 alpha-beta Black
    let mut solver = SolverAgent::<Othello4>::new();
    assert_eq!(
        play_side(table, Player::Second, &mut solver, 300),
        [300, 0, 0]
    );
    let mut minimax = Minimax {
        depth: 3,
        rng: rng_from_seed(0),
    };
    assert_eq!(
        play_side(table, Player::Second, &mut minimax, 300),
        [300, 0, 0]
    );
    // as Black against random play: exactly, and in 1,000 games
    assert!(
        g.win_rate_vs_random.first >= 0.85,
        "{}",
        g.win_rate_vs_random.first
    );
    let [wins, _, _] = play_side(table, Player::First, &mut RandomAgent::new(), 1000);
    assert!(wins >= 850, "{wins} wins in 1000");
}

#[test]
fn blackjack_optimal_values_are_exact() {
    let v = blackjack_dp::optimal();
    // with the book's naturals, and with a natural as an ordinary 21 (the material's figure)
    assert!((v.deal_return + 0.043113).abs() < 1e-6, "{}", v.deal_return);
    assert!(
        (v.deal_return_without_naturals + 0.0466).abs() < 1e-4,
        "{}",
        v.deal_return_without_naturals
    );
    // a simulation of the optimal policy agrees with the exact value
    let mut deck = Deck::new(11);
    let n = 400_000;
    let mean = (0..n).map(|_| play_hand(&v.policy, &mut deck)).sum::<f64>() / n as f64;
    let se = 1.0 / (n as f64).sqrt();
    assert!((mean - v.deal_return).abs() < 4.0 * se, "{mean}");
}

#[test]
fn mces_learns_the_optimal_policy_up_to_close_cells() {
    let optimal = blackjack_dp::optimal();
    let mut learner = Mces::new();
    learner.train(1_000_000, &mut Deck::new(1));
    let differs = learner.differences(&optimal);
    assert!(differs.len() <= 6, "{differs:?}");
    assert!(differs.iter().all(|d| d.gap < 0.05), "{differs:?}");
    // its learned values are the exact values of its own policy, up to sampling noise, in
    // the often-visited cells
    let q = learner.q();
    let exact = blackjack_dp::evaluate(&learner.policy);
    for (s, &action) in learner.policy.iter().enumerate() {
        let a = action as usize;
        if learner.counts[s][a] > 20_000 {
            assert!((q[s][a] - exact.q[s][a]).abs() < 0.05, "state {s}");
        }
    }
    // save and load give the same learner; a changed byte count is an error
    let (_path_dir, path) = temp_path("mces.bin");
    learner.save(&path).unwrap();
    let back = Mces::load(&path).unwrap();
    assert_eq!(back.policy, learner.policy);
    assert_eq!(back.sums, learner.sums);
    assert_eq!(back.counts, learner.counts);
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
    let e = Mces::load(&path).unwrap_err().to_string();
    assert!(e.contains("truncated") && e.ends_with("`zero mces`"), "{e}");
}

#[test]
fn qtable_files_roundtrip_and_bad_files_are_clear_errors() {
    let table = tictactoe_self_play();
    let (_path_dir, path) = temp_path("ttt.bin");
    table.save(&path).unwrap();
    let back = QTable::<TicTacToe>::load(&path).unwrap();
    assert_eq!(back.len(), table.len());
    // every position: same greedy move and same values
    let mut stack = vec![TicTacToe::new()];
    let mut seen = std::collections::HashSet::new();
    while let Some(p) = stack.pop() {
        if !seen.insert(p) {
            continue;
        }
        assert_eq!(back.greedy(&p), table.greedy(&p));
        for m in p.legal_moves() {
            assert_eq!(back.get(&p, m), table.get(&p, m));
            let mut c = p;
            c.play(m);
            stack.push(c);
        }
    }
    assert_eq!(seen.len(), 5_478);

    // a table for another game
    let e = QTable::<Othello4>::load(&path).unwrap_err().to_string();
    assert!(e.contains("for tictactoe, not for othello4"), "{e}");
    // another kind of file
    let (_mces_dir, mces) = temp_path("other.bin");
    Mces::new().save(&mces).unwrap();
    let e = QTable::<TicTacToe>::load(&mces).unwrap_err().to_string();
    assert!(e.contains("a mces file, not a qtable file"), "{e}");
    // garbage, a truncated file, a missing file, another version
    let (_bad_dir, bad) = temp_path("bad.bin");
    std::fs::write(&bad, b"\x89PNG garbage").unwrap();
    let e = QTable::<TicTacToe>::load(&bad).unwrap_err().to_string();
    assert!(e.contains("not a qtable file of zero"), "{e}");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&bad, &bytes[..bytes.len() / 2]).unwrap();
    let e = QTable::<TicTacToe>::load(&bad).unwrap_err().to_string();
    assert!(
        e.contains("truncated") && e.ends_with("`zero qlearn`"),
        "{e}"
    );
    let e = QTable::<TicTacToe>::load(&temp_path("missing.bin").1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("cannot read"), "{e}");
    // a Q-table file of another version
    Format {
        version: 99,
        ..QTABLE
    }
    .save(&bad, &0u8)
    .unwrap();
    let e = QTable::<TicTacToe>::load(&bad).unwrap_err().to_string();
    assert!(e.contains("version 99"), "{e}");
    // the player spec reports the bad file
    let spec: PlayerSpec = format!("ql:{}", bad.display()).parse().unwrap();
    assert!(spec.build::<TicTacToe>(&BuildContext::default()).is_err());
}

#[test]
fn ql_player_falls_back_to_random_moves_where_the_table_is_silent() {
    let mut agent = QAgent::new(QTable::<TicTacToe>::hashed());
    let mut seen = std::collections::HashSet::new();
    for seed in 0..50 {
        agent.new_game(seed);
        let m = agent.choose(&TicTacToe::new()).unwrap();
        assert!(m < 9);
        seen.insert(m);
    }
    assert!(
        seen.len() > 3,
        "the fallback should vary with the seed: {seen:?}"
    );
}
