//! The Connect Four solver against Pascal Pons' benchmark sets (tests/data/connect4), against a
//! plain negamax near the end of games, on malformed input, and as a player.

use std::path::PathBuf;

use rand::Rng;
use zero::agent::{Agent, RandomAgent};
use zero::core::rng::rng_from_seed;
use zero::games::{Connect4, Game, Outcome, Player};
use zero::solvers::connect4::{Position, Solver};
use zero::solvers::connect4_book::{Oracle, SolverAgent, Source};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/connect4")
        .join(name)
}

/// The `(position, score)` lines of a test set.
fn cases(name: &str) -> Vec<(String, i32)> {
    std::fs::read_to_string(data(name))
        .unwrap()
        .lines()
        .map(|l| {
            let mut w = l.split_whitespace();
            let pos = w.next().unwrap().to_string();
            (pos, w.next().unwrap().parse().unwrap())
        })
        .collect()
}

fn pos(s: &str) -> Position {
    Position::from_game(&Connect4::parse_position(s).unwrap())
}

/// Solves the chosen lines of a set strongly and weakly, the table cleared for each.
fn check(name: &str, pick: impl Fn(usize) -> bool) -> usize {
    let mut solver = Solver::new(1 << 22);
    let mut n = 0;
    for (i, (text, want)) in cases(name).iter().enumerate() {
        if !pick(i) {
            continue;
        }
        solver.clear_table();
        assert_eq!(
            solver.solve(&pos(text)),
            *want,
            "{name} line {}: {text}",
            i + 1
        );
        solver.clear_table();
        assert_eq!(
            solver.solve_weak(&pos(text)),
            want.signum(),
            "{name} weak {text}"
        );
        n += 1;
    }
    n
}

#[test]
fn end_game_easy_set_all() {
    assert_eq!(check("Test_L3_R1", |_| true), 1000);
}

#[test]
fn middle_game_easy_set_all() {
    assert_eq!(check("Test_L2_R1", |_| true), 1000);
}

#[test]
fn opening_easy_set_all() {
    assert_eq!(check("Test_L1_R1", |_| true), 1000);
}

#[test]
fn middle_game_medium_set_sample() {
    assert_eq!(check("Test_L2_R2", |i| i.is_multiple_of(20)), 50);
}

/// The fastest of the first 40 lines of Test_L1_R2 and of the first 12 of Test_L1_R3.
#[test]
fn opening_hard_sets_fastest_lines() {
    assert_eq!(check("Test_L1_R2", |i| L1_R2_FAST.contains(&(i + 1))), 4);
    assert_eq!(check("Test_L1_R3", |i| L1_R3_FAST.contains(&(i + 1))), 2);
}
const L1_R2_FAST: [usize; 4] = [9, 14, 19, 36];
const L1_R3_FAST: [usize; 2] = [6, 10];

#[test]
fn scores_named_in_the_issue() {
    let mut s = Solver::new(1 << 20);
    assert_eq!(s.solve(&pos("4455")), 18);
    assert_eq!(s.solve(&pos("44455554221")), -15);
    assert_eq!(s.solve_weak(&pos("4455")), 1);
    assert_eq!(s.solve_weak(&pos("44455554221")), -1);
    // Two winning columns next to the pair: 3 and 6 win at once (the 4th stone).
    let p = pos("4455");
    assert_eq!(s.move_score(&p, 2), 18);
    assert_eq!(s.move_score(&p, 5), 18);
    assert!(s.move_score(&p, 0) < 18);
}

/// Plain negamax over the game's own rules: the exact score in Pons' convention.
fn reference(g: &Connect4) -> i32 {
    let moves = g.ply() as i32;
    let mut best = i32::MIN;
    for m in g.legal_moves() {
        let mut c = *g;
        c.play(m);
        let score = match c.outcome() {
            Some(Outcome::Win(_)) => 22 - (moves / 2 + 1),
            Some(Outcome::Draw) => 0,
            None => -reference(&c),
        };
        best = best.max(score);
    }
    best
}

