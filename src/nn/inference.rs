//! Batched inference. A network's tensors are `Send` but not `Sync`, so one thread owns the
//! network and serves requests from the self-play workers over crossbeam channels, merging the
//! batches that arrive together into one forward pass (as KataGo and Leela do).
//!
//! Failures reach the worker that asked: a forward pass that fails answers each of its
//! requests with the libtorch message, and if the thread itself panics, the waiting workers,
//! later requests and [`InferenceServer::finish`] all report the panic's message.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use crossbeam_channel::{bounded, unbounded, Receiver, RecvTimeoutError, Sender};

use super::arch::Shape;
use super::evaluator::Evaluator;
use super::folded::InferenceNet;
use crate::core::threads::panic_message;

/// An evaluator that counts what it evaluates, as the inference thread does: for a network
/// owned by the thread that searches (one per self-play worker on a CPU).
pub struct Metered<E> {
    pub inner: E,
    pub stats: InferenceStats,
}

impl<E> Metered<E> {
    pub fn new(inner: E) -> Self {
        Metered {
            inner,
            stats: InferenceStats::default(),
        }
    }
}

impl<E: Evaluator> Evaluator for Metered<E> {
    fn shape(&self) -> Shape {
        self.inner.shape()
    }
    fn evaluate(
        &mut self,
        inputs: &[f32],
        n: usize,
        policies: &mut [f32],
        values: &mut [f32],
    ) -> Result<()> {
        let started = std::time::Instant::now();
        self.inner.evaluate(inputs, n, policies, values)?;
        self.stats.record(n, started.elapsed().as_secs_f64());
        Ok(())
    }
}

/// Policies and values for a request's positions, or what went wrong.
type Reply = std::result::Result<(Vec<f32>, Vec<f32>), String>;

struct Request {
    inputs: Vec<f32>,
    n: usize,
    reply: Sender<Reply>,
}

/// What the inference thread did.
#[derive(Clone, Debug, Default)]
pub struct InferenceStats {
    pub positions: u64,
    pub batches: u64,
    /// Time spent in forward passes.
    pub forward_seconds: f64,
    /// How many batches had each size (index = size), so that a benchmark can replay them.
    pub batch_sizes: Vec<u64>,
}

impl InferenceStats {
    /// Counts one forward pass of `n` positions that took `seconds`.
    fn record(&mut self, n: usize, seconds: f64) {
        self.forward_seconds += seconds;
        self.positions += n as u64;
        self.batches += 1;
        if self.batch_sizes.len() <= n {
            self.batch_sizes.resize(n + 1, 0);
        }
        self.batch_sizes[n] += 1;
    }

    /// Adds another thread's counts.
    pub fn merge(&mut self, o: &InferenceStats) {
        self.forward_seconds += o.forward_seconds;
        self.positions += o.positions;
        self.batches += o.batches;
        if self.batch_sizes.len() < o.batch_sizes.len() {
            self.batch_sizes.resize(o.batch_sizes.len(), 0);
        }
        for (a, b) in self.batch_sizes.iter_mut().zip(&o.batch_sizes) {
            *a += b;
        }
    }
}

/// How the inference thread forms its batches.
#[derive(Clone, Copy, Debug)]
struct Batching {
    /// Requests are merged until a batch holds this many positions.
    max_batch: usize,
    /// Whether a batch is padded (with empty positions) to one of a few sizes.
    pad: bool,
}

/// The batch size `n` positions are padded to: the next power of two, or three quarters of
/// it, whichever is the smaller that holds them (at most a third more work; 2 shapes an
/// octave).
fn padded_size(n: usize) -> usize {
    let p = n.next_power_of_two();
    if p >= 4 && n <= p / 4 * 3 {
        p / 4 * 3
    } else {
        p
    }
}

/// Where the inference thread leaves its panic's message for the clients.
type PanicSlot = Arc<Mutex<Option<String>>>;

/// The thread that owns a network.
pub struct InferenceServer {
    tx: Option<Sender<Request>>,
    handle: Option<JoinHandle<InferenceStats>>,
    shape: Shape,
    panicked: PanicSlot,
}

