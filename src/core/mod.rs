//! Layer 1, what every other module shares and that knows nothing of games or players: the
//! seeded generator and named seed streams ([`rng`]), files that appear atomically and
//! checked binary containers ([`files`]), the progress sink library code reports through
//! ([`progress`]), and thread-count defaults ([`threads`]).

pub mod files;
pub mod progress;
pub mod rng;
pub mod threads;
