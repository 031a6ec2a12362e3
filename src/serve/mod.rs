//! `zero serve`: play and watch the games in a browser. The server is axum on tokio; the page
//! (HTML, CSS and JavaScript in [`assets`], compiled into the binary, nothing fetched from the
//! internet) speaks the JSON API of [`api`], which scripts can use too.
//!
//! - [`app`]: what every request shares; [`sessions`]: the live games, capped in number,
//!   expiring when idle.
//! - [`table`]: one game, its moves and its seats; [`views`]: how the API shows it. What the
//!   page needs of each game beyond that (title, board, sides, move names) is the game's
//!   facts in [`crate::catalog`], which `/api/info` hands over.
//! - [`engine`]: the players a request may name and how games share networks (one inference
//!   thread per model) and dear exact solvers, Connect Four's ([`solver_pool`]).
//! - [`perfect`]: the "perfect play" overlay, every move's exact result within a time bound;
//!   [`review`]: the solver's verdict on a whole game, as `zero review` gives it.
//! - [`game_routes`]: stopping a thinking engine, the board after any ply, the review.
//! - [`training`]: a run's figures from `zero report`, for the training page.
//! - [`inventory`]: the models and the opening book the server found, said at start.
//! - [`client`] and [`load`]: a small HTTP client and the load test of `zero bench serve`.
//!
//! Engine work never runs on the async threads: every search, solve or model load runs on a
//! blocking thread, so a slow engine holds up only its own game.

pub mod api;
pub mod app;
pub mod assets;
pub mod client;
pub mod config;
pub mod engine;
pub mod errors;
pub mod game_routes;
pub mod inventory;
pub mod load;
pub mod perfect;
pub mod rejections;
pub mod review;
pub mod sessions;
pub mod solver_pool;
pub mod table;
pub mod training;
pub mod views;

use std::future::{Future, IntoFuture};
use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};

use app::App;
pub use config::ServeConfig;

/// How long in-flight requests may still run after a stop is asked for.
const GRACE: Duration = Duration::from_secs(3);

/// Serves on `listener` until `stop` resolves; requests still running then get [`GRACE`] to
/// finish. Idle games are swept meanwhile.
pub async fn serve_until(
    listener: TcpListener,
    config: ServeConfig,
    stop: impl Future<Output = ()> + Send + 'static,
) -> Result<()> {
    let app = Arc::new(App::new(config));
    let sweeper = tokio::spawn(api::sweep_idle_games(app.clone()));
    let (stopping, stopped) = watch::channel(false);
    tokio::spawn(async move {
        stop.await;
        let _ = stopping.send(true);
    });
    let (mut graceful, mut grace) = (stopped.clone(), stopped);
    let serving = axum::serve(listener, api::router(app))
        .with_graceful_shutdown(async move {
            let _ = graceful.wait_for(|s| *s).await;
        })
        .into_future();
    let deadline = async move {
        let _ = grace.wait_for(|s| *s).await;
        tokio::time::sleep(GRACE).await;
    };
    let result = tokio::select! {
        served = serving => served.context("the server failed"),
        () = deadline => Ok(()),
    };
    sweeper.abort();
    result
}

/// A runtime for the server: worker threads for the async side (engines run on its blocking
/// threads).
fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(crate::core::threads::default_threads().clamp(2, 8))
        .thread_name("zero-serve")
        // Engines evaluate on the runtime's threads, each beside the others.
        .on_thread_start(crate::nn::use_caller_threads)
        .enable_all()
        .build()
        .context("cannot start the server's runtime")
}

/// Serves on `addr` until Ctrl-C; `ready` is told the address once it listens (port 0 picks
/// a free port).
pub fn run(config: ServeConfig, addr: SocketAddr, ready: impl FnOnce(SocketAddr)) -> Result<()> {
    let rt = runtime()?;
    let result = rt.block_on(async move {
        let listener = TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr}"))?;
        ready(listener.local_addr()?);
        let ctrl_c = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        serve_until(listener, config, ctrl_c).await
    });
    // Engines still thinking for a game are not waited for.
    rt.shutdown_timeout(Duration::from_secs(1));
    result
}

/// A server on a thread of its own, for tests and benchmarks; stops when dropped.
pub struct Server {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<Result<()>>>,
}

impl Server {
    /// Starts a server on `addr` (port 0: a free port) and waits until it listens.
    pub fn start(config: ServeConfig, addr: SocketAddr) -> Result<Server> {
        let (stop, stopped) = oneshot::channel::<()>();
        let (ready, listening) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let rt = runtime()?;
            let result = rt.block_on(async move {
                let listener = TcpListener::bind(addr).await;
                let listener = match listener {
                    Ok(l) => l,
                    Err(e) => {
                        let _ = ready.send(Err(anyhow!("cannot listen on {addr}: {e}")));
                        return Ok(());
                    }
                };
                let _ = ready.send(listener.local_addr().map_err(anyhow::Error::from));
                serve_until(listener, config, async move {
                    let _ = stopped.await;
                })
                .await
            });
            rt.shutdown_timeout(Duration::from_secs(1));
            result
        });
        let addr = listening
            .recv()
            .map_err(|_| anyhow!("the server thread ended before listening"))??;
        Ok(Server {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Stops the server and waits for it.
    pub fn stop(mut self) -> Result<()> {
        self.shut()
    }

    fn shut(&mut self) -> Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.thread.take() {
            Some(t) => t
                .join()
                .map_err(|_| anyhow!("the server thread panicked"))?,
            None => Ok(()),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.shut();
    }
}

/// The resident memory of this process in KiB (Linux), for the load test's figures.
pub fn resident_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
