//! The command line as a user meets it: bad input gets a clear message and a non-zero exit,
//! never a panic; figures come as JSON with `--json`.

use std::process::Command;
use zero::alphazero::config::presets::{cpu_connect4_budget, long_connect4_budget};

fn zero(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_zero"))
        .args(args)
        .current_dir(std::env::temp_dir())
        .output()
        .expect("the zero binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn fails_with(args: &[&str], needle: &str) {
    let (code, _, err) = zero(args);
    assert_ne!(code, 0, "{args:?} should fail");
    assert!(
        err.contains(needle),
        "{args:?}: expected '{needle}' in: {err}"
    );
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
}

#[test]
fn bad_players_and_games_are_clear_errors() {
    fails_with(
        &["arena", "--game", "tictactoe", "alphago", "random"],
        "unknown player",
    );
    fails_with(
        &["arena", "--game", "tictactoe", "minimax:x", "random"],
        "not a depth",
    );
    fails_with(
        &["arena", "--game", "othello4", "rules", "random"],
        "no rule-based player",
    );
    fails_with(
        &["arena", "--game", "chess", "random", "random"],
        "invalid value",
    );
    // Blackjack has commands of its own (`zero mces`, `zero blackjack`), not a `--game`.
    fails_with(
        &["arena", "--game", "blackjack", "random", "random"],
        "invalid value 'blackjack'",
    );
    fails_with(
        &[
            "arena",
            "--game",
            "connect4",
            "model:/nonexistent.safetensors",
            "random",
        ],
        "no model at",
    );
    fails_with(
        &[
            "arena", "--game", "connect4", "random", "random", "--games", "0",
        ],
        "at least 1",
    );
    fails_with(
        &[
            "arena",
            "--game",
            "domineering",
            "random",
            "random",
            "--opening-plies",
            "30",
        ],
        "--opening-plies 30 is past the end of a Domineering game (at most 12 plies)",
    );
    fails_with(
        &["cycle", "--game", "connect4", "--preset", "huge"],
        "unknown preset",
    );
    // A mistyped solver directory is an error, not minutes of solving without the book.
    let set = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/connect4/Test_L3_R1"
    );
    for (cmd, other) in [("arena", "random"), ("accuracy", set)] {
        fails_with(
            &[cmd, "solver", other, "--data", "/nonexistent/dir"],
            "--data /nonexistent/dir: no such directory",
        );
    }
}

