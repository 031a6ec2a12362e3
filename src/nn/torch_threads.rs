//! How many CPU threads libtorch computes with, set explicitly in every thread that runs it.
//!
//! libtorch keeps one count for the process and one for each thread: a thread takes the
//! process's count the first time it runs an operation or asks for its count, even when it
//! set its own before, and `set_num_threads` sets both. A thread that did not set its own
//! count after that first time so computes with whatever was last set anywhere, and
//! two stages running at once in one process (tests, a library caller) gave their worker
//! threads each other's counts: different sums, different networks. So every thread that runs
//! libtorch sets its count first: [`use_caller_threads`] for threads that evaluate beside
//! others (search, inference servers, arena games), [`TorchThreads`] while a stage runs alone.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use crate::core::threads::default_threads;

/// The count [`set_caller_threads`] set; 0 while none was.
static CALLER_THREADS: AtomicUsize = AtomicUsize::new(0);

/// Sets the libtorch threads of each thread that evaluates beside others (the command line's
/// `ZERO_TORCH_THREADS`). Threads started after this take it.
pub fn set_caller_threads(threads: usize) {
    CALLER_THREADS.store(threads.max(1), Ordering::Relaxed);
}

/// The libtorch threads of a thread that evaluates beside others: the count
/// [`set_caller_threads`] set, else one on a CPU and every core where CUDA computes. On a CPU
/// libtorch's OpenMP threads spin while they wait, and two of them for each search thread ran
/// up to 15 times slower than one on a 2-core machine; the other cores go to search threads.
pub fn caller_threads() -> usize {
    static DEFAULT: OnceLock<usize> = OnceLock::new();
    match CALLER_THREADS.load(Ordering::Relaxed) {
        0 => *DEFAULT.get_or_init(|| {
            if tch::Cuda::is_available() {
                default_threads()
            } else {
                1
            }
        }),
        n => n,
    }
}

/// Gives the calling thread [`caller_threads`] libtorch threads: first thing in every thread
/// that runs libtorch beside others.
pub fn use_caller_threads() {
    set_in_this_thread(caller_threads());
}

/// Gives the calling thread `threads` libtorch threads, for good: asking for its count first
/// makes libtorch take the process's now, so that it does not overwrite this one later.
fn set_in_this_thread(threads: usize) {
    let _ = tch::get_num_threads();
    tch::set_num_threads(threads.max(1) as i32);
}

/// `threads` libtorch threads in the calling thread for as long as the guard lives, then
/// [`caller_threads`]: a stage that runs alone (training) takes every core (one for small
/// steps: [`super::training_threads`]) and gives them back to the threads that search.
pub struct TorchThreads(());

impl TorchThreads {
    pub fn set(threads: usize) -> TorchThreads {
        set_in_this_thread(threads);
        TorchThreads(())
    }
}

impl Drop for TorchThreads {
    fn drop(&mut self) {
        use_caller_threads();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_computes_with_the_count_it_set_whatever_another_sets_later() {
        let (set, read) = (std::sync::Barrier::new(2), std::sync::Barrier::new(2));
        std::thread::scope(|scope| {
            let mine = scope.spawn(|| {
                set_in_this_thread(1);
                set.wait();
                read.wait();
                tch::get_num_threads()
            });
            scope.spawn(|| {
                set.wait();
                tch::set_num_threads(2);
                read.wait();
            });
            assert_eq!(mine.join().ok(), Some(1));
        });
    }

    #[test]
    fn the_guard_gives_the_caller_count_back() {
        std::thread::spawn(|| {
            {
                let _training = TorchThreads::set(3);
                assert_eq!(tch::get_num_threads(), 3);
            }
            assert_eq!(tch::get_num_threads() as usize, caller_threads());
        })
        .join()
        .unwrap();
    }
}
