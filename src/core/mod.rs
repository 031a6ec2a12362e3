//! Layer 1, what every other module shares and that knows nothing of games or players: the
//! seeded generator and named seed streams ([`rng`]), files that appear atomically and
//! checked binary containers ([`files`]), one writer per run directory ([`lock`]), the process's
//! memory ([`memory`]), the progress sink library code reports through ([`progress`]),
//! thread-count defaults ([`threads`]), the largest counts a person may ask for ([`limits`]),
//! data files compiled in as the fallback for a file not found on disk ([`bundled`]), the
//! folder of files it can make again ([`cache_dir`]), and the
//! flag that asks a long search to stop early ([`stop`]).

pub mod bundled;
pub mod cache_dir;
pub mod files;
pub mod limits;
pub mod lock;
pub mod memory;
pub mod progress;
pub mod rng;
pub mod stop;
pub mod threads;