#[test]
fn agrees_with_plain_negamax_near_the_end() {
    let mut rng = rng_from_seed(7);
    let mut solver = Solver::new(1 << 20);
    let mut checked = 0;
    while checked < 60 {
        let mut g = Connect4::new();
        let stop = 42 - rng.random_range(6..=11);
        while g.ply() < stop && g.outcome().is_none() {
            let legal = g.legal_moves();
            g.play(legal[rng.random_range(0..legal.len())]);
        }
        if g.outcome().is_some() {
            continue;
        }
        let want = reference(&g);
        solver.clear_table();
        let p = Position::from_game(&g);
        assert_eq!(
            solver.solve(&p),
            want,
            "position at ply {}: {:?}",
            g.ply(),
            g
        );
        assert_eq!(solver.solve_weak(&p), want.signum());
        checked += 1;
    }
}

#[test]
fn malformed_positions_are_errors() {
    for bad in ["48", "0", "44444444", "4a", "x"] {
        assert!(Connect4::parse_position(bad).is_err(), "{bad}");
    }
    // Parses, but the game is over: the command refuses it (checked through the binary).
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_zero"))
        .args(["solve", "1212121", "--no-cache"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("already over"), "{err}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_zero"))
        .args(["solve", "48", "--no-cache"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("columns are the digits 1-7"), "{err}");
}

#[test]
fn cache_answers_a_solved_position_again() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let p = pos(&cases("Test_L2_R1")[0].0);
    let want = cases("Test_L2_R1")[0].1;
    {
        let mut o = Oracle::new(1 << 18, Some(&dir)).unwrap();
        assert_eq!(o.solve(&p).unwrap(), (want, Source::Search));
    }
    let mut o = Oracle::new(1 << 18, Some(&dir)).unwrap();
    assert_eq!(o.solve(&p).unwrap(), (want, Source::Cache));
}

/// From won and drawn middle-game positions the solver player, against random moves, wins the
/// won ones and never loses the drawn ones; with the fastest win it takes exactly the
/// predicted number of stones when winning.
#[test]
fn solver_player_keeps_its_result_against_random() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let mut solver = SolverAgent::new(&dir);
    let mut random = RandomAgent::new();
    let mut won = 0;
    for (i, (text, score)) in cases("Test_L2_R1").iter().take(12).enumerate() {
        let start = Connect4::parse_position(text).unwrap();
        let me = start.to_move();
        Agent::<Connect4>::new_game(&mut solver, i as u64);
        Agent::<Connect4>::new_game(&mut random, i as u64);
        let mut g = start;
        while g.outcome().is_none() {
            let m = if g.to_move() == me {
                solver.choose(&g).unwrap()
            } else {
                random.choose(&g).unwrap()
            };
            g.play(m);
        }
        let outcome = g.outcome().unwrap();
        if *score > 0 {
            assert_eq!(outcome, Outcome::Win(me), "{text}");
            // With best play it wins with stone 22 - score at the latest.
            let my_stones = if me == Player::First {
                g.ply().div_ceil(2)
            } else {
                g.ply() / 2
            };
            assert!(my_stones as i32 <= 22 - score, "{text}: {my_stones} stones");
            won += 1;
        } else if *score == 0 {
            assert_ne!(outcome, Outcome::Win(me.other()), "{text}");
        }
    }
    assert!(won > 0);
}

/// Every position of the repository's opening book with `stones` stones, by walking the game.
fn book_positions(stones: usize) -> Vec<Position> {
    let mut level = vec![Position::from_game(&Connect4::new())];
    for _ in 0..stones {
        level = level
            .iter()
            .flat_map(|p| {
                (0..7).filter(|&c| p.can_play(c)).map(move |c| {
                    let mut child = *p;
                    child.play_col(c);
                    child
                })
            })
            .collect();
    }
    level
}