#[test]
fn arena_json_has_the_documented_fields() {
    let (code, out, err) = zero(&[
        "arena", "--game", "connect4", "random", "random", "--games", "50", "--seed", "3", "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON object");
    for key in [
        "game", "a", "b", "games", "a_first", "a_second", "total", "elo", "elo_ci95", "seconds",
    ] {
        assert!(v.get(key).is_some(), "missing {key} in {v}");
    }
    assert_eq!(v["games"], 50);
    let t = &v["total"];
    let sum =
        t["wins"].as_u64().unwrap() + t["losses"].as_u64().unwrap() + t["draws"].as_u64().unwrap();
    assert_eq!(sum, 50);
    // Same seed, same games; another seed, other games (so the seed is not ignored).
    let arena = |seed: &str| -> serde_json::Value {
        let (code, out, err) = zero(&[
            "arena", "--game", "connect4", "random", "random", "--games", "50", "--seed", seed,
            "--json",
        ]);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(out.trim()).unwrap()
    };
    let results = |v: &serde_json::Value| [v["a_first"].clone(), v["a_second"].clone()];
    assert_eq!(results(&arena("3")), results(&v));
    assert_ne!(results(&arena("4")), results(&v));
}

#[test]
fn bench_train_reports_each_phase_of_a_step() {
    let started = std::time::Instant::now();
    let (code, out, err) = zero(&[
        "bench",
        "train",
        "--game",
        "tictactoe",
        "--preset",
        "tiny",
        "--steps",
        "3",
        "--threads",
        "1",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON object");
    // The documented fields, and no others.
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "arch",
            "backward_ms",
            "batch",
            "batch_ms",
            "forward_ms",
            "game",
            "ms_per_step",
            "optimizer_ms",
            "parameters",
            "positions_per_s",
            "precision",
            "steps",
            "threads",
        ],
        "{v}"
    );
    assert_eq!(v["game"], "tictactoe");
    assert_eq!(v["steps"], 3);
    assert_eq!(v["batch"], 64);
    assert_eq!(v["threads"], 1);
    assert!(v["parameters"].as_u64().is_some_and(|p| p > 0), "{v}");
    // Every phase takes some time, and less than the whole step.
    let ms = |k: &str| v[k].as_f64().unwrap_or_else(|| panic!("no {k} in {v}"));
    let step = ms("ms_per_step");
    for phase in ["batch_ms", "forward_ms", "backward_ms", "optimizer_ms"] {
        assert!(ms(phase) > 0.0 && ms(phase) < step, "{phase}: {v}");
    }
    assert!(ms("positions_per_s") > 0.0, "{v}");
    // In milliseconds a step: the timed steps fit in the time the command ran.
    let ran_ms = started.elapsed().as_secs_f64() * 1e3;
    assert!(
        step * 3.0 < ran_ms,
        "3 steps of {step} ms in {ran_ms} ms: {v}"
    );
    fails_with(
        &["bench", "train", "--batch", "0"],
        "--batch must be at least 1",
    );
    fails_with(
        &["bench", "train", "--threads", "0"],
        "--threads must be at least 1",
    );
}

#[test]
fn arena_records_every_game_as_played() {
    use zero::games::{Connect4, Game, Outcome, Player};
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("games.jsonl");
    let file_arg = file.to_str().unwrap();
    let (code, out, err) = zero(&[
        "arena",
        "--game",
        "connect4",
        "minimax:2",
        "random",
        "--games",
        "6",
        "--seed",
        "3",
        "--opening-plies",
        "2",
        "--record",
        file_arg,
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let summary: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    let games: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(games.len(), 6);
    let mut a_wins = 0;
    for (i, g) in games.iter().enumerate() {
        assert_eq!(
            (g["game"].as_str(), g["number"].as_u64()),
            (Some("connect4"), Some(i as u64))
        );
        let a_first = i % 2 == 0;
        assert_eq!(g["first"], if a_first { "minimax:2" } else { "random" });
        let opening = g["opening"].as_str().unwrap();
        assert_eq!(opening.len(), 2, "{g}");
        if i % 2 == 1 {
            assert_eq!(opening, games[i - 1]["opening"].as_str().unwrap());
        }
        // The moves are a Pons position string from the empty board, the opening's random
        // plies first: replayed, the game ends as recorded.
        let line = g["moves"].as_str().unwrap();
        assert!(
            line.starts_with(opening) && line.len() > opening.len(),
            "{g}"
        );
        assert_eq!(g["version"], 2, "{g}");
        let mut pos = Connect4::new();
        for c in line.chars() {
            let m = pos.parse_move(&c.to_string()).unwrap();
            assert!(pos.outcome().is_none() && pos.is_legal(m), "{g}");
            pos.play(m);
        }
        let result = match pos.outcome() {
            Some(Outcome::Win(Player::First)) => "1-0",
            Some(Outcome::Win(Player::Second)) => "0-1",
            Some(Outcome::Draw) => "1/2-1/2",
            None => panic!("the game did not end: {g}"),
        };
        assert_eq!(g["result"], result);
        a_wins += usize::from(result == if a_first { "1-0" } else { "0-1" });
    }
    assert_eq!(summary["total"]["wins"], a_wins);
    // A folder that does not exist is made, as `zero qlearn --out` makes its own.
    let missing = dir.path().join("no/such/folder/games.jsonl");
    let (code, _, err) = zero(&[
        "arena",
        "--game",
        "connect4",
        "random",
        "random",
        "--games",
        "2",
        "--record",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(&missing).unwrap().lines().count(),
        2
    );
    // A folder where the file should be is refused before any game is played.
    fails_with(
        &[
            "arena",
            "--game",
            "connect4",
            "random",
            "random",
            "--games",
            "2",
            "--record",
            dir.path().to_str().unwrap(),
        ],
        "it is a folder",
    );
}

#[test]
fn review_grades_recorded_games_per_player() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("games.jsonl");
    // A game `best` drew against the solver: at move 27 only 6 kept its win (graded by the
    // solver; tests/solver_connect4.rs checks the grading against the strong solver). Its first
    // 20 plies are the record's opening, so only the later positions need solving. The second
    // record is the same game with the names swapped, the third the first again as records are
    // written now (version 2: the moves from the start, opening included; the first two are
    // version 1's, whose moves follow the opening).
    let record = |game: u32, first: &str, second: &str| {
        format!(
            r#"{{"game":"connect4","number":{game},"first":"{first}","second":"{second}","opening":"44444555572111122666","moves":"5633333663151774222777","result":"1/2-1/2"}}"#
        )
    };
    let version_2 = r#"{"game":"connect4","number":2,"first":"net","second":"solver","opening":"44444555572111122666","moves":"444445555721111226665633333663151774222777","result":"1/2-1/2","version":2}"#;
    std::fs::write(
        &file,
        format!(
            "{}\n{}\n{}\n",
            record(0, "net", "solver"),
            record(1, "solver", "net"),
            version_2
        ),
    )
    .unwrap();
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/data/connect4");
    let file_arg = file.to_str().unwrap();
    let (code, out, err) = zero(&["review", file_arg, "--data", data, "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let net = &v["players"]["net"];
    assert_eq!(net["games"], 3);
    assert_eq!(net["games_with_mistakes"], 2, "{v}");
    assert_eq!(net["first_mistake_moves"], serde_json::json!([27, 27]));
    // Both of its games with mistakes go wrong at the same move: counted together.
    assert_eq!(
        net["frequent_first_mistakes"],
        serde_json::json!([{"position": "44444555572111122666563333", "played": 3, "games": 2}])
    );
    // In game 1 the solver is the name of the first player: the same move is its mistake.
    assert_eq!(
        v["players"]["solver"]["first_mistake_moves"],
        serde_json::json!([27])
    );
    let m = &v["games"][0]["mistakes"][0];
    assert_eq!(m["player"], "net");
    assert_eq!(m["move_number"], 27);
    assert_eq!(m["position"], "44444555572111122666563333");
    assert_eq!(m["played"], 3);
    assert_eq!(
        (m["before"].as_i64(), m["after"].as_i64()),
        (Some(1), Some(0))
    );
    assert_eq!(m["best"], serde_json::json!([6]));
    let (code, table, err) = zero(&["review", file_arg, "--data", data]);
    assert_eq!(code, 0, "{err}");
    assert!(
        table.contains("at '44444555572111122666563333' played 3, win to draw (6 kept the win)"),
        "{table}"
    );
    assert!(
        table.contains(
            "first mistakes of net, most games first: at '44444555572111122666563333' played 3 (2)"
        ),
        "{table}"
    );
    // Without a book in the folder the one built into the binary stands in: the same grades.
    let no_book = tempfile::tempdir().unwrap();
    let no_book_arg = no_book.path().to_str().unwrap();
    let (code, out_no_book, err) = zero(&["review", file_arg, "--data", no_book_arg, "--json"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out_no_book, out);
    // Not a record, and a move that is not a column: the file and line are named.
    std::fs::write(&file, "{\"game\":0}\n").unwrap();
    fails_with(&["review", file_arg, "--data", data], "line 1");
    std::fs::write(
        &file,
        r#"{"game":"connect4","number":0,"first":"a","second":"b","opening":"","moves":"449","result":"1-0"}"#,
    )
    .unwrap();
    fails_with(&["review", file_arg, "--data", data], "not a column 1-7");
    // A tic-tac-toe game is not graded as a Connect Four one, though its cells are digits too.
    std::fs::write(
        &file,
        r#"{"game":"tictactoe","number":0,"first":"a","second":"b","opening":"","moves":"1234567","result":"1-0"}"#,
    )
    .unwrap();
    fails_with(
        &["review", file_arg, "--data", data],
        "Connect Four games only",
    );
}

#[test]
fn info_reports_libtorch() {
    let (code, out, err) = zero(&["info", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert!(
        v["libtorch_version"]
            .as_str()
            .unwrap_or("")
            .starts_with("2.11.0"),
        "{v}"
    );
    assert!(v["cuda_available"].is_boolean());
}

#[test]
fn accuracy_grades_players_against_the_solver_labels() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/connect4/Test_L3_R1"
    );
    let grade = |player: &str| -> serde_json::Value {
        let (code, out, err) = zero(&["accuracy", player, file, "--limit", "100", "--json"]);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(out.trim()).expect("one JSON object")
    };
    let perfect = grade("minimax:12");
    assert_eq!(perfect["positions"], 100);
    let random = grade("random");
    // Endgames: a deep search makes almost no mistakes, random play many.
    let (p, r) = (
        perfect["mistake_rate"].as_f64().unwrap(),
        random["mistake_rate"].as_f64().unwrap(),
    );
    assert!(p <= 0.02 && r >= 0.1, "minimax:12 {p}, random {r}");
    assert!(random.get("mistaken").is_none(), "listed only when asked");
    // --mistakes lists each one: a position of the file, a move worse than its value.
    let (code, out, err) = zero(&[
        "accuracy",
        "random",
        file,
        "--limit",
        "100",
        "--json",
        "--mistakes",
    ]);
    assert_eq!(code, 0, "{err}");
    let listed: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON object");
    let mistaken = listed["mistaken"].as_array().expect("a mistaken array");
    assert_eq!(Some(mistaken.len() as u64), random["mistakes"].as_u64());
    let text = std::fs::read_to_string(file).unwrap();
    for m in mistaken {
        let (position, value) = (
            m["position"].as_str().unwrap(),
            m["value"].as_i64().unwrap(),
        );
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(position))
            .expect("a position of the file");
        let score: i64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        assert_eq!(value, score.signum(), "{m}");
        assert!(m["played_value"].as_i64().unwrap() < value, "{m}");
    }
    let (code, out, _) = zero(&["accuracy", "random", file, "--limit", "100", "--mistakes"]);
    assert_eq!(code, 0);
    let first = mistaken[0]["position"].as_str().unwrap();
    assert!(
        out.lines()
            .any(|l| l.trim_start().starts_with(first) && l.contains("played")),
        "{out}"
    );
    fails_with(
        &["accuracy", "random", "/nonexistent"],
        "cannot read test file",
    );
    fails_with(
        &["accuracy", "--game", "tictactoe", "random", file],
        "[possible values: connect4]",
    );
}

/// A directory of the test's own with the solver's opening book in its data/connect4 (the
/// scripts' default is the clone's data/connect4, whose cache a test should not grow): the
/// directory, and the book's.
fn solver_book_dir() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data/connect4");
    std::fs::create_dir_all(&data).unwrap();
    let book = concat!(env!("CARGO_MANIFEST_DIR"), "/data/connect4/book-4.bin");
    std::fs::copy(book, data.join("book-4.bin")).unwrap();
    (dir, data)
}

/// `scripts/strength`: the issue's battery in one command, each figure that of the plain
/// `zero accuracy` / `zero arena` call it names, checked against its target.
#[test]
fn strength_script_gathers_the_plain_commands_figures() {
    // The plain calls find the book in data/connect4 under their working directory, as from
    // the repository.
    let (dir, data) = solver_book_dir();
    let json = |program: &str, args: &[&str]| -> (Option<i32>, serde_json::Value) {
        let out = Command::new(program)
            .args(args)
            .current_dir(dir.path())
            .output()
            .expect("the program runs");
        let text = String::from_utf8_lossy(&out.stdout);
        let value = serde_json::from_str(text.trim()).unwrap_or(serde_json::Value::Null);
        (out.status.code(), value)
    };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/strength");
    let zero_bin = env!("CARGO_BIN_EXE_zero");
    let strength = |extra: &[&str]| {
        let solver_data = data.to_str().expect("a UTF-8 temporary path");
        let mut args = vec!["minimax:2", "--zero", zero_bin, "--data", solver_data];
        args.extend_from_slice(extra);
        json(script, &args)
    };
    let (code, got) = strength(&[
        "--limit",
        "3",
        "--l1r3-limit",
        "1",
        "--solver-seeds",
        "1",
        "--solver-games",
        "2",
        "--minimax-games",
        "2",
        "--json",
    ]);
    assert_eq!(code, Some(0), "{got}");
    let sets = got["pons"].as_array().expect("pons");
    assert_eq!(sets.len(), 6);
    for set in sets {
        let name = set["set"].as_str().expect("set");
        let limit = if name == "L1_R3" { "1" } else { "3" };
        let file = format!(
            "{}/tests/data/connect4/Test_{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let (_, direct) = json(
            zero_bin,
            &["accuracy", "minimax:2", &file, "--limit", limit, "--json"],
        );
        assert_eq!(set["mistakes"], direct["mistakes"], "{name}");
        let target = set["target"].as_f64().expect("target");
        let rate = set["mistake_rate"].as_f64().expect("rate");
        assert_eq!(set["met"].as_bool(), Some(rate <= target), "{name}");
    }
    let (_, direct) = json(
        zero_bin,
        &[
            "arena",
            "minimax:2",
            "solver",
            "--games",
            "2",
            "--seed",
            "1",
            "--json",
        ],
    );
    assert_eq!(
        got["solver"]["first_player_wins"][0],
        direct["a_first"]["wins"]
    );
    assert_eq!(got["minimax"]["games"], 2);
    // Bad input: a clear error and a non-zero exit.
    assert_eq!(strength(&["--limit", "0"]).0, Some(2));
    assert_eq!(strength(&["--solver-seeds", "x"]).0, Some(2));
    let (code, _) = json(script, &["--zero", zero_bin, "--data", "/nonexistent/dir"]);
    assert_eq!(code, Some(1));
}

/// `scripts/research/shared-mistakes`: each player graded by the plain `zero accuracy` call, and the
/// positions they miss listed with the moves that keep their value.
#[test]
fn shared_mistakes_script_lists_the_positions_players_miss() {
    let (dir, data) = solver_book_dir();
    let solver_data = data.to_str().expect("a UTF-8 temporary path");
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/connect4/Test_L3_R1"
    );
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scripts/research/shared-mistakes"
    );
    let zero_bin = env!("CARGO_BIN_EXE_zero");
    let run = |extra: &[&str]| {
        let mut args = vec!["minimax:2", "random", "--file", file, "--limit", "20"];
        args.extend_from_slice(&["--zero", zero_bin, "--data", solver_data]);
        args.extend_from_slice(extra);
        Command::new(script)
            .args(&args)
            .current_dir(dir.path())
            .output()
            .expect("the script runs")
    };
    let out = run(&["--at-least", "1", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let mut total = 0;
    for (k, player) in ["minimax:2", "random"].into_iter().enumerate() {
        let direct = Command::new(zero_bin)
            .args(["accuracy", player, file, "--limit", "20", "--json"])
            .args(["--data", solver_data])
            .current_dir(dir.path())
            .output()
            .expect("zero runs");
        let direct: serde_json::Value = serde_json::from_slice(&direct.stdout).unwrap();
        assert_eq!(got["graded"][k]["mistakes"], direct["mistakes"], "{player}");
        total += direct["mistakes"].as_u64().unwrap();
    }
    // With --at-least 1 every mistake is listed, once a position.
    let shared = got["shared"].as_array().expect("shared");
    let listed: u64 = shared
        .iter()
        .map(|s| s["missed_by"].as_u64().unwrap())
        .sum();
    assert!(total > 0 && listed == total, "{got}");
    for s in shared {
        let keep: Vec<&str> = s["keeping_moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap())
            .collect();
        assert!(!keep.is_empty(), "{s}");
        for played in s["played"].as_object().unwrap().keys() {
            assert!(!keep.contains(&played.as_str()), "{s}");
        }
    }
    // A threshold above the number of players is refused.
    let out = run(&["--at-least", "3"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--at-least must be from 1 to"));
}

#[test]
fn grade_counts_mistakes_on_the_evaluation_set() {
    let grade = |args: &[&str]| -> serde_json::Value {
        let (code, out, err) = zero(&[&["grade", "--json"], args].concat());
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(out.trim()).expect("one JSON object")
    };
    let perfect = grade(&["--game", "tictactoe", "solver"]);
    assert_eq!(
        (perfect["positions"].as_u64(), perfect["mistakes"].as_u64()),
        (Some(300), Some(0))
    );
    let random = grade(&["--game", "tictactoe", "random"]);
    assert!(random["mistakes"].as_u64().unwrap() > 30, "{random}");
    // Connect Four's set is inside the binary: this runs in a directory without it.
    let c4 = grade(&["random", "--limit", "70"]);
    assert_eq!(c4["positions"], 70);
    assert_eq!(c4["set_positions"], 800);
    assert_eq!(c4["groups"].as_array().map(|g| g.len()), Some(7));
    fails_with(&["grade", "human"], "not graded");
    // Commands for some games only offer and accept just those.
    fails_with(
        &["evalset", "--game", "tictactoe"],
        "[possible values: connect4]",
    );
    fails_with(
        &["accuracy", "--game", "othello4", "random", "x"],
        "[possible values: connect4]",
    );
    fails_with(
        &["qlearn", "--game", "connect4"],
        "[possible values: tictactoe, othello4]",
    );
}

#[test]
fn evalset_writes_a_set_the_grading_reads() {
    // Pons-style files of easy endgames under all six names, and one self-play game.
    let dir = tempfile::tempdir().unwrap();
    let pons = dir.path().join("pons");
    std::fs::create_dir(&pons).unwrap();
    let endgames = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/connect4/Test_L3_R1"
    ))
    .unwrap();
    let head: String = endgames
        .lines()
        .take(210)
        .map(|l| format!("{l}\n"))
        .collect();
    for name in ["L3_R1", "L2_R1", "L2_R2", "L1_R1", "L1_R2", "L1_R3"] {
        std::fs::write(pons.join(format!("Test_{name}")), &head).unwrap();
    }
    let data = dir.path().join("data");
    let game = zero::alphazero::selfplay::records::GameRecord {
        moves: vec![3, 3, 2, 4, 6, 6, 6, 6, 0, 0, 1, 1],
        policies: vec![0.0; 12 * 7],
        root_values: vec![0.0; 12],
        outcome: 0,
        trains_from: 0,
        random_plies: 0,
    };
    zero::alphazero::selfplay::records::write_chunk(&data, "connect4", 1, &[0], &[game]).unwrap();
    let out = dir.path().join("set.txt");
    let (p, d, o) = (
        pons.to_str().unwrap(),
        data.to_str().unwrap(),
        out.to_str().unwrap(),
    );
    let args = [
        "evalset",
        "--pons",
        p,
        "--per-set",
        "3",
        "--selfplay",
        d,
        "--out",
        o,
    ];
    let (code, stdout, err) = zero(&[&args[..], &["--selfplay-positions", "2", "--json"]].concat());
    assert_eq!(code, 0, "{err}");
    let summary: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(summary["positions"], 20);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.contains("# command: zero evalset") && text.contains("# seed: 0"),
        "{text}"
    );
    let set = zero::arena::grading::EvalSet::<zero::games::Connect4>::parse(&text, o).unwrap();
    assert_eq!(set.len(), 20);
    assert_eq!(set.groups().last().map(String::as_str), Some("selfplay"));
    // Drawn from lines 201-210 only, the same ones for the same seed.
    let late: Vec<&str> = endgames.lines().skip(200).take(10).collect();
    assert!(set.entries[..18]
        .iter()
        .all(|e| late.iter().any(|l| l.starts_with(&format!("{} ", e.label)))));
}

#[test]
fn a_closed_stdout_ends_the_program_quietly() {
    use std::io::{Read, Write};
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    // Far more output than a pipe holds: 100,000 end-game positions (solved in microseconds)
    // from stdin.
    let mut child = Command::new(env!("CARGO_BIN_EXE_zero"))
        .args(["solve", "--no-cache", "--weak"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the zero binary runs");
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        // Fails once the program has gone, which is the point.
        let _ = stdin.write_all(
            "2252576253462244111563365343671351441\n"
                .repeat(100_000)
                .as_bytes(),
        );
    });
    let mut stderr = child.stderr.take().unwrap();
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    // Read one byte, then hang up, as `| head -c 1` does.
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut first = [0u8; 1];
        stdout.read_exact(&mut first).map(|_| first[0])
    });
    // A program that ignored the closed pipe would run on (or wait): stopped and failed
    // rather than left to hang the suite.
    let limit = Duration::from_secs(60);
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`zero solve` still ran {limit:?} after its stdout was closed");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let first = reader.join().unwrap();
    feeder.join().unwrap();
    let err = errors.join().unwrap();
    assert!(first.is_ok(), "no output before the pipe closed: {first:?}");
    // Ended by SIGPIPE, as other Unix tools are (or, having seen the closed pipe, with
    // success): not an error, and nothing said.
    assert!(
        status.signal() == Some(libc::SIGPIPE) || status.code() == Some(0),
        "{status:?}: {err}"
    );
    assert!(err.is_empty(), "{status:?}: {err}");
}

#[test]
fn stages_in_shards_end_as_the_whole_stages_do() {
    let tmp = tempfile::tempdir().unwrap();
    let root = |name: &str| tmp.path().join(name).to_string_lossy().into_owned();
    let run = |name: &str, args: &[&str]| {
        let (m, d) = (
            root(&format!("{name}/models")),
            root(&format!("{name}/data")),
        );
        let all = [args, &["--models", &m, "--data", &d, "--json"]].concat();
        let (code, out, err) = zero(&all);
        assert_eq!(code, 0, "{all:?}: {err}");
        out
    };
    let setup = ["--preset", "tiny", "--seed", "5"];
    run(
        "whole",
        &[&["cycle", "--iterations", "1"], &setup[..]].concat(),
    );
    run(
        "shards",
        &[&["cycle", "--iterations", "0"], &setup[..]].concat(),
    );
    let (m, d) = (root("shards/models"), root("shards/data"));
    let dirs = ["--models", &m, "--data", &d];
    fails_with(
        &[
            &["selfplay", "--games-from", "2", "--games-to", "6"],
            &dirs[..],
        ]
        .concat(),
        "whole chunks of 8 games",
    );
    fails_with(
        &[
            &["train", "--games-from", "0", "--games-to", "8"],
            &dirs[..],
        ]
        .concat(),
        "training is one task",
    );
    fails_with(
        &[
            &["evaluate", "--games-from", "0", "--games-to", "2"],
            &dirs[..],
        ]
        .concat(),
        "needs --shard-out",
    );
    fails_with(
        &[&["evaluate", "--record"], &dirs[..]].concat(),
        "which is `zero selfplay` of iteration 1",
    );
    // Self-play in two shards (the second first), their figures merged by the record.
    let mut figures = Vec::new();
    for (from, to) in [("8", "16"), ("0", "8")] {
        let out = run(
            "shards",
            &["selfplay", "--games-from", from, "--games-to", to],
        );
        let file = root(&format!("selfplay-{from}.json"));
        std::fs::write(&file, out).unwrap();
        figures.push(file);
    }
    let merge: Vec<&str> = figures.iter().map(String::as_str).collect();
    run(
        "shards",
        &[&["selfplay", "--record", "--merge"], &merge[..]].concat(),
    );
    run("shards", &["train", "--record"]);
    // The evaluation in two shards; a missing one is refused.
    let (s0, s1) = (root("eval-0.json"), root("eval-2.json"));
    run(
        "shards",
        &[
            "evaluate",
            "--games-from",
            "0",
            "--games-to",
            "2",
            "--shard-out",
            &s0,
        ],
    );
    run(
        "shards",
        &[
            "evaluate",
            "--games-from",
            "2",
            "--games-to",
            "4",
            "--shard-out",
            &s1,
        ],
    );
    fails_with(
        &[&["evaluate", "--record", "--merge", &s1], &dirs[..]].concat(),
        "once each",
    );
    run("shards", &["evaluate", "--record", "--merge", &s1, &s0]);
    let compare = Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/chaos"))
        .args(["--compare", &root("whole"), &root("shards")])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&compare.stdout);
    assert!(compare.status.success(), "{said}");
}

/// A run started by an earlier version with a setting since removed turned on is refused,
/// naming the setting, and its files are left as they were; `--policy-surprise`, one of those
/// settings, is no option any more.
#[test]
fn a_run_with_a_removed_setting_turned_on_is_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/golden/d6edf29-connect4-tiny/models/connect4/run.json");
    let mut old: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(golden).unwrap()).unwrap();
    old["policy_surprise_share"] = serde_json::json!(0.5);
    let run_dir = tmp.path().join("models/connect4");
    std::fs::create_dir_all(&run_dir).unwrap();
    let written = serde_json::to_string_pretty(&old).unwrap();
    std::fs::write(run_dir.join("run.json"), &written).unwrap();
    let m = tmp.path().join("models").to_string_lossy().into_owned();
    let d = tmp.path().join("data").to_string_lossy().into_owned();
    let args = ["cycle", "--iterations", "1", "--models", &m, "--data", &d];
    fails_with(&args, "`policy_surprise_share` (0.5)");
    fails_with(&args, "d6edf29");
    let kept = std::fs::read_to_string(run_dir.join("run.json")).unwrap();
    assert_eq!(kept, written);
    assert!(!run_dir.join("state.json").exists());
    let mut option = args.to_vec();
    option.extend(["--policy-surprise", "0.5"]);
    fails_with(&option, "--policy-surprise");
}

