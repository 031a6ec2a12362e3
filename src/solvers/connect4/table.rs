//! The transposition table: a prime number of two-entry buckets indexed by the canonical key,
//! the first entry of a bucket kept by the larger work behind it, the second always replaced.
//! An entry holds a lower and an upper bound on the score and the move that last cut off. The
//! table is cleared in O(1) by moving to a new generation, and backed by huge pages.

use super::score::{MAX_SCORE, MIN_SCORE};

/// The default table size for benchmarks and the command line: 2^23 entries (64 MiB).
pub const DEFAULT_TABLE_ENTRIES: usize = 1 << 23;

// The layout of an entry in its u64, low bits first:
//   bits  0-31  the low half of the key: with the bucket index (the key modulo a prime above
//               2^17) it pins the 49-bit key down exactly (Chinese remainder theorem);
//   bits 32-37  the lower bound + BOUND_OFFSET;
//   bits 38-43  the upper bound + BOUND_OFFSET;
//   bits 44-46  the column of the move that last cut off (NO_MOVE: none), in the orientation
//               of the canonical key;
//   bits 47-54  the table generation: entries of another generation count as empty;
//   bits 55-60  the work: log2 of the nodes searched to find the entry.
const KEY_BITS: u64 = 0xffff_ffff;
const LOWER_SHIFT: u32 = 32;
const UPPER_SHIFT: u32 = 38;
const MOVE_SHIFT: u32 = 44;
const GENERATION_SHIFT: u32 = 47;
const WORK_SHIFT: u32 = 55;
/// Bounds and the work take 6 bits each.
const SIX_BITS: u64 = 63;
/// Bounds are stored shifted up by this, so that -32..=31 fits in 6 bits.
const BOUND_OFFSET: i32 = 32;
/// Columns take 3 bits; 7 is no column.
const MOVE_BITS: u64 = 7;
const NO_MOVE: u64 = 7;

/// A lower bound that says nothing: below every score, yet inside the 6-bit field.
const NO_LOWER_BOUND: i32 = MIN_SCORE - 3;
/// An upper bound that says nothing: above every score, yet inside the 6-bit field.
const NO_UPPER_BOUND: i32 = MAX_SCORE + 3;
const _: () = assert!(NO_LOWER_BOUND + BOUND_OFFSET >= 0 && NO_UPPER_BOUND + BOUND_OFFSET <= 63);

/// An empty entry: generation 0, which no search uses. Any such pattern would do; a non-zero
/// one makes filling the table touch every page (see `Table::new`).
const EMPTY: u64 = 0x5555_5555;

/// The fewest buckets: the largest prime at most 2^18 lies above 2^17 (there is always a prime
/// between n and 2n), and 2^32 times a number above 2^17 exceeds every 49-bit key, so the
/// stored half key and the index still tell keys apart.
const MIN_BUCKETS: u64 = 1 << 18;

/// One table entry, packed in a u64 as laid out above.
#[derive(Clone, Copy)]
pub(super) struct Entry(u64);

impl Entry {
    fn new(key: u64, lower: i32, upper: i32, mv: u64, generation: u8, work: u64) -> Entry {
        Entry(
            (key & KEY_BITS)
                | (((lower + BOUND_OFFSET) as u64) << LOWER_SHIFT)
                | (((upper + BOUND_OFFSET) as u64) << UPPER_SHIFT)
                | (mv << MOVE_SHIFT)
                | ((generation as u64) << GENERATION_SHIFT)
                | (work << WORK_SHIFT),
        )
    }
    #[inline]
    fn matches(self, key: u64, generation: u8) -> bool {
        (self.0 as u32) == (key as u32) && self.generation() == generation
    }
    /// The score is at least this.
    #[inline]
    pub(super) fn lower(self) -> i32 {
        ((self.0 >> LOWER_SHIFT) & SIX_BITS) as i32 - BOUND_OFFSET
    }
    /// The score is at most this.
    #[inline]
    pub(super) fn upper(self) -> i32 {
        ((self.0 >> UPPER_SHIFT) & SIX_BITS) as i32 - BOUND_OFFSET
    }
    #[inline]
    fn mv(self) -> u64 {
        (self.0 >> MOVE_SHIFT) & MOVE_BITS
    }
    /// The column that last cut off, in the orientation of the canonical key.
    #[inline]
    pub(super) fn best_move(self) -> Option<usize> {
        let mv = self.mv();
        (mv != NO_MOVE).then_some(mv as usize)
    }
    #[inline]
    fn generation(self) -> u8 {
        (self.0 >> GENERATION_SHIFT) as u8
    }
    #[inline]
    fn work(self) -> u64 {
        (self.0 >> WORK_SHIFT) & SIX_BITS
    }
}

