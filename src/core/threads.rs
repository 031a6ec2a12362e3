//! How many threads to use when the user does not say.

/// Caps [`default_threads`]: what a scheduler that gives the process fewer cores than the
/// machine has (a cluster's task, `scripts/zero-ray`) sets.
pub const THREADS_ENV: &str = "ZERO_THREADS";

/// Every core the process may use (1 if that cannot be read), or [`THREADS_ENV`]'s number
/// when that is set and smaller.
pub fn default_threads() -> usize {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let cap = std::env::var(THREADS_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0);
    cap.map_or(cores, |n| n.min(cores))
}

/// What a panicked thread said, for reporting it (`JoinHandle::join`'s error).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_string()
    }
}

/// A scoped thread's result, a panic in it turned into an error saying that `who` (e.g. "a
/// self-play worker") panicked and with what message.
pub fn joined<T>(
    handle: std::thread::ScopedJoinHandle<'_, anyhow::Result<T>>,
    who: &str,
) -> anyhow::Result<T> {
    handle.join().unwrap_or_else(|p| {
        Err(anyhow::anyhow!(
            "{who} panicked: {}",
            panic_message(p.as_ref())
        ))
    })
}