/// `--reanalyse` is checked, kept in the run's settings, and reported by training; a resumed
/// run refuses another number.
#[test]
fn reanalysis_is_a_checked_setting_of_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("models").to_string_lossy().into_owned();
    let d = tmp.path().join("data").to_string_lossy().into_owned();
    let run = |iterations: &'static str, n: &'static str| {
        let mut v = vec!["cycle", "--iterations", iterations, "--preset", "tiny"];
        v.extend(["--json", "--reanalyse", n]);
        v.extend(["--models", &m, "--data", &d]);
        v.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    fn args(v: &[String]) -> Vec<&str> {
        v.iter().map(String::as_str).collect()
    }
    fails_with(&args(&run("0", "-3")), "'-3'");
    fails_with(&args(&run("0", "many")), "--reanalyse");
    let (code, out, err) = zero(&args(&run("2", "20")));
    assert_eq!(code, 0, "{err}");
    assert_eq!(saved_run(tmp.path())["research"]["reanalyse_positions"], 20);
    let reanalysed: Vec<serde_json::Value> = out
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["stage"] == "train")
        .map(|v| v["reanalysed"].clone())
        .collect();
    assert_eq!(reanalysed, [serde_json::json!(0), serde_json::json!(20)]);
    fails_with(&args(&run("3", "10")), "reanalyse_positions");
}

