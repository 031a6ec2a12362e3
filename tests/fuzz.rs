//! Fuzzing: every parser and file reader of `zero` under random and mutated input, on stable
//! Rust with `proptest` (see docs/fuzzing.md).
//!
//! One test a reader, `fuzz_<target>`. Each case feeds the reader an input that is either
//! arbitrary (bytes, strings, or strings of the format's own tokens) or a valid encoding
//! mutated: bits flipped, bytes set, spans inserted, removed, repeated or cut off, numbers of
//! interesting sizes written over the bytes (length fields) or inserted as postcard varints,
//! tokens of the format inserted; for the checked binary files also with the mutated payload
//! sealed again under a valid header, so that the decoder behind the checksum is reached. Each
//! case also round-trips a random valid value through its encoding. Every case checks:
//! - no panic: proptest catches it and shrinks the input to a small one;
//! - no hang: a watchdog aborts the run, printing the target and the input, when one case
//!   takes more than `ZERO_FUZZ_HANG_SECS` (default 20) seconds;
//! - no giant allocation: this test binary's global allocator records the largest single
//!   allocation of each case, which fails the case above 64 MiB (the inputs are a few KiB); a
//!   request above 1 GiB is refused outright (an allocation failure) rather than granted;
//! - a clear error for bad input: the message names the file or the input (and, for the
//!   checked binary files, ends with what to do);
//! - what a reader accepts is something its writer could have written: it encodes and reads
//!   back to the same value, and satisfies the invariants the reader promises;
//! - valid encodings round-trip.
//!
//! Each target also asserts how deep its inputs got: at least a given share of its cases were
//! accepted by the reader (and, for the checked binary files, got past the container's header,
//! length and checksum to the decoder), so that a change of format that makes every mutated
//! input fail at the first check cannot leave the target green while it tests nothing.
//!
//! Cases per target: `ZERO_FUZZ_CASES` (default 5000, at least 1); seed: `ZERO_FUZZ_SEED`
//! (default a random one, printed with each target's summary line and with a failure, which
//! also says how to rerun it with that seed). The run by hand, a million cases a target, one at
//! a time:
//!
//! ```text
//! ZERO_FUZZ_CASES=1000000 cargo test --release --test fuzz -- --test-threads=1 --nocapture
//! ```

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::sample::{select, Index};
use proptest::strategy::ValueTree;
use proptest::test_runner::{TestCaseResult, TestRunner};

use zero::alphazero::config::{
    EvalConfig, ForkMove, GradeConfig, LearningRateDrop, NetConfig, PlayoutCap, Research,
    RunConfig, SelfPlayConfig, TrainConfig,
};
use zero::alphazero::run::metrics::{
    parse_metrics, EvaluateRecord, SelfPlayRecord, StageRecord, TrainRecord,
};
use zero::alphazero::run::state::{RunState, Stage};
use zero::alphazero::selfplay::records::{decode_chunk, encode_chunk, GameRecord};
use zero::alphazero::selfplay::stats::GameResults;
use zero::arena::grading::{EvalSet, GradeResult, GroupResult};
use zero::arena::MatchResult;
use zero::catalog::Catalogued;
use zero::core::files::{parse_json, Format, STREAM_HEADER_BYTES};
use zero::games::blackjack::{Action, STATES};
use zero::games::{Connect4, Game, GameError, GameKind, Move, Othello4, Tally, TicTacToe};
use zero::nn::tensors::{from_safetensors_bytes, to_safetensors_bytes};
use zero::nn::{Arch, Net, Precision, Shape};
use zero::players::PlayerSpec;
use zero::search::mcts::{MctsConfig, SearchKind};
use zero::solvers::connect4::{parse_labelled_positions, MAX_SCORE, MIN_SCORE};
use zero::solvers::connect4_book::{Book, Cache};
use zero::tabular::mces::{Mces, MCES};
use zero::tabular::qtable::{QTable, QTABLE};

use harness::{run, Bytes, Depth, Text};

// ---------------------------------------------------------------------------------------------
// The harness: the guarded allocator, the watchdog, the runner, and the mutations.
// ---------------------------------------------------------------------------------------------

mod harness {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;
    use std::fmt::Debug;
    use std::sync::{Mutex, Once};
    use std::thread::ThreadId;
    use std::time::{Duration, Instant};

    use proptest::prelude::*;
    use proptest::sample::{select, Index};
    use proptest::test_runner::{Config, RngSeed, TestCaseResult, TestRunner};

    /// The largest single allocation a case may make.
    pub const ALLOCATION_LIMIT: usize = 64 << 20;
    /// Larger requests are refused (the allocation fails), so that a reader asking for one is
    /// found without the machine running out of memory.
    const REFUSED_ABOVE: usize = 1 << 30;

    thread_local! {
        /// The largest allocation requested on this thread since the last reset.
        static LARGEST: Cell<usize> = const { Cell::new(0) };
        /// Cases of this thread's target whose fuzzed input the reader accepted.
        static ACCEPTED: Cell<u64> = const { Cell::new(0) };
    }

    thread_local! {
        /// Cases of this thread's target whose input got past a checked file's container
        /// (header, length and checksum) to the decoder behind it.
        static DECODED: Cell<u64> = const { Cell::new(0) };
    }

    /// Counts a case whose fuzzed input the reader accepted (reported with the run, to show
    /// how deep the inputs get, and held to the target's [`Depth`]).
    pub fn accepted() {
        ACCEPTED.with(|a| a.set(a.get() + 1));
    }

    /// Counts a case whose input got past a checked file's container to its decoder.
    pub fn decoded() {
        DECODED.with(|a| a.set(a.get() + 1));
    }

    /// How deep a target's inputs must get, as shares of its cases: accepted by the reader,
    /// and past a checked file's container to the decoder. The shares are a fraction of what
    /// the mutations reach (rounded down, so a run of a few cases asserts little); a format
    /// change that stops every mutated input at its first check fails them.
    #[derive(Clone, Copy, Debug)]
    pub struct Depth {
        pub accepted: f64,
        pub decoded: f64,
    }

    impl Depth {
        /// At least `share` of the cases accepted.
        pub const fn accepted(share: f64) -> Depth {
            Depth {
                accepted: share,
                decoded: 0.0,
            }
        }
        /// Also at least `share` of the cases past the container, to the decoder.
        pub const fn decoded(self, share: f64) -> Depth {
            Depth {
                decoded: share,
                ..self
            }
        }
    }

    /// The system allocator, recording the largest request of each thread.
    struct Guarded;

    fn note(size: usize) -> bool {
        let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
        if size > REFUSED_ABOVE {
            report_refusal(size);
            return false;
        }
        true
    }

    /// Says which target asked for a refused allocation, and on what input: the process then
    /// aborts (an allocation failure), so this is the only place the input is seen.
    fn report_refusal(size: usize) {
        thread_local! {
            static REPORTING: Cell<bool> = const { Cell::new(false) };
        }
        if REPORTING.with(|r| r.replace(true)) {
            return;
        }
        let me = std::thread::current().id();
        if let Ok(running) = RUNNING.try_lock() {
            for (_, _, target, input) in running.iter().filter(|e| e.0 == me) {
                eprintln!(
                    "GIANT ALLOCATION: {target}: {size} bytes requested on input {input:?} \
                     (ZERO_FUZZ_SEED={})",
                    seed()
                );
            }
        }
        REPORTING.with(|r| r.set(false));
    }

