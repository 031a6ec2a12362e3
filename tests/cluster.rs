//! The cycle on a Ray cluster (`scripts/zero-ray`) ends with the files of a local `zero cycle`
//! of the same seed, timing fields aside (compared by `scripts/chaos`), even when a node dies
//! during self-play. The cluster is two nodes on this machine (`scripts/ray-local-cluster`),
//! inside a network namespace of the test's own (`unshare -n` as root, `unshare -rn` in a user
//! namespace otherwise), so no traffic leaves loopback.
//!
//! Ray comes from `scripts/ray.sh` (installed once into the cache). Where neither form of
//! `unshare` is permitted (not root and no user namespaces), the tests fail, saying why;
//! `ZERO_SKIP_CLUSTER_TESTS=1` skips them (and nothing else does).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

const ZERO: &str = env!("CARGO_BIN_EXE_zero");
/// Longest a cluster run may take before the test stops it and fails, unless
/// [`RUN_LIMIT_ENV`] says otherwise: an idle 2-core machine runs one in under a minute, one
/// busy with other jobs has taken over 300 s.
const RUN_LIMIT: Duration = Duration::from_secs(300);
const RUN_LIMIT_ENV: &str = "ZERO_CLUSTER_TEST_LIMIT_S";

/// [`RUN_LIMIT`], or the seconds [`RUN_LIMIT_ENV`] gives.
fn run_limit() -> Duration {
    std::env::var(RUN_LIMIT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&s| s > 0)
        .map_or(RUN_LIMIT, Duration::from_secs)
}

/// One cluster at a time: both tests use the same ports (in their own namespaces) and the
/// machine's cores.
static CLUSTER: Mutex<()> = Mutex::new(());

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The variable that skips the cluster tests, when set to `1`.
const SKIP_ENV: &str = "ZERO_SKIP_CLUSTER_TESTS";

/// The `unshare` options that give the cluster a network namespace of its own here: `-n` as
/// root, `-rn` (a user namespace, mapped to root inside it, around the network one) for other
/// users where user namespaces are enabled; `None` when the tests are skipped
/// (`ZERO_SKIP_CLUSTER_TESTS=1`). Panics, saying how to skip, when neither form is permitted.
fn namespace_options() -> Option<&'static [&'static str]> {
    if std::env::var(SKIP_ENV).as_deref() == Ok("1") {
        eprintln!("warning: the cluster tests are skipped ({SKIP_ENV}=1)");
        return None;
    }
    let mut refusals = Vec::new();
    for options in [&["-n"][..], &["-rn"][..]] {
        let probe = Command::new("unshare")
            .args(options)
            .args(["--", "true"])
            .stderr(Stdio::piped())
            .output();
        match probe {
            Ok(out) if out.status.success() => return Some(options),
            Ok(out) => refusals.push(format!(
                "`unshare {}`: {}",
                options.join(" "),
                text(&out.stderr).trim()
            )),
            Err(e) => refusals.push(format!("no `unshare` here ({e})")),
        }
    }
    panic!(
        "the cluster tests need a network namespace of their own (`unshare -n` as root, or \
         `unshare -rn` where user namespaces are enabled), and neither is permitted here ({}); \
         set {SKIP_ENV}=1 to skip these tests",
        refusals.join("; ")
    );
}

/// The python of the project's Ray environment, installed by `scripts/ray.sh` if needed.
fn ray_python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let out = Command::new("bash")
            .arg("-c")
            .arg("source scripts/ray.sh >&2 && printf %s \"$ZERO_RAY_PYTHON\"")
            .current_dir(repo())
            .output()
            .expect("bash runs");
        assert!(
            out.status.success(),
            "scripts/ray.sh could not install Ray: {}",
            text(&out.stderr)
        );
        PathBuf::from(text(&out.stdout))
    })
}