/// `--playout-cap` is checked, then kept in the run's settings (and `off` is accepted).
#[test]
fn a_playout_cap_is_a_checked_setting_of_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("models").to_string_lossy().into_owned();
    let d = tmp.path().join("data").to_string_lossy().into_owned();
    let dirs = ["--models", m.as_str(), "--data", d.as_str()];
    let setup = |cap: &str| -> Vec<String> {
        [
            "cycle",
            "--iterations",
            "0",
            "--preset",
            "tiny",
            "--playout-cap",
            cap,
        ]
        .iter()
        .chain(dirs.iter())
        .map(|s| s.to_string())
        .collect()
    };
    fn args(v: &[String]) -> Vec<&str> {
        v.iter().map(String::as_str).collect()
    }
    fails_with(&args(&setup("1.5:16")), "at most 1");
    fails_with(&args(&setup("0.25:0")), "at least 1 simulation");
    fails_with(&args(&setup("quarter")), "FRACTION:SIMS");
    let (code, _, err) = zero(&args(&setup("0.25:8")));
    assert_eq!(code, 0, "{err}");
    let run = saved_run(tmp.path());
    assert_eq!(run["research"]["playout_cap"]["full_fraction"], 0.25);
    assert_eq!(run["research"]["playout_cap"]["fast_sims"], 8);
    fails_with(&args(&setup("off")), "research: {\"playout_cap\"");
}