impl InferenceServer {
    /// Moves `net` into a new inference thread. Batches from several clients are merged up to
    /// `max_batch` positions.
    pub fn start(net: InferenceNet, max_batch: usize) -> InferenceServer {
        Self::spawn(
            net,
            Batching {
                max_batch,
                pad: false,
            },
        )
    }

    /// The same, but every batch is padded to a power of two or three quarters of one, so that
    /// the network sees a few batch shapes only. libtorch's oneDNN keeps the kernels it builds for each shape (up to
    /// a thousand), so a long-lived server whose batches take every size up to `max_batch`
    /// grows by tens of MiB for a long while (measured: `zero serve` under load, 460 to 680
    /// MiB over ten rounds of games); padded, it stays flat, for at most twice the work on a
    /// batch.
    pub fn start_padded(net: InferenceNet, max_batch: usize) -> InferenceServer {
        Self::spawn(
            net,
            Batching {
                max_batch,
                pad: true,
            },
        )
    }

    fn spawn(net: InferenceNet, batching: Batching) -> InferenceServer {
        let shape = net.meta.shape;
        let (tx, rx) = unbounded::<Request>();
        let panicked = PanicSlot::default();
        let slot = panicked.clone();
        let handle = std::thread::spawn(move || run(net, rx, batching, slot));
        InferenceServer {
            tx: Some(tx),
            handle: Some(handle),
            shape,
            panicked,
        }
    }

    pub fn client(&self) -> Result<InferenceClient> {
        let tx = self
            .tx
            .clone()
            .ok_or_else(|| anyhow!("the inference thread has stopped"))?;
        Ok(InferenceClient {
            tx,
            shape: self.shape,
            panicked: self.panicked.clone(),
        })
    }

    /// Stops the thread once every client is gone and returns its statistics; an error with
    /// its message if it panicked.
    pub fn finish(mut self) -> Result<InferenceStats> {
        self.tx.take();
        match self.handle.take() {
            Some(h) => h
                .join()
                .map_err(|payload| anyhow!(panicked(&panic_message(payload.as_ref())))),
            None => Ok(InferenceStats::default()),
        }
    }
}

