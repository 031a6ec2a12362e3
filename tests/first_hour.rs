//! Slips a careful newcomer meets in a first hour with the command line (#88): counts too large
//! to allocate, games offered where they are refused, a damaged solver cache. Each is refused or
//! got round with a clear message and a plain exit, never an abort.

use std::path::Path;
use std::process::Command;

fn zero_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_zero"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the zero binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn counts_too_large_to_allocate_are_refused_by_name_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let (models, data) = (tmp.path().join("models"), tmp.path().join("data"));
    let run = [
        "--models",
        models.to_str().unwrap(),
        "--data",
        data.to_str().unwrap(),
    ];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["arena", "random", "random", "--games", "1000000000000"],
            "--games 1000000000000 is more than the 10,000,000 allowed",
        ),
        (
            vec!["arena", "random", "random", "--threads", "1000000000"],
            "--threads 1000000000 is more than the 4,096 allowed",
        ),
        (
            vec!["arena", "mcts:4000000000", "random"],
            "simulations 4000000000 is more than the 10,000,000 allowed",
        ),
        (
            vec!["arena", "best", "random", "--sims", "4000000000"],
            "--sims 4000000000 is more than the 10,000,000 allowed",
        ),
        (
            [&["cycle", "--chunk-games", "100000000000"][..], &run[..]].concat(),
            "--chunk-games 100000000000 is more than the 10,000,000 allowed",
        ),
        (
            [
                &["cycle", "--benchmark", "random"][..],
                &["--benchmark-games", "100000000000"],
                &run[..],
            ]
            .concat(),
            "--benchmark-games 100000000000 is more than",
        ),
        (
            vec!["bench", "train", "--batch", "1000000000000"],
            "--batch 1000000000000 is more than the 1,048,576 allowed",
        ),
        (
            vec!["bench", "mcts", "--sims", "4000000000"],
            "--sims 4000000000 is more than",
        ),
    ];
    for (args, needle) in cases {
        let (code, _, err) = zero_in(tmp.path(), &args);
        // 2 where the command line's parser refuses the value, 1 where the command does.
        assert!(code == 1 || code == 2, "{args:?} exited {code}: {err}");
        assert!(
            err.contains(needle),
            "{args:?}: expected '{needle}' in: {err}"
        );
        assert!(!err.contains("memory allocation"), "{args:?}: {err}");
    }
    for dir in [&models, &data] {
        assert!(!dir.exists(), "a refused run made {}", dir.display());
    }
}

#[test]
fn a_run_json_asking_for_too_many_games_is_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let (models, data) = (tmp.path().join("models"), tmp.path().join("data"));
    let cycle = |extra: &[&str]| {
        let dirs = [
            "--models",
            models.to_str().unwrap(),
            "--data",
            data.to_str().unwrap(),
        ];
        zero_in(
            tmp.path(),
            &[&["cycle", "--preset", "tiny"], extra, &dirs].concat(),
        )
    };
    let (code, _, err) = cycle(&["--iterations", "0"]);
    assert_eq!(code, 0, "{err}");
    let path = models.join("connect4/run.json");
    let mut run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    run["selfplay"]["games"] = serde_json::json!(1_000_000_000_000u64);
    run["train"]["batch_size"] = serde_json::json!(1_000_000_000_000u64);
    std::fs::write(&path, serde_json::to_string_pretty(&run).unwrap()).unwrap();
    let (code, _, err) = cycle(&["--iterations", "1"]);
    assert_eq!(code, 1, "{err}");
    for needle in [
        "selfplay.games is 1000000000000 (must be at most 10,000,000)",
        "train.batch_size is 1000000000000 (must be at most 1,048,576)",
    ] {
        assert!(err.contains(needle), "expected '{needle}' in: {err}");
    }
}

#[test]
fn blackjack_is_offered_only_by_the_commands_that_take_it() {
    let tmp = tempfile::tempdir().unwrap();
    for command in [
        &["play"][..],
        &["arena"],
        &["cycle"],
        &["selfplay"],
        &["report"],
        &["serve"],
        &["grade"],
        &["accuracy"],
        &["evalset"],
        &["perft"],
        &["lines"],
        &["targets"],
        &["qlearn"],
        &["bench", "mcts"],
        &["bench", "selfplay"],
        &["bench", "train"],
        &["bench", "serve"],
    ] {
        let (code, help, err) = zero_in(tmp.path(), &[command, &["--help"]].concat());
        assert_eq!(code, 0, "{command:?}: {err}");
        assert!(
            !help.to_lowercase().contains("blackjack"),
            "{command:?} offers blackjack: {help}"
        );
    }
    for command in [&["mces"][..], &["blackjack", "optimal"]] {
        let (code, _, err) = zero_in(tmp.path(), &[command, &["--help"]].concat());
        assert_eq!(code, 0, "{command:?}: {err}");
    }
}

#[test]
fn a_damaged_solver_cache_is_set_aside_with_a_warning_and_solving_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("solver");
    let dir_arg = dir.to_str().unwrap();
    // Pons' Test_L3_R1: score -1.
    let position = "2252576253462244111563365343671351441";
    // The answer less its last line, the nodes and time of the search.
    let solve = || {
        let (code, out, err) = zero_in(tmp.path(), &["solve", position, "--data", dir_arg]);
        let answer: Vec<String> = out.lines().take(3).map(String::from).collect();
        assert!(answer[0].ends_with("score -1"), "{out}");
        (code, answer, err)
    };
    let (code, first, err) = solve();
    assert_eq!(code, 0, "{err}");
    let cache = dir.join("cache.bin");
    let mut bytes = std::fs::read(&cache).unwrap();
    let n = bytes.len();
    bytes[n - 1] ^= 0x40;
    std::fs::write(&cache, &bytes).unwrap();
    let (code, again, err) = solve();
    assert_eq!(code, 0, "{err}");
    assert_eq!(again, first);
    let aside = dir.join("cache.bin.corrupt-1");
    assert!(
        err.contains("warning:")
            && err.contains("cache.bin")
            && err.contains(&format!("renamed {}", aside.display())),
        "{err}"
    );
    assert_eq!(std::fs::read(&aside).unwrap(), bytes);
    // The new cache is good: the next run says nothing.
    let (code, third, err) = solve();
    assert_eq!(
        (code, third, err.contains("warning")),
        (0, first, false),
        "{err}"
    );
}
