//! Reliability of a run as a user's machine treats it: killed at random moments, started
//! twice on one directory, out of disk space. Each ends with the same files as an
//! uninterrupted run of the same seed (timing fields aside), compared by `scripts/chaos`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use zero::core::lock::DirLock;

const ZERO: &str = env!("CARGO_BIN_EXE_zero");

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The tiny two-iteration Connect Four cycle every test here runs, in `root`.
fn cycle_args(root: &Path) -> Vec<String> {
    let dir = |sub: &str| root.join(sub).to_string_lossy().into_owned();
    [
        "cycle",
        "--preset",
        "tiny",
        "--seed",
        "11",
        "--iterations",
        "2",
        "--json",
        "--models",
        &dir("models"),
        "--data",
        &dir("data"),
    ]
    .map(String::from)
    .to_vec()
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("the command runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// An uninterrupted run, made once for all tests of this file.
fn reference() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let out = run(Command::new(ZERO).args(cycle_args(dir.path())));
        assert!(out.status.success(), "{}", text(&out.stderr));
        dir
    })
    .path()
}

/// Asserts that the run in `root` left the reference's files.
fn assert_same_as_reference(root: &Path) {
    let out = run(Command::new(repo().join("scripts/chaos"))
        .arg("--compare")
        .arg(reference())
        .arg(root));
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

#[test]
fn a_run_killed_at_random_moments_ends_as_an_uninterrupted_one() {
    let work = tempfile::tempdir().unwrap();
    let out = run(Command::new(repo().join("scripts/chaos"))
        .args(["--zero", ZERO, "--preset", "tiny", "--iterations", "2"])
        .args(["--kills", "4", "--seed", "5", "--json", "--workdir"])
        .arg(work.path()));
    let summary = text(&out.stdout);
    assert!(out.status.success(), "{summary}{}", text(&out.stderr));
    let summary: serde_json::Value = serde_json::from_str(&summary).unwrap();
    assert_eq!(summary["identical"], true);
    assert!(summary["kills"].as_u64().unwrap() >= 1, "{summary}");
    eprintln!("chaos: {summary}");
}

#[test]
fn a_second_process_on_a_run_is_refused_and_a_dead_ones_lock_taken_over() {
    let work = tempfile::tempdir().unwrap();
    let models = work.path().join("models").join("connect4");
    let held = DirLock::acquire(&models, "test").unwrap();
    let out = run(Command::new(ZERO).args(cycle_args(work.path())));
    let err = text(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains(&format!("in use by process {}", std::process::id())),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    // Nothing was written by the refused process.
    assert!(!models.join("run.json").exists());
    drop(held);

    // A lock file left by a process that died: taken over, with a note.
    std::fs::write(models.join("run.lock"), "4000000\n").unwrap();
    let out = run(Command::new(ZERO).args(cycle_args(work.path())));
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("process 4000000 stopped"), "{err}");
    assert_same_as_reference(work.path());
}

/// A lock file of `dir`, locked by this process on a descriptor its children inherit.
fn inheritable_lock(dir: &Path) -> std::fs::File {
    use std::os::fd::AsRawFd;
    std::fs::create_dir_all(dir).unwrap();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(dir.join("run.lock"))
        .unwrap();
    let fd = file.as_raw_fd();
    // SAFETY: flock and fcntl on a descriptor the file owns; they touch no memory.
    unsafe {
        assert_eq!(libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB), 0);
        assert_eq!(libc::fcntl(fd, libc::F_SETFD, 0), 0);
    }
    file
}

#[test]
fn a_driver_hands_its_lock_to_the_zero_it_starts_and_to_no_other() {
    use std::os::fd::AsRawFd;
    let work = tempfile::tempdir().unwrap();
    let locks = [
        inheritable_lock(&work.path().join("models/connect4")),
        inheritable_lock(&work.path().join("data/connect4")),
    ];
    let fds = locks.iter().map(|f| f.as_raw_fd().to_string());
    let held = fds.collect::<Vec<_>>().join(",");
    let mut args = cycle_args(work.path());
    let at = args.iter().position(|a| a == "--iterations").unwrap() + 1;
    args[at] = "0".into();
    // Without the descriptors' names, the run is another process's.
    let out = run(Command::new(ZERO).args(&args));
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("in use by"),
        "{}",
        text(&out.stderr)
    );
    // Named, with descriptors of other files or none, still not.
    let out = run(Command::new(ZERO)
        .args(&args)
        .env("ZERO_HELD_LOCKS", "0,1,2,999"));
    assert!(!out.status.success());
    // The holder's own descriptors: the child works on the run under its parent's lock.
    let out = run(Command::new(ZERO).args(&args).env("ZERO_HELD_LOCKS", &held));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(work.path().join("models/connect4/run.json").exists());
    // And the lock is still held, by this process: another process is still refused.
    let out = run(Command::new(ZERO).args(&args));
    assert!(!out.status.success());
    drop(locks);
}