/// The work an entry stands for: log2 of the nodes searched to find it (the bit length of
/// `nodes`), capped to fit its 6 bits.
#[inline]
pub(super) fn work_of(nodes: u64) -> u64 {
    (64 - nodes.leading_zeros() as u64).min(SIX_BITS)
}

/// The transposition table: buckets of two entries, the first kept by the larger work, the
/// second always replaced.
pub(super) struct Table {
    buckets: Vec<[u64; 2]>,
    /// 1 / the number of buckets, for a division-free modulo.
    inverse: f64,
    generation: u8,
}

/// Asks Linux to back the table with 2 MiB pages: its accesses are random, and with 4 KiB
/// pages nearly every probe would also miss the TLB.
fn advise_huge_pages(addr: usize, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = addr.next_multiple_of(HUGE);
        let end = (addr + len) / HUGE * HUGE;
        if end > start {
            // SAFETY: the range lies inside an allocation this table owns; the advice changes
            // only how pages are backed, never their contents, and a failure is harmless.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (addr, len);
}

/// The largest prime at most `n` (at least 2). The bucket count must be odd (coprime to the
/// 2^32 of the stored half key, for keys to stay exact); a prime one also keeps regular strides
/// between keys from crowding into few buckets.
fn prime_at_most(n: u64) -> u64 {
    let is_prime = |p: u64| {
        p >= 2
            && (2..)
                .take_while(|d| d * d <= p)
                .all(|d| !p.is_multiple_of(d))
    };
    (2..=n.max(2)).rev().find(|&p| is_prime(p)).unwrap_or(2)
}

impl Table {
    /// A table of about `entries` entries (rounded to a prime number of two-entry buckets, at
    /// least `MIN_BUCKETS` before rounding, so that the stored half key plus the index is exact).
    pub(super) fn new(entries: usize) -> Table {
        let buckets = prime_at_most(((entries / 2) as u64).max(MIN_BUCKETS)) as usize;
        let mut storage: Vec<[u64; 2]> = Vec::with_capacity(buckets);
        advise_huge_pages(
            storage.as_mut_ptr() as usize,
            buckets * std::mem::size_of::<[u64; 2]>(),
        );
        // Entries of generation 0 are empty. Filling with a non-zero pattern (not calloc's
        // lazily mapped zero pages) takes the page faults now rather than during a search.
        storage.resize(buckets, [EMPTY; 2]);
        Table {
            buckets: storage,
            inverse: 1.0 / buckets as f64,
            generation: 1,
        }
    }
    /// Forgets every entry (in O(1), by moving to a new generation; after 255 clears the
    /// generation wraps and the table is wiped for real).
    pub(super) fn clear(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.buckets.iter_mut().for_each(|b| *b = [EMPTY; 2]);
            self.generation = 1;
        }
    }
    /// `key` modulo the number of buckets, through a floating-point reciprocal: keys are below
    /// 2^49, so the quotient is off by at most one and one correction makes it exact.
    #[inline]
    fn index(&self, key: u64) -> usize {
        let n = self.buckets.len() as i64;
        let q = (key as f64 * self.inverse) as i64;
        let mut r = key as i64 - q * n;
        if r < 0 {
            r += n;
        } else if r >= n {
            r -= n;
        }
        r as usize
    }
    /// Asks the processor to start loading `key`'s bucket.
    #[inline]
    pub(super) fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let ptr = self.buckets.as_ptr().wrapping_add(self.index(key)) as *const i8;
            // SAFETY: a prefetch is a hint; it never faults nor changes memory.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(ptr) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }
    /// The entry for `key`, if the table holds one.
    #[inline]
    pub(super) fn get(&self, key: u64) -> Option<Entry> {
        let bucket = &self.buckets[self.index(key)];
        bucket
            .iter()
            .map(|&e| Entry(e))
            .find(|e| e.matches(key, self.generation))
    }
    /// Records that the score is at least `lower`, found when the move `col` (in the
    /// orientation of the canonical key) cut off.
    #[inline]
    pub(super) fn put_lower(&mut self, key: u64, lower: i32, col: usize, work: u64) {
        self.put(key, lower, NO_UPPER_BOUND, col as u64, work);
    }
    /// Records that the score is at most `upper` (no move cut off).
    #[inline]
    pub(super) fn put_upper(&mut self, key: u64, upper: i32, work: u64) {
        self.put(key, NO_LOWER_BOUND, upper, NO_MOVE, work);
    }
    #[inline]
    fn put(&mut self, key: u64, lower: i32, upper: i32, mv: u64, work: u64) {
        let generation = self.generation;
        let i = self.index(key);
        let bucket = &mut self.buckets[i];
        for slot in bucket.iter_mut() {
            let e = Entry(*slot);
            if e.matches(key, generation) {
                // Both the old and the new bounds hold: keep the tighter of each.
                let lower = lower.max(e.lower());
                let upper = upper.min(e.upper());
                let mv = if mv == NO_MOVE { e.mv() } else { mv };
                *slot = Entry::new(key, lower, upper, mv, generation, work.max(e.work())).0;
                return;
            }
        }
        // A new position: it takes the first slot if that one is stale or cost no more work
        // (which then moves to the always-replaced second slot), else the second.
        let new = Entry::new(key, lower, upper, mv, generation, work).0;
        let first = Entry(bucket[0]);
        if first.generation() != generation || work >= first.work() {
            bucket[1] = bucket[0];
            bucket[0] = new;
        } else {
            bucket[1] = new;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_is_the_key_modulo_the_bucket_count() {
        let t = Table::new(1 << 19);
        let n = t.buckets.len() as u64;
        for key in [
            0,
            1,
            n - 1,
            n,
            n + 1,
            (1 << 49) - 1,
            0x1234_5678_9abc,
            1 << 48,
        ] {
            assert_eq!(t.index(key) as u64, key % n, "key {key}");
        }
    }

    #[test]
    fn entries_round_trip() {
        let e = Entry::new(0x1_2345_6789, -18, 21, 5, 200, 40);
        assert!(e.matches(0x1_2345_6789, 200));
        assert!(!e.matches(0x1_2345_6789, 199));
        assert_eq!((e.lower(), e.upper(), e.mv(), e.work()), (-18, 21, 5, 40));
        assert_eq!(e.best_move(), Some(5));
        assert_eq!(Entry::new(1, 0, 0, NO_MOVE, 1, 0).best_move(), None);
    }

    #[test]
    fn bounds_tighten_and_clear_forgets() {
        let mut t = Table::new(1 << 18);
        let key = 0x1_0000_0123;
        t.put_lower(key, -2, 4, 3);
        t.put_upper(key, 5, 1);
        let e = t.get(key).unwrap();
        assert_eq!((e.lower(), e.upper(), e.best_move()), (-2, 5, Some(4)));
        t.clear();
        assert!(t.get(key).is_none());
    }

    #[test]
    fn the_fewest_buckets_are_still_enough() {
        assert!(prime_at_most(MIN_BUCKETS) > 1 << 17);
    }
}