/// The run's options, for `zero cycle` and the driver alike.
fn run_options(root: &Path) -> Vec<String> {
    let dir = |sub: &str| root.join(sub).to_string_lossy().into_owned();
    let options = [
        "--preset",
        "tiny",
        "--seed",
        "11",
        "--iterations",
        "2",
        "--json",
    ];
    let mut all: Vec<String> = options.map(String::from).to_vec();
    all.extend([
        "--models".into(),
        dir("models"),
        "--data".into(),
        dir("data"),
    ]);
    all
}

/// A local run of the same seed, made once for both tests.
fn reference() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new(ZERO)
            .arg("cycle")
            .args(run_options(dir.path()))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        dir
    })
    .path()
}

/// Stops the cluster (SIGTERM: `ray-local-cluster` kills its processes) if the run is left
/// behind by a failing test.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            // SAFETY: kill(2) on the pid of a child this test started and has not reaped.
            unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
            let _ = self.0.wait();
        }
    }
}

/// Runs the driver on a two-node cluster in a namespace of its own, the last node killed
/// when a process matching `kill_when` runs on it (the driver as `scripts/zero-ray` then, as
/// `zero cycle --cluster` otherwise); returns the output and the seconds taken.
fn cluster_run(root: &Path, namespace: &[&str], kill_when: Option<&str>) -> (Output, f64) {
    let python = ray_python();
    let bin = python.parent().expect("the environment's bin/");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new("unshare");
    cmd.args(namespace)
        .arg("--")
        .arg(python)
        .arg(repo().join("scripts/ray-local-cluster"))
        .args(["--nodes", "2", "--cpus", "1"]);
    if let Some(text) = kill_when {
        cmd.args(["--kill-node-when", text]);
    }
    cmd.arg("--")
        .arg(python)
        .arg(repo().join("scripts/zero-ray"))
        .args([
            "--address",
            "127.0.0.1:6379",
            "--node-ip-address",
            "127.0.0.1",
        ])
        .args(["--zero", ZERO])
        .args(run_options(root))
        .env("PATH", path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut running = Running(cmd.spawn().expect("unshare starts"));
    // Read both pipes on threads, so a chatty run never blocks on a full pipe.
    let mut stdout = running.0.stdout.take().expect("piped");
    let mut stderr = running.0.stderr.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut v).map(|_| v)
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut v).map(|_| v)
    });
    let limit = run_limit();
    let status = loop {
        if let Some(status) = running.0.try_wait().expect("wait works") {
            break status;
        }
        assert!(
            started.elapsed() < limit,
            "the cluster run took over {limit:?}; stopped (on a busy machine, set \
             {RUN_LIMIT_ENV} to allow more seconds)"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let output = Output {
        status,
        stdout: out.join().unwrap().unwrap_or_default(),
        stderr: err.join().unwrap().unwrap_or_default(),
    };
    (output, started.elapsed().as_secs_f64())
}

/// Asserts that the run in `root` left the reference's files.
fn assert_same_as_reference(root: &Path) {
    let out = Command::new(repo().join("scripts/chaos"))
        .arg("--compare")
        .arg(reference())
        .arg(root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// The cluster run in a temporary directory, checked against the reference.
fn check_cluster_run(kill_when: Option<&str>) {
    let Some(namespace) = namespace_options() else {
        return;
    };
    let _one_at_a_time = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    reference();
    let dir = tempfile::tempdir().unwrap();
    let (out, seconds) = cluster_run(dir.path(), namespace, kill_when);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "the cluster run failed:\n{stderr}");
    eprintln!("cluster run: {seconds:.1} s");
    if kill_when.is_some() {
        assert!(stderr.contains("killed the last node"), "{stderr}");
    }
    // Six stages, each recorded as a JSON line, as `zero cycle --json` prints them.
    assert_eq!(
        text(&out.stdout).lines().count(),
        6,
        "{}",
        text(&out.stdout)
    );
    assert_same_as_reference(dir.path());
}

#[test]
fn a_cycle_on_a_two_node_ray_cluster_ends_as_on_one_machine() {
    check_cluster_run(None);
}

#[test]
fn a_node_killed_during_self_play_changes_nothing_in_the_result() {
    check_cluster_run(Some("selfplay --iteration 1"));
}
