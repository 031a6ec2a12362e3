//! Every random choice flows from a seed the user sets: one generator type, one mixing
//! function, and named streams that derive independent seeds from a run's seed.

use rand::SeedableRng;

/// The seedable generator used everywhere.
pub type Rng64 = rand_pcg::Pcg64Mcg;

/// A generator whose whole sequence follows `seed`.
pub fn rng_from_seed(seed: u64) -> Rng64 {
    Rng64::seed_from_u64(seed)
}

/// Mixes a 64-bit value (the splitmix64 finaliser): nearby inputs give unrelated outputs, so
/// `mix64(seed ^ i)` for consecutive `i` are independent seeds. Also hashes position keys.
pub fn mix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A named family of seeds derived from a base seed: seed `index` of the stream is
/// `mix64(base ^ salt ^ index)`. Each use of randomness has its own stream, so adding a random
/// choice in one place never shifts the seeds of another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedStream {
    salt: u64,
}

impl SeedStream {
    pub const fn new(salt: u64) -> SeedStream {
        SeedStream { salt }
    }
    /// Seed number `index` of this stream under `base`.
    pub fn seed(self, base: u64, index: u64) -> u64 {
        mix64(base ^ self.salt ^ index)
    }
}

/// The streams of the pipeline and the arena. The salts are arbitrary but fixed: changing one
/// changes every result that depends on it.
pub mod streams {
    use super::SeedStream;

    /// The mini-batches of the training stage of iteration `index`.
    pub const TRAINING_BATCHES: SeedStream = SeedStream::new(0x7a11);
    /// The positions that the training stage of iteration `index` reanalyses, and their
    /// searches.
    pub const REANALYSIS: SeedStream = SeedStream::new(0x4ea1);
    /// The latest-against-best match of iteration `index`.
    pub const EVALUATION: SeedStream = SeedStream::new(0xe7a1);
    /// Best's match against the benchmark player in iteration `index`.
    pub const BENCHMARK: SeedStream = SeedStream::new(0xbe4c);
    /// Player A of one arena game (index 0), from the game's seed.
    pub const PLAYER_A: SeedStream = SeedStream::new(0xa);
    /// Player B of one arena game (index 0), from the game's seed.
    pub const PLAYER_B: SeedStream = SeedStream::new(0xb);
    /// The random opening of one pair of arena games (index 0), from the pair's seed.
    pub const OPENINGS: SeedStream = SeedStream::new(0x09e);
}

/// The seed of item `index` (a game of a match, a position of a test set) under `base`.
pub fn item_seed(base: u64, index: u64) -> u64 {
    mix64(base ^ mix64(index))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a = streams::EVALUATION.seed(7, 3);
        assert_eq!(a, streams::EVALUATION.seed(7, 3));
        assert_ne!(a, streams::BENCHMARK.seed(7, 3));
        assert_ne!(a, streams::EVALUATION.seed(7, 4));
        assert_ne!(a, streams::EVALUATION.seed(8, 3));
        let x: u64 = rng_from_seed(5).random();
        assert_eq!(x, rng_from_seed(5).random::<u64>());
    }

    #[test]
    fn mix64_matches_splitmix64() {
        // splitmix64's first output for state 0.
        assert_eq!(mix64(0), 0xe220_a839_7b1d_cdaf);
    }
}
