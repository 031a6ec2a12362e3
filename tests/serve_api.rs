//! `zero serve`'s JSON API over real HTTP on 127.0.0.1 (an ephemeral port): whole games, every
//! kind of bad input refused with a 4xx and a message while the server keeps serving, the cap
//! on live games and idle expiry, engines that never hold up other games, networks loaded
//! once, Ctrl-C, and a load test of 50 clients at once.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use zero::catalog::Catalogued;
use zero::games::{Connect4, Game, GameKind, TicTacToe};
use zero::nn::{default_device, Arch, Net, Shape};
use zero::serve::client::{request, send, Answer};
use zero::serve::load::{run_load, LoadPlan};
use zero::serve::{resident_kib, ServeConfig, Server};
use zero::solvers::connect4_book::Book;

struct Fixture {
    server: Server,
    _models: tempfile::TempDir,
    _data: tempfile::TempDir,
}

impl Fixture {
    fn addr(&self) -> SocketAddr {
        self.server.addr()
    }
}

/// A server on a free port with models and solver files of its own. Its data folder holds an
/// empty opening book, which wins over the book built into the binary, so that Connect Four's
/// first plies take as long as they would with no book at all (the tests of slow engines need
/// a slow engine).
fn start(change: impl FnOnce(&mut ServeConfig)) -> Fixture {
    let models = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    Book::from_map(0, &Default::default())
        .save(&Book::path(data.path(), 0))
        .unwrap();
    let mut config = ServeConfig {
        models: models.path().into(),
        solver_dir: data.path().into(),
        ..ServeConfig::default()
    };
    change(&mut config);
    let server = Server::start(config, SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).unwrap();
    Fixture {
        server,
        _models: models,
        _data: data,
    }
}

fn post(addr: SocketAddr, path: &str, body: Value) -> Answer {
    request(addr, "POST", path, Some(&body.to_string())).unwrap()
}

fn get(addr: SocketAddr, path: &str) -> Answer {
    request(addr, "GET", path, None).unwrap()
}

fn new_game(addr: SocketAddr, body: Value) -> Value {
    let a = post(addr, "/api/games", body);
    assert_eq!(a.status, 201, "{}", a.text());
    a.json().unwrap()
}

fn id(view: &Value) -> String {
    view["id"].as_str().unwrap().to_string()
}

/// Plays the legal move listed first until the game ends, the engine answering.
fn play_out(addr: SocketAddr, mut view: Value) -> Value {
    let game = id(&view);
    while view["result"].is_null() {
        let side = view["to_move"].as_u64().unwrap() as usize;
        let answer = if view["sides"][side]["human"].as_bool().unwrap() {
            let m = view["legal"][0].clone();
            post(
                addr,
                &format!("/api/games/{game}/move"),
                json!({ "move": m }),
            )
        } else {
            request(
                addr,
                "POST",
                &format!("/api/games/{game}/engine-move"),
                None,
            )
            .unwrap()
        };
        assert_eq!(answer.status, 200, "{}", answer.text());
        view = answer.json().unwrap();
    }
    view
}

fn save_untrained_net<G: Game>(models: &Path, name: &str, seed: u64) {
    save_untrained_arch::<G>(models, name, seed, Arch::resnet(1, 8));
}

fn save_untrained_arch<G: Game>(models: &Path, name: &str, seed: u64, arch: Arch) {
    let dir = models.join(G::NAME);
    std::fs::create_dir_all(&dir).unwrap();
    let net = Net::new_seeded(G::NAME, arch, Shape::of::<G>(), default_device(), seed).unwrap();
    net.save(&dir.join(format!("{name}.safetensors"))).unwrap();
}

