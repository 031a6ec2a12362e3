//! How many threads to use when the user does not say.

/// Every core the process may use (1 if that cannot be read).
pub fn default_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}