    // SAFETY: every call is passed to the system allocator unchanged, or refused (null).
    unsafe impl GlobalAlloc for Guarded {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            if note(layout.size()) {
                System.alloc(layout)
            } else {
                std::ptr::null_mut()
            }
        }
        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            if note(layout.size()) {
                System.alloc_zeroed(layout)
            } else {
                std::ptr::null_mut()
            }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            System.dealloc(ptr, layout)
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            if note(new_size) {
                System.realloc(ptr, layout, new_size)
            } else {
                std::ptr::null_mut()
            }
        }
    }

    #[global_allocator]
    static GLOBAL: Guarded = Guarded;

    fn env<T: std::str::FromStr>(name: &str) -> Option<T> {
        std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
    }

    /// The number `name` gives, if set; a value that is not a number is refused, not ignored.
    fn number_env<T: std::str::FromStr>(name: &str) -> Option<T> {
        let v = std::env::var(name).ok()?;
        Some(
            v.trim()
                .parse()
                .unwrap_or_else(|_| panic!("{name}={v:?} is not a number")),
        )
    }

    /// Cases per target: `ZERO_FUZZ_CASES`, a few thousand by default; 0 is refused (every
    /// target would pass without running a case).
    pub fn cases() -> u32 {
        let cases = number_env("ZERO_FUZZ_CASES").unwrap_or(5000);
        assert!(
            cases >= 1,
            "ZERO_FUZZ_CASES=0 would run no case at all: give at least 1"
        );
        cases
    }

    /// The seed of every target's runner: `ZERO_FUZZ_SEED`, or one drawn once for the run
    /// (printed with each target, so that any run can be repeated).
    pub fn seed() -> u64 {
        static SEED: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
        *SEED.get_or_init(|| {
            number_env("ZERO_FUZZ_SEED").unwrap_or_else(|| {
                use std::hash::{BuildHasher, Hasher};
                std::collections::hash_map::RandomState::new()
                    .build_hasher()
                    .finish()
            })
        })
    }

    /// The case each thread runs now, for the watchdog: when it started, its target, its input.
    type Running = (ThreadId, Instant, &'static str, Box<dyn Debug + Send>);
    static RUNNING: Mutex<Vec<Running>> = Mutex::new(Vec::new());

    fn running() -> std::sync::MutexGuard<'static, Vec<Running>> {
        RUNNING.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts (once) the thread that aborts the process, naming the target and the input,
    /// when a case runs longer than `ZERO_FUZZ_HANG_SECS`.
    fn start_watchdog() {
        static START: Once = Once::new();
        START.call_once(|| {
            let limit = Duration::from_secs_f64(env("ZERO_FUZZ_HANG_SECS").unwrap_or(20.0));
            std::thread::spawn(move || loop {
                std::thread::sleep(Duration::from_millis(200));
                for (_, since, target, input) in running().iter() {
                    if since.elapsed() > limit {
                        eprintln!(
                            "HANG: {target}: one case has run for {:.1} s on input {input:?} \
                             (ZERO_FUZZ_SEED={})",
                            since.elapsed().as_secs_f64(),
                            seed()
                        );
                        std::process::abort();
                    }
                }
            });
        });
    }

    /// Registers this thread's case with the watchdog while alive.
    struct Watched;

    impl Watched {
        fn new(target: &'static str, input: Box<dyn Debug + Send>) -> Watched {
            let me = std::thread::current().id();
            let mut r = running();
            r.retain(|e| e.0 != me);
            r.push((me, Instant::now(), target, input));
            Watched
        }
    }

    impl Drop for Watched {
        fn drop(&mut self) {
            let me = std::thread::current().id();
            running().retain(|e| e.0 != me);
        }
    }

    /// Runs `cases()` cases of `test` on inputs of `strategy` (plus proptest's shrinking of a
    /// failure), each watched for hangs and giant allocations; prints what it did, and fails
    /// unless the inputs got as deep as `depth` asks.
    pub fn run<S>(target: &'static str, strategy: S, test: impl Fn(S::Value) -> TestCaseResult)
    where
        S: Strategy,
        S::Value: Clone + Debug + Send + 'static,
    {
        let depth = super::depth(target);
        start_watchdog();
        let (cases, seed) = (cases(), seed());
        let config = Config {
            cases,
            failure_persistence: None,
            rng_seed: RngSeed::Fixed(seed),
            max_shrink_iters: 10_000,
            ..Config::default()
        };
        let mut runner = TestRunner::new(config);
        ACCEPTED.with(|a| a.set(0));
        DECODED.with(|a| a.set(0));
        let started = Instant::now();
        let (count, slowest, largest) = (Cell::new(0u64), Cell::new(Duration::ZERO), Cell::new(0));
        let result = runner.run(&strategy, |input| {
            let _watched = Watched::new(target, Box::new(input.clone()));
            LARGEST.with(|l| l.set(0));
            let t = Instant::now();
            let outcome = test(input);
            slowest.set(slowest.get().max(t.elapsed()));
            let allocated = LARGEST.with(|l| l.get());
            largest.set(largest.get().max(allocated));
            count.set(count.get() + 1);
            outcome?;
            prop_assert!(
                allocated <= ALLOCATION_LIMIT,
                "a single allocation of {allocated} bytes"
            );
            Ok(())
        });
        let (accepted, decoded) = (ACCEPTED.with(|a| a.get()), DECODED.with(|a| a.get()));
        eprintln!(
            "fuzz {target}: {} cases ({accepted} inputs accepted, {decoded} past a checked \
             header) in {:.1} s, slowest {:.2} ms, largest allocation {} KiB, seed {seed}: {}",
            count.get(),
            started.elapsed().as_secs_f64(),
            slowest.get().as_secs_f64() * 1e3,
            largest.get() >> 10,
            if result.is_ok() { "ok" } else { "FAILED" }
        );
        let rerun = format!(
            "rerun it with ZERO_FUZZ_SEED={seed} ZERO_FUZZ_CASES={cases} cargo test --release \
             --test fuzz {} -- --exact",
            std::thread::current().name().unwrap_or_default()
        );
        if let Err(e) = result {
            panic!("fuzz {target}: {e}\n{rerun}");
        }
        assert!(
            count.get() >= u64::from(cases),
            "fuzz {target}: ran {} cases of {cases}; {rerun}",
            count.get()
        );
        // Rounded down (a run of a few cases asks little), with room for the share's rounding.
        let least = |share: f64| (share * f64::from(cases) + 1e-6) as u64;
        assert!(
            decoded >= least(depth.decoded),
            "fuzz {target}: only {decoded} of {cases} fuzzed inputs got past the checked \
             header to the decoder, fewer than the {} expected (has the header's layout \
             changed?); {rerun}",
            least(depth.decoded)
        );
        assert!(
            accepted >= least(depth.accepted),
            "fuzz {target}: only {accepted} of {cases} fuzzed inputs were accepted, fewer than \
             the {} expected: the mutations no longer reach what the reader accepts (has the \
             format changed under the seeds?); {rerun}",
            least(depth.accepted)
        );
    }

    /// Bytes, shown escaped (as a byte string literal) when a case fails.
    #[derive(Clone, PartialEq, Eq)]
    pub struct Bytes(pub Vec<u8>);

    impl Debug for Bytes {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "b\"{}\" ({} bytes)", self.0.escape_ascii(), self.0.len())
        }
    }

    /// A text input.
    #[derive(Clone, PartialEq, Eq)]
    pub struct Text(pub String);

    impl Debug for Text {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "{:?} ({} bytes)", self.0, self.0.len())
        }
    }

    /// Numbers that break length and count fields.
    const INTERESTING: [u64; 22] = [
        0,
        1,
        2,
        3,
        7,
        8,
        0x7f,
        0x80,
        0xff,
        0x100,
        0x7fff,
        0xffff,
        0x1_0000,
        0x7fff_ffff,
        0xffff_ffff,
        0x1_0000_0000,
        1 << 40,
        1 << 48,
        1 << 56,
        i64::MAX as u64,
        1 << 63,
        u64::MAX,
    ];

    /// A number of interesting size (for length and count fields), or any.
    pub fn number() -> impl Strategy<Value = u64> {
        prop_oneof![
            3 => select(&INTERESTING[..]),
            1 => any::<u64>(),
            1 => 0u64..1000,
        ]
    }

    /// One change to an input.
    #[derive(Clone, Debug)]
    pub enum Edit {
        Flip(Index, u8),
        Set(Index, u8),
        Insert(Index, Vec<u8>),
        Remove(Index, u8),
        Truncate(Index),
        Repeat(Index, u8, u8),
        /// The `width` low bytes of the number, little-endian, over the input.
        Number(Index, u64, u8),
        /// A postcard (LEB128) varint of the number, inserted.
        Varint(Index, u64),
        /// A token of the format, inserted or written over the input.
        Token(Index, Index, bool),
    }

    fn edit(tokens: &'static [&'static str]) -> impl Strategy<Value = Edit> {
        let at = any::<Index>;
        prop_oneof![
            3 => (at(), 0u8..8).prop_map(|(i, b)| Edit::Flip(i, b)),
            2 => (at(), any::<u8>()).prop_map(|(i, b)| Edit::Set(i, b)),
            1 => (at(), prop::collection::vec(any::<u8>(), 1..16))
                .prop_map(|(i, b)| Edit::Insert(i, b)),
            2 => (at(), 1u8..32).prop_map(|(i, n)| Edit::Remove(i, n)),
            1 => at().prop_map(Edit::Truncate),
            1 => (at(), 1u8..32, 1u8..4).prop_map(|(i, n, k)| Edit::Repeat(i, n, k)),
            3 => (at(), number(), select(&[1u8, 2, 4, 8][..]))
                .prop_map(|(i, x, w)| Edit::Number(i, x, w)),
            2 => (at(), number()).prop_map(|(i, x)| Edit::Varint(i, x)),
            3 => (at(), at(), any::<bool>()).prop_map(|(i, t, o)| Edit::Token(i, t, o)),
        ]
        .prop_map(move |e| match e {
            // A format without tokens gets a flipped bit instead.
            Edit::Token(i, _, _) if tokens.is_empty() => Edit::Flip(i, 0),
            e => e,
        })
    }

    fn varint(mut x: u64) -> Vec<u8> {
        let mut out = Vec::new();
        loop {
            let byte = (x & 0x7f) as u8;
            x >>= 7;
            if x == 0 {
                out.push(byte);
                return out;
            }
            out.push(byte | 0x80);
        }
    }

    /// `bytes` with `edits` applied in turn.
    pub fn apply(mut bytes: Vec<u8>, edits: &[Edit], tokens: &[&str]) -> Vec<u8> {
        for e in edits {
            let len = bytes.len();
            // A position inside the input (none if it is empty), and a place between bytes.
            let inside = |i: &Index| (len > 0).then(|| i.index(len));
            let between = |i: &Index| i.index(len + 1);
            match e {
                Edit::Flip(i, b) => {
                    if let Some(at) = inside(i) {
                        bytes[at] ^= 1 << b;
                    }
                }
                Edit::Set(i, v) => {
                    if let Some(at) = inside(i) {
                        bytes[at] = *v;
                    }
                }
                Edit::Insert(i, v) => {
                    let at = between(i);
                    bytes.splice(at..at, v.iter().copied());
                }
                Edit::Remove(i, n) => {
                    if let Some(at) = inside(i) {
                        bytes.drain(at..(at + *n as usize).min(len));
                    }
                }
                Edit::Truncate(i) => bytes.truncate(i.index(len + 1)),
                Edit::Repeat(i, n, k) => {
                    if let Some(at) = inside(i) {
                        let span = bytes[at..(at + *n as usize).min(len)].to_vec();
                        for _ in 0..*k {
                            bytes.splice(at..at, span.iter().copied());
                        }
                    }
                }
                Edit::Number(i, x, w) => {
                    let le = x.to_le_bytes();
                    let at = between(i);
                    for (k, &b) in le[..*w as usize].iter().enumerate() {
                        match bytes.get_mut(at + k) {
                            Some(slot) => *slot = b,
                            None => bytes.push(b),
                        }
                    }
                }
                Edit::Varint(i, x) => {
                    let at = between(i);
                    bytes.splice(at..at, varint(*x));
                }
                Edit::Token(i, t, over) => {
                    let token = tokens[t.index(tokens.len())].as_bytes();
                    let at = between(i);
                    let end = if *over {
                        (at + token.len()).min(len)
                    } else {
                        at
                    };
                    bytes.splice(at..end, token.iter().copied());
                }
            }
        }
        bytes
    }

    /// Valid encodings (`seeds`) changed by one to four edits.
    pub fn mutated(
        seeds: Vec<Vec<u8>>,
        tokens: &'static [&'static str],
    ) -> impl Strategy<Value = Vec<u8>> {
        (select(seeds), prop::collection::vec(edit(tokens), 1..=4))
            .prop_map(move |(seed, edits)| apply(seed, &edits, tokens))
    }

    /// Arbitrary bytes, strings of the format's tokens, and mutated valid encodings.
    pub fn bytes_input(
        seeds: Vec<Vec<u8>>,
        tokens: &'static [&'static str],
    ) -> BoxedStrategy<Bytes> {
        let words: BoxedStrategy<Vec<u8>> = if tokens.is_empty() {
            prop::collection::vec(any::<u8>(), 0..64).boxed()
        } else {
            prop::collection::vec(select(tokens), 0..24)
                .prop_map(|t| t.concat().into_bytes())
                .boxed()
        };
        prop_oneof![
            1 => prop::collection::vec(any::<u8>(), 0..512),
            1 => words,
            6 => mutated(seeds, tokens),
        ]
        .prop_map(Bytes)
        .boxed()
    }

    /// As [`bytes_input`], for readers of text: the bytes read as UTF-8 (invalid sequences
    /// replaced), and arbitrary Unicode strings.
    pub fn text_input(seeds: Vec<String>, tokens: &'static [&'static str]) -> BoxedStrategy<Text> {
        let seeds = seeds.into_iter().map(String::into_bytes).collect();
        prop_oneof![
            1 => any::<String>(),
            6 => bytes_input(seeds, tokens)
                .prop_map(|b| String::from_utf8_lossy(&b.0).into_owned()),
        ]
        .prop_map(Text)
        .boxed()
    }
}

