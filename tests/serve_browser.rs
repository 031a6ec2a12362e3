//! `zero serve`'s page in a real browser: headless Chromium driven through the DevTools
//! protocol (chromiumoxide). Whole tic-tac-toe and Domineering games against `solver` by
//! clicking, a few
//! Connect Four moves by clicking and by key, the engine's replies and analysis, refused
//! clicks shown as messages, and the perfect-play overlay (with the README's screenshot); on
//! a phone's width (360 and 390 px) and a laptop's (1280 px), the board whole on the screen,
//! whole games by clicking, the winning line marked, the moves stepped through, Stop, and a
//! hundred and one New Games in a row.
//!
//! Chromium comes from `scripts/chromium.sh` (`./run-tests` sources it); the tests find it
//! through `CHROME` or PATH, and fail when it is missing unless `ZERO_SKIP_BROWSER=1`. Set
//! `ZERO_SCREENSHOT` to a path to keep the Connect Four screenshot (docs/serve-connect4.png),
//! and `ZERO_SCREENSHOT_MODELS` to a run's models directory to take it against its `best`;
//! `ZERO_SCREENSHOT_DIR` to a folder (docs/figures) to keep the phone and laptop screenshots
//! (serve-phone.png, serve-laptop.png).

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chromiumoxide::browser::{Browser, BrowserConfig};
use chromiumoxide::handler::viewport::Viewport;
use chromiumoxide::page::ScreenshotParams;
use chromiumoxide::Page;
use futures::StreamExt;
use serde::de::DeserializeOwned;
use zero::serve::{ServeConfig, Server};
use zero::solvers::connect4_book::Book;

/// The browser to drive: `$CHROME`, or a Chromium or Chrome in PATH.
fn chrome() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CHROME").map(PathBuf::from) {
        return path.is_file().then_some(path);
    }
    let names = [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ];
    let dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    names
        .iter()
        .flat_map(|n| dirs.iter().map(move |d| d.join(n)))
        .find(|p| p.is_file())
}

/// The browser, or `None` (with a warning) when it is missing and the tests may be skipped.
fn chrome_or_skip() -> Option<PathBuf> {
    match chrome() {
        Some(path) => Some(path),
        None if std::env::var("ZERO_SKIP_BROWSER").as_deref() == Ok("1") => {
            eprintln!("warning: no Chromium found; browser tests skipped (ZERO_SKIP_BROWSER=1)");
            None
        }
        None => panic!(
            "the browser tests need Chromium: run `source scripts/chromium.sh` (it installs \
             Debian's chromium), or set CHROME to a Chrome or Chromium binary; \
             ZERO_SKIP_BROWSER=1 skips these tests"
        ),
    }
}

/// A server, a browser and a page on it; everything stops when dropped.
struct Session {
    page: Page,
    browser: Browser,
    handler: tokio::task::JoinHandle<()>,
    _server: Server,
    _dirs: [tempfile::TempDir; 3],
}

/// A laptop's screen, and two phones' (CSS pixels).
const LAPTOP: (u32, u32) = (1280, 800);
const PHONE: (u32, u32) = (390, 844);
const SMALL_PHONE: (u32, u32) = (360, 740);

impl Session {
    async fn open(chrome: &Path, hash: &str) -> Session {
        Session::open_with(chrome, hash, None).await
    }

    /// The same, serving the models and solver's book of `dirs` (models, solver) when given.
    async fn open_with(
        chrome: &Path,
        hash: &str,
        dirs_given: Option<(PathBuf, PathBuf)>,
    ) -> Session {
        Session::open_sized(chrome, hash, dirs_given, (1280, 860), |_| {}).await
    }

