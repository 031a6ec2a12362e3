//! Batched inference. A network's tensors are `Send` but not `Sync`, so one thread owns the
//! network and serves requests from the self-play workers over crossbeam channels, merging the
//! batches that arrive together into one forward pass (as KataGo and Leela do).

use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use crossbeam_channel::{bounded, unbounded, Receiver, Sender};

use super::net::{Net, Shape};

/// Anything that turns encoded positions into policies (softmax over all actions) and values.
pub trait Evaluator {
    fn shape(&self) -> Shape;
    fn evaluate(
        &mut self,
        inputs: &[f32],
        n: usize,
        policies: &mut [f32],
        values: &mut [f32],
    ) -> Result<()>;
}

/// A network evaluates inline, on the calling thread (used by players).
impl Evaluator for Net {
    fn shape(&self) -> Shape {
        self.meta.shape
    }
    fn evaluate(
        &mut self,
        inputs: &[f32],
        n: usize,
        policies: &mut [f32],
        values: &mut [f32],
    ) -> Result<()> {
        Net::evaluate(self, inputs, n, policies, values);
        Ok(())
    }
}

struct Request {
    inputs: Vec<f32>,
    n: usize,
    reply: Sender<(Vec<f32>, Vec<f32>)>,
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

/// The thread that owns a network.
pub struct InferenceServer {
    tx: Option<Sender<Request>>,
    handle: Option<JoinHandle<InferenceStats>>,
    shape: Shape,
}

impl InferenceServer {
    /// Moves `net` into a new inference thread. Batches from several clients are merged up to
    /// `max_batch` positions.
    pub fn start(net: Net, max_batch: usize) -> InferenceServer {
        let shape = net.meta.shape;
        let (tx, rx) = unbounded::<Request>();
        let handle = std::thread::spawn(move || serve(net, rx, max_batch));
        InferenceServer {
            tx: Some(tx),
            handle: Some(handle),
            shape,
        }
    }

    pub fn client(&self) -> Result<InferenceClient> {
        let tx = self
            .tx
            .clone()
            .ok_or_else(|| anyhow!("the inference thread has stopped"))?;
        let (reply_tx, reply_rx) = bounded(1);
        Ok(InferenceClient {
            tx,
            reply_tx,
            reply_rx,
            shape: self.shape,
        })
    }

    /// Stops the thread once every client is gone and returns its statistics.
    pub fn finish(mut self) -> InferenceStats {
        self.tx.take();
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
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

fn serve(net: Net, rx: Receiver<Request>, max_batch: usize) -> InferenceStats {
    let shape = net.meta.shape;
    let (isz, asz) = (shape.input_size(), shape.actions);
    let mut stats = InferenceStats::default();
    let mut inputs = Vec::new();
    let mut policies = Vec::new();
    let mut values = Vec::new();
    while let Ok(first) = rx.recv() {
        let mut pending = vec![first];
        let mut total = pending[0].n;
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
        for r in &pending {
            inputs.extend_from_slice(&r.inputs[..r.n * isz]);
        }
        policies.resize(total * asz, 0.0);
        values.resize(total, 0.0);
        let started = Instant::now();
        net.evaluate(&inputs, total, &mut policies, &mut values);
        stats.forward_seconds += started.elapsed().as_secs_f64();
        stats.positions += total as u64;
        stats.batches += 1;
        if stats.batch_sizes.len() <= total {
            stats.batch_sizes.resize(total + 1, 0);
        }
        stats.batch_sizes[total] += 1;
        let mut at = 0;
        for r in pending {
            let p = policies[at * asz..(at + r.n) * asz].to_vec();
            let v = values[at..at + r.n].to_vec();
            at += r.n;
            // A client that went away no longer needs its answer.
            let _ = r.reply.send((p, v));
        }
    }
    stats
}

/// A worker's handle on the inference thread.
pub struct InferenceClient {
    tx: Sender<Request>,
    reply_tx: Sender<(Vec<f32>, Vec<f32>)>,
    reply_rx: Receiver<(Vec<f32>, Vec<f32>)>,
    shape: Shape,
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
        let isz = self.shape.input_size();
        self.tx
            .send(Request {
                inputs: inputs[..n * isz].to_vec(),
                n,
                reply: self.reply_tx.clone(),
            })
            .map_err(|_| anyhow!("the inference thread has stopped"))?;
        let (p, v) = self
            .reply_rx
            .recv_timeout(Duration::from_secs(600))
            .map_err(|_| anyhow!("the inference thread did not answer"))?;
        policies[..p.len()].copy_from_slice(&p);
        values[..v.len()].copy_from_slice(&v);
        Ok(())
    }
}