/// How deep each target's inputs must get (see [`Depth`]): about a quarter of the least seen
/// in runs of 5,000 cases of six seeds, so that a chance low never fails; a target that accepts
/// only a handful of its inputs (the JSON files, the search's name) must still accept one.
fn depth(target: &str) -> Depth {
    match target {
        "format" => Depth::accepted(0.01).decoded(0.3),
        "selfplay_chunk" | "qtable" => Depth::accepted(0.04).decoded(0.3),
        "book" | "mces" => Depth::accepted(0.02).decoded(0.3),
        "cache" => Depth::accepted(0.004).decoded(0.3),
        "position_connect4" | "position_tictactoe" | "player_spec" => Depth::accepted(0.02),
        "position_othello4" | "moves" | "labelled_positions" | "safetensors" => {
            Depth::accepted(0.01)
        }
        "metrics" | "model" => Depth::accepted(0.005),
        "evalset" => Depth::accepted(0.004),
        "run_json" | "state_json" | "search_kind" => Depth::accepted(0.0002),
        "harness self-test" => Depth::accepted(0.0),
        _ => panic!("fuzz {target}: say in depth() how deep its inputs must get"),
    }
}

// ---------------------------------------------------------------------------------------------
// Shared helpers.
// ---------------------------------------------------------------------------------------------

/// The path readers are told they read (only for their messages; nothing is there).
fn fuzz_path(name: &str) -> PathBuf {
    Path::new("/nonexistent-zero-fuzz").join(name)
}

/// Fails unless the error's message holds every one of `needles`.
fn clear(e: &anyhow::Error, needles: &[&str]) -> TestCaseResult {
    let message = e.to_string();
    for needle in needles {
        prop_assert!(
            message.contains(needle),
            "the error {message:?} does not say {needle:?}"
        );
    }
    Ok(())
}

/// Fails unless the error names `path` and ends with `remedy` (the errors of checked files).
fn clear_file_error(e: &anyhow::Error, path: &Path, remedy: &str) -> TestCaseResult {
    let message = e.to_string();
    prop_assert!(
        message.contains(&path.display().to_string()) && message.ends_with(remedy),
        "the error {message:?} does not name the file and end with {remedy:?}"
    );
    Ok(())
}

/// Length of the checked header (magic, kind, version, payload length, CRC-32), as the
/// library writes it: the file of an empty payload.
fn header_bytes() -> usize {
    TEST_FORMAT.encode(&[]).len()
}

/// A checked file's header over another payload, with that payload's length and checksum:
/// how a mutated payload gets past the checksum to the decoder. Magic, kind and version come
/// from `valid_file`; the rest of the header is written by the library's own encoder.
fn reseal(valid_file: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut out = valid_file[..STREAM_HEADER_BYTES].to_vec();
    out.extend_from_slice(&TEST_FORMAT.encode(payload)[STREAM_HEADER_BYTES..]);
    out
}

/// Whether `bytes` get past the checked container of `valid_file`'s format (its magic, kind,
/// version, length and checksum, as the library's decoder judges them) to the decoder of the
/// payload.
fn past_container(valid_file: &[u8], bytes: &[u8]) -> bool {
    let Some(rest) = bytes.strip_prefix(&valid_file[..STREAM_HEADER_BYTES]) else {
        return false;
    };
    let retagged = [TEST_FORMAT.stream_header().as_slice(), rest].concat();
    TEST_FORMAT.decode(&fuzz_path("x.bin"), &retagged).is_ok()
}

/// Input for a checked binary file: arbitrary or mutated files, or mutated payloads sealed
/// again under the header of a valid file. Each seed must be exactly its own payload resealed,
/// so that a change of the header's layout fails here rather than making every resealed input
/// stop at the header.
fn checked_file_input(seeds: Vec<Vec<u8>>) -> BoxedStrategy<Bytes> {
    let header = seeds[0].clone();
    let payloads: Vec<Vec<u8>> = seeds.iter().map(|s| s[header_bytes()..].to_vec()).collect();
    for (seed, payload) in seeds.iter().zip(&payloads) {
        assert_eq!(
            &reseal(&header, payload),
            seed,
            "a valid file is not its own payload resealed: has the checked header changed?"
        );
    }
    prop_oneof![
        1 => harness::bytes_input(seeds, &[]),
        2 => harness::mutated(payloads, &[]).prop_map(move |p| Bytes(reseal(&header, &p))),
    ]
    .boxed()
}

/// A finite f64 of any magnitude.
fn finite64() -> impl Strategy<Value = f64> {
    use proptest::num::f64::*;
    POSITIVE | NEGATIVE | NORMAL | SUBNORMAL | ZERO
}

fn finite32() -> impl Strategy<Value = f32> {
    use proptest::num::f32::*;
    POSITIVE | NEGATIVE | NORMAL | SUBNORMAL | ZERO
}

/// A position of `G` reached by legal moves: each index picks one of the legal moves, until
/// the indices or the game run out. Also the moves.
fn play<G: Game>(picks: &[Index]) -> (G, Vec<Move>) {
    let mut pos = G::new();
    let mut moves = Vec::new();
    for pick in picks {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            break;
        }
        let m = legal[pick.index(legal.len())];
        pos.play(m);
        moves.push(m);
    }
    (pos, moves)
}

/// The moves as text, each as `format_move` writes it, joined by `sep`.
fn moves_text<G: Game>(moves: &[Move], sep: &str) -> String {
    let mut pos = G::new();
    let mut words = Vec::new();
    for &m in moves {
        words.push(pos.format_move(m));
        pos.play(m);
    }
    words.join(sep)
}

fn picks(max: usize) -> impl Strategy<Value = Vec<Index>> {
    prop::collection::vec(any::<Index>(), 0..max)
}

