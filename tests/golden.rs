//! Behaviour pinned to a released tree: a run directory written by commit d6edf29 (the tiny
//! Connect Four preset, one iteration: `run.json`, `state.json`, metrics, two chunks, `best`,
//! `latest` and the training checkpoint) resumes with today's code and ends as d6edf29 ended
//! it; and seeded, shrunk cycles of the presets (scripts/golden-cycles) leave the same
//! networks and metrics as d6edf29's did.
//!
//! Floating-point results are the same bytes only where libtorch runs the same kernels on the
//! same thread count, so the digests are recorded per machine: a fingerprint of a few kernels'
//! results and the core count name it. A machine with no digests recorded fails here, saying
//! how to record them (build d6edf29, run scripts/golden-cycles with it), unless
//! `ZERO_GOLDEN_UNRECORDED=run` asks to run the same resume and cycles without comparing their
//! digests (CI does, since its machines vary), which is then said on stderr.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use tch::{Kind, Tensor};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn golden_dir() -> PathBuf {
    root().join("tests/data/golden")
}

/// FNV-1a over bytes: enough to tell two kernels' results apart.
fn fnv(bytes: &[u8], mut hash: u64) -> u64 {
    for &b in bytes {
        hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

fn tensor_bytes(t: &Tensor) -> Vec<u8> {
    let t = t.to_kind(Kind::Float).contiguous();
    let v: Vec<f32> = Vec::try_from(t.flatten(0, -1)).expect("a float tensor");
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Numbers in [-1, 1] that any machine computes alike: a fixed formula, no generator.
fn fixed_numbers(n: usize, salt: f64) -> Vec<f32> {
    (0..n)
        .map(|i| ((i as f64 * 0.7 + salt).sin()) as f32)
        .collect()
}

/// What names this machine's arithmetic: the results of a 32-bit and a bfloat16 convolution
/// (the network's bulk), with their gradients, on fixed data, and the number of cores.
fn machine_key() -> String {
    let x = Tensor::from_slice(&fixed_numbers(8 * 3 * 6 * 7, 0.1)).view([8, 3, 6, 7]);
    let w = Tensor::from_slice(&fixed_numbers(16 * 3 * 3 * 3, 0.2))
        .view([16, 3, 3, 3])
        .set_requires_grad(true);
    let y = x.conv2d(&w, None::<Tensor>, [1, 1], [1, 1], [1, 1], 1);
    let loss = y.relu().square().mean(Kind::Float);
    loss.backward();
    let mut hash = fnv(&tensor_bytes(&y), 0xcbf2_9ce4_8422_2325);
    hash = fnv(&tensor_bytes(&w.grad()), hash);
    let (xb, wb) = (
        x.to_kind(Kind::BFloat16),
        w.detach().to_kind(Kind::BFloat16),
    );
    let yb = xb.conv2d(&wb, None::<Tensor>, [1, 1], [1, 1], [1, 1], 1);
    hash = fnv(&tensor_bytes(&yb), hash);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{hash:016x}-{cores}cores")
}

/// The digests recorded for this machine; `None` where none are and
/// `ZERO_GOLDEN_UNRECORDED=run` asks to run without comparing; else a failure that says how to
/// record them.
fn recorded() -> Option<Value> {
    let path = golden_dir().join("digests.json");
    let text = std::fs::read_to_string(&path).expect("tests/data/golden/digests.json");
    let all: Value = serde_json::from_str(&text).expect("digests.json is JSON");
    let key = machine_key();
    match all["machines"].get(&key) {
        Some(digests) => Some(digests.clone()),
        None if std::env::var("ZERO_GOLDEN_UNRECORDED").as_deref() == Ok("run") => {
            eprintln!(
                "NOTE: no golden digests recorded for this machine ({key}): the runs are made \
                 and checked to finish, their digests NOT compared with d6edf29's"
            );
            None
        }
        None => panic!(
            "no golden digests recorded for this machine ({key}): build commit d6edf29 and \
             add its `scripts/golden-cycles ZERO_BINARY` output, and the digests of the \
             resumed run below, to tests/data/golden/digests.json under that key"
        ),
    }
}

/// A model file's digest as scripts/golden-cycles takes it: its tensors and description, less
/// the run settings it carries (settings since removed are no longer listed there).
fn model_digest(path: &Path) -> String {
    let out = Command::new(root().join("scripts/golden-cycles"))
        .arg("--digest")
        .arg(path)
        .output()
        .expect("scripts/golden-cycles runs");
    assert!(out.status.success(), "digest of {}", path.display());
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create directory");
    for entry in std::fs::read_dir(from).expect("read directory") {
        let entry = entry.expect("directory entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy file");
        }
    }
}

#[test]
fn a_run_written_by_d6edf29_resumes_and_ends_as_d6edf29_ended_it() {
    let expected = recorded();
    let dir = tempfile::tempdir().expect("temporary directory");
    copy_tree(&golden_dir().join("d6edf29-connect4-tiny"), dir.path());
    let (models, data) = (dir.path().join("models"), dir.path().join("data"));
    let out = Command::new(env!("CARGO_BIN_EXE_zero"))
        .args([
            "cycle",
            "--game",
            "connect4",
            "--iterations",
            "2",
            "--models",
        ])
        .arg(&models)
        .arg("--data")
        .arg(&data)
        .output()
        .expect("zero runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the old run did not resume: {stderr}");
    let run = models.join("connect4");
    let metrics = std::fs::read_to_string(run.join("metrics.jsonl")).expect("metrics");
    assert_eq!(metrics.lines().count(), 6, "two iterations of three stages");
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("state.json")).expect("state"))
            .expect("state.json is JSON");
    assert_eq!(state["iteration"], 3);
    let (best, latest) = (
        model_digest(&run.join("best.safetensors")),
        model_digest(&run.join("latest.safetensors")),
    );
    if let Some(expected) = expected {
        assert_eq!(best, expected["resumed"]["best"]);
        assert_eq!(latest, expected["resumed"]["latest"]);
    }
}

/// The shrunk cycles this test runs: every preset's decisions on a CPU (the gpu presets'
/// networks train too slowly here to be a test; scripts/golden-cycles runs them by hand).
const CYCLES: [&str; 8] = [
    "tiny-connect4",
    "tiny-tictactoe",
    "tiny-othello4",
    "cpu-connect4",
    "cpu-connect4-puct",
    "cpu-tictactoe",
    "cpu-othello4",
    "long-connect4",
];

#[test]
fn seeded_shrunk_cycles_of_the_presets_leave_d6edf29s_networks_and_metrics() {
    let expected = recorded();
    let mut mismatches = BTreeMap::new();
    for name in CYCLES {
        let out = Command::new(root().join("scripts/golden-cycles"))
            .arg(env!("CARGO_BIN_EXE_zero"))
            .args(["--only", name])
            .output()
            .expect("scripts/golden-cycles runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {stderr}");
        let got: Value = serde_json::from_slice(&out.stdout).expect("digests as JSON");
        assert!(got[name].is_object(), "{name}: no digests in {got}");
        let Some(expected) = &expected else { continue };
        if got[name] != expected["cycles"][name] {
            mismatches.insert(name, (got[name].clone(), expected["cycles"][name].clone()));
        }
    }
    assert!(
        mismatches.is_empty(),
        "cycles that differ from d6edf29's (got, recorded): {mismatches:#?}"
    );
}