    /// A page of `size` (width, height; under 600 wide, as a phone), on a server whose
    /// settings `change` adjusts.
    async fn open_sized(
        chrome: &Path,
        hash: &str,
        dirs_given: Option<(PathBuf, PathBuf)>,
        size: (u32, u32),
        change: impl FnOnce(&mut ServeConfig),
    ) -> Session {
        let dirs = [(); 3].map(|_| tempfile::tempdir().unwrap());
        let (models, solver_dir) =
            dirs_given.unwrap_or_else(|| (dirs[0].path().into(), dirs[1].path().into()));
        let mut config = ServeConfig {
            models,
            solver_dir,
            ..ServeConfig::default()
        };
        change(&mut config);
        let server = Server::start(config, SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).unwrap();
        let phone = size.0 < 600;
        let viewport = Viewport {
            width: size.0,
            height: size.1,
            device_scale_factor: Some(1.0),
            emulating_mobile: phone,
            has_touch: phone,
            ..Viewport::default()
        };
        let browser_config = BrowserConfig::builder()
            .chrome_executable(chrome)
            // Root in a container has no sandbox to give Chromium.
            .no_sandbox()
            .user_data_dir(dirs[2].path())
            .window_size(size.0, size.1)
            .viewport(viewport)
            .arg("--disable-gpu")
            .arg("--disable-dev-shm-usage")
            .build()
            .unwrap();
        let (browser, mut handler) = Browser::launch(browser_config)
            .await
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", chrome.display()));
        let handler = tokio::spawn(async move { while handler.next().await.is_some() {} });
        let page = browser
            .new_page(format!("{}{hash}", server.url()))
            .await
            .unwrap();
        let s = Session {
            page,
            browser,
            handler,
            _server: server,
            _dirs: dirs,
        };
        s.wait_for(
            "document.querySelectorAll('#players option').length > 0",
            10,
        )
        .await;
        s
    }

    async fn eval<T: DeserializeOwned>(&self, js: &str) -> T {
        self.page
            .evaluate(js)
            .await
            .unwrap_or_else(|e| panic!("evaluating {js}: {e}"))
            .into_value()
            .unwrap_or_else(|e| panic!("the value of {js}: {e}"))
    }

    /// Waits until the expression is true.
    async fn wait_for(&self, condition: &str, seconds: u64) {
        let started = Instant::now();
        while !self.eval::<bool>(&format!("!!({condition})")).await {
            if started.elapsed() > Duration::from_secs(seconds) {
                let status = self.text("#status").await;
                let message = self.text("#message").await;
                panic!(
                    "waited {seconds} s for {condition}; status '{status}', message '{message}'"
                );
            }
            tokio::time::sleep(Duration::from_millis(40)).await;
        }
    }

    async fn text(&self, selector: &str) -> String {
        self.eval(&format!(
            "(document.querySelector('{selector}') || {{textContent: ''}}).textContent"
        ))
        .await
    }

    async fn click(&self, selector: &str) {
        let element = self
            .page
            .find_element(selector)
            .await
            .unwrap_or_else(|e| panic!("no {selector}: {e}"));
        element.click().await.unwrap();
    }

    async fn moves(&self) -> usize {
        self.eval("document.querySelectorAll('#moves li').length")
            .await
    }

    /// Chooses the game and the opponent as a person does, and starts.
    async fn start(&self, game: &str, opponent: &str) {
        self.start_from(game, opponent, "first", "").await;
    }

    /// The same, moving first or second, from the position after `moves`.
    async fn start_from(&self, game: &str, opponent: &str, side: &str, moves: &str) {
        // The fields are cleared, and so is the board's game, so that the new board is known.
        self.eval::<bool>(&format!(
            "(() => {{ const g = document.getElementById('game'); g.value = '{game}'; \
             g.dispatchEvent(new Event('change')); \
             document.getElementById('opponent').value = ''; \
             document.getElementById('position').value = ''; \
             document.getElementById('board').className = 'board'; return true; }})()"
        ))
        .await;
        for (field, text) in [("#opponent", opponent), ("#position", moves)] {
            let input = self.page.find_element(field).await.unwrap();
            input.click().await.unwrap().type_str(text).await.unwrap();
        }
        self.click(&format!("input[name=side][value={side}]")).await;
        self.click("#start").await;
        self.wait_for(
            &format!(
                "document.querySelector('#board.{game}') && \
                 !document.body.classList.contains('thinking')"
            ),
            20,
        )
        .await;
    }