/// Texts of games of `G` played by a fixed generator: seeds for mutations.
fn game_texts<G: Game>(sep: &str) -> Vec<String> {
    let mut runner = TestRunner::deterministic();
    (0..64)
        .map(|_| {
            let picks = picks(G::MAX_PLIES + 1)
                .new_tree(&mut runner)
                .unwrap()
                .current();
            moves_text::<G>(&play::<G>(&picks).1, sep)
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// core::files: the checked binary container and JSON files.
// ---------------------------------------------------------------------------------------------

const TEST_FORMAT: Format = Format {
    kind: "fuzz-record",
    version: 1,
    remedy: "delete it",
};

type TestValue = (u32, String, Vec<u64>, Option<i8>);

fn test_value() -> impl Strategy<Value = TestValue> {
    (
        any::<u32>(),
        ".{0,12}",
        prop::collection::vec(any::<u64>(), 0..8),
        any::<Option<i8>>(),
    )
}

#[test]
fn fuzz_format() {
    let seeds: Vec<Vec<u8>> = [
        (0, String::new(), vec![], None),
        (7, "seven".to_string(), vec![1, u64::MAX, 300], Some(-3)),
        (u32::MAX, "é".repeat(9), vec![0; 5], Some(127)),
    ]
    .iter()
    .map(|v| TEST_FORMAT.encode_value(v).unwrap())
    .collect();
    let path = fuzz_path("x.bin");
    let valid = seeds[0].clone();
    let strategy = (checked_file_input(seeds), test_value());
    run("format", strategy, |(Bytes(bytes), value)| {
        if past_container(&valid, &bytes) {
            harness::decoded();
        }
        match TEST_FORMAT.decode(&path, &bytes) {
            // Length and checksum fix the payload: what is accepted is what encode writes.
            Ok(payload) => prop_assert_eq!(TEST_FORMAT.encode(payload), bytes.clone()),
            Err(e) => clear_file_error(&e, &path, TEST_FORMAT.remedy)?,
        }
        match TEST_FORMAT.decode_value::<TestValue>(&path, &bytes) {
            Ok(v) => {
                harness::accepted();
                let again = TEST_FORMAT.encode_value(&v).unwrap();
                prop_assert_eq!(
                    TEST_FORMAT
                        .decode_value::<TestValue>(&path, &again)
                        .unwrap(),
                    v
                );
            }
            Err(e) => clear_file_error(&e, &path, TEST_FORMAT.remedy)?,
        }
        match TEST_FORMAT.stream_records(&path, &bytes) {
            Ok(records) => {
                prop_assert!(bytes.starts_with(&TEST_FORMAT.stream_header()));
                prop_assert_eq!(records, &bytes[STREAM_HEADER_BYTES..]);
            }
            Err(e) => clear_file_error(&e, &path, TEST_FORMAT.remedy)?,
        }
        // Round trip.
        let encoded = TEST_FORMAT.encode_value(&value).unwrap();
        prop_assert_eq!(
            TEST_FORMAT
                .decode_value::<TestValue>(&path, &encoded)
                .unwrap(),
            value
        );
        Ok(())
    });
}

/// Tokens of JSON, and numbers at the edges of the integer and float types.
const JSON_TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "null",
    "true",
    "false",
    "0",
    "-1",
    "1e309",
    "-0",
    "4294967296",
    "18446744073709551616",
    "-9223372036854775809",
    "1.5",
    "NaN",
    "\"\\u0000\"",
    "\"\\ud800\"",
    "[[[[[[[[[[[[[[[[",
    "{\"a\":",
    "\\",
    " ",
    "\n",
];

// ---------------------------------------------------------------------------------------------
// Positions and moves.
// ---------------------------------------------------------------------------------------------

/// Checks `parse_position` of one game on `text`, and round-trips the game `picks` plays.
fn check_position<G: Game>(text: &str, picks: &[Index], seps: &[&str]) -> TestCaseResult {
    match G::parse_position(text) {
        Ok(pos) => {
            harness::accepted();
            prop_assert!(pos.ply() <= G::MAX_PLIES);
            prop_assert!(pos
                .legal_moves()
                .iter()
                .all(|&m| (m as usize) < G::NUM_ACTIONS));
            prop_assert_eq!(pos.legal_moves().is_empty(), pos.outcome().is_some());
        }
        Err(e) => {
            prop_assert!(matches!(e, GameError::BadPosition { .. }), "{e:?}");
            prop_assert!(e.to_string().starts_with("cannot parse position"), "{e}");
        }
    }
    let (pos, moves) = play::<G>(picks);
    for sep in seps {
        let text = moves_text::<G>(&moves, sep);
        prop_assert_eq!(G::parse_position(&text), Ok(pos.clone()), "{:?}", text);
    }
    Ok(())
}

/// One character a move (Connect Four, tic-tac-toe): an accepted position is the one the
/// characters reach as moves, each parsed by `parse_move` and played by `try_play`.
fn check_one_char_moves<G: Game>(text: &str) -> TestCaseResult {
    if let Ok(pos) = G::parse_position(text) {
        let mut replay = G::new();
        for ch in text.trim().chars() {
            let m = replay.parse_move(&ch.to_string());
            prop_assert!(m.is_ok(), "{ch:?} accepted in a position, not as a move");
            prop_assert!(replay.try_play(m.unwrap()).is_ok());
        }
        prop_assert_eq!(replay, pos);
    }
    Ok(())
}

const POSITION_TOKENS: &[&str] = &[
    "1", "2", "3", "4", "5", "6", "7", "8", "9", "0", "a", "b", "c", "d", "A", "D", "pass", "PASS",
    "--", " ", "\t", "\n", "+", "-", "٣", "१", "a1", "d4", "c3", "start",
];

#[test]
fn fuzz_position_connect4() {
    let strategy = (
        harness::text_input(game_texts::<Connect4>(""), POSITION_TOKENS),
        picks(45),
    );
    run("position_connect4", strategy, |(Text(text), picks)| {
        check_position::<Connect4>(&text, &picks, &[""])?;
        check_one_char_moves::<Connect4>(&text)
    });
}

#[test]
fn fuzz_position_tictactoe() {
    let strategy = (
        harness::text_input(game_texts::<TicTacToe>(""), POSITION_TOKENS),
        picks(12),
    );
    run("position_tictactoe", strategy, |(Text(text), picks)| {
        check_position::<TicTacToe>(&text, &picks, &[""])?;
        check_one_char_moves::<TicTacToe>(&text)
    });
}

#[test]
fn fuzz_position_othello4() {
    let mut seeds = game_texts::<Othello4>("");
    seeds.extend(game_texts::<Othello4>(" "));
    let strategy = (harness::text_input(seeds, POSITION_TOKENS), picks(40));
    run("position_othello4", strategy, |(Text(text), picks)| {
        check_position::<Othello4>(&text, &picks, &["", " ", "  \n"])
    });
}

/// `parse_move` of one game on `text` in the position `picks` reaches, and every legal move
/// through `format_move` and back.
fn check_moves<G: Game>(text: &str, picks: &[Index]) -> TestCaseResult {
    let (pos, _) = play::<G>(picks);
    match pos.parse_move(text) {
        Ok(m) => {
            harness::accepted();
            prop_assert!((m as usize) < G::NUM_ACTIONS);
            prop_assert_eq!(pos.parse_move(&pos.format_move(m)), Ok(m));
        }
        Err(e) => {
            prop_assert!(matches!(e, GameError::BadMove { .. }), "{e:?}");
            prop_assert!(e.to_string().starts_with("cannot parse move"), "{e}");
        }
    }
    for m in pos.legal_moves() {
        prop_assert_eq!(pos.parse_move(&pos.format_move(m)), Ok(m));
    }
    Ok(())
}

#[test]
fn fuzz_moves() {
    let seeds = ["1", "7", "9", "a1", "d4", "c3", "pass", "--", " 4 ", "b2"]
        .map(String::from)
        .to_vec();
    let strategy = (harness::text_input(seeds, POSITION_TOKENS), picks(45));
    run("moves", strategy, |(Text(text), picks)| {
        for game in GameKind::ALL {
            zero::with_board_game!(game, G => check_moves::<G>(&text, &picks))?;
        }
        Ok(())
    });
}

/// The scores of a Connect Four position with `moves` stones, from the stones each side has
/// left: winning with one's k-th stone (k >= 4) scores 22 - k, losing to the other's -(22 - k).
fn score_bounds(moves: usize) -> (i32, i32) {
    let (mine, theirs) = ((moves / 2) as i32, (moves.div_ceil(2)) as i32);
    (-(22 - (theirs + 1).max(4)), 22 - (mine + 1).max(4))
}

/// Pons' test lines: `POSITION SCORE`.
#[test]
fn fuzz_labelled_positions() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/connect4");
    let seeds: Vec<String> = ["Test_L3_R1", "Test_L2_R2", "Test_L1_R3"]
        .iter()
        .flat_map(|name| {
            let text = std::fs::read_to_string(dir.join(name)).unwrap();
            let lines: Vec<String> = text.lines().map(String::from).collect();
            lines
                .chunks(4)
                .take(20)
                .map(|c| c.join("\n"))
                .collect::<Vec<_>>()
        })
        .collect();
    let labelled = (picks(42), MIN_SCORE..=MAX_SCORE);
    let strategy = (
        harness::text_input(seeds, POSITION_TOKENS),
        prop::collection::vec(labelled, 0..6),
    );
    run("labelled_positions", strategy, |(Text(text), lines)| {
        match parse_labelled_positions(&text, "fuzz.txt") {
            Ok(entries) => {
                harness::accepted();
                let mut again = String::new();
                for (moves, pos, score) in &entries {
                    prop_assert_eq!(Connect4::parse_position(moves), Ok(*pos));
                    prop_assert!(pos.outcome().is_none());
                    let (lo, hi) = score_bounds(pos.moves());
                    prop_assert!((lo..=hi).contains(score), "score {score} after {moves}");
                    again.push_str(&format!("{moves} {score}\n"));
                }
                prop_assert_eq!(parse_labelled_positions(&again, "again").unwrap(), entries);
            }
            Err(e) => clear(&e, &["fuzz.txt line "])?,
        }
        // Round trip of lines of unfinished games.
        let mut text = String::new();
        let mut expected = Vec::new();
        for (picks, score) in &lines {
            let (mut pos, mut moves) = play::<Connect4>(picks);
            while pos.outcome().is_some() {
                moves.pop();
                pos = Connect4::parse_position(&moves_text::<Connect4>(&moves, "")).unwrap();
            }
            // The starting position has no text of its own: the format cannot hold it.
            if moves.is_empty() {
                continue;
            }
            let written = moves_text::<Connect4>(&moves, "");
            let (lo, hi) = score_bounds(moves.len());
            let score = (*score).clamp(lo, hi);
            text.push_str(&format!("{written} {score}\n"));
            expected.push((written, pos, score));
        }
        prop_assert_eq!(parse_labelled_positions(&text, "lines").unwrap(), expected);
        Ok(())
    });
}

const EVALSET_TOKENS: &[&str] = &[
    "W", "D", "L", "-", " ", "\n", "#", "start", "L3_R1", "early", "4", "44", "a1", "pass", "x",
];

fn check_evalset<G: Game>(text: &str) -> TestCaseResult {
    match EvalSet::<G>::parse(text, "fuzz-set.txt") {
        Ok(set) => {
            harness::accepted();
            prop_assert!(!set.is_empty());
            for e in &set.entries {
                prop_assert_eq!(e.values.len(), G::NUM_ACTIONS);
                prop_assert!(e.position.outcome().is_none());
                prop_assert!(e.best().is_some());
            }
            let again = EvalSet::<G>::parse(&set.to_text(&["again".into()]), "again").unwrap();
            prop_assert_eq!(again, set);
        }
        Err(e) => clear(&e, &["fuzz-set.txt"])?,
    }
    Ok(())
}

/// A valid set of one game: it reads back as it is written.
fn check_evalset_round_trip<G: Game>(text: &str) -> TestCaseResult {
    let set = EvalSet::<G>::parse(text, "valid");
    prop_assert!(set.is_ok(), "{:?}", set.err());
    let set = set.unwrap();
    let written = set.to_text(&["a header".into()]);
    prop_assert_eq!(EvalSet::<G>::parse(&written, "written").unwrap(), set);
    Ok(())
}

#[test]
fn fuzz_evalset() {
    let chunks = |game: GameKind, text: &str, lines: usize| -> Vec<(GameKind, String)> {
        let text: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        text.chunks(lines)
            .take(40)
            .map(|c| (game, c.join("\n")))
            .collect()
    };
    // Chunks of each game's own set.
    let mut valid = Vec::new();
    for game in GameKind::ALL {
        let set = zero::with_board_game!(game, G => G::eval_set().unwrap().to_text(&[]));
        valid.extend(chunks(game, &set, 6));
    }
    let seeds = valid.iter().map(|v| v.1.clone()).collect();
    let strategy = (harness::text_input(seeds, EVALSET_TOKENS), select(valid));
    run("evalset", strategy, |(Text(text), (game, valid))| {
        for kind in GameKind::ALL {
            zero::with_board_game!(kind, G => check_evalset::<G>(&text))?;
        }
        zero::with_board_game!(game, G => check_evalset_round_trip::<G>(&valid))
    });
}

// ---------------------------------------------------------------------------------------------
// Player specs and the search's name.
// ---------------------------------------------------------------------------------------------

const SPEC_TOKENS: &[&str] = &[
    "random",
    "human",
    "rules",
    "minimax",
    "solver",
    "mcts",
    "best",
    "latest",
    "model",
    "ql",
    "self",
    ":",
    "::",
    "0",
    "1",
    "4",
    "-1",
    "+7",
    "4294967295",
    "4294967296",
    " ",
    "/a/b",
    "~",
    "puct",
    "gumbel",
    "\0",
];

fn player_spec() -> impl Strategy<Value = PlayerSpec> {
    prop_oneof![
        Just(PlayerSpec::Random),
        Just(PlayerSpec::Human),
        Just(PlayerSpec::Rules),
        Just(PlayerSpec::Solver),
        Just(PlayerSpec::Best),
        Just(PlayerSpec::Latest),
        Just(PlayerSpec::Pretrained),
        (1u32..).prop_map(PlayerSpec::Minimax),
        // Within the simulations a player may ask for (core::limits).
        (1u32..=10_000_000).prop_map(PlayerSpec::Mcts),
        ".+".prop_map(|p| PlayerSpec::Model(p.into())),
        ".+".prop_map(|p| PlayerSpec::QTable(p.into())),
    ]
}

#[test]
fn fuzz_player_spec() {
    let seeds = [
        "random",
        "human",
        "rules",
        "minimax:4",
        "solver",
        "mcts:800",
        "best",
        "latest",
        "model:models/connect4/best.safetensors",
        "ql:qtable.bin",
    ]
    .map(String::from)
    .to_vec();
    let strategy = (harness::text_input(seeds, SPEC_TOKENS), player_spec());
    run("player_spec", strategy, |(Text(text), spec)| {
        match text.parse::<PlayerSpec>() {
            Ok(parsed) => {
                harness::accepted();
                prop_assert_eq!(
                    parsed.to_string().parse::<PlayerSpec>().unwrap(),
                    parsed.clone()
                );
                match &parsed {
                    PlayerSpec::Minimax(n) | PlayerSpec::Mcts(n) => prop_assert!(*n >= 1),
                    PlayerSpec::Model(p) | PlayerSpec::QTable(p) => {
                        prop_assert!(!p.as_os_str().is_empty())
                    }
                    _ => {}
                }
            }
            Err(e) => clear(&e, &["player"])?,
        }
        prop_assert_eq!(spec.to_string().parse::<PlayerSpec>().unwrap(), spec);
        Ok(())
    });
}

#[test]
fn fuzz_search_kind() {
    let seeds = ["puct", "gumbel"].map(String::from).to_vec();
    let strategy = harness::text_input(seeds, SPEC_TOKENS);
    run("search_kind", strategy, |Text(text)| {
        match text.parse::<SearchKind>() {
            Ok(kind) => {
                harness::accepted();
                prop_assert!(text == "puct" || text == "gumbel", "{kind:?}")
            }
            Err(e) => prop_assert!(e.starts_with("unknown search"), "{e}"),
        }
        for kind in [SearchKind::Puct, SearchKind::Gumbel] {
            let name = serde_json::to_value(kind).unwrap();
            prop_assert_eq!(name.as_str().unwrap().parse::<SearchKind>(), Ok(kind));
        }
        Ok(())
    });
}

// ---------------------------------------------------------------------------------------------
// run.json, state.json, metrics.jsonl.
// ---------------------------------------------------------------------------------------------

fn arch() -> impl Strategy<Value = Arch> {
    (any::<usize>(), any::<usize>(), any::<bool>()).prop_map(|(blocks, filters, wdl)| {
        Arch::Resnet {
            blocks,
            filters,
            wdl,
        }
    })
}

fn mcts_config() -> impl Strategy<Value = MctsConfig> {
    (
        (finite32(), finite32(), finite32(), finite32()),
        select(vec![SearchKind::Puct, SearchKind::Gumbel]),
        (finite32(), any::<u32>(), finite32()),
    )
        .prop_map(
            |(
                (c_puct, fpu_reduction, noise_fraction, dirichlet_alpha),
                search,
                (gumbel_scale, gumbel_considered, gumbel_value_scale),
            )| {
                MctsConfig {
                    c_puct,
                    fpu_reduction,
                    noise_fraction,
                    dirichlet_alpha,
                    search,
                    gumbel_scale,
                    gumbel_considered,
                    gumbel_value_scale,
                }
            },
        )
}

fn run_config() -> impl Strategy<Value = RunConfig> {
    (
        (
            ".{0,8}",
            arch(),
            any::<u64>(),
            any::<u32>(),
            any::<usize>(),
            any::<usize>(),
        ),
        (
            any::<u64>(),
            any::<u32>(),
            mcts_config(),
            any::<u64>(),
            any::<usize>(),
        ),
        (
            finite64(),
            finite64(),
            any::<u32>(),
            finite32(),
            any::<u64>(),
            any::<u32>(),
        ),
        (
            finite64(),
            any::<u32>(),
            proptest::option::of(".{0,12}"),
            any::<u64>(),
        ),
        (any::<usize>(), any::<usize>(), any::<u64>(), any::<bool>()),
    )
        .prop_map(|(a, b, c, d, e)| RunConfig {
            preset: a.0,
            seed: e.2,
            net: NetConfig {
                arch: a.1,
                precision: if e.3 { Precision::Bf16 } else { Precision::F32 },
            },
            selfplay: SelfPlayConfig {
                games: a.2,
                sims: a.3,
                parallel_games: a.4,
                workers: a.5,
                inference_threads: a.5 / 2,
                chunk_games: b.0,
                temperature_plies: b.1,
                random_opening_plies: b.1 / 2,
                fork_share: d.0,
                fork_plies: b.1 / 3,
                fork_move: match d.1 % 3 {
                    0 => ForkMove::Uniform,
                    1 => ForkMove::Policy,
                    _ => ForkMove::Mixed(c.3 as f64),
                },
            },
            mcts: b.2,
            train: TrainConfig {
                steps: b.3,
                batch_size: b.4,
                learning_rate: c.0,
                learning_rate_drops: if e.3 {
                    vec![LearningRateDrop {
                        from_iteration: c.2,
                        learning_rate: d.0,
                    }]
                } else {
                    Vec::new()
                },
                weight_decay: c.1,
                window: c.2,
                value_target_mix: c.3,
            },
            eval: EvalConfig {
                games: c.4,
                sims: c.5,
                promote_threshold: d.0,
                random_plies: d.1,
                opening_plies: d.1 / 3,
                benchmark: d.2,
                benchmark_games: d.3,
                grade: GradeConfig {
                    net_positions: e.0,
                    search_positions: e.1,
                },
            },
            research: Research {
                playout_cap: e.3.then_some(PlayoutCap {
                    full_fraction: c.1,
                    fast_sims: b.1,
                }),
                reanalyse_positions: b.3 / 2,
            },
        })
}

const CONFIG_TOKENS: &[&str] = &[
    "\"preset\":",
    "\"arch\":",
    "\"kind\":\"resnet\"",
    "\"kind\":\"azg_conv\"",
    "\"blocks\":",
    "\"filters\":",
    "\"channels\":",
    "\"games\":",
    "\"chunk_games\":",
    "\"selfplay\":",
    "\"train\":",
    "\"eval\":",
    "\"net\":",
    "\"mcts\":",
    "\"search\":\"gumbel\"",
    "\"grade\":",
    "\"learning_rate_drops\":",
    "\"research\":",
    "\"playout_cap\":",
    "\"benchmark\":",
    "\"seed\":",
    "\"iteration\":",
    "\"stage\":",
    "\"selfplay\"",
    "\"train\"",
    "\"evaluate\"",
];

fn json_tokens() -> &'static [&'static str] {
    static TOKENS: OnceLock<Vec<&'static str>> = OnceLock::new();
    TOKENS.get_or_init(|| [JSON_TOKENS, CONFIG_TOKENS].concat())
}

