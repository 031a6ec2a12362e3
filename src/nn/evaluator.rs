//! What search asks of a network: [`Evaluator`], encoded positions in, policies and values out
//! (a network on the searching thread, or the batching inference thread's client).

use anyhow::Result;

use super::arch::Shape;

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