/// The tiny cycle, to `iterations`, as a shell command for files under `root`.
fn cycle_command(root: &Path, iterations: u32) -> String {
    let mut args = cycle_args(root);
    let at = args.iter().position(|a| a == "--iterations").unwrap() + 1;
    args[at] = iterations.to_string();
    // Double quotes: `$M` in a path is the shell's to expand.
    let args: Vec<String> = args.iter().map(|a| format!("\"{a}\"")).collect();
    format!("\"{ZERO}\" {}", args.join(" "))
}

/// Mounts a tmpfs of `kib` KiB (in a mount namespace of its own, so nothing outlives the
/// test), runs `script` there (`$M`: the mount point), then copies what the run left to
/// `out`; returns the script's output and exit status.
fn on_small_disk(kib: u32, out: &Path, script: &str) -> Output {
    let mnt = tempfile::tempdir().unwrap();
    let whole = format!(
        "M='{m}'; mount -t tmpfs -o size={kib}k tmpfs \"$M\" || exit 99; {script}; code=$?; \
         cp -a \"$M/.\" '{o}/' && exit $code",
        m = mnt.path().display(),
        o = out.display(),
    );
    let output = run(Command::new("unshare").args(["-m", "sh", "-c", &whole]));
    assert_ne!(output.status.code(), Some(99), "{}", text(&output.stderr));
    output
}

/// Asserts that a run failed with `expected` in its message, not a panic, and that the files
/// it left in `work` carry the run on, with room and rights, to the reference's end.
fn assert_clear_failure_and_intact(output: &Output, expected: &str, work: &Path, case: &str) {
    let err = text(&output.stderr);
    assert!(!output.status.success(), "{case}: the run should fail");
    assert!(err.contains(expected), "{case}: {err}");
    assert!(!err.contains("panicked"), "{case}: {err}");
    let resumed = run(Command::new(ZERO).args(cycle_args(work)));
    assert!(
        resumed.status.success(),
        "{case}: {}",
        text(&resumed.stderr)
    );
    assert_same_as_reference(work);
}

fn mount_namespaces_work() -> bool {
    let ok = Command::new("unshare")
        .args(["-m", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok && std::env::var("ZERO_SKIP_MOUNT_TESTS").as_deref() != Ok("1") {
        panic!(
            "this test mounts a small tmpfs in a mount namespace of its own (`unshare -m`, as \
             root); set ZERO_SKIP_MOUNT_TESTS=1 to skip it where that is not allowed"
        );
    }
    ok
}

#[test]
fn a_full_disk_is_a_clear_error_that_leaves_every_file_intact() {
    if !mount_namespaces_work() {
        return;
    }
    // Sizes that run out during different stages: the first save of the networks, the
    // training checkpoint, the second iteration.
    for kib in [60, 200, 330] {
        let work = tempfile::tempdir().unwrap();
        let output = on_small_disk(kib, work.path(), &cycle_command(Path::new("$M"), 2));
        let case = format!("{kib} KiB");
        assert_clear_failure_and_intact(&output, "No space left on device", work.path(), &case);
    }
}

#[test]
fn a_read_only_directory_is_a_clear_error_that_leaves_every_file_intact() {
    if !mount_namespaces_work() {
        return;
    }
    // Iteration 2's self-play directory turns read-only: the run fails in the middle of a
    // stage, when it writes its first chunk of games.
    let work = tempfile::tempdir().unwrap();
    let iter2 = "\"$M/data/connect4/iter-0002\"";
    let script = format!(
        "{first} || exit 98; mkdir -p {iter2} && mount --bind {iter2} {iter2} && \
         mount -o remount,bind,ro {iter2} || exit 97; {second}",
        first = cycle_command(Path::new("$M"), 1),
        second = cycle_command(Path::new("$M"), 2),
    );
    let output = on_small_disk(4096, work.path(), &script);
    let code = output.status.code();
    assert!(
        code != Some(98) && code != Some(97),
        "{}",
        text(&output.stderr)
    );
    assert_clear_failure_and_intact(&output, "Read-only file system", work.path(), "read-only");
}