#[test]
fn fuzz_run_json() {
    let mut seeds = Vec::new();
    for preset in ["cpu", "gpu", "tiny", "long"] {
        for game in GameKind::ALL {
            let mut cfg = RunConfig::preset(preset, game, false).unwrap();
            cfg.eval.benchmark = Some("minimax:4".into());
            seeds.push(serde_json::to_vec_pretty(&cfg).unwrap());
        }
    }
    let path = fuzz_path("run.json");
    let strategy = (harness::bytes_input(seeds, json_tokens()), run_config());
    run("run_json", strategy, |(Bytes(bytes), cfg)| {
        match parse_json::<RunConfig>(&path, &bytes) {
            Ok(read) => {
                harness::accepted();
                let again = serde_json::to_vec_pretty(&read).unwrap();
                prop_assert_eq!(parse_json::<RunConfig>(&path, &again).unwrap(), read);
            }
            Err(e) => clear(&e, &[&path.display().to_string(), "to start over"])?,
        }
        let written = serde_json::to_vec_pretty(&cfg).unwrap();
        prop_assert_eq!(parse_json::<RunConfig>(&path, &written).unwrap(), cfg);
        Ok(())
    });
}

#[test]
fn fuzz_state_json() {
    let stage = select(vec![Stage::SelfPlay, Stage::Train, Stage::Evaluate]);
    let state = (any::<u32>(), stage).prop_map(|(iteration, stage)| RunState { iteration, stage });
    let seeds = [
        (1, Stage::SelfPlay),
        (12, Stage::Train),
        (u32::MAX, Stage::Evaluate),
    ]
    .map(|(iteration, stage)| serde_json::to_vec_pretty(&RunState { iteration, stage }).unwrap())
    .to_vec();
    let path = fuzz_path("state.json");
    let strategy = (harness::bytes_input(seeds, json_tokens()), state);
    run("state_json", strategy, |(Bytes(bytes), state)| {
        match parse_json::<RunState>(&path, &bytes) {
            Ok(read) => {
                harness::accepted();
                let again = serde_json::to_vec_pretty(&read).unwrap();
                prop_assert_eq!(parse_json::<RunState>(&path, &again).unwrap(), read);
            }
            Err(e) => clear(&e, &[&path.display().to_string(), "to start over"])?,
        }
        let written = serde_json::to_vec_pretty(&state).unwrap();
        prop_assert_eq!(parse_json::<RunState>(&path, &written).unwrap(), state);
        Ok(())
    });
}

fn tally() -> impl Strategy<Value = Tally> {
    (0u64..1 << 40, 0u64..1 << 40, 0u64..1 << 40).prop_map(|(wins, losses, draws)| Tally {
        wins,
        losses,
        draws,
    })
}

fn match_result() -> impl Strategy<Value = MatchResult> {
    (
        (".{0,6}", ".{0,6}", ".{0,6}", any::<u64>()),
        (tally(), tally(), tally()),
        (finite64(), [finite64(), finite64()], finite64()),
    )
        .prop_map(
            |((game, a, b, games), (a_first, a_second, total), (elo, elo_ci95, seconds))| {
                MatchResult {
                    game,
                    a,
                    b,
                    games,
                    a_first,
                    a_second,
                    total,
                    elo,
                    elo_ci95,
                    seconds,
                }
            },
        )
}

fn grade_result() -> impl Strategy<Value = GradeResult> {
    let group = (".{0,6}", any::<u64>(), any::<u64>(), finite64()).prop_map(
        |(group, positions, mistakes, mistake_rate)| GroupResult {
            group,
            positions,
            mistakes,
            mistake_rate,
        },
    );
    (
        any::<u64>(),
        any::<u64>(),
        finite64(),
        prop::collection::vec(group, 0..4),
        any::<u64>(),
        finite64(),
    )
        .prop_map(
            |(positions, mistakes, mistake_rate, groups, set_positions, seconds)| GradeResult {
                positions,
                mistakes,
                mistake_rate,
                groups,
                set_positions,
                seconds,
            },
        )
}

fn stage_record() -> impl Strategy<Value = StageRecord> {
    let selfplay = (
        (any::<u32>(), any::<u64>(), any::<u64>()),
        (finite64(), finite64(), finite64(), finite64(), finite64()),
        proptest::option::of(any::<[u64; 3]>()),
    )
        .prop_map(|((iteration, games, positions), f, results)| {
            StageRecord::SelfPlay(SelfPlayRecord {
                iteration,
                games,
                positions,
                seconds: f.0,
                positions_per_s: f.1,
                nn_evals_per_s: f.2,
                mean_batch: f.3,
                cache_hit_rate: f.4,
                results: results.map(|[first_player_wins, draws, second_player_wins]| {
                    GameResults {
                        first_player_wins,
                        draws,
                        second_player_wins,
                    }
                }),
            })
        });
    let train = (
        (any::<u32>(), any::<u64>(), any::<u64>()),
        (finite64(), finite64(), finite64()),
    )
        .prop_map(|((iteration, samples, steps), f)| {
            StageRecord::Train(TrainRecord {
                iteration,
                samples,
                steps,
                policy_loss: f.0,
                value_loss: f.1,
                reanalysed: (iteration % 3 == 1).then_some(steps),
                reanalyse_seconds: (iteration % 3 == 1).then_some(f.2),
                seconds: f.2,
            })
        });
    let evaluate = (
        (
            any::<u32>(),
            proptest::option::of(finite64()),
            any::<bool>(),
            any::<u32>(),
        ),
        (
            proptest::option::of(match_result()),
            proptest::option::of(match_result()),
            finite64(),
        ),
        (
            proptest::option::of(grade_result()),
            proptest::option::of(grade_result()),
            proptest::option::of(finite64()),
        ),
        (
            proptest::option::of(finite64()),
            proptest::option::of(finite64()),
        ),
    )
        .prop_map(|(a, b, c, d)| {
            StageRecord::Evaluate(Box::new(EvaluateRecord {
                iteration: a.0,
                score_vs_best: a.1,
                promoted: a.2,
                generation: a.3,
                latest_vs_best: b.0,
                benchmark: b.1,
                seconds: b.2,
                grade_net: c.0,
                grade_search: c.1,
                grade_seconds: c.2,
                rss_mib: d.0,
                peak_rss_mib: d.1,
            }))
        });
    prop_oneof![selfplay, train, evaluate]
}