    /// Clicks a move and waits for the engine's reply (or the end of the game).
    async fn play(&self, selector: &str) {
        let before = self.moves().await;
        self.click(selector).await;
        self.wait_for(
            &format!(
                "(document.querySelectorAll('#moves li').length >= {before} + 2 || \
                 !document.getElementById('result').hidden) && \
                 !document.body.classList.contains('thinking')"
            ),
            30,
        )
        .await;
    }

    /// Clicks and waits for the page's refusal message.
    async fn refused(&self, selector: &str) -> String {
        self.eval::<bool>("(() => { const m = document.getElementById('message'); m.hidden = true; m.textContent = ''; return true; })()")
            .await;
        self.click(selector).await;
        self.wait_for("!document.getElementById('message').hidden", 10)
            .await;
        self.text("#message").await
    }

    /// Whether the element is shown and its bounding box lies inside the viewport.
    async fn inside_viewport(&self, selector: &str) -> bool {
        self.eval(&format!(
            "(() => {{ const e = document.querySelector(\"{selector}\"); if (!e) return false; \
             const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && \
             r.left >= 0 && r.top >= 0 && r.right <= window.innerWidth && \
             r.bottom <= window.innerHeight; }})()"
        ))
        .await
    }

    /// The top of the element, in CSS pixels from the top of the page.
    async fn top(&self, selector: &str) -> f64 {
        self.eval(&format!(
            "document.querySelector(\"{selector}\").getBoundingClientRect().top + window.scrollY"
        ))
        .await
    }

    /// The id of the game the page shows, as it keeps it for a reload.
    async fn game_id(&self) -> String {
        self.eval("(JSON.parse(sessionStorage.getItem('zero-game-play') || '{}') || {}).id || ''")
            .await
    }

    /// How many stones the board shows.
    async fn stones(&self) -> usize {
        self.eval("document.querySelectorAll('#board .hole.p1, #board .hole.p2, #board .cell.p1, #board .cell.p2').length")
            .await
    }

    /// Saves what the screen shows as `name` in `$ZERO_SCREENSHOT_DIR`, if set.
    async fn keep_screenshot(&self, name: &str) {
        let Some(dir) = std::env::var_os("ZERO_SCREENSHOT_DIR").map(PathBuf::from) else {
            return;
        };
        let png = self
            .page
            .screenshot(ScreenshotParams::builder().build())
            .await
            .unwrap();
        assert!(png.starts_with(b"\x89PNG"));
        std::fs::write(dir.join(name), &png).unwrap();
        eprintln!("screenshot: {}", dir.join(name).display());
    }