/// The settings a Connect Four run under `dir/models` saved.
fn saved_run(dir: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("models/connect4/run.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn connect_four_self_plays_with_gumbel_unless_puct_is_asked_for() {
    let tmp = tempfile::tempdir().unwrap();
    let start = |extra: &[&str]| {
        let base = ["--iterations", "0", "--preset", "cpu"];
        cycle_in(tmp.path(), &[&base[..], extra].concat())
    };
    let (code, _, err) = start(&[]);
    assert_eq!(code, 0, "{err}");
    let run = saved_run(tmp.path());
    assert_eq!(run["mcts"]["search"], "gumbel");
    // The processor's budget (3,000 games with AMX, 2,400 with bfloat16 vectors alone, both in
    // bfloat16, 1,600 in 32 bits: pinned in config.rs's tests).
    let (games, _) = cpu_connect4_budget(zero::nn::CpuMatrixUnits::detect());
    let precision = match zero::nn::Precision::native() {
        zero::nn::Precision::Bf16 => "bf16",
        zero::nn::Precision::F32 => "f32",
    };
    assert_eq!(
        (
            run["selfplay"]["games"].as_u64(),
            run["selfplay"]["sims"].as_u64()
        ),
        (Some(games), Some(16))
    );
    assert_eq!(run["net"]["precision"], precision);
    // The saved run keeps its settings, and the refusal says which ones differ.
    let (code, _, err) = start(&["--search", "puct"]);
    assert_ne!(code, 0);
    for difference in [
        format!("selfplay.games: {games}, not 400"),
        "selfplay.sims: 16, not 64".to_string(),
        "mcts.search: \"gumbel\", not \"puct\"".to_string(),
    ] {
        assert!(
            err.contains(&difference),
            "{difference} missing from: {err}"
        );
    }
}

#[test]
fn bad_run_options_are_refused_before_any_directory_is_made() {
    for (args, needle) in [
        (["--preset", "lng"], "unknown preset 'lng'"),
        (["--chunk-games", "0"], "--chunk-games must be at least 1"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let (code, _, err) = cycle_in(tmp.path(), &args);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        for dir in ["models", "data"] {
            assert!(!tmp.path().join(dir).exists(), "{args:?} made {dir}: {err}");
        }
    }
}

/// `zero cycle ARGS` on the run in `dir` (`dir/models`, `dir/data`).
fn cycle_in(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let (m, d) = (dir.join("models"), dir.join("data"));
    let dirs = [
        "--models",
        m.to_str().unwrap(),
        "--data",
        d.to_str().unwrap(),
    ];
    zero(&[&["cycle"], args, &dirs[..]].concat())
}

/// Sets up a tiny Connect Four run in `dir`, then edits its run.json with `edit` as a user
/// would by hand; returns the edited file's text.
fn tiny_run_edited(dir: &std::path::Path, edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let (code, _, err) = cycle_in(dir, &["--iterations", "0", "--preset", "tiny"]);
    assert_eq!(code, 0, "{err}");
    let mut run = saved_run(dir);
    edit(&mut run);
    let edited = serde_json::to_string_pretty(&run).unwrap();
    std::fs::write(dir.join("models/connect4/run.json"), &edited).unwrap();
    edited
}

#[test]
fn a_run_json_edited_out_of_range_is_refused_by_name_and_left_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    let edited = tiny_run_edited(tmp.path(), |run| {
        run["selfplay"]["sims"] = 0.into();
        run["train"]["value_target_mix"] = 2.5.into();
    });
    let (code, _, err) = cycle_in(tmp.path(), &["--iterations", "1"]);
    assert_eq!(code, 1, "{err}");
    for problem in [
        "selfplay.sims is 0 (must be at least 1)",
        "train.value_target_mix is 2.5 (must be from 0 to 1)",
        "run.json",
    ] {
        assert!(err.contains(problem), "{problem} missing from: {err}");
    }
    let path = tmp.path().join("models/connect4/run.json");
    assert_eq!(std::fs::read_to_string(path).unwrap(), edited);
    assert!(!tmp.path().join("data/connect4/iter-0001").exists());
}

#[test]
fn a_run_json_asking_for_another_network_shape_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    tiny_run_edited(tmp.path(), |run| run["net"]["arch"]["filters"] = 32.into());
    // Generation 0 was made as resnet 1x16: the edit is refused, not silently ignored.
    let (code, _, err) = cycle_in(tmp.path(), &["--iterations", "1"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("is a resnet 1x16 network") && err.contains("asks for resnet 1x32"),
        "{err}"
    );
    assert!(!tmp.path().join("data/connect4/iter-0001").exists());
}

#[test]
fn a_network_plays_the_search_its_run_trained_with_unless_asked_otherwise() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, _, err) = cycle_in(
        tmp.path(),
        &[
            "--iterations",
            "0",
            "--preset",
            "tiny",
            "--search",
            "gumbel",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let models = tmp.path().join("models");
    let grade = |player: &str, extra: &[&str]| -> serde_json::Value {
        let base = ["grade", player, "--limit", "40", "--json", "--models"];
        let args = [&base[..], &[models.to_str().unwrap()], extra].concat();
        let (code, out, err) = zero(&args);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(out.trim()).expect("one JSON object")
    };
    let trained = grade("best", &[]);
    assert_eq!(trained["search"], "gumbel");
    // The same games as asking for Gumbel's search by name.
    let asked = grade("best", &["--search", "gumbel"]);
    assert_eq!(trained["groups"], asked["groups"]);
    assert_eq!(grade("best", &["--search", "puct"])["search"], "puct");
    // A copy of the network away from its run plays PUCT; players without a network, nothing.
    let copy = tmp.path().join("copy.safetensors");
    std::fs::copy(models.join("connect4/best.safetensors"), &copy).unwrap();
    let spec = format!("model:{}", copy.display());
    assert_eq!(grade(&spec, &[])["search"], "puct");
    assert!(grade("random", &[])["search"].is_null());

    // A run.json that cannot be read: a clear error naming the way out, the file left as it was.
    let run = models.join("connect4/run.json");
    std::fs::write(&run, "{ not json").unwrap();
    let (code, _, err) = zero(&[
        "arena",
        "best",
        "random",
        "--games",
        "2",
        "--models",
        models.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("run.json") && err.contains("--search puct"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&run).unwrap(), "{ not json");
    let played = |search: &str| {
        let (code, out, err) = zero(&[
            "arena",
            "best",
            "random",
            "--games",
            "2",
            "--json",
            "--search",
            search,
            "--models",
            models.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON object");
        (v["a_search"].clone(), v["b_search"].clone())
    };
    assert_eq!(played("puct"), ("puct".into(), serde_json::Value::Null));
}

#[test]
fn the_long_preset_sets_up_the_cpu_run_with_mixed_forks_and_a_learning_rate_drop() {
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path().join("models").to_string_lossy().into_owned();
    let data = tmp.path().join("data").to_string_lossy().into_owned();
    let (code, _, err) = zero(&[
        "cycle",
        "--preset",
        "long",
        "--iterations",
        "0",
        "--models",
        &models,
        "--data",
        &data,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("preset 'long'"), "{err}");
    let saved = std::fs::read_to_string(tmp.path().join("models/connect4/run.json")).unwrap();
    let cfg: serde_json::Value = serde_json::from_str(&saved).unwrap();
    assert_eq!(cfg["preset"], "long");
    assert_eq!(cfg["mcts"]["search"], "gumbel");
    // Its own budget, which follows the processor (AMX, bfloat16 vectors, 32 bits).
    let (games, steps) = long_connect4_budget(zero::nn::CpuMatrixUnits::detect());
    assert_eq!(
        (
            cfg["selfplay"]["games"].as_u64(),
            cfg["train"]["steps"].as_u64()
        ),
        (Some(games), Some(steps))
    );
    let drops = &cfg["train"]["learning_rate_drops"];
    assert_eq!(drops[0]["from_iteration"], 46);
    assert_eq!(drops[0]["learning_rate"], 1e-3);
    // Half its forks' moves uniform, half by the policy (the cpu preset's: by the policy).
    assert_eq!(
        cfg["selfplay"]["fork_move"],
        serde_json::json!({"mixed": 0.5})
    );
}

/// `zero report`'s chart is titled with what the run was (game, preset, network, seed) and
/// how far it got, not with the path it was drawn from; `--title` names it otherwise.
#[test]
fn a_report_chart_is_titled_with_the_run_not_its_path() {
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("models").to_string_lossy().into_owned();
    let d = tmp.path().join("data").to_string_lossy().into_owned();
    let cycle = [
        "cycle",
        "--iterations",
        "1",
        "--preset",
        "tiny",
        "--seed",
        "3",
    ];
    let (code, _, err) = zero(&[&cycle[..], &["--models", &m, "--data", &d]].concat());
    assert_eq!(code, 0, "{err}");
    let svg_at = tmp.path().join("chart.svg").to_string_lossy().into_owned();
    let (code, _, err) = zero(&["report", "--models", &m, "--svg", &svg_at]);
    assert_eq!(code, 0, "{err}");
    let svg = std::fs::read_to_string(&svg_at).unwrap();
    assert!(
        svg.contains("zero: connect4, tiny preset (resnet 1x16")
            && svg.contains("seed 3: 1 iteration in "),
        "{svg}"
    );
    assert!(!svg.contains(&m), "the models path is in the title");
    let (code, _, err) = zero(&[
        "report",
        "--models",
        &m,
        "--svg",
        &svg_at,
        "--title",
        "a <b> run",
    ]);
    assert_eq!(code, 0, "{err}");
    let svg = std::fs::read_to_string(&svg_at).unwrap();
    assert!(svg.contains("a &lt;b&gt; run"), "{svg}");
}

/// `zero targets` sets a run's value targets beside the exact values: every drawn position is
/// counted once in its group, with shares between 0 and 1; bad input is a clear error.
#[test]
fn targets_grades_a_runs_value_targets_against_the_exact_values() {
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("models").to_string_lossy().into_owned();
    let d = tmp.path().join("data").to_string_lossy().into_owned();
    let dirs = ["--models", &m, "--data", &d];
    let game = ["--game", "tictactoe"];
    fails_with(&[&["targets"], &game[..], &dirs[..]].concat(), "no run in");
    let cycle = ["cycle", "--iterations", "1", "--preset", "tiny"];
    let (code, _, err) = zero(&[&cycle[..], &game[..], &dirs[..]].concat());
    assert_eq!(code, 0, "{err}");
    let targets = [&["targets"], &game[..], &dirs[..]].concat();
    fails_with(
        &[&targets[..], &["--network", "worst"]].concat(),
        "choose best, latest or none",
    );
    fails_with(
        &[&targets[..], &["--solver-data", "/no/such/dir"]].concat(),
        "no such directory",
    );
    fails_with(
        &[&targets[..], &["--positions", "0"]].concat(),
        "at least one position",
    );
    fails_with(
        &[&targets[..], &["--iteration", "9"]].concat(),
        "no self-play games for iteration 9",
    );
    let (code, out, err) = zero(&[&targets[..], &["--positions", "5", "--json"]].concat());
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON object");
    assert_eq!(v["iteration"], 1);
    let groups = v["groups"].as_array().unwrap();
    assert!(!groups.is_empty());
    for g in groups {
        let positions = g["positions"].as_u64().unwrap();
        assert!((1..=5).contains(&positions), "{g}");
        let wdl: u64 = g["exact_win_draw_loss"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_u64().unwrap())
            .sum();
        assert_eq!(wdl, positions, "{g}");
        for source in ["result", "root_value", "target", "network"] {
            let wrong = g[source]["wrong"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&wrong), "{source}: {g}");
        }
    }
}

/// `zero lines` counts a run's self-play games through a line and their next moves: the empty
/// line is every game, each line's games split over its next moves; a line is read as the game
/// writes moves, and a move that cannot be played there is a clear error.
#[test]
fn lines_counts_the_self_play_games_through_a_line_and_their_next_moves() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("data").to_string_lossy().into_owned();
    let game = ["--game", "tictactoe"];
    let data = ["--data", &d];
    fails_with(
        &[&["lines", "5"], &game[..], &data[..]].concat(),
        "no self-play games in",
    );
    let (code, _, err) = cycle_in(
        tmp.path(),
        &[&["--iterations", "1", "--preset", "tiny"], &game[..]].concat(),
    );
    assert_eq!(code, 0, "{err}");
    let lines = |line: &str| {
        let (code, out, err) = zero(&[&["lines", line, "--json"], &game[..], &data[..]].concat());
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON object");
        assert_eq!(v["iterations"].as_array().unwrap().len(), 1, "{v}");
        v["iterations"][0].clone()
    };
    let all = lines("");
    let games = all["games"].as_u64().unwrap();
    assert!(games > 0);
    assert_eq!(all["through"], games);
    let sum = |it: &serde_json::Value, key: &str| -> u64 {
        it["next"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m[key].as_u64().unwrap())
            .sum()
    };
    assert_eq!(sum(&all, "games") + all["ended"].as_u64().unwrap(), games);
    // Each first move's games are the games through it.
    for (m, name) in all["next"]
        .as_array()
        .unwrap()
        .iter()
        .zip(all["next_moves"].as_array().unwrap())
    {
        let through = lines(name.as_str().unwrap());
        assert_eq!(through["through"], m["games"], "{name}");
        let results = ["first_wins", "draws", "first_losses"].map(|k| m[k].as_u64().unwrap());
        assert_eq!(results.iter().sum::<u64>(), m["games"].as_u64().unwrap());
        assert_eq!(
            sum(&through, "games") + through["ended"].as_u64().unwrap(),
            m["games"].as_u64().unwrap()
        );
    }
    // Moves apart read the same as digits; a table without --json.
    assert_eq!(lines("5 1")["through"], lines("51")["through"]);
    let (code, out, err) = zero(&[&["lines", "5"], &game[..], &data[..]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("self-play games through 5"), "{out}");
    fails_with(
        &[&["lines", "55"], &game[..], &data[..]].concat(),
        "move 2 ('5') of the line",
    );
    fails_with(
        &[&["lines", "x"], &game[..], &data[..]].concat(),
        "move 1 ('x') of the line",
    );
}

/// `zero play` fed a script on stdin, from a folder with no trained models.
fn play(args: &[&str], keys: &str) -> (i32, String, String) {
    use std::io::Write;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut child = Command::new(env!("CARGO_BIN_EXE_zero"))
        .arg("play")
        .args(args)
        .current_dir(dir.path())
        .env("ZERO_CACHE_DIR", dir.path().join("cache"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the zero binary runs");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(keys.as_bytes()).expect("keys written");
    drop(stdin);
    let out = child.wait_with_output().expect("zero play ends");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn on_a_fresh_clone_play_offers_the_shipped_network_and_quit_exits_zero() {
    let (code, out, err) = play(
        &["--game", "tictactoe", "--sims", "64"],
        "5\nundo\n5\nquit\n",
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("the network shipped with zero (pretrained)"),
        "{out}"
    );
    assert!(out.contains("pretrained played"), "{out}");
    // The board shows the digits the prompt asks for; undo took the first move back.
    assert!(out.contains(" 1  2  3 "), "{out}");
    assert_eq!(out.matches("pretrained played").count(), 2, "{out}");
    // Without a terminal the engine's thinking is one line, not a clock.
    assert!(err.contains("pretrained is thinking ..."), "{err}");
}

#[test]
fn a_whole_game_ends_with_its_result_and_its_position_string() {
    let keys = "1\n2\n3\n4\n5\n6\n7\n8\n9\nquit\n";
    let (code, out, err) = play(&["--game", "tictactoe", "--against", "minimax:9"], keys);
    assert_eq!(code, 0, "{err}");
    let line = out
        .lines()
        .find_map(|l| l.split("The game as a position: ").nth(1))
        .unwrap_or_else(|| panic!("no position string in {out}"));
    assert!(
        line.chars().all(|c| c.is_ascii_digit()) && line.len() >= 5,
        "{line}"
    );
    let (code, _, err) = zero(&[
        "arena",
        "--game",
        "tictactoe",
        "pretrained",
        "solver",
        "--games",
        "4",
    ]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn the_solver_run_outside_a_clone_keeps_its_cache_in_the_cache_folder_not_the_working_one() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let cache = dir.path().join("cache");
    let mut child = Command::new(env!("CARGO_BIN_EXE_zero"))
        .args(["solve"])
        .current_dir(dir.path())
        .env("ZERO_CACHE_DIR", &cache)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the zero binary runs");
    // Past the book's depth, so that the answer is searched and cached.
    std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), b"44444432\n")
        .expect("the position written");
    let out = child.wait_with_output().expect("zero solve ends");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "44444432 1");
    assert!(!dir.path().join("data").exists(), "a data folder was made");
    assert!(cache.join("connect4/cache.bin").is_file());
}