const METRICS_TOKENS: &[&str] = &[
    "\"policy_loss\":",
    "\"latest_vs_best\":",
    "\"a_first\":",
    "\"wins\":",
    "\"elo_ci95\":",
    "\"grade_net\":",
    "\"groups\":",
    "\"mistake_rate\":",
    "\"benchmark\":null",
    "\n",
    "\r\n",
];

#[test]
fn fuzz_metrics() {
    // Seeds: logs of a few records each, written as the cycle writes them.
    let mut runner = TestRunner::deterministic();
    let seeds: Vec<Vec<u8>> = (0..24)
        .map(|_| {
            let records = prop::collection::vec(stage_record(), 1..4)
                .new_tree(&mut runner)
                .unwrap()
                .current();
            records
                .iter()
                .map(|r| serde_json::to_string(r).unwrap() + "\n")
                .collect::<String>()
                .into_bytes()
        })
        .collect();
    let tokens: &'static [&'static str] = {
        static TOKENS: OnceLock<Vec<&'static str>> = OnceLock::new();
        TOKENS.get_or_init(|| [JSON_TOKENS, CONFIG_TOKENS, METRICS_TOKENS].concat())
    };
    let path = fuzz_path("metrics.jsonl");
    let strategy = (
        harness::bytes_input(seeds, tokens),
        prop::collection::vec(stage_record(), 0..4),
    );
    run("metrics", strategy, |(Bytes(bytes), records)| {
        let text = String::from_utf8_lossy(&bytes);
        match parse_metrics(&text, &path) {
            Ok(read) => {
                harness::accepted();
                let again: String = read
                    .iter()
                    .map(|r| serde_json::to_string(r).unwrap() + "\n")
                    .collect();
                prop_assert_eq!(parse_metrics(&again, &path).unwrap(), read);
            }
            Err(e) => clear(&e, &[&path.display().to_string(), " line "])?,
        }
        let written: String = records
            .iter()
            .map(|r| serde_json::to_string(r).unwrap() + "\n")
            .collect();
        prop_assert_eq!(parse_metrics(&written, &path).unwrap(), records);
        Ok(())
    });
}

// ---------------------------------------------------------------------------------------------
// Self-play chunks.
// ---------------------------------------------------------------------------------------------

const C4_ACTIONS: usize = 7;

/// A game record as self-play writes it: legal moves, a policy a ply, root values, a result.
fn game_record() -> impl Strategy<Value = GameRecord> {
    (picks(42), any::<i8>(), any::<u32>()).prop_map(|(picks, outcome, salt)| {
        let (_, moves) = play::<Connect4>(&picks);
        let plies = moves.len();
        let policies = (0..plies * C4_ACTIONS)
            .map(|i| ((i as u32 ^ salt) % 97) as f32 / 97.0)
            .collect();
        let root_values = (0..plies)
            .map(|i| ((i as u32 ^ salt) % 3) as f32 - 1.0)
            .collect();
        GameRecord {
            moves,
            policies,
            root_values,
            outcome: outcome.rem_euclid(3) - 1,
            trains_from: salt % (plies as u32 + 1),
            random_plies: salt % 5,
        }
    })
}

fn chunk() -> impl Strategy<Value = Vec<(u64, GameRecord)>> {
    prop::collection::btree_map(any::<u64>(), game_record(), 0..5)
        .prop_map(|m: BTreeMap<u64, GameRecord>| m.into_iter().collect())
}

/// Checks what a stage reads from a chunk: every game consistent with itself.
fn check_games(games: &[(u64, GameRecord)]) -> TestCaseResult {
    let mut numbers: Vec<u64> = games.iter().map(|g| g.0).collect();
    numbers.sort_unstable();
    numbers.dedup();
    prop_assert_eq!(numbers.len(), games.len());
    for (_, r) in games {
        let plies = r.moves.len();
        prop_assert!(r.moves.iter().all(|&m| (m as usize) < C4_ACTIONS));
        prop_assert_eq!(r.policies.len(), plies * C4_ACTIONS);
        prop_assert!(r.policies.iter().all(|p| p.is_finite() && *p >= 0.0));
        prop_assert_eq!(r.root_values.len(), plies);
        prop_assert!(r.root_values.iter().all(|v| v.is_finite()));
        prop_assert!((-1..=1).contains(&r.outcome));
    }
    Ok(())
}

fn encode(games: &[(u64, GameRecord)], game: &str, iteration: u32) -> Vec<u8> {
    let (indices, records): (Vec<u64>, Vec<GameRecord>) = games.iter().cloned().unzip();
    encode_chunk(game, iteration, &indices, &records).unwrap()
}

#[test]
fn fuzz_selfplay_chunk() {
    let mut runner = TestRunner::deterministic();
    let seeds: Vec<Vec<u8>> = (0..16)
        .map(|_| {
            encode(
                &chunk().new_tree(&mut runner).unwrap().current(),
                "connect4",
                3,
            )
        })
        .collect();
    let path = fuzz_path("chunk-000000.bin");
    let remedy = "delete it: its games are played again on the next run";
    let valid = seeds[0].clone();
    let strategy = (checked_file_input(seeds), chunk());
    run("selfplay_chunk", strategy, |(Bytes(bytes), games)| {
        if past_container(&valid, &bytes) {
            harness::decoded();
        }
        match decode_chunk(&path, &bytes, "connect4", C4_ACTIONS, 3) {
            Ok(read) => {
                harness::accepted();
                check_games(&read)?;
                let again = encode(&read, "connect4", 3);
                prop_assert_eq!(
                    decode_chunk(&path, &again, "connect4", C4_ACTIONS, 3).unwrap(),
                    read
                );
            }
            Err(e) => clear_file_error(&e, &path, remedy)?,
        }
        let written = encode(&games, "connect4", 3);
        prop_assert_eq!(
            decode_chunk(&path, &written, "connect4", C4_ACTIONS, 3).unwrap(),
            games
        );
        // Another game's or iteration's chunk is refused.
        prop_assert!(decode_chunk(&path, &written, "tictactoe", 9, 3).is_err());
        prop_assert!(decode_chunk(&path, &written, "connect4", C4_ACTIONS, 4).is_err());
        Ok(())
    });
}

// ---------------------------------------------------------------------------------------------
// Models (safetensors with the description in the header) and the tensors container.
// ---------------------------------------------------------------------------------------------

const TINY: Arch = Arch::resnet(1, 2);

fn tiny_net(seed: u64) -> Net {
    Net::new_seeded(
        "tictactoe",
        TINY,
        Shape::of::<TicTacToe>(),
        tch::Device::Cpu,
        seed,
    )
    .unwrap()
}

/// The parts of a safetensors file: its header as JSON, and the data after it.
fn split_safetensors(bytes: &[u8]) -> (serde_json::Value, Vec<u8>) {
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    (header, bytes[8 + n..].to_vec())
}

fn join_safetensors(header: &serde_json::Value, data: &[u8]) -> Vec<u8> {
    let text = serde_json::to_vec(header).unwrap();
    let mut out = (text.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&text);
    out.extend_from_slice(data);
    out
}

/// A valid model file whose description (the JSON under `zero.model`) is `meta_text`.
fn with_description(model: &[u8], meta_text: &str) -> Vec<u8> {
    let (mut header, data) = split_safetensors(model);
    header["__metadata__"]["zero.model"] = serde_json::Value::String(meta_text.into());
    join_safetensors(&header, &data)
}

const MODEL_TOKENS: &[&str] = &[
    "\"resnet\"",
    "\"azg_conv\"",
    "\"blocks\":",
    "\"filters\":",
    "\"channels\":",
    "\"game\":",
    "\"tictactoe\"",
    "\"connect4\"",
    "\"shape\":",
    "\"planes\":",
    "\"actions\":",
    "\"height\":",
    "\"dtype\":\"F32\"",
    "\"dtype\":\"F64\"",
    "\"dtype\":\"BF16\"",
    "\"data_offsets\":",
    "\"__metadata__\":",
    "\"zero.model\":",
    "\"generation\":",
    "1099511627776",
    "9223372036854775807",
    "18446744073709551615",
    "4611686018427387904",
];

fn model_tokens() -> &'static [&'static str] {
    static TOKENS: OnceLock<Vec<&'static str>> = OnceLock::new();
    TOKENS.get_or_init(|| [JSON_TOKENS, MODEL_TOKENS].concat())
}

/// safetensors files: mutated files, and files whose header (the JSON after the length) is
/// mutated text under its right length, so that the JSON reaches the checks behind it.
fn safetensors_input(files: Vec<Vec<u8>>) -> BoxedStrategy<Bytes> {
    let parts: Vec<(Vec<u8>, Vec<u8>)> = files
        .iter()
        .map(|f| {
            let n = u64::from_le_bytes(f[..8].try_into().unwrap()) as usize;
            (f[8..8 + n].to_vec(), f[8 + n..].to_vec())
        })
        .collect();
    let headers = select(parts).prop_flat_map(|(header, data)| {
        harness::mutated(vec![header], model_tokens()).prop_map(move |header| {
            let mut out = (header.len() as u64).to_le_bytes().to_vec();
            out.extend_from_slice(&header);
            out.extend_from_slice(&data);
            Bytes(out)
        })
    });
    prop_oneof![
        1 => harness::bytes_input(files, model_tokens()),
        1 => headers,
    ]
    .boxed()
}