/// The game's view once its engine (side `side`) is seen thinking: polled, not waited for by
/// a fixed sleep, so a request that reaches the server late is waited for, and one that never
/// gets there (or an engine already done) fails here rather than making the test vacuous.
fn view_once_thinking(addr: SocketAddr, game: &str, side: u64) -> Value {
    let limit = Duration::from_secs(20);
    let started = Instant::now();
    loop {
        let view = get(addr, &format!("/api/games/{game}")).json().unwrap();
        if view["thinking"]["side"] == side {
            return view;
        }
        assert!(
            view["moves"].as_array().unwrap().is_empty() && started.elapsed() < limit,
            "the engine was not seen thinking within {limit:?}: {view}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_whole_game_against_the_solver_with_undo_and_analysis() {
    let f = start(|_| {});
    let addr = f.addr();
    let view = new_game(
        addr,
        json!({"game": "tictactoe", "first": "human", "second": "solver"}),
    );
    assert_eq!(view["status"], "X to move");
    assert_eq!(view["sides"][1]["player"], "solver");
    let game = id(&view);
    let after = post(
        addr,
        &format!("/api/games/{game}/move"),
        json!({"move": "5"}),
    );
    assert_eq!(after.status, 200, "{}", after.text());
    let after = request(
        addr,
        "POST",
        &format!("/api/games/{game}/engine-move"),
        None,
    )
    .unwrap();
    let view = after.json().unwrap();
    assert_eq!(view["moves"].as_array().unwrap().len(), 2);
    assert_eq!(view["moves"][0]["cell"], 4);
    assert_eq!(view["position"].as_str().unwrap().len(), 2);
    // The perfect-play overlay: every legal move of X, exactly solved.
    let a = get(addr, &format!("/api/games/{game}/analysis"))
        .json()
        .unwrap();
    assert_eq!(a["complete"], true);
    assert_eq!(a["moves"].as_array().unwrap().len(), 7);
    assert!(a["moves"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["result"] == "draw" || m["result"] == "loss"));
    // Undo takes back the engine's move and ours.
    let undone = post(addr, &format!("/api/games/{game}/undo"), json!(null));
    assert_eq!(undone.json().unwrap()["moves"].as_array().unwrap().len(), 0);
    let end = play_out(
        addr,
        get(addr, &format!("/api/games/{game}")).json().unwrap(),
    );
    // Against perfect play the first legal move every time cannot win.
    assert!(end["result"]["winner"] != 0, "{end}");
    assert!(end["to_move"].is_null() && end["legal"].as_array().unwrap().is_empty());
    let ended = request(addr, "DELETE", &format!("/api/games/{game}"), None).unwrap();
    assert_eq!(ended.status, 204);
    assert_eq!(get(addr, &format!("/api/games/{game}")).status, 404);
}

#[test]
fn a_game_can_start_from_a_position() {
    let f = start(|_| {});
    let addr = f.addr();
    let view = new_game(
        addr,
        json!({"game": "connect4", "first": "human", "second": "minimax:2", "position": " 44 53 "}),
    );
    assert_eq!(view["position"], "4453");
    assert_eq!(view["status"], "Red to move");
    assert!(view["moves"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["by_engine"] == false));
    let game = id(&view);
    let after = post(
        addr,
        &format!("/api/games/{game}/move"),
        json!({"move": "2"}),
    );
    assert_eq!(after.json().unwrap()["position"], "44532");
    // The default undo takes back one's own last move only when nothing came after it.
    let undone = post(addr, &format!("/api/games/{game}/undo"), json!(null));
    assert_eq!(undone.json().unwrap()["position"], "4453");
}

#[test]
fn engines_report_their_analysis_and_watch_mode_plays_engines_alone() {
    let f = start(|_| {});
    let addr = f.addr();
    let view = new_game(
        addr,
        json!({"game": "connect4", "first": "mcts:300", "second": "minimax:2", "seed": 3}),
    );
    let end = play_out(addr, view);
    let moves = end["moves"].as_array().unwrap();
    assert!(moves.iter().all(|m| m["by_engine"] == true));
    let a = &moves[0]["analysis"];
    assert_eq!(a["visits"], 300);
    let top = a["top"].as_array().unwrap();
    assert!(!top.is_empty() && top.len() <= 5);
    let shares: f64 = top.iter().map(|t| t["share"].as_f64().unwrap()).sum();
    assert!(shares > 0.0 && shares <= 1.0 + 1e-6);
    let v = a["value"].as_f64().unwrap();
    assert!((a["expected_score"].as_f64().unwrap() - (v + 1.0) / 2.0).abs() < 1e-6);
    // Alpha-beta reports nothing: no analysis rather than a made-up one.
    assert!(moves[1]["analysis"].is_null());
    // The same seed plays the same game.
    let again = play_out(
        addr,
        new_game(
            addr,
            json!({"game": "connect4", "first": "mcts:300", "second": "minimax:2", "seed": 3}),
        ),
    );
    assert_eq!(again["position"], end["position"]);
    // Another seed plays another game: the seed is not ignored.
    let other = play_out(
        addr,
        new_game(
            addr,
            json!({"game": "connect4", "first": "mcts:300", "second": "minimax:2", "seed": 4}),
        ),
    );
    assert_ne!(other["position"], end["position"]);
}

/// Each (request, status, words of the message).
fn refusals(addr: SocketAddr) -> Vec<(Answer, u16, &'static str)> {
    let json_type = [("Content-Type", "application/json")];
    // Two people at one board fill column 4 (alternate stones: no four in a row).
    let c4 = new_game(
        addr,
        json!({"game": "connect4", "first": "human", "second": "human"}),
    );
    let c4 = id(&c4);
    let mv = |game: &str, m: &str| {
        post(
            addr,
            &format!("/api/games/{game}/move"),
            json!({ "move": m }),
        )
    };
    for _ in 0..6 {
        assert_eq!(mv(&c4, "4").status, 200);
    }
    let ttt = id(&new_game(
        addr,
        json!({"game": "tictactoe", "second": "solver"}),
    ));
    mv(&ttt, "5");
    let engine_first = id(&new_game(
        addr,
        json!({"game": "tictactoe", "first": "rules", "second": "human"}),
    ));
    let over = play_out(
        addr,
        new_game(addr, json!({"game": "tictactoe", "second": "solver"})),
    );
    let over = id(&over);
    let big = format!("{{\"move\": \"{}\"}}", "4".repeat(20_000));
    vec![
        (
            post(addr, "/api/games", json!({"game": "chess"})),
            422,
            "game: 'chess' is not one of connect4, tictactoe, othello4",
        ),
        (
            post(addr, "/api/games", json!({"game": "blackjack"})),
            422,
            "game: 'blackjack' is not one of",
        ),
        (
            post(addr, "/api/games", json!({"second": "alphago"})),
            400,
            "unknown player 'alphago'; players here are: human, random",
        ),
        (
            post(addr, "/api/games", json!([])),
            422,
            "the request body must be a JSON object of named fields",
        ),
        (
            post(addr, "/api/games", json!({"sims": "many"})),
            422,
            "sims: expected a whole number from 0 to 4294967295, got the string \"many\"",
        ),
        (
            post(addr, "/api/games", json!({"second": "minimax:x"})),
            400,
            "not a depth",
        ),
        (
            post(addr, "/api/games", json!({"second": "model:/etc/passwd"})),
            400,
            "refused over HTTP",
        ),
        (
            post(addr, "/api/games", json!({"second": "model:../best"})),
            400,
            "refused over HTTP",
        ),
        (
            post(addr, "/api/games", json!({"second": "ql:table.bin"})),
            400,
            "not offered over HTTP",
        ),
        (
            post(addr, "/api/games", json!({"second": "minimax:40"})),
            400,
            "at most 9",
        ),
        (
            post(
                addr,
                "/api/games",
                json!({"second": "best", "sims": 1000000}),
            ),
            400,
            "at most",
        ),
        (
            post(
                addr,
                "/api/games",
                json!({"game": "connect4", "second": "best"}),
            ),
            400,
            "no model 'best'",
        ),
        (
            post(
                addr,
                "/api/games",
                json!({"game": "connect4", "second": "rules"}),
            ),
            400,
            "no rule-based player",
        ),
        (
            post(
                addr,
                "/api/games",
                json!({"game": "connect4", "colour": "red"}),
            ),
            422,
            "unknown field 'colour' (the fields are game, first, second",
        ),
        (
            send(addr, "POST", "/api/games", &json_type, b"{\"game\": ").unwrap(),
            400,
            "JSON",
        ),
        (
            send(addr, "POST", "/api/games", &[], b"{}").unwrap(),
            415,
            "Content-Type",
        ),
        (
            send(
                addr,
                "POST",
                &format!("/api/games/{c4}/move"),
                &json_type,
                big.as_bytes(),
            )
            .unwrap(),
            413,
            "larger than",
        ),
        (
            get(addr, "/api/games/0123456789abcdef"),
            404,
            "no game '0123456789abcdef'",
        ),
        (mv("nope", "4"), 404, "no game 'nope'"),
        (mv(&c4, "8"), 400, "columns are numbered 1-7"),
        (mv(&c4, "four"), 400, "column number"),
        (mv(&c4, "é"), 400, "column number"),
        (
            get(addr, "/api/analysis?game=othello4&position=%C3%A9pass"),
            400,
            "cannot parse position",
        ),
        (mv(&ttt, "5"), 409, "O's turn"),
        (
            request(addr, "POST", &format!("/api/games/{ttt}/engine-move"), None).unwrap(),
            200,
            "",
        ),
        (mv(&ttt, "5"), 400, "cell 5 is taken"),
        (
            request(addr, "POST", &format!("/api/games/{ttt}/engine-move"), None).unwrap(),
            409,
            "a person plays that side",
        ),
        (mv(&engine_first, "1"), 409, "played by rules"),
        (
            post(
                addr,
                &format!("/api/games/{engine_first}/undo"),
                json!(null),
            ),
            400,
            "no move to take back",
        ),
        (
            request(
                addr,
                "POST",
                &format!("/api/games/{engine_first}/engine-move"),
                None,
            )
            .unwrap(),
            200,
            "",
        ),
        (
            post(
                addr,
                &format!("/api/games/{engine_first}/undo"),
                json!(null),
            ),
            400,
            "no move of yours",
        ),
        (mv(&over, "1"), 400, "the game is over"),
        (
            request(
                addr,
                "POST",
                &format!("/api/games/{over}/engine-move"),
                None,
            )
            .unwrap(),
            400,
            "the game is over",
        ),
        (
            request(
                addr,
                "POST",
                &format!("/api/games/{ttt}/undo?plies=0"),
                None,
            )
            .unwrap(),
            400,
            "at least 1",
        ),
        (
            request(
                addr,
                "POST",
                &format!("/api/games/{ttt}/undo?plies=x"),
                None,
            )
            .unwrap(),
            400,
            "plies",
        ),
        (
            get(addr, "/api/analysis?game=connect4&position=4449"),
            400,
            "digits 1-7",
        ),
        (
            get(addr, "/api/analysis?game=tictactoe&position=11"),
            400,
            "illegal move 1",
        ),
        (
            get(addr, "/api/analysis?game=tictactoe&seconds=-1"),
            400,
            "seconds",
        ),
        (
            get(addr, "/api/analysis?position=4"),
            400,
            "the field 'game' is missing",
        ),
        (
            get(addr, "/api/training/connect4/chart.svg"),
            404,
            "zero cycle",
        ),
        (get(addr, "/api/training/chess/chart.svg"), 400, "chess"),
        (get(addr, "/api/nothing"), 404, "no route GET /api/nothing"),
        (get(addr, "/nothing.js"), 404, "no file"),
        (
            request(addr, "PUT", "/api/games", None).unwrap(),
            405,
            "PUT is not allowed for /api/games",
        ),
        (mv(&c4, "4"), 400, "column 4 is full"),
    ]
}

#[test]
fn bad_input_gets_a_clear_4xx_and_the_server_keeps_serving() {
    let f = start(|_| {});
    let addr = f.addr();
    for (k, (answer, status, words)) in refusals(addr).into_iter().enumerate() {
        assert_eq!(answer.status, status, "case {k}: {}", answer.text());
        if status >= 400 {
            let message = answer
                .error()
                .unwrap_or_else(|| panic!("case {k}: no JSON error in {}", answer.text()));
            assert!(
                message.contains(words),
                "case {k}: '{words}' not in '{message}'"
            );
            assert!(
                answer.content_type.starts_with("application/json"),
                "case {k}"
            );
        }
        // Still serving.
        assert_eq!(get(addr, "/api/info").status, 200, "after case {k}");
    }
}

#[test]
fn live_games_are_capped_and_idle_ones_expire() {
    let f = start(|c| {
        c.max_games = 3;
        c.idle = Duration::from_millis(600);
    });
    let addr = f.addr();
    let body = json!({"game": "tictactoe", "second": "random"});
    let first = id(&new_game(addr, body.clone()));
    for _ in 0..2 {
        new_game(addr, body.clone());
    }
    let full = post(addr, "/api/games", body.clone());
    assert_eq!(full.status, 429, "{}", full.text());
    // Worded for a person, with no request to send.
    let message = full.error().unwrap();
    assert!(
        message.contains("3 games are going on") && !message.contains("/api/"),
        "{message}"
    );
    // Untouched games expire; then there is room again.
    std::thread::sleep(Duration::from_millis(1200));
    assert_eq!(get(addr, &format!("/api/games/{first}")).status, 404);
    let info = get(addr, "/api/info").json().unwrap();
    assert_eq!(info["live_games"], 0);
    new_game(addr, body);
}

#[test]
fn a_slow_engine_holds_up_only_its_own_game() {
    let f = start(|c| c.solver_seconds = Duration::from_secs(5));
    let addr = f.addr();
    // The empty board of Connect Four, with an empty opening book: the solver cannot move in
    // 5 s.
    let slow = id(&new_game(
        addr,
        json!({"game": "connect4", "first": "solver", "second": "human"}),
    ));
    let s = slow.clone();
    let waiting = std::thread::spawn(move || {
        request(addr, "POST", &format!("/api/games/{s}/engine-move"), None).unwrap()
    });
    // The slow engine is thinking before the other games start...
    view_once_thinking(addr, &slow, 0);
    let started = Instant::now();
    for _ in 0..3 {
        let end = play_out(
            addr,
            new_game(addr, json!({"game": "tictactoe", "second": "solver"})),
        );
        assert!(!end["result"].is_null());
    }
    let quick = started.elapsed();
    // ...and still thinking once they have all ended: they did not wait for it.
    let view = get(addr, &format!("/api/games/{slow}")).json().unwrap();
    assert_eq!(
        view["thinking"]["side"], 0,
        "the other games ended after the slow engine ({quick:?}): {view}"
    );
    let info = get(addr, "/api/info").json().unwrap();
    assert_eq!(info["live_games"], 4);
    let answer = waiting.join().unwrap();
    assert_eq!(answer.status, 503, "{}", answer.text());
    let message = answer.error().unwrap();
    assert!(
        message.contains("could not find its move within 5.0 s"),
        "{message}"
    );
}

#[test]
fn a_game_waits_for_its_thinking_engine() {
    let f = start(|c| c.solver_seconds = Duration::from_secs(2));
    let addr = f.addr();
    let slow = id(&new_game(
        addr,
        json!({"game": "connect4", "first": "solver", "second": "human"}),
    ));
    let s = slow.clone();
    let waiting = std::thread::spawn(move || {
        request(addr, "POST", &format!("/api/games/{s}/engine-move"), None).unwrap()
    });
    let view = view_once_thinking(addr, &slow, 0);
    assert!(view["status"].as_str().unwrap().contains("is thinking"));
    for (answer, words) in [
        (
            post(
                addr,
                &format!("/api/games/{slow}/move"),
                json!({"move": "4"}),
            ),
            "thinking",
        ),
        (
            post(addr, &format!("/api/games/{slow}/undo"), json!(null)),
            "thinking",
        ),
        (
            request(
                addr,
                "POST",
                &format!("/api/games/{slow}/engine-move"),
                None,
            )
            .unwrap(),
            "already thinking",
        ),
    ] {
        assert_eq!(answer.status, 409, "{}", answer.text());
        assert!(answer.error().unwrap().contains(words));
    }
    assert_eq!(waiting.join().unwrap().status, 503);
    // The engine is back: the game is usable again, and says why it did not move.
    let view = get(addr, &format!("/api/games/{slow}")).json().unwrap();
    assert!(view["thinking"].is_null());
}

#[test]
fn a_network_is_loaded_once_and_shared_by_every_game() {
    let f = start(|_| {});
    let addr = f.addr();
    save_untrained_net::<TicTacToe>(f._models.path(), "best", 1);
    save_untrained_net::<TicTacToe>(f._models.path(), "gen2", 2);
    let info = get(addr, "/api/info").json().unwrap();
    assert_eq!(
        info["games"][1]["models"],
        json!(["best", "gen2", "pretrained"])
    );
    let games: Vec<Value> = (0..4)
        .map(|_| {
            new_game(
                addr,
                json!({"game": "tictactoe", "second": "best", "sims": 16}),
            )
        })
        .collect();
    for view in games {
        let end = play_out(addr, view);
        let engine_move = end["moves"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["by_engine"] == true);
        assert_eq!(engine_move.unwrap()["analysis"]["visits"], 16);
    }
    new_game(
        addr,
        json!({"game": "tictactoe", "second": "model:gen2", "sims": 0}),
    );
    let info = get(addr, "/api/info").json().unwrap();
    assert_eq!(
        info["loaded_models"],
        json!(["tictactoe/best", "tictactoe/gen2"])
    );
    assert!(new_game(
        addr,
        json!({"game": "tictactoe", "second": "model:gen2", "sims": 0})
    )["sides"][1]["player"]
        .as_str()
        .unwrap()
        .contains("network alone"));
}

#[test]
fn a_network_seat_says_which_search_it_plays() {
    let f = start(|_| {});
    let addr = f.addr();
    save_untrained_net::<TicTacToe>(f._models.path(), "best", 1);
    let label = || {
        new_game(
            addr,
            json!({"game": "tictactoe", "second": "best", "sims": 16}),
        )["sides"][1]["player"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // No run.json beside the network: PUCT, as on the command line.
    assert_eq!(label(), "best (puct, 16 sims)");
    // A Gumbel run's network plays (and is labelled with) its run's search.
    std::fs::write(
        f._models.path().join("tictactoe").join("run.json"),
        r#"{"mcts": {"search": "gumbel"}}"#,
    )
    .unwrap();
    assert_eq!(label(), "best (gumbel, 16 sims)");
}

#[test]
fn with_no_trained_model_the_shipped_network_is_offered_and_plays_a_whole_game() {
    let f = start(|_| {});
    let addr = f.addr();
    let info = get(addr, "/api/info").json().unwrap();
    for game in info["games"].as_array().unwrap() {
        let models: Vec<&str> = game["models"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap())
            .collect();
        let name = game["game"].as_str().unwrap();
        let kind: GameKind = name.parse().unwrap();
        let ships = zero::with_board_game!(kind, G => G::pretrained().is_some());
        let offered: &[&str] = if ships { &["pretrained"] } else { &[] };
        assert_eq!(models, offered, "{name}");
    }
    let view = new_game(
        addr,
        json!({"game": "tictactoe", "first": "human", "second": "pretrained", "sims": 64}),
    );
    assert_eq!(view["sides"][1]["player"], "pretrained (puct, 64 sims)");
    let end = play_out(addr, view);
    // The shipped tic-tac-toe network never loses; playing the first legal cell, the person
    // loses or draws.
    assert_ne!(end["result"]["winner"], 0, "{end}");
}

/// The network's opening policy, as the page shows it, of a server started with or without
/// `--symmetries`: the share of each of the top columns.
fn opening_shares(symmetries: bool) -> Vec<(String, f64)> {
    let f = start(|c| c.symmetries = symmetries);
    save_untrained_net::<Connect4>(f._models.path(), "best", 5);
    let view = new_game(
        f.addr(),
        json!({"game": "connect4", "first": "best", "sims": 0}),
    );
    let game = id(&view);
    let path = format!("/api/games/{game}/engine-move");
    let answer = request(f.addr(), "POST", &path, None).unwrap();
    assert_eq!(answer.status, 200, "{}", answer.text());
    let view: Value = answer.json().unwrap();
    view["moves"][0]["analysis"]["top"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["move"].as_str().unwrap().to_string(),
                t["share"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn with_symmetries_network_players_average_the_position_and_its_mirror_image() {
    // The empty board is its own mirror image: averaged, column c and column 8 - c share
    // alike; an untrained network alone does not.
    let mirrored_alike = |shares: &[(String, f64)]| {
        let share = |col: u32| {
            shares
                .iter()
                .find(|(m, _)| *m == col.to_string())
                .map(|s| s.1)
        };
        let pairs: Vec<(f64, f64)> = (1..=3)
            .filter_map(|c| Some((share(c)?, share(8 - c)?)))
            .collect();
        assert!(!pairs.is_empty(), "no mirrored pair among {shares:?}");
        pairs.iter().all(|(a, b)| (a - b).abs() < 1e-5)
    };
    assert!(mirrored_alike(&opening_shares(true)));
    assert!(!mirrored_alike(&opening_shares(false)));
}

#[test]
fn the_page_and_its_files_are_served_from_the_binary() {
    let f = start(|_| {});
    let addr = f.addr();
    let page = get(addr, "/");
    assert_eq!(page.status, 200);
    assert!(page.content_type.starts_with("text/html"));
    let html = page.text();
    assert!(html.contains("/app.js") && html.contains("/style.css"));
    // Nothing from elsewhere: no http(s) URL in any of the page's files.
    for file in ["/", "/app.js", "/panels.js", "/style.css", "/favicon.svg"] {
        let a = get(addr, file);
        assert_eq!(a.status, 200, "{file}");
        let text = a.text().replace("http://www.w3.org/2000/svg", "");
        assert!(
            !text.contains("http://") && !text.contains("https://"),
            "{file}"
        );
    }
    assert!(get(addr, "/app.js").content_type.contains("javascript"));
}

#[test]
fn fifty_clients_play_whole_games_at_once() {
    let f = start(|_| {});
    save_untrained_net::<TicTacToe>(f._models.path(), "best", 1);
    for (opponent, sims) in [("mcts:100", None), ("best", Some(16))] {
        let plan = LoadPlan {
            clients: 50,
            rounds: 2,
            game: zero::games::GameKind::TicTacToe,
            opponent: opponent.into(),
            sims,
            seed: 7,
        };
        let report = run_load(f.addr(), &plan, resident_kib);
        println!("load test: {}", serde_json::to_string(&report).unwrap());
        assert_eq!(report.errors(), 0, "{:?}", report.rounds[0].first_error);
        assert_eq!(report.games_finished(), 100);
        let info = get(f.addr(), "/api/info").json().unwrap();
        assert_eq!(info["live_games"], 0, "every client ended its game");
    }
}

#[test]
fn ctrl_c_stops_the_server_and_other_hosts_get_a_warning() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let models = tempfile::tempdir().unwrap();
    for host in ["127.0.0.1", "0.0.0.0"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_zero"))
            .args(["serve", "--port", "0", "--host", host, "--models"])
            .arg(models.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line.split_whitespace().nth(2).unwrap().to_string();
        let port: u16 = url
            .rsplit(':')
            .next()
            .unwrap()
            .trim_end_matches('/')
            .parse()
            .unwrap();
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        assert_eq!(get(addr, "/api/info").status, 200, "{line}");
        // SAFETY: signals the child this test started, by its id.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        assert!(err.contains("stopped"), "{err}");
        assert_eq!(
            err.contains("no authentication"),
            host != "127.0.0.1",
            "{err}"
        );
    }
}

/// A run's log as the cycle writes it: one iteration's self-play and training.
const METRICS: &str = r#"{"stage":"selfplay","iteration":1,"games":4,"positions":30,"seconds":0.5,"positions_per_s":60.0,"nn_evals_per_s":100.0,"mean_batch":4.0,"cache_hit_rate":0.1}
{"stage":"train","iteration":1,"samples":30,"steps":10,"policy_loss":2.0,"value_loss":0.5,"seconds":1.0}
"#;

#[test]
fn the_training_page_shows_each_runs_table_and_chart() {
    let f = start(|_| {});
    let addr = f.addr();
    let models = f._models.path();
    assert_eq!(
        get(addr, "/api/training").json().unwrap()["runs"],
        json!([])
    );
    std::fs::create_dir_all(models.join("tictactoe")).unwrap();
    std::fs::write(models.join("tictactoe/metrics.jsonl"), METRICS).unwrap();
    std::fs::create_dir_all(models.join("othello4")).unwrap();
    std::fs::write(models.join("othello4/metrics.jsonl"), "not json\n").unwrap();
    let runs = get(addr, "/api/training").json().unwrap();
    let runs = runs["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(
        (&runs[0]["game"], &runs[0]["iterations"]),
        (&json!("tictactoe"), &json!(1))
    );
    let table = runs[0]["table"].as_str().unwrap();
    assert!(
        table.contains("policy") && table.contains("2.000"),
        "{table}"
    );
    let chart = get(addr, runs[0]["chart"].as_str().unwrap());
    assert_eq!(chart.status, 200);
    assert_eq!(chart.content_type, "image/svg+xml");
    assert!(chart.text().starts_with("<svg") && chart.text().contains("training loss"));
    // A damaged log is named, not a failure of the page.
    assert!(
        runs[1]["error"].as_str().unwrap().contains("line 1"),
        "{}",
        runs[1]
    );
}

#[test]
fn othello_passes_and_refusals() {
    let f = start(|_| {});
    let addr = f.addr();
    let view = new_game(
        addr,
        json!({"game": "othello4", "first": "human", "second": "solver"}),
    );
    let game = id(&view);
    assert_eq!(
        view["cells"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|&c| c != 0)
            .count(),
        4
    );
    for (m, words) in [
        ("b2", "b2 is taken"),
        ("a1", "flips no disc"),
        ("pass", "cannot pass"),
        ("e5", "a1-d4"),
    ] {
        let a = post(
            addr,
            &format!("/api/games/{game}/move"),
            json!({ "move": m }),
        );
        assert_eq!(a.status, 400, "{}", a.text());
        assert!(a.error().unwrap().contains(words), "{m}: {}", a.text());
    }
    // Whole games, passes included, with the perfect-play overlay at each of our turns.
    for seed in 0..4 {
        let mut view = new_game(
            addr,
            json!({"game": "othello4", "first": "random", "second": "human", "seed": seed}),
        );
        let game = id(&view);
        while view["result"].is_null() {
            let side = view["to_move"].as_u64().unwrap() as usize;
            view = if view["sides"][side]["human"] == true {
                let a = get(addr, &format!("/api/games/{game}/analysis"))
                    .json()
                    .unwrap();
                assert_eq!(a["complete"], true);
                let best = a["moves"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|m| m["result"] == "win")
                    .unwrap_or(&a["moves"][0])["move"]
                    .clone();
                post(
                    addr,
                    &format!("/api/games/{game}/move"),
                    json!({ "move": best }),
                )
            } else {
                request(
                    addr,
                    "POST",
                    &format!("/api/games/{game}/engine-move"),
                    None,
                )
                .unwrap()
            }
            .json()
            .unwrap();
        }
        // White wins 4x4 Othello with perfect play, and follows the overlay here.
        assert_eq!(view["result"]["winner"], 1, "{}", view["position"]);
    }
}

#[test]
fn perfect_play_answers_within_its_bound_and_too_many_at_once_are_refused() {
    let f = start(|c| {
        c.solvers = 1;
        c.analysis_seconds = 1.5;
    });
    let addr = f.addr();
    // The first moves of Connect Four are not solved in 1.5 s: an answer with unknown moves,
    // on time. One solver takes 4 analyses at once; more are refused for now.
    //
    // Four analyses hold the 4 slots for their 1.5 s; meanwhile a fifth is asked for until it
    // is refused. It asks for 0 s, so one let in before the four have all started ends at once
    // (an answer with unknown moves is not cached: each is a new analysis); one of the four
    // refused in that moment asks again. A refused fifth is therefore refused with the four
    // running, however the requests happen to overlap.
    let analyse = |query: &str| get(addr, &format!("/api/analysis?game=connect4&{query}"));
    let (answers, probes) = std::thread::scope(|s| {
        let four: Vec<_> = (1..=4)
            .map(|c| {
                s.spawn(move || {
                    let first = Instant::now();
                    loop {
                        let asked = Instant::now();
                        let answer = analyse(&format!("position={c}"));
                        if answer.status != 429 {
                            return (answer, asked.elapsed());
                        }
                        assert!(
                            first.elapsed() < Duration::from_secs(10),
                            "analysis {c} refused for 10 s: {}",
                            answer.text()
                        );
                        std::thread::sleep(Duration::from_millis(1));
                    }
                })
            })
            .collect();
        let mut probes = Vec::new();
        while !four.iter().all(|a| a.is_finished()) {
            let probe = analyse("position=5&seconds=0");
            let refused = probe.status == 429;
            probes.push(probe);
            if refused {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let answers: Vec<_> = four.into_iter().map(|a| a.join().unwrap()).collect();
        (answers, probes)
    });
    let refusal = probes
        .last()
        .filter(|p| p.status == 429)
        .unwrap_or_else(|| {
            panic!(
                "the fifth analysis was never refused while the four ran ({} times let in)",
                probes.len()
            )
        });
    assert!(
        refusal
            .error()
            .unwrap()
            .contains("too many perfect-play analyses"),
        "{}",
        refusal.text()
    );
    for (a, took) in &answers {
        assert_eq!(a.status, 200, "{}", a.text());
        assert!(*took < Duration::from_secs(5), "an analysis took {took:?}");
        let v = a.json().unwrap();
        assert_eq!(v["complete"], false);
        assert!(
            v["note"].as_str().unwrap().contains("not solved within"),
            "{v}"
        );
    }
    // Once they are done, there is room again.
    assert_eq!(
        get(addr, "/api/analysis?game=tictactoe&position=5").status,
        200
    );
}

/// Asks the engine of `game` (side `side`) to move on a thread of its own, and waits until it
/// is seen thinking.
fn engine_move_in_background(
    addr: SocketAddr,
    game: &str,
    side: u64,
) -> std::thread::JoinHandle<Answer> {
    let g = game.to_string();
    let waiting = std::thread::spawn(move || {
        request(addr, "POST", &format!("/api/games/{g}/engine-move"), None).unwrap()
    });
    view_once_thinking(addr, game, side);
    waiting
}

#[test]
fn stop_makes_a_thinking_engine_move_now() {
    let f = start(|_| {});
    let addr = f.addr();
    // Nothing is thinking: nothing to stop.
    let game = id(&new_game(
        addr,
        json!({"game": "connect4", "second": "mcts:50000"}),
    ));
    let answer = post(addr, &format!("/api/games/{game}/stop"), json!(null));
    assert_eq!(answer.status, 409, "{}", answer.text());
    assert_eq!(
        answer.error().unwrap(),
        "no engine is thinking in this game"
    );
    // A tree search stops and plays its best move so far, and says it was stopped.
    let game = id(&new_game(
        addr,
        json!({"game": "connect4", "first": "mcts:20000", "second": "human"}),
    ));
    let waiting = engine_move_in_background(addr, &game, 0);
    let stopping = post(addr, &format!("/api/games/{game}/stop"), json!(null));
    assert_eq!(stopping.status, 200, "{}", stopping.text());
    assert_eq!(stopping.json().unwrap()["thinking"]["stopping"], true);
    let answer = waiting.join().unwrap();
    assert_eq!(answer.status, 200, "{}", answer.text());
    let view = answer.json().unwrap();
    let moved = &view["moves"][0];
    assert_eq!(moved["stopped"], true);
    let visits = moved["analysis"]["visits"].as_u64().unwrap();
    assert!((2..20_000).contains(&visits), "{visits} visits");
    assert!(view["thinking"].is_null());
    // Its next search is not stopped: the flag is cleared for each move.
    post(
        addr,
        &format!("/api/games/{game}/move"),
        json!({"move": "4"}),
    );
    let done = request(
        addr,
        "POST",
        &format!("/api/games/{game}/engine-move"),
        None,
    )
    .unwrap();
    let third = &done.json().unwrap()["moves"][2];
    assert_eq!(third["stopped"], false);
    assert_eq!(third["analysis"]["visits"], 20_000);
    // The solver on the empty board, with no opening book, would take hours: stopped, it
    // moves with a quick search instead of failing.
    let solving = id(&new_game(
        addr,
        json!({"game": "connect4", "first": "solver", "second": "human"}),
    ));
    let waiting = engine_move_in_background(addr, &solving, 0);
    assert_eq!(
        post(addr, &format!("/api/games/{solving}/stop"), json!(null)).status,
        200
    );
    let answer = waiting.join().unwrap();
    assert_eq!(answer.status, 200, "{}", answer.text());
    let view = answer.json().unwrap();
    assert_eq!(view["moves"][0]["stopped"], true);
    assert_eq!(view["to_move"], 1);
}

#[test]
fn a_won_game_marks_its_line_and_every_ply_can_be_seen_again() {
    let f = start(|_| {});
    let addr = f.addr();
    let game = id(&new_game(
        addr,
        json!({"game": "connect4", "first": "human", "second": "human"}),
    ));
    for m in ["1", "2", "1", "2", "1", "2"] {
        let view = post(addr, &format!("/api/games/{game}/move"), json!({"move": m}))
            .json()
            .unwrap();
        assert_eq!(view["winning_cells"], json!([]));
    }
    let view = post(
        addr,
        &format!("/api/games/{game}/move"),
        json!({"move": "1"}),
    )
    .json()
    .unwrap();
    // Red's four in column 1, top row first as `cells` numbers them.
    assert_eq!(view["result"]["text"], "Red wins");
    assert_eq!(view["winning_cells"], json!([14, 21, 28, 35]));
    for c in [14, 21, 28, 35] {
        assert_eq!(view["cells"][c], 1);
    }
    // The board after each ply, view only: the game stays where it is.
    let board = |ply: usize| get(addr, &format!("/api/games/{game}/board?ply={ply}"));
    let start = board(0).json().unwrap();
    assert!(start["cells"].as_array().unwrap().iter().all(|c| c == 0));
    assert!(start["last_cell"].is_null());
    let third = board(3).json().unwrap();
    assert_eq!(third["last_cell"], 28);
    let stones = third["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| *c != 0)
        .count();
    assert_eq!(stones, 3);
    assert_eq!(third["winning_cells"], json!([]));
    assert_eq!(
        board(7).json().unwrap()["winning_cells"],
        json!([14, 21, 28, 35])
    );
    let beyond = board(8);
    assert_eq!(beyond.status, 400, "{}", beyond.text());
    assert_eq!(board(7).json().unwrap()["cells"], view["cells"]);
    let now = get(addr, &format!("/api/games/{game}")).json().unwrap();
    assert_eq!(now["moves"].as_array().unwrap().len(), 7);
    // Tic-tac-toe: X's top row.
    let ttt = new_game(
        addr,
        json!({"game": "tictactoe", "first": "human", "second": "human", "position": "1425"}),
    );
    let won = post(
        addr,
        &format!("/api/games/{}/move", id(&ttt)),
        json!({"move": "3"}),
    )
    .json()
    .unwrap();
    assert_eq!(won["winning_cells"], json!([0, 1, 2]));
    assert_eq!(won["opening_plies"], 4);
}

#[test]
fn the_solver_reviews_a_game_leaving_out_its_given_opening() {
    let f = start(|_| {});
    let addr = f.addr();
    // Given: X 1, O 2 (already lost for O), X 5, O 9. Played: X 3, which lets the win go.
    let game = id(&new_game(
        addr,
        json!({"game": "tictactoe", "first": "human", "second": "human", "position": "1259"}),
    ));
    post(
        addr,
        &format!("/api/games/{game}/move"),
        json!({"move": "3"}),
    );
    let review = get(addr, &format!("/api/games/{game}/review"));
    assert_eq!(review.status, 200, "{}", review.text());
    let r = review.json().unwrap();
    assert_eq!(
        (r["complete"].clone(), r["graded"].clone()),
        (json!(true), json!(1))
    );
    assert_eq!(r["opening_plies"], 4);
    let mistakes = r["mistakes"].as_array().unwrap();
    assert_eq!(mistakes.len(), 1, "{r}");
    let m = &mistakes[0];
    assert_eq!(m["move_number"], 5);
    assert_eq!(m["side_name"], "X");
    assert_eq!(
        (m["before"].clone(), m["after"].clone()),
        (json!("win"), json!("draw"))
    );
    assert_eq!(m["position"], "1259");
    let best: Vec<&str> = m["best"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_str().unwrap())
        .collect();
    assert!(best.contains(&"4") && best.contains(&"7"), "{best:?}");
    assert!(r["summary"]
        .as_str()
        .unwrap()
        .starts_with("1 mistake. X's first mistake was move 5 (3)"));
    // Connect Four late in a game, played out by two people: graded on the shared solver.
    let c4 = new_game(
        addr,
        json!({"game": "connect4", "first": "human", "second": "human",
               "position": "2252576253462244111563365343671351441"}),
    );
    let end = play_out(addr, c4.clone());
    let played = end["moves"].as_array().unwrap().len() - 37;
    let r = get(addr, &format!("/api/games/{}/review", id(&c4)))
        .json()
        .unwrap();
    assert_eq!(r["complete"], true, "{r}");
    assert_eq!(r["graded"], played);
    assert_eq!(r["position"], end["position"]);
    // Refusals.
    let bad = get(addr, &format!("/api/games/{game}/review?seconds=-1"));
    assert_eq!(bad.status, 400, "{}", bad.text());
    assert_eq!(get(addr, "/api/games/nope/review").status, 404);
}

#[test]
fn a_win_draw_loss_network_reports_them_beside_its_expected_score() {
    let f = start(|_| {});
    let addr = f.addr();
    save_untrained_arch::<TicTacToe>(
        f._models.path(),
        "best",
        1,
        Arch::resnet(1, 8).with_wdl_head(),
    );
    save_untrained_net::<TicTacToe>(f._models.path(), "plain", 2);
    // Any number of simulations, not only multiples of 50.
    for (opponent, wdl) in [("best", true), ("model:plain", false)] {
        let game = id(&new_game(
            addr,
            json!({"game": "tictactoe", "first": opponent, "second": "human", "sims": 16}),
        ));
        let view = request(
            addr,
            "POST",
            &format!("/api/games/{game}/engine-move"),
            None,
        )
        .unwrap()
        .json()
        .unwrap();
        let a = &view["moves"][0]["analysis"];
        assert_eq!(a["visits"], 16, "{a}");
        assert!(a["expected_score"].is_number());
        if wdl {
            let p: Vec<f64> = ["win", "draw", "loss"]
                .iter()
                .map(|k| a["wdl"][k].as_f64().unwrap())
                .collect();
            assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-4, "{a}");
            assert!(p.iter().all(|&x| (0.0..=1.0).contains(&x)));
        } else {
            assert!(a["wdl"].is_null(), "{a}");
        }
    }
}

#[test]
fn a_hundred_and_one_new_games_in_a_row_each_ending_the_last() {
    let f = start(|c| c.max_games = 100);
    let addr = f.addr();
    let mut last: Option<String> = None;
    for _ in 0..101 {
        let game = id(&new_game(
            addr,
            json!({"game": "tictactoe", "second": "random"}),
        ));
        if let Some(previous) = last.replace(game) {
            let a = request(addr, "DELETE", &format!("/api/games/{previous}"), None).unwrap();
            assert_eq!(a.status, 204, "{}", a.text());
        }
    }
    assert_eq!(get(addr, "/api/info").json().unwrap()["live_games"], 1);
}

/// `zero serve` run from a folder outside the clone, as a newcomer who copied the binary runs
/// it: it says at start that the models folder is missing and that the opening book is the
/// one built in, and the perfect-play overlay answers every first move of Connect Four.
#[test]
fn serve_outside_the_clone_says_what_it_found_and_the_overlay_knows_the_opening() {
    use std::io::{BufRead, BufReader, Read};
    use std::process::{Command, Stdio};
    let cwd = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_zero"))
        .args(["serve", "--port", "0", "--models", "no-such-models"])
        .args(["--analysis-seconds", "10"])
        .current_dir(cwd.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut said = String::new();
    let addr: SocketAddr = loop {
        let mut line = String::new();
        if stdout.read_line(&mut line).unwrap() == 0 {
            let _ = child.kill();
            panic!("zero serve ended before listening: {said}");
        }
        said.push_str(&line);
        if let Some(rest) = line.trim().strip_prefix("zero serve: http://") {
            break rest.split('/').next().unwrap().parse().unwrap();
        }
    };
    let answer = get(addr, "/api/analysis?game=connect4&position=");
    let _ = child.kill();
    let _ = child.wait();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(
        err.contains("warning: the models folder no-such-models")
            && err.contains("does not exist")
            && err.contains("--models <clone>/models"),
        "{err}"
    );
    assert!(
        err.contains("zero serve: Connect Four's opening book: built in")
            && err.contains("data/connect4/book-4.bin), 4 stones deep"),
        "{err}"
    );
    assert_eq!(answer.status, 200, "{}", answer.text());
    let v = answer.json().unwrap();
    assert_eq!(v["complete"], true, "{v}");
    let results: Vec<&str> = v["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["result"].as_str().unwrap())
        .collect();
    // Only the middle column wins for the first player; 3 and 5 draw, the others lose.
    assert_eq!(
        results,
        ["loss", "loss", "draw", "win", "draw", "loss", "loss"],
        "{v}"
    );
}