/// The opening book shipped in data/connect4 (what `zero serve` and the `solver` player use):
/// every position of up to 4 stones is in it, each shallower score is the negamax of its
/// children's (no move wins before the 7th stone), the empty board's moves score as Pons
/// publishes them, and some 4-stone scores agree with a search without the book.
#[test]
fn the_repository_opening_book_is_complete_and_consistent() {
    use zero::solvers::connect4_book::Book;
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/connect4");
    let path = Book::find_deepest(&dir).expect("an opening book in data/connect4");
    let book = Book::load(&path).unwrap();
    assert_eq!((book.depth(), book.len()), (4, 719));
    let score = |p: &Position| book.get(p.canonical_key().0).unwrap();
    for stones in 0..4 {
        for p in book_positions(stones) {
            let children = (0..7).filter(|&c| p.can_play(c)).map(|c| {
                let mut child = p;
                child.play_col(c);
                -score(&child)
            });
            assert_eq!(children.max().unwrap(), score(&p), "{stones} stones");
        }
    }
    let empty = Position::from_game(&Connect4::new());
    let first_moves: Vec<i32> = (0..7)
        .map(|c| {
            let mut child = empty;
            child.play_col(c);
            -score(&child)
        })
        .collect();
    assert_eq!(first_moves, [-2, -1, 0, 1, 0, -1, -2]);
    let mut solver = Solver::new(1 << 22);
    for (text, want) in [("4455", 18), ("3344", 18), ("2244", 18), ("4466", 18)] {
        assert_eq!(score(&pos(text)), want, "{text} in the book");
        assert_eq!(solver.solve(&pos(text)), want, "{text} solved");
    }
}

/// `zero review`'s grading of played moves: in the all-centre opening `444444` only columns 3
/// and 5 keep the first player's win (`zero solve` of its children: 1, 0, -1, -1, 0, 1), so 6
/// there is the line's one mistake, and none of the centre moves before it is one (the second
/// player's are all lost anyway). Plies of a random opening are not graded; malformed lines
/// are errors.
#[test]
fn review_finds_the_move_that_throws_a_win_away() {
    use zero::arena::review::Grader;
    use zero::solvers::connect4_book::Book;
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/connect4");
    let mut solver = Solver::new(1 << 20);
    solver.set_book(Box::new(Book::load_deepest(&dir).unwrap().unwrap()));
    let mut grader = Grader::new(solver);
    let found = grader.mistakes("4444446", 0).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    let m = &found[0];
    assert_eq!(
        (m.move_number, m.position.as_str(), m.played),
        (7, "444444", 6)
    );
    assert_eq!((m.before, m.after), (1, 0));
    assert_eq!(m.best, vec![3, 5]);
    // The same line with its first 7 plies an opening: nothing to grade.
    assert!(grader.mistakes("4444446", 7).unwrap().is_empty());
    // Random games after a 12-ply opening: the mistakes are those of the strong solver's move
    // scores (a move whose score has a worse sign than the best move's).
    let mut oracle = Oracle::new(1 << 20, None).unwrap();
    let mut graded_mistakes = 0;
    for seed in 0..4 {
        let mut rng = rng_from_seed(seed);
        let mut g = Connect4::new();
        let mut line = String::new();
        while g.outcome().is_none() {
            let moves = g.legal_moves();
            let m = moves[rng.random_range(0..moves.len())];
            line.push_str(&g.format_move(m));
            g.play(m);
        }
        let mut expected = Vec::new();
        let mut p = Position::from_game(&Connect4::new());
        for (ply, c) in line.chars().enumerate() {
            let col = c.to_digit(10).unwrap() as usize - 1;
            if ply >= 12 {
                let scores = oracle.move_scores(&p).unwrap();
                let best = scores.iter().flatten().max().unwrap().signum();
                let played = scores[col].unwrap().signum();
                if played < best {
                    let keep: Vec<usize> = (0..7)
                        .filter(|&m| scores[m].is_some_and(|s| s.signum() == best))
                        .map(|m| m + 1)
                        .collect();
                    expected.push((ply + 1, col + 1, best, played, keep));
                }
            }
            if p.is_winning_move(col) {
                break;
            }
            p.play_col(col);
        }
        let found: Vec<_> = grader
            .mistakes(&line, 12)
            .unwrap()
            .into_iter()
            .map(|m| (m.move_number, m.played, m.before, m.after, m.best))
            .collect();
        assert_eq!(found, expected, "{line}");
        graded_mistakes += expected.len();
    }
    assert!(graded_mistakes > 0, "random play makes mistakes");
    for bad in ["44a", "4444444", "12121213", "8"] {
        assert!(grader.mistakes(bad, 0).is_err(), "{bad}");
    }
}