    async fn close(mut self) {
        let _ = self.browser.close().await;
        let _ = self.browser.wait().await;
        self.handler.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_tic_tac_toe_game_against_the_solver_by_clicking() {
    let Some(chrome) = chrome_or_skip() else {
        return;
    };
    let s = Session::open(&chrome, "#play").await;
    s.start("tictactoe", "solver").await;
    assert_eq!(s.text("#status").await, "X to move");
    let empty = "[...document.querySelectorAll('#board [data-move]')].find(b => b.textContent === '').dataset.move";
    for turn in 0..5 {
        if s.eval::<bool>("!document.getElementById('result').hidden")
            .await
        {
            break;
        }
        let cell: String = s.eval(empty).await;
        s.play(&format!("#board [data-move='{cell}']")).await;
        if turn == 0 {
            // A taken cell is refused with a message, and the game goes on.
            let message = s.refused(&format!("#board [data-move='{cell}']")).await;
            assert_eq!(message, format!("cell {cell} is taken"));
            assert_eq!(s.moves().await, 2);
        }
    }
    let result = s.text("#result").await;
    // The solver never loses: a draw, or O wins.
    assert!(
        result == "Draw" || result == "O wins: you lose.",
        "result '{result}'"
    );
    assert_eq!(s.text("#status").await, result.split(':').next().unwrap());
    let message = s.refused("#board [data-move='1']").await;
    assert!(message.contains("the game is over"), "{message}");
    s.close().await;
}

/// Domineering, added by its rules and facts alone: the page draws its cells from
/// `/api/info`, marks where a domino may start, explains a refused click, and plays a whole
/// game to the solver's win (5x5 is won by the second player).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_domineering_game_against_the_solver_by_clicking() {
    let Some(chrome) = chrome_or_skip() else {
        return;
    };
    let s = Session::open(&chrome, "#play").await;
    s.start("domineering", "solver").await;
    assert_eq!(s.text("#status").await, "Vertical to move");
    // The start field's example is written the way this game writes a position.
    assert_eq!(
        s.text("#position-hint").await,
        "(optional: the moves so far, e.g. a3d3c3a5)"
    );
    assert_eq!(
        s.eval::<usize>("document.querySelectorAll('#board .cell').length")
            .await,
        25
    );
    // An upright domino cannot start on the bottom row.
    let message = s.refused("#board [data-move='c5']").await;
    assert_eq!(
        message,
        "Vertical's domino covers c5 and the cell below, but c5 is on the bottom row"
    );
    for _ in 0..13 {
        if s.eval::<bool>("!document.getElementById('result').hidden")
            .await
        {
            break;
        }
        let legal: String = s
            .eval("document.querySelector('#board .cell.legal').dataset.move")
            .await;
        s.play(&format!("#board [data-move='{legal}']")).await;
    }
    assert_eq!(s.text("#result").await, "Horizontal wins: you lose.");
    // Each covered cell shows its side's mark: two a domino, every one in the moves list.
    let covered: usize = s
        .eval("[...document.querySelectorAll('#board .cell')].filter(c => c.textContent === '▮' || c.textContent === '▬').length")
        .await;
    assert_eq!(covered, 2 * s.moves().await);
    s.keep_screenshot("serve-domineering.png").await;
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_four_moves_by_click_and_key_with_the_engines_replies() {
    let Some(chrome) = chrome_or_skip() else {
        return;
    };
    let s = Session::open(&chrome, "#play").await;
    s.start("connect4", "mcts:300").await;
    s.play("#board [data-move='4']").await;
    // Our stone at the bottom of column 4 (cell 38), the engine's somewhere, its analysis shown.
    assert!(
        s.eval::<bool>("document.querySelector('[data-cell=\"38\"]').classList.contains('p1')")
            .await
    );
    assert_eq!(
        s.eval::<usize>("document.querySelectorAll('#board .hole.p2').length")
            .await,
        1
    );
    assert_eq!(s.text("#status").await, "Red to move");
    assert!(s
        .text("#analysis .who")
        .await
        .starts_with("Yellow (mcts:300) played"));
    assert!(
        s.eval::<usize>("document.querySelectorAll('#analysis .top-moves li').length")
            .await
            >= 1
    );
    assert!(s
        .text("#analysis .verdict")
        .await
        .contains("Expected score"));
    // Key 3 drops a stone in column 3.
    s.page
        .find_element("body")
        .await
        .unwrap()
        .press_key("3")
        .await
        .unwrap();
    s.wait_for(
        "document.querySelectorAll('#moves li').length >= 4 && !document.body.classList.contains('thinking')",
        30,
    )
    .await;
    assert_eq!(s.text("#moves li:nth-child(3)").await, "3.Red 3");
    // Undo takes back the engine's move and ours.
    s.click("#undo").await;
    s.wait_for("document.querySelectorAll('#moves li').length === 2", 10)
        .await;
    s.play("#board [data-move='3']").await;
    // Two people at one board (the opponent `human`) fill column 4; one more stone is refused.
    s.start("connect4", "human").await;
    for stone in 1..=6 {
        s.click("#board [data-move='4']").await;
        s.wait_for(
            &format!("document.querySelectorAll('#moves li').length === {stone}"),
            10,
        )
        .await;
    }
    let message = s.refused("#board [data-move='4']").await;
    assert_eq!(message, "column 4 is full");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_perfect_play_overlay_and_the_screenshot() {
    let Some(chrome) = chrome_or_skip() else {
        return;
    };
    // The README's screenshot is a game against a trained `best`: ZERO_SCREENSHOT_MODELS names
    // the models directory of a run, and the repository's opening book serves the overlay.
    let trained = std::env::var_os("ZERO_SCREENSHOT_MODELS").map(PathBuf::from);
    let (opponent, moves) = match trained {
        // An opening: the book answers the overlay at once.
        Some(_) => ("best", "4453"),
        // A middle game (16 stones, the start of a position of Pons' test set).
        None => ("mcts:2000", "1376166131123653"),
    };
    let book = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/connect4");
    let s = Session::open_with(&chrome, "#play", trained.map(|m| (m, book))).await;
    // The engine, Red, moves first from the position.
    s.start_from("connect4", opponent, "second", moves).await;
    s.wait_for(
        &format!(
            "document.querySelectorAll('#moves li').length === {} && \
             !document.body.classList.contains('thinking')",
            moves.len() + 1
        ),
        30,
    )
    .await;
    let who = s.text("#analysis .who").await;
    assert!(who.starts_with(&format!("Red ({opponent}")), "{who}");
    s.click("#perfect").await;
    // Every legal column gets its exact result (a mid-game position solves in seconds).
    s.wait_for(
        "document.querySelectorAll('#perfect-row .badge').length > 0 && \
         document.querySelectorAll('#perfect-row .badge.unknown').length === 0",
        60,
    )
    .await;
    let badges: Vec<String> = s
        .eval("[...document.querySelectorAll('#perfect-row .badge')].map(b => b.className)")
        .await;
    assert!(badges
        .iter()
        .all(|b| b.contains("win") || b.contains("draw") || b.contains("loss")));
    let png = s
        .page
        .screenshot(ScreenshotParams::builder().full_page(true).build())
        .await
        .unwrap();
    assert!(png.starts_with(b"\x89PNG"));
    if let Some(path) = std::env::var_os("ZERO_SCREENSHOT") {
        std::fs::write(&path, &png).unwrap();
        eprintln!("screenshot: {}", PathBuf::from(path).display());
    }
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_mode_and_the_training_page() {
    let Some(chrome) = chrome_or_skip() else {
        return;
    };
    let s = Session::open(&chrome, "#watch").await;
    std::fs::create_dir_all(s._dirs[0].path().join("tictactoe")).unwrap();
    std::fs::write(
        s._dirs[0].path().join("tictactoe/metrics.jsonl"),
        concat!(
            r#"{"stage":"selfplay","iteration":1,"games":4,"positions":30,"seconds":0.5,"positions_per_s":60.0,"nn_evals_per_s":100.0,"mean_batch":4.0,"cache_hit_rate":0.1}"#,
            "\n",
            r#"{"stage":"train","iteration":1,"samples":30,"steps":10,"policy_loss":2.0,"value_loss":0.5,"seconds":1.0}"#,
            "\n"
        ),
    )
    .unwrap();
    // Two engines play a whole game by themselves, move by move.
    s.eval::<bool>(
        "(() => { const g = document.getElementById('game'); g.value = 'tictactoe'; \
         g.dispatchEvent(new Event('change')); document.getElementById('engine-a').value = 'random'; \
         document.getElementById('engine-b').value = 'solver'; \
         document.getElementById('delay').value = '0'; return true; })()",
    )
    .await;
    s.click("#start").await;
    s.wait_for("!document.getElementById('result').hidden", 20)
        .await;
    assert!(s.moves().await >= 5);
    let result = s.text("#result").await;
    assert!(result == "O wins" || result == "Draw", "{result}");
    // The training page: the run's chart and table.
    s.click("nav a[data-view='training']").await;
    s.wait_for("document.querySelector('#runs .run img') && document.querySelector('#runs .run img').complete && document.querySelector('#runs .run img').naturalWidth > 0", 10)
        .await;
    assert_eq!(s.text("#runs .run h3").await, "tictactoe — 1 iteration");
    // Only the training page shows.
    assert!(
        s.eval::<bool>("getComputedStyle(document.getElementById('game-view')).display === 'none'")
            .await
    );
    assert!(s.text("#runs .run pre").await.contains("policy"));
    s.close().await;
}

/// Clicks the first empty cell of a tic-tac-toe board, engine replies and all, to the end.
async fn play_tic_tac_toe_to_the_end(s: &Session) -> String {
    let empty = "[...document.querySelectorAll('#board [data-move]')].find(b => b.textContent === '').dataset.move";
    for _ in 0..5 {
        if s.eval::<bool>("!document.getElementById('result').hidden")
            .await
        {
            break;
        }
        let cell: String = s.eval(empty).await;
        s.play(&format!("#board [data-move='{cell}']")).await;
    }
    s.text("#result").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_phone_and_a_laptop_the_board_fits_and_whole_games_play_by_clicking() {
    let Some(chrome) = chrome_or_skip() else {
        return;
    };
    for size in [SMALL_PHONE, PHONE, LAPTOP] {
        let at = format!("{}x{}", size.0, size.1);
        let s = Session::open_sized(&chrome, "#play", None, size, |_| {}).await;
        // Simulations are asked for only where they apply: network players.
        let sims_shown = |spec: &str| {
            format!(
                "(() => {{ const o = document.getElementById('opponent'); o.value = '{spec}'; \
                 o.dispatchEvent(new Event('input')); \
                 return !document.querySelector('.sims-field[data-for=opponent]').hidden; }})()"
            )
        };
        assert!(!s.eval::<bool>(&sims_shown("solver")).await, "{at}");
        assert!(s.eval::<bool>(&sims_shown("best")).await, "{at}");
        // Two people at one Connect Four board; the whole board is on the screen.
        s.start("connect4", "human").await;
        assert!(
            s.inside_viewport("#board").await,
            "{at}: the board is cut off"
        );
        assert!(s.inside_viewport("#board .column:last-child").await, "{at}");
        if size.0 < 600 {
            assert!(
                s.top("#board").await < s.top(".setup").await,
                "{at}: the board comes first"
            );
        }
        let board_top = s.top("#board").await;
        for (k, column) in "1212121".chars().enumerate() {
            s.click(&format!("#board [data-move='{column}']")).await;
            s.wait_for(
                &format!(
                    "document.querySelectorAll('#moves li').length === {}",
                    k + 1
                ),
                10,
            )
            .await;
        }
        s.wait_for("!document.getElementById('result').hidden", 10)
            .await;
        assert_eq!(s.text("#result").await, "Red wins", "{at}");
        // The banner took no room of the board's: the board did not move.
        assert_eq!(s.top("#board").await, board_top, "{at}: the board jumped");
        assert!(s.inside_viewport("#board").await, "{at}");
        // Red's four in column 1 are marked, and only they.
        let marked: Vec<String> = s
            .eval("[...document.querySelectorAll('#board .hole.win')].map(h => h.dataset.cell)")
            .await;
        assert_eq!(marked, ["14", "21", "28", "35"], "{at}");
        // The moves can be stepped through, view only, and back.
        s.click("#moves li:nth-child(3)").await;
        s.wait_for("!document.getElementById('replay').hidden", 10)
            .await;
        assert_eq!(s.stones().await, 3, "{at}");
        assert_eq!(s.text("#replay").await, "After move 3 of 7 (view only)");
        assert_eq!(
            s.eval::<usize>("document.querySelectorAll('#board .hole.win').length")
                .await,
            0
        );
        s.page
            .find_element("body")
            .await
            .unwrap()
            .press_key("ArrowRight")
            .await
            .unwrap();
        s.wait_for(
            "document.querySelectorAll('#board .hole.p1, #board .hole.p2').length === 4",
            10,
        )
        .await;
        s.click("#step-live").await;
        s.wait_for("document.getElementById('replay').hidden", 10)
            .await;
        assert_eq!(s.stones().await, 7);
        // The moves as the position string that `zero solve` and `zero review` read.
        assert_eq!(
            s.eval::<String>("document.getElementById('position-string').value")
                .await,
            "1212121"
        );
        s.click("#copy").await;
        s.wait_for("document.getElementById('copy').textContent !== 'Copy'", 10)
            .await;
        // A whole game of tic-tac-toe against the solver, by clicking.
        s.start("tictactoe", "solver").await;
        assert!(s.inside_viewport("#board").await, "{at}");
        let result = play_tic_tac_toe_to_the_end(&s).await;
        assert!(
            result == "Draw" || result == "O wins: you lose.",
            "{at}: '{result}'"
        );
        assert!(s.inside_viewport("#board").await, "{at}");
        // The solver's review: the solver made no mistake; ours, if any, are listed.
        s.click("#review").await;
        s.wait_for("document.querySelector('#review-box .summary')", 30)
            .await;
        let summary = s.text("#review-box .summary").await;
        assert!(
            summary.starts_with("No mistakes") || !summary.contains("O's first mistake"),
            "{at}: {summary}"
        );
        if size == PHONE || size == LAPTOP {
            // The screenshots: a game against an engine, its analysis beside (below) it.
            s.start_from("connect4", "mcts:300", "first", "4453").await;
            s.play("#board [data-move='3']").await;
            let name = if size == PHONE {
                "serve-phone.png"
            } else {
                "serve-laptop.png"
            };
            s.keep_screenshot(name).await;
        }
        s.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_makes_the_engine_move_now() {
    let Some(chrome) = chrome_or_skip() else {
        return;
    };
    // An empty opening book in the data folder wins over the one built in: the solver would
    // then need hours for its first move.
    let (models, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    Book::from_map(0, &Default::default())
        .save(&Book::path(data.path(), 0))
        .unwrap();
    let dirs = Some((models.path().into(), data.path().into()));
    let s = Session::open_sized(&chrome, "#play", dirs, PHONE, |_| {}).await;
    s.start("connect4", "solver").await;
    s.click("#board [data-move='4']").await;
    s.wait_for(
        "!document.getElementById('stop').hidden && /^[0-9]+ s$/.test(document.getElementById('elapsed').textContent)",
        10,
    )
    .await;
    assert!(s.text("#status").await.contains("is thinking"));
    assert!(s.inside_viewport("#stop").await);
    s.click("#stop").await;
    s.wait_for(
        "!document.body.classList.contains('thinking') && document.querySelector('#analysis .stopped')",
        60,
    )
    .await;
    assert_eq!(s.text("#status").await, "Red to move");
    assert!(
        s.eval::<bool>("document.getElementById('stop').hidden")
            .await
    );
    let stopped = s.text("#analysis .stopped").await;
    assert!(stopped.starts_with("Stopped after"), "{stopped}");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_and_one_new_games_in_a_row_are_never_refused() {
    let Some(chrome) = chrome_or_skip() else {
        return;
    };
    // The server's cap is 100 live games: each New game ends the one it replaces.
    let s = Session::open_sized(&chrome, "#play", None, PHONE, |c| c.max_games = 100).await;
    s.start("tictactoe", "human").await;
    for k in 0..101 {
        let before = s.game_id().await;
        s.click("#again").await;
        s.wait_for(
            &format!(
                "(JSON.parse(sessionStorage.getItem('zero-game-play') || '{{}}') || {{}}).id !== '{before}' \
                 || !document.getElementById('message').hidden"
            ),
            10,
        )
        .await;
        let message = s.text("#message").await;
        assert!(
            s.eval::<bool>("document.getElementById('message').hidden")
                .await,
            "New game {k} refused: {message}"
        );
    }
    s.eval::<bool>(
        "(() => { fetch('/api/info').then(r => r.json()).then(j => { window.liveGames = j.live_games; }); return true; })()",
    )
    .await;
    s.wait_for("window.liveGames !== undefined", 10).await;
    assert!(s.eval::<usize>("window.liveGames").await <= 2);
    // A reload ends the game as the page goes and starts it again from its moves.
    s.click("#board [data-move='5']").await;
    s.wait_for(
        "document.getElementById('position-string').value === '5'",
        10,
    )
    .await;
    let before = s.game_id().await;
    s.page.reload().await.unwrap();
    s.wait_for(
        "document.querySelector('#board.tictactoe') && document.getElementById('position-string').value === '5'",
        20,
    )
    .await;
    assert_ne!(s.game_id().await, before);
    assert_eq!(s.stones().await, 1);
    s.close().await;
}