/// Model files: mutated files and headers, and valid files whose description is mutated text.
fn model_input() -> BoxedStrategy<Bytes> {
    let models: Vec<Vec<u8>> = (1..4).map(|s| tiny_net(s).to_bytes().unwrap()).collect();
    let meta_texts: Vec<String> = models
        .iter()
        .map(|m| {
            let (header, _) = split_safetensors(m);
            header["__metadata__"]["zero.model"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let model = models[0].clone();
    prop_oneof![
        2 => safetensors_input(models),
        1 => harness::text_input(meta_texts, model_tokens())
            .prop_map(move |Text(t)| Bytes(with_description(&model, &t))),
    ]
    .boxed()
}

/// Every variable of a network, as numbers.
fn weights(net: &Net) -> Vec<(String, Vec<f32>)> {
    let mut vars: Vec<_> = net.vs.variables().into_iter().collect();
    vars.sort_by(|a, b| a.0.cmp(&b.0));
    vars.into_iter()
        .map(|(n, t)| (n, Vec::<f32>::try_from(&t.flatten(0, -1)).unwrap()))
        .collect()
}

/// Weights as bits, so that NaNs (a damaged file may hold them) compare equal.
fn bits(weights: &[(String, Vec<f32>)]) -> Vec<(&str, Vec<u32>)> {
    weights
        .iter()
        .map(|(n, v)| (n.as_str(), v.iter().map(|x| x.to_bits()).collect()))
        .collect()
}

fn model_meta() -> impl Strategy<Value = (u32, u64, u32, String)> {
    (any::<u32>(), any::<u64>(), any::<u32>(), ".{0,16}")
}

#[test]
fn fuzz_model() {
    let path = fuzz_path("best.safetensors");
    let shape = Shape::of::<TicTacToe>();
    let base = tiny_net(1);
    let strategy = (model_input(), model_meta());
    run(
        "model",
        strategy,
        |(Bytes(bytes), (generation, steps, iteration, note))| {
            let shown = path.display().to_string();
            let loaded = Net::load_bytes(&path, &bytes, "tictactoe", shape, tch::Device::Cpu);
            let meta = Net::read_meta_bytes(&path, &bytes);
            match loaded {
                Ok(net) => {
                    harness::accepted();
                    // What loads is a model its writer could have written: the same description
                    // in the header, weights that save and load back unchanged.
                    prop_assert_eq!(meta.as_ref().ok(), Some(&net.meta));
                    let again = net.to_bytes().unwrap();
                    let back = Net::load_bytes(&path, &again, "tictactoe", shape, tch::Device::Cpu)
                        .unwrap();
                    prop_assert_eq!(&back.meta, &net.meta);
                    prop_assert!(bits(&weights(&back)) == bits(&weights(&net)));
                }
                Err(e) => clear(&e, &[&shown])?,
            }
            if let Err(e) = meta {
                clear(&e, &[&shown])?;
            }
            // Round trip of a description.
            let mut net = base.try_clone(tch::Device::Cpu).unwrap();
            net.meta.generation = generation;
            net.meta.training_steps = steps;
            net.meta.iteration = iteration;
            net.meta.config = serde_json::json!({ "note": note });
            let written = net.to_bytes().unwrap();
            let back =
                Net::load_bytes(&path, &written, "tictactoe", shape, tch::Device::Cpu).unwrap();
            prop_assert_eq!(&back.meta, &net.meta);
            prop_assert!(bits(&weights(&back)) == bits(&weights(&net)));
            prop_assert_eq!(Net::read_meta_bytes(&path, &written).unwrap(), net.meta);
            Ok(())
        },
    );
}

/// The tensors container of models and training checkpoints.
#[test]
fn fuzz_safetensors() {
    let checkpoint = {
        let scalar = |x: f64| tch::Tensor::from_slice(&[x]);
        let named = vec![
            (
                "net.w".to_string(),
                tch::Tensor::from_slice(&[1.5f32, -2.0, 0.25]).view([3, 1]),
            ),
            ("state.step".to_string(), scalar(12.0)),
            ("state.iteration".to_string(), scalar(3.0)),
        ];
        to_safetensors_bytes(&named, None).unwrap()
    };
    let seeds = vec![checkpoint, tiny_net(1).to_bytes().unwrap()];
    let strategy = (
        safetensors_input(seeds),
        prop::collection::vec((".{1,8}", prop::collection::vec(finite32(), 0..6)), 0..4),
    );
    run("safetensors", strategy, |(Bytes(bytes), tensors)| {
        if let Ok((named, meta)) = from_safetensors_bytes(&bytes) {
            harness::accepted();
            let again =
                to_safetensors_bytes(&named, (!named.is_empty()).then(|| meta.clone())).unwrap();
            let (back, back_meta) = from_safetensors_bytes(&again).unwrap();
            if !named.is_empty() {
                prop_assert_eq!(back_meta, meta);
            }
            prop_assert_eq!(back.len(), named.len());
            for ((n1, t1), (n2, t2)) in named.iter().zip(&back) {
                prop_assert_eq!(n1, n2);
                prop_assert_eq!(t1.size(), t2.size());
                prop_assert_eq!(t1.kind(), t2.kind());
                prop_assert!(t1.equal_nan(t2));
            }
        }
        // Round trip.
        let unique: HashMap<String, Vec<f32>> = tensors.into_iter().collect();
        let named: Vec<(String, tch::Tensor)> = unique
            .iter()
            .map(|(n, v)| (n.clone(), tch::Tensor::from_slice(v)))
            .collect();
        let meta = HashMap::from([("k".to_string(), "v".to_string())]);
        let meta = (!named.is_empty()).then_some(meta);
        let written = to_safetensors_bytes(&named, meta.clone()).unwrap();
        let (back, back_meta) = from_safetensors_bytes(&written).unwrap();
        prop_assert_eq!(back_meta, meta.unwrap_or_default());
        let back: HashMap<String, Vec<f32>> = back
            .iter()
            .map(|(n, t)| (n.clone(), Vec::<f32>::try_from(t).unwrap()))
            .collect();
        prop_assert_eq!(back, unique);
        Ok(())
    });
}

// Tensor equality with NaNs equal (a mutated file may hold NaNs).
trait EqualNan {
    fn equal_nan(&self, other: &tch::Tensor) -> bool;
}

impl EqualNan for tch::Tensor {
    fn equal_nan(&self, other: &tch::Tensor) -> bool {
        let a = Vec::<f64>::try_from(&self.flatten(0, -1).to_kind(tch::Kind::Double));
        let b = Vec::<f64>::try_from(&other.flatten(0, -1).to_kind(tch::Kind::Double));
        match (a, b) {
            (Ok(a), Ok(b)) => {
                a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits())
            }
            _ => false,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The Connect Four solver's opening book and cache.
// ---------------------------------------------------------------------------------------------

/// Keys of positions are below 2^49 (one bit a cell plus one a column).
const KEY_LIMIT: u64 = 1 << 49;

fn book_entries() -> impl Strategy<Value = (u32, HashMap<u64, i8>)> {
    (
        0u32..=42,
        prop::collection::hash_map(0..KEY_LIMIT, MIN_SCORE as i8..=MAX_SCORE as i8, 0..40),
    )
}

#[test]
fn fuzz_book() {
    let mut runner = TestRunner::deterministic();
    let seeds: Vec<Vec<u8>> = (0..12)
        .map(|_| {
            let (depth, map) = book_entries().new_tree(&mut runner).unwrap().current();
            Book::from_map(depth, &map).to_bytes().unwrap()
        })
        .collect();
    let path = fuzz_path("book-12.bin");
    let remedy = "rebuild it with `zero solve --build-book DEPTH`";
    let valid = seeds[0].clone();
    let strategy = (checked_file_input(seeds), book_entries());
    run("book", strategy, |(Bytes(bytes), (depth, map))| {
        if past_container(&valid, &bytes) {
            harness::decoded();
        }
        match Book::from_bytes(&path, &bytes) {
            Ok(book) => {
                harness::accepted();
                prop_assert!(book.depth() <= 42);
                let again = book.to_bytes().unwrap();
                let back = Book::from_bytes(&path, &again).unwrap();
                prop_assert_eq!(back.to_bytes().unwrap(), again);
                prop_assert_eq!(back.len(), book.len());
            }
            Err(e) => clear_file_error(&e, &path, remedy)?,
        }
        let written = Book::from_map(depth, &map).to_bytes().unwrap();
        let back = Book::from_bytes(&path, &written).unwrap();
        prop_assert_eq!((back.depth(), back.len()), (depth, map.len()));
        for (&key, &score) in &map {
            prop_assert_eq!(back.get(key), Some(score as i32));
            prop_assert_eq!(back.get(key ^ 1).is_some(), map.contains_key(&(key ^ 1)));
        }
        Ok(())
    });
}

/// The cache's record as its module documents it: key (u64 LE), lower and upper bound (i8),
/// the low 16 bits of the CRC-32 of those 10 bytes (LE).
fn cache_record(key: u64, lower: i8, upper: i8) -> [u8; 12] {
    let mut r = [0u8; 12];
    r[..8].copy_from_slice(&key.to_le_bytes());
    r[8] = lower as u8;
    r[9] = upper as u8;
    let check = crc32fast::hash(&r[..10]) as u16;
    r[10..].copy_from_slice(&check.to_le_bytes());
    r
}

/// The header of a cache file, as the solver writes it.
fn cache_header() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    Cache::open(dir.path()).unwrap().insert(5, 1).unwrap();
    let bytes = std::fs::read(dir.path().join("cache.bin")).unwrap();
    assert_eq!(&bytes[STREAM_HEADER_BYTES..], &cache_record(5, 1, 1));
    bytes[..STREAM_HEADER_BYTES].to_vec()
}

/// A cache file: the header, then the records.
fn cache_file(header: &[u8], entries: &[(u64, i8, i8)]) -> Vec<u8> {
    let mut out = header.to_vec();
    for &(k, lo, hi) in entries {
        out.extend_from_slice(&cache_record(k, lo, hi));
    }
    out
}

/// Bounds the solver records: an exact score, or a lower bound (upper bound 64: unknown).
fn cache_entry() -> impl Strategy<Value = (u64, i8, i8)> {
    let score = MIN_SCORE as i8..=MAX_SCORE as i8;
    prop_oneof![
        (0..KEY_LIMIT, score.clone()).prop_map(|(k, s)| (k, s, s)),
        (0..KEY_LIMIT, score).prop_map(|(k, s)| (k, s, 64)),
        (0..64u64, MIN_SCORE as i8..=0).prop_map(|(k, s)| (k, s, s)),
    ]
}

#[test]
fn fuzz_cache() {
    let header = cache_header();
    let file = |entries: &[(u64, i8, i8)]| cache_file(&header, entries);
    let mut runner = TestRunner::deterministic();
    let seeds: Vec<Vec<u8>> = (0..12)
        .map(|_| {
            let entries = prop::collection::vec(cache_entry(), 0..20)
                .new_tree(&mut runner)
                .unwrap()
                .current();
            file(&entries)
        })
        .collect();
    let path = fuzz_path("cache.bin");
    let remedy = "delete it; the solver rebuilds it as it plays (it is only a cache)";
    // Records of any contents under a valid check value, so that they reach the checks of
    // keys and bounds.
    let any_records = prop::collection::vec((harness::number(), any::<i8>(), any::<i8>()), 1..8)
        .prop_map({
            let header = header.clone();
            move |r| Bytes(cache_file(&header, &r))
        });
    let input = prop_oneof![
        3 => harness::bytes_input(seeds, &[]),
        1 => any_records,
    ];
    let strategy = (input, prop::collection::vec(cache_entry(), 0..20));
    run("cache", strategy, |(Bytes(bytes), entries)| {
        // A stream of records: the header is all its container checks.
        if bytes.starts_with(&header) {
            harness::decoded();
        }
        match Cache::from_bytes(&path, &bytes) {
            Ok(cache) => {
                harness::accepted();
                // Every whole record was a valid one; the cache answers with their bounds.
                prop_assert!(bytes.starts_with(&header));
                let mut bounds: HashMap<u64, (i8, i8)> = HashMap::new();
                for r in bytes[STREAM_HEADER_BYTES..].chunks_exact(12) {
                    let key = u64::from_le_bytes(r[..8].try_into().unwrap());
                    let (lo, hi) = (r[8] as i8, r[9] as i8);
                    prop_assert_eq!(&cache_record(key, lo, hi)[..], r);
                    prop_assert!(key < KEY_LIMIT && lo <= hi);
                    let b = bounds.entry(key).or_insert((-64, 64));
                    *b = (b.0.max(lo), b.1.min(hi));
                }
                prop_assert_eq!(cache.len(), bounds.len());
                for (key, (lo, hi)) in bounds {
                    prop_assert!(lo <= hi);
                    prop_assert_eq!(cache.get(key), (lo == hi).then_some(lo as i32));
                    prop_assert_eq!(cache.lower_bound(key), (lo > -64).then_some(lo as i32));
                }
            }
            Err(e) => clear_file_error(&e, &path, remedy)?,
        }
        // Round trip: consistent entries, merged as the cache merges them.
        let mut merged: HashMap<u64, (i8, i8)> = HashMap::new();
        let mut kept = Vec::new();
        for (k, lo, hi) in entries {
            let b = merged.entry(k).or_insert((-64, 64));
            let next = (b.0.max(lo), b.1.min(hi));
            if next.0 <= next.1 {
                *b = next;
                kept.push((k, lo, hi));
            }
        }
        let cache = Cache::from_bytes(&path, &file(&kept)).unwrap();
        prop_assert_eq!(cache.len(), merged.len());
        for (key, (lo, hi)) in merged {
            prop_assert_eq!(cache.get(key), (lo == hi).then_some(lo as i32));
        }
        Ok(())
    });
}

// ---------------------------------------------------------------------------------------------
// Q-tables and MC-ES tables.
// ---------------------------------------------------------------------------------------------

/// A Q-table of `G` over the positions `games` reach, with the values given.
fn qtable<G: Game>(games: &[(Vec<Index>, Vec<f32>)]) -> QTable<G> {
    let mut t = QTable::<G>::hashed();
    for (picks, values) in games {
        let (pos, _) = play::<G>(picks);
        let row = t.row_mut(&pos);
        for (m, v) in values.iter().enumerate().take(G::NUM_ACTIONS) {
            *t.value_mut(row, m as Move) = *v;
        }
    }
    t
}

fn qtable_games() -> impl Strategy<Value = Vec<(Vec<Index>, Vec<f32>)>> {
    prop::collection::vec((picks(12), prop::collection::vec(finite32(), 0..17)), 0..10)
}

fn check_qtable<G: Game>(
    path: &Path,
    bytes: &[u8],
    games: &[(Vec<Index>, Vec<f32>)],
) -> TestCaseResult {
    match QTable::<G>::from_bytes(path, bytes) {
        Ok(table) => {
            harness::accepted();
            let again = table.to_bytes().unwrap();
            prop_assert_eq!(
                QTable::<G>::from_bytes(path, &again)
                    .unwrap()
                    .to_bytes()
                    .unwrap(),
                again
            );
        }
        Err(e) => clear_file_error(&e, path, QTABLE.remedy)?,
    }
    let table = qtable::<G>(games);
    let back = QTable::<G>::from_bytes(path, &table.to_bytes().unwrap()).unwrap();
    prop_assert_eq!(back.len(), table.len());
    for (picks, _) in games {
        let (pos, _) = play::<G>(picks);
        for m in 0..G::NUM_ACTIONS as Move {
            prop_assert_eq!(back.get(&pos, m).to_bits(), table.get(&pos, m).to_bits());
        }
        prop_assert_eq!(back.greedy(&pos), table.greedy(&pos));
    }
    Ok(())
}

#[test]
fn fuzz_qtable() {
    let mut runner = TestRunner::deterministic();
    let mut seeds: Vec<Vec<u8>> = Vec::new();
    for _ in 0..6 {
        let games = qtable_games().new_tree(&mut runner).unwrap().current();
        seeds.push(qtable::<TicTacToe>(&games).to_bytes().unwrap());
        seeds.push(qtable::<Othello4>(&games).to_bytes().unwrap());
    }
    let path = fuzz_path("qtable.bin");
    let valid = seeds[0].clone();
    let strategy = (checked_file_input(seeds), qtable_games());
    run("qtable", strategy, |(Bytes(bytes), games)| {
        if past_container(&valid, &bytes) {
            harness::decoded();
        }
        check_qtable::<TicTacToe>(&path, &bytes, &games)?;
        check_qtable::<Othello4>(&path, &bytes, &games)
    });
}

fn mces() -> impl Strategy<Value = Mces> {
    let cell = (any::<u64>(), any::<i64>()).prop_map(|(n, s)| {
        // |sum| <= count, as returns of -1, 0 and 1 make.
        let s = if n == 0 {
            0
        } else {
            s % (n.min(i64::MAX as u64) as i64)
        };
        (n, s)
    });
    (
        prop::collection::vec((cell.clone(), cell, any::<bool>()), STATES),
        any::<u64>(),
    )
        .prop_map(|(cells, episodes)| {
            let mut m = Mces::new();
            for (i, ((n0, s0), (n1, s1), hit)) in cells.into_iter().enumerate() {
                m.counts[i] = [n0, n1];
                m.sums[i] = [s0, s1];
                m.policy[i] = if hit { Action::Hit } else { Action::Stick };
            }
            m.episodes = episodes;
            m
        })
}

#[test]
fn fuzz_mces() {
    let mut trained = Mces::new();
    trained.train(3000, &mut zero::games::blackjack::Deck::new(5));
    let mut runner = TestRunner::deterministic();
    let mut seeds = vec![Mces::new().to_bytes().unwrap(), trained.to_bytes().unwrap()];
    for _ in 0..4 {
        seeds.push(
            mces()
                .new_tree(&mut runner)
                .unwrap()
                .current()
                .to_bytes()
                .unwrap(),
        );
    }
    let path = fuzz_path("mces.bin");
    let valid = seeds[0].clone();
    let strategy = (checked_file_input(seeds), mces());
    run("mces", strategy, |(Bytes(bytes), learner)| {
        if past_container(&valid, &bytes) {
            harness::decoded();
        }
        match Mces::from_bytes(&path, &bytes) {
            Ok(m) => {
                harness::accepted();
                for (s, n) in m.sums.iter().flatten().zip(m.counts.iter().flatten()) {
                    prop_assert!(s.unsigned_abs() <= *n);
                }
                let again = m.to_bytes().unwrap();
                let back = Mces::from_bytes(&path, &again).unwrap();
                prop_assert_eq!(back.to_bytes().unwrap(), again);
            }
            Err(e) => clear_file_error(&e, &path, MCES.remedy)?,
        }
        let back = Mces::from_bytes(&path, &learner.to_bytes().unwrap()).unwrap();
        prop_assert_eq!(
            (back.sums, back.counts, back.policy, back.episodes),
            (
                learner.sums,
                learner.counts,
                learner.policy,
                learner.episodes
            )
        );
        Ok(())
    });
}

// ---------------------------------------------------------------------------------------------
// Regressions: the inputs fuzzing found, each with what the reader must do with it.
// ---------------------------------------------------------------------------------------------

/// A model whose description asks for a network far larger than its tensors (1,000,000
/// filters: 36 TB of weights) made `Net::load` build that network before comparing it with
/// the file: libtorch's allocation failed and tch panicked (a smaller number allocated it).
#[test]
fn regression_model_description_larger_than_its_tensors() {
    let model = tiny_net(1).to_bytes().unwrap();
    let description = r#"{"game":"tictactoe","arch":{"kind":"resnet","blocks":1,"filters":1000000},"shape":{"planes":3,"height":3,"width":3,"actions":9},"generation":0,"training_steps":0,"iteration":0,"config":null}"#;
    let bytes = with_description(&model, description);
    let path = fuzz_path("best.safetensors");
    let shape = Shape::of::<TicTacToe>();
    let e = Net::load_bytes(&path, &bytes, "tictactoe", shape, tch::Device::Cpu)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("hold 1044 numbers") && e.contains("(resnet 1x1000000) has 18000042000888"),
        "{e}"
    );
}

/// Pons' test lines were read with any score: 41564522 and -21 (a Connect Four score is at
/// most 18 in size, and less as the board fills).
#[test]
fn regression_labelled_positions_with_impossible_scores() {
    for (text, problem) in [
        (
            "641725477335522 -21",
            "score -21 is impossible after 15 moves (scores are -13 to 14)",
        ),
        (
            "4 41564522",
            "score 41564522 is impossible after 1 moves (scores are -18 to 18)",
        ),
        (
            "4444443333 17",
            "score 17 is impossible after 10 moves (scores are -16 to 16)",
        ),
    ] {
        let e = parse_labelled_positions(text, "t.txt")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("t.txt line 1: ") && e.contains(problem),
            "{e}"
        );
    }
    // The extremes that are possible are read.
    let read = parse_labelled_positions("4444443333 16\n4444 -18\n", "t.txt").unwrap();
    assert_eq!(read.iter().map(|e| e.2).collect::<Vec<_>>(), [16, -18]);
}

/// serde_json's default float parser can miss by one unit in the last place: a run.json with
/// this weight decay read back as 4.468779312599531e-198, so a run resumed with the settings it
/// started with was "a run with other settings"; a metrics line changed its figures likewise.
#[test]
fn regression_floats_in_json_read_back_exactly() {
    let path = fuzz_path("run.json");
    let mut cfg = RunConfig::preset("tiny", GameKind::TicTacToe, false).unwrap();
    cfg.train.weight_decay = 4.46877931259953e-198;
    let text = serde_json::to_vec_pretty(&cfg).unwrap();
    assert_eq!(parse_json::<RunConfig>(&path, &text).unwrap(), cfg);
    let record = StageRecord::SelfPlay(SelfPlayRecord {
        iteration: 0,
        games: 0,
        positions: 0,
        seconds: 0.0,
        positions_per_s: 0.0,
        nn_evals_per_s: 0.0,
        mean_batch: 0.0,
        cache_hit_rate: 1.1341519527143231e-61,
        results: None,
    });
    let line = serde_json::to_string(&record).unwrap();
    assert_eq!(parse_metrics(&line, &path).unwrap(), [record]);
}

/// safetensors 0.3.3 writes metadata without tensors as `{},"__metadata__":{...}}`, which
/// nothing reads back: encoding it is now an error instead of an unreadable file.
#[test]
fn regression_safetensors_metadata_without_tensors() {
    let meta = HashMap::from([("k".to_string(), "v".to_string())]);
    let e = to_safetensors_bytes(&[], Some(meta))
        .unwrap_err()
        .to_string();
    assert_eq!(e, "cannot encode metadata without any tensor");
    let empty = to_safetensors_bytes(&[], None).unwrap();
    let (named, meta) = from_safetensors_bytes(&empty).unwrap();
    assert!(named.is_empty() && meta.is_empty());
}

/// The harness finds what it is there for: a case that allocates 100 MiB at once fails.
#[test]
fn harness_fails_a_case_with_a_giant_allocation() {
    let result = std::panic::catch_unwind(|| {
        run("harness self-test", Just(Bytes(Vec::new())), |_| {
            let v = std::hint::black_box(vec![1u8; 100 << 20]);
            prop_assert_eq!(v.len(), 100 << 20);
            Ok(())
        })
    });
    let message = *result.unwrap_err().downcast::<String>().unwrap();
    assert!(
        message.contains("a single allocation of 104857600 bytes"),
        "{message}"
    );
}