impl Drop for InferenceServer {
    fn drop(&mut self) {
        self.tx.take();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn panicked(message: &str) -> String {
    format!("the inference thread panicked: {message}")
}

/// The inference thread: serves until every client is gone. If serving panics, the message
/// goes to the panic slot and to every request taken but not answered, before the request
/// channel closes (so a client that finds it closed finds the message too); then the panic
/// goes on to `join`.
fn run(
    net: InferenceNet,
    rx: Receiver<Request>,
    batching: Batching,
    slot: PanicSlot,
) -> InferenceStats {
    super::use_caller_threads();
    let mut pending = Vec::new();
    let served = catch_unwind(AssertUnwindSafe(|| {
        serve(&net, &rx, batching, &mut pending)
    }));
    match served {
        Ok(stats) => stats,
        Err(payload) => {
            let message = panicked(&panic_message(payload.as_ref()));
            *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(message.clone());
            // `try_send`: a request answered before the panic has its reply waiting already.
            for r in pending.drain(..) {
                let _ = r.reply.try_send(Err(message.clone()));
            }
            drop(rx);
            resume_unwind(payload)
        }
    }
}

/// Answers requests, merging those that wait into batches of up to `max_batch` positions
/// (padded if `batching` says so). `pending` holds the requests of the batch in hand.
fn serve(
    net: &InferenceNet,
    rx: &Receiver<Request>,
    batching: Batching,
    pending: &mut Vec<Request>,
) -> InferenceStats {
    let max_batch = batching.max_batch;
    let shape = net.meta.shape;
    let (isz, asz) = (shape.input_size(), shape.actions);
    let mut stats = InferenceStats::default();
    let mut inputs = Vec::new();
    let mut policies = Vec::new();
    let mut values = Vec::new();
    while let Ok(first) = rx.recv() {
        let mut total = first.n;
        pending.push(first);
        while total < max_batch {
            match rx.try_recv() {
                Ok(r) => {
                    total += r.n;
                    pending.push(r);
                }
                Err(_) => break,
            }
        }
        inputs.clear();
        for r in pending.iter() {
            inputs.extend_from_slice(&r.inputs[..r.n * isz]);
        }
        // Padding positions are all zeros; their answers are computed and dropped.
        let size = if batching.pad {
            padded_size(total)
        } else {
            total
        };
        inputs.resize(size * isz, 0.0);
        policies.resize(size * asz, 0.0);
        values.resize(size, 0.0);
        let started = Instant::now();
        if let Err(e) = net.evaluate(&inputs, size, &mut policies, &mut values) {
            let message = format!("{e:#}");
            for r in pending.iter() {
                let _ = r.reply.send(Err(message.clone()));
            }
            pending.clear();
            continue;
        }
        stats.record(total, started.elapsed().as_secs_f64());
        let mut at = 0;
        for r in pending.iter() {
            let p = policies[at * asz..(at + r.n) * asz].to_vec();
            let v = values[at..at + r.n].to_vec();
            at += r.n;
            // A client that went away no longer needs its answer.
            let _ = r.reply.send(Ok((p, v)));
        }
        // Cleared only now: were anything above to panic, `run` still holds every request.
        pending.clear();
    }
    stats
}

/// A worker's handle on the inference thread.
pub struct InferenceClient {
    tx: Sender<Request>,
    shape: Shape,
    panicked: PanicSlot,
}

impl InferenceClient {
    /// Why the inference thread is gone: its panic's message if it panicked.
    fn stopped(&self) -> anyhow::Error {
        match &*self.panicked.lock().unwrap_or_else(|p| p.into_inner()) {
            Some(message) => anyhow!(message.clone()),
            None => anyhow!("the inference thread has stopped"),
        }
    }
}

impl Evaluator for InferenceClient {
    fn shape(&self) -> Shape {
        self.shape
    }
    fn evaluate(
        &mut self,
        inputs: &[f32],
        n: usize,
        policies: &mut [f32],
        values: &mut [f32],
    ) -> Result<()> {
        let (isz, a) = (self.shape.input_size(), self.shape.actions);
        if inputs.len() < n * isz || policies.len() < n * a || values.len() < n {
            return Err(anyhow!(
                "cannot evaluate {n} positions with {} inputs into room for {} policies and {} \
                 values",
                inputs.len(),
                policies.len(),
                values.len()
            ));
        }
        // A channel of its own for each request: if the thread goes away without answering,
        // the reply's sender is dropped and the wait ends at once.
        let (reply, answer) = bounded(1);
        self.tx
            .send(Request {
                inputs: inputs[..n * isz].to_vec(),
                n,
                reply,
            })
            .map_err(|_| self.stopped())?;
        let (p, v) = match answer.recv_timeout(Duration::from_secs(600)) {
            Ok(Ok(pv)) => pv,
            Ok(Err(message)) => return Err(anyhow!(message)),
            Err(RecvTimeoutError::Disconnected) => return Err(self.stopped()),
            Err(RecvTimeoutError::Timeout) => {
                return Err(anyhow!("the inference thread did not answer in 600 s"))
            }
        };
        policies[..p.len()].copy_from_slice(&p);
        values[..v.len()].copy_from_slice(&v);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::rng::rng_from_seed;
    use crate::games::tictactoe::TicTacToe;
    use crate::nn::{Arch, Net};
    use rand::Rng;
    use tch::Device;

    fn net() -> InferenceNet {
        let shape = Shape::of::<TicTacToe>();
        let arch = Arch::resnet(1, 8);
        let net = Net::new_seeded("tictactoe", arch, shape, Device::Cpu, 3).unwrap();
        InferenceNet::new(&net).unwrap()
    }

    fn inputs(shape: Shape, n: usize, seed: u64) -> Vec<f32> {
        let mut rng = rng_from_seed(seed);
        (0..n * shape.input_size())
            .map(|_| rng.random::<f32>())
            .collect()
    }

    /// Policies and values of `n` positions, evaluated inline.
    fn inline(net: &InferenceNet, x: &[f32], n: usize) -> (Vec<f32>, Vec<f32>) {
        let mut p = vec![0.0; n * net.meta.shape.actions];
        let mut v = vec![0.0; n];
        net.evaluate(x, n, &mut p, &mut v).unwrap();
        (p, v)
    }

    fn close(a: &[f32], b: &[f32]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-5)
    }

    #[test]
    fn a_merged_batch_answers_each_request_with_its_own_rows() {
        let net = net();
        let shape = net.meta.shape;
        // Padded to 8 positions, or not: the same answers.
        for pad in [false, true] {
            let (tx, rx) = unbounded();
            let sizes = [3, 1, 3];
            let mut asked = Vec::new();
            for (k, &n) in sizes.iter().enumerate() {
                let x = inputs(shape, n, k as u64);
                let (reply, answer) = bounded(1);
                tx.send(Request {
                    inputs: x.clone(),
                    n,
                    reply,
                })
                .unwrap();
                asked.push((x, n, answer));
            }
            drop(tx);
            let batching = Batching { max_batch: 64, pad };
            assert_eq!(padded_size(7), 8);
            assert_eq!((padded_size(5), padded_size(1), padded_size(3)), (6, 1, 3));
            let stats = serve(&net, &rx, batching, &mut Vec::new());
            assert_eq!(stats.batches, 1);
            assert_eq!(stats.positions, 7);
            for (x, n, answer) in asked {
                let (p, v) = answer.recv().unwrap().unwrap();
                let (ep, ev) = inline(&net, &x, n);
                assert!(close(&p, &ep) && close(&v, &ev));
            }
        }
    }

    #[test]
    fn concurrent_clients_each_get_their_own_answers() {
        let reference = net();
        let net = net();
        let shape = net.meta.shape;
        let server = InferenceServer::start(net, 64);
        let cases: Vec<(Vec<f32>, usize)> = [(3, 11), (5, 12)]
            .iter()
            .map(|&(n, seed)| (inputs(shape, n, seed), n))
            .collect();
        let expected: Vec<_> = cases
            .iter()
            .map(|(x, n)| inline(&reference, x, *n))
            .collect();
        // The two clients' answers differ: a swap would be seen.
        assert!(!close(&expected[0].1[..3], &expected[1].1[..3]));
        std::thread::scope(|scope| {
            for ((x, n), (ep, ev)) in cases.iter().zip(&expected) {
                let mut client = server.client().unwrap();
                scope.spawn(move || {
                    let mut p = vec![0.0; n * shape.actions];
                    let mut v = vec![0.0; *n];
                    for _ in 0..300 {
                        client.evaluate(x, *n, &mut p, &mut v).unwrap();
                        assert!(close(&p, ep) && close(&v, ev));
                    }
                });
            }
        });
        let stats = server.finish().unwrap();
        assert_eq!(stats.positions, 300 * (3 + 5));
    }

    #[test]
    fn a_failed_forward_pass_reaches_the_client_that_asked() {
        let mut net = net();
        // Inputs of one plane more than the network was made for: libtorch refuses them.
        net.meta.shape.planes += 1;
        let shape = net.meta.shape;
        let server = InferenceServer::start(net, 64);
        let mut client = server.client().unwrap();
        let mut p = vec![0.0; 2 * shape.actions];
        let mut v = vec![0.0; 2];
        for _ in 0..2 {
            let e = client
                .evaluate(&inputs(shape, 2, 1), 2, &mut p, &mut v)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("the network failed on a batch of 2 positions")
                    && e.contains("channels"),
                "{e}"
            );
        }
        drop(client);
        assert_eq!(server.finish().unwrap().batches, 0);
    }

    #[test]
    fn a_panic_of_the_inference_thread_is_reported_with_its_message() {
        let net = net();
        let shape = net.meta.shape;
        let server = InferenceServer::start(net, 64);
        let mut client = server.client().unwrap();
        // A malformed request (fewer inputs than positions) makes the thread panic.
        let (reply, answer) = bounded(1);
        let tx = server.tx.clone().unwrap();
        tx.send(Request {
            inputs: Vec::new(),
            n: 2,
            reply,
        })
        .unwrap();
        let e = answer.recv().unwrap().unwrap_err();
        assert!(
            e.starts_with("the inference thread panicked: range end index"),
            "{e}"
        );
        let mut p = vec![0.0; shape.actions];
        let mut v = vec![0.0; 1];
        let e = client
            .evaluate(&inputs(shape, 1, 1), 1, &mut p, &mut v)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("the inference thread panicked: range end index"),
            "{e}"
        );
        drop((client, tx));
        let e = server.finish().unwrap_err().to_string();
        assert!(
            e.starts_with("the inference thread panicked: range end index"),
            "{e}"
        );
    }
}
