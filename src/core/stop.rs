//! [`Stop`]: a flag one thread raises to ask a search running on another to finish now. A
//! tree search then plays the best move it has found so far; a solver gives up its search.
//! The flag is only a request: whoever searches looks at it between steps of its own choosing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A shared stop request; clones share the one flag.
#[derive(Clone, Debug, Default)]
pub struct Stop(Arc<AtomicBool>);

impl Stop {
    pub fn new() -> Stop {
        Stop::default()
    }
    /// Asks whoever holds a clone to stop.
    pub fn raise(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
    /// Whether a stop was asked for since the last [`Stop::clear`].
    pub fn is_raised(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
    /// Withdraws the request, before the next search.
    pub fn clear(&self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_flag() {
        let stop = Stop::new();
        let other = stop.clone();
        assert!(!other.is_raised());
        stop.raise();
        assert!(other.is_raised());
        other.clear();
        assert!(!stop.is_raised());
    }
}
