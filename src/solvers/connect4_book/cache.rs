//! The cache of solved positions: every score (or bound on one) the solver found, appended to
//! `cache.bin` so that it persists between runs.
//!
//! The file starts with the stream header of [`Format`] (kind `c4-cache`), then fixed records
//! of [`RECORD`] bytes: the canonical key (u64, little-endian), a lower and an upper bound on
//! the score (i8 each; equal for an exact score), and a check value (u16: the low half of the
//! CRC-32 of the 10 bytes before it), so that any flipped bit is found. A last record cut short
//! by a crash is ignored (and cut off before the next append); anything else that is wrong makes
//! the whole file suspect: [`Cache::open`] renames it aside (`cache.bin.corrupt-N`), warns, and
//! starts an empty cache, since it is only a cache; [`Cache::load`] refuses it, naming the file.
//! Either way a cache never answers with a score it did not find.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::core::files::{create_new_atomic, Format, STREAM_HEADER_BYTES};
use crate::core::progress;
use crate::games::connect4::{HEIGHT, WIDTH};
use crate::solvers::connect4::{MAX_SCORE, MIN_SCORE};

/// Every key of a position is below this: one bit per cell plus one per column.
pub(super) const KEY_LIMIT: u64 = 1 << ((HEIGHT + 1) * WIDTH);

/// The cache file: version 2 adds the header and the check value to the headerless records of
/// version 1.
const CACHE: Format = Format {
    kind: "c4-cache",
    version: 2,
    remedy: "delete it; the solver rebuilds it as it plays (it is only a cache)",
};
const CACHE_FILE: &str = "cache.bin";
/// Bytes of one record: key (8), lower bound (1), upper bound (1), check value (2).
const RECORD: usize = 12;

/// The bounds of a position nothing is known of.
const UNKNOWN_LOW: i8 = -64;
const UNKNOWN_HIGH: i8 = 64;

/// One record's bytes.
fn encode(key: u64, lower: i8, upper: i8) -> [u8; RECORD] {
    let mut rec = [0u8; RECORD];
    rec[..8].copy_from_slice(&key.to_le_bytes());
    rec[8] = lower as u8;
    rec[9] = upper as u8;
    let check = crc32fast::hash(&rec[..10]) as u16;
    rec[10..].copy_from_slice(&check.to_le_bytes());
    rec
}

/// A record's key and bounds, or what is wrong with it.
fn decode(rec: &[u8]) -> std::result::Result<(u64, i8, i8), &'static str> {
    let (Ok(key), Ok(check)) = (rec[..8].try_into(), rec[10..RECORD].try_into()) else {
        return Err("a record of the wrong size");
    };
    if crc32fast::hash(&rec[..10]) as u16 != u16::from_le_bytes(check) {
        return Err("its check value does not match");
    }
    let (key, lower, upper) = (u64::from_le_bytes(key), rec[8] as i8, rec[9] as i8);
    let score = |s: i8| (MIN_SCORE..=MAX_SCORE).contains(&(s as i32));
    if key >= KEY_LIMIT {
        return Err("its key is not a position's");
    }
    if !(lower == UNKNOWN_LOW || score(lower)) || !(upper == UNKNOWN_HIGH || score(upper)) {
        return Err("a bound is not a score");
    }
    if lower > upper {
        return Err("its lower bound is above its upper bound");
    }
    Ok((key, lower, upper))
}

/// Every position solved so far, appended to a file of fixed-size records. A record holds
/// bounds on the score: equal bounds for a solved position; a lower bound alone for a move the
/// player refuted without its exact score.
pub struct Cache {
    /// Canonical key to (lower, upper) bounds on the score.
    map: HashMap<u64, (i8, i8)>,
    file: Option<File>,
    path: PathBuf,
}

impl Cache {
    /// Loads the cache in `dir` (empty when there is none yet); new entries are appended to it.
    /// A damaged or foreign cache file is renamed aside (to the first free
    /// `cache.bin.corrupt-N`) with a warning, and the cache starts empty; a file that cannot be
    /// read at all is an error.
    pub fn open(dir: &Path) -> Result<Cache> {
        Ok(Cache::open_setting_aside(dir)?.0)
    }
    /// [`Cache::open`], and where a damaged file was set aside, if one was.
    pub fn open_setting_aside(dir: &Path) -> Result<(Cache, Option<PathBuf>)> {
        let path = dir.join(CACHE_FILE);
        let Some(bytes) = read_if_there(&path)? else {
            return Ok((Cache::empty(path), None));
        };
        match Cache::from_bytes(&path, &bytes) {
            Ok(cache) => Ok((cache, None)),
            Err(problem) => {
                let aside = set_aside(&path)?;
                if let Some(aside) = &aside {
                    progress::warn(&format!(
                        "{problem:#}; it was renamed {} and the solver starts an empty cache",
                        aside.display()
                    ));
                }
                Ok((Cache::empty(path), aside))
            }
        }
    }
    /// Loads the cache in `dir` as [`Cache::open`] does, but a damaged or foreign file is an
    /// error naming it, and stays where it is.
    pub fn load(dir: &Path) -> Result<Cache> {
        let path = dir.join(CACHE_FILE);
        match read_if_there(&path)? {
            Some(bytes) => Cache::from_bytes(&path, &bytes),
            None => Ok(Cache::empty(path)),
        }
    }
    fn empty(path: PathBuf) -> Cache {
        Cache {
            map: HashMap::new(),
            file: None,
            path,
        }
    }
    /// The cache in the bytes of the cache file at `path`, checked as [`Cache::open`] checks
    /// it; new entries are appended to `path`.
    pub fn from_bytes(path: &Path, bytes: &[u8]) -> Result<Cache> {
        let mut map: HashMap<u64, (i8, i8)> = HashMap::new();
        let records = CACHE.stream_records(path, bytes)?;
        // A last record cut short (by a crash while appending) is left out.
        for (i, rec) in records.chunks_exact(RECORD).enumerate() {
            let (key, lower, upper) = decode(rec)
                .map_err(|problem| CACHE.corrupt(path, format!("record {i}: {problem}")))?;
            let e = map.entry(key).or_insert((UNKNOWN_LOW, UNKNOWN_HIGH));
            *e = (e.0.max(lower), e.1.min(upper));
            if e.0 > e.1 {
                return Err(CACHE.corrupt(path, format!("record {i} contradicts an earlier one")));
            }
        }
        Ok(Cache {
            map,
            file: None,
            path: path.to_path_buf(),
        })
    }
    pub fn len(&self) -> usize {
        self.map.len()
    }
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
    /// The exact score, if known.
    pub fn get(&self, canonical_key: u64) -> Option<i32> {
        match self.map.get(&canonical_key) {
            Some(&(lower, upper)) if lower == upper => Some(lower as i32),
            _ => None,
        }
    }
    /// The known lower bound on the score, if any.
    pub fn lower_bound(&self, canonical_key: u64) -> Option<i32> {
        match self.map.get(&canonical_key) {
            Some(&(lower, _)) if lower > UNKNOWN_LOW => Some(lower as i32),
            _ => None,
        }
    }
    /// The known bounds on the score (lower, upper), if anything is known.
    pub fn bounds(&self, canonical_key: u64) -> Option<(i32, i32)> {
        self.map
            .get(&canonical_key)
            .map(|&(lower, upper)| (lower as i32, upper as i32))
    }
    /// Records the exact score.
    pub fn insert(&mut self, canonical_key: u64, score: i32) -> Result<()> {
        self.record(canonical_key, score as i8, score as i8)
    }
    /// Records that the score is at least `lower`.
    pub fn insert_lower_bound(&mut self, canonical_key: u64, lower: i32) -> Result<()> {
        self.record(canonical_key, lower as i8, UNKNOWN_HIGH)
    }
    /// Records that the score is at most `upper`.
    pub fn insert_upper_bound(&mut self, canonical_key: u64, upper: i32) -> Result<()> {
        self.record(canonical_key, UNKNOWN_LOW, upper as i8)
    }
    fn record(&mut self, canonical_key: u64, lower: i8, upper: i8) -> Result<()> {
        let e = self
            .map
            .entry(canonical_key)
            .or_insert((UNKNOWN_LOW, UNKNOWN_HIGH));
        let merged = (e.0.max(lower), e.1.min(upper));
        if merged == *e {
            return Ok(());
        }
        *e = merged;
        if self.file.is_none() {
            self.file = Some(open_for_appending(&self.path)?);
        }
        if let Some(f) = &mut self.file {
            // One write per record, so concurrent appenders do not interleave within one.
            f.write_all(&encode(canonical_key, lower, upper))
                .with_context(|| format!("cannot append to {}", self.path.display()))?;
        }
        Ok(())
    }
}

/// The bytes of the file at `path`, or none when there is no file.
fn read_if_there(path: &Path) -> Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Renames the file at `path` to the first free `NAME.corrupt-N` beside it, and returns that;
/// none when the file is gone already (another solver on the same folder set it aside).
fn set_aside(path: &Path) -> Result<Option<PathBuf>> {
    let name = path
        .file_name()
        .map_or_else(|| CACHE_FILE.into(), |n| n.to_string_lossy().into_owned());
    let mut n = 1;
    let aside = loop {
        let candidate = path.with_file_name(format!("{name}.corrupt-{n}"));
        if !candidate.exists() {
            break candidate;
        }
        n += 1;
    };
    match std::fs::rename(path, &aside) {
        Ok(()) => Ok(Some(aside)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| {
            format!(
                "{} is damaged and cannot be renamed aside to {}; {}",
                path.display(),
                aside.display(),
                CACHE.remedy
            )
        }),
    }
}

/// Opens the cache file to append records, creating it with its header if it is not there,
/// and cutting off a last record cut short by a crash so that the next ones line up.
fn open_for_appending(path: &Path) -> Result<File> {
    create_new_atomic(path, &CACHE.stream_header())?;
    let f = OpenOptions::new()
        .append(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    let len = f
        .metadata()
        .with_context(|| format!("cannot read {}", path.display()))?
        .len();
    let header = STREAM_HEADER_BYTES as u64;
    if len < header {
        return Err(CACHE.corrupt(path, "shorter than its header"));
    }
    let partial = (len - header) % RECORD as u64;
    if partial != 0 {
        f.set_len(len - partial)
            .with_context(|| format!("cannot repair {}", path.display()))?;
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(dir: &Path) -> String {
        let e = Cache::load(dir).err().unwrap().to_string();
        assert!(
            e.contains(&dir.join(CACHE_FILE).display().to_string()) && e.ends_with(CACHE.remedy),
            "{e}"
        );
        e
    }

    #[test]
    fn cache_keeps_exact_scores_and_bounds_across_runs() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        assert!(Cache::open(dir).unwrap().is_empty());
        {
            let mut c = Cache::open(dir).unwrap();
            c.insert(1, -3).unwrap();
            c.insert_lower_bound(2, 5).unwrap();
            c.insert_lower_bound(2, 7).unwrap();
            c.insert_lower_bound(2, 6).unwrap();
        }
        let path = dir.join(CACHE_FILE);
        let len = std::fs::metadata(&path).unwrap().len() as usize;
        assert_eq!(len, STREAM_HEADER_BYTES + 3 * RECORD);
        let c = Cache::open(dir).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c.get(1), Some(-3));
        assert_eq!(c.get(2), None);
        assert_eq!(c.lower_bound(2), Some(7));
        assert_eq!(c.lower_bound(3), None);
    }

    #[test]
    fn a_record_cut_short_by_a_crash_is_ignored_and_cut_off() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        Cache::open(dir).unwrap().insert(1, -3).unwrap();
        let path = dir.join(CACHE_FILE);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(&encode(2, 4, 4)[..7]);
        std::fs::write(&path, &bytes).unwrap();
        let mut c = Cache::open(dir).unwrap();
        assert_eq!((c.len(), c.get(1), c.get(2)), (1, Some(-3), None));
        // The next record goes where the cut-short one began.
        c.insert(3, 0).unwrap();
        drop(c);
        let c = Cache::open(dir).unwrap();
        assert_eq!((c.len(), c.get(1), c.get(3)), (2, Some(-3), Some(0)));
        assert_eq!(
            std::fs::metadata(&path).unwrap().len() as usize,
            STREAM_HEADER_BYTES + 2 * RECORD
        );
    }

    #[test]
    fn every_flipped_bit_of_a_record_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        {
            let mut c = Cache::open(dir).unwrap();
            c.insert(0x1_2345_6789, 2).unwrap();
            c.insert_lower_bound(99, -5).unwrap();
        }
        let path = dir.join(CACHE_FILE);
        let good = std::fs::read(&path).unwrap();
        for bit in 0..RECORD * 8 {
            let mut bad = good.clone();
            bad[STREAM_HEADER_BYTES + bit / 8] ^= 1 << (bit % 8);
            std::fs::write(&path, &bad).unwrap();
            let e = error(dir);
            assert!(e.contains("record 0"), "bit {bit}: {e}");
        }
        // The last whole record is checked as well.
        let mut bad = good.clone();
        *bad.last_mut().unwrap() ^= 0x80;
        std::fs::write(&path, &bad).unwrap();
        assert!(error(dir).contains("record 1: its check value does not match"));
    }

    #[test]
    fn damaged_or_foreign_caches_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        let path = dir.join(CACHE_FILE);
        let header = CACHE.stream_header();
        let with = |records: &[[u8; RECORD]]| -> Vec<u8> {
            let mut bytes = header.clone();
            for r in records {
                bytes.extend_from_slice(r);
            }
            bytes
        };
        // The headerless records of version 1.
        let mut old = Vec::new();
        for (key, lower, upper) in [(1u64, -3i8, -3i8), (2, 5, 64)] {
            old.extend_from_slice(&key.to_le_bytes());
            old.extend_from_slice(&[lower as u8, upper as u8]);
        }
        let mut header_flipped = with(&[encode(1, 2, 2)]);
        header_flipped[3] ^= 0x20;
        let mut version_1 = with(&[]);
        version_1[24] = 1;
        let book = Format {
            kind: "c4-book",
            version: 2,
            remedy: "",
        }
        .encode(b"a book");
        let cases: Vec<(&str, Vec<u8>, &str)> = vec![
            ("old headerless cache", old, "no zero header"),
            ("empty", Vec::new(), "no zero header"),
            (
                "truncated header",
                header[..20].to_vec(),
                "truncated inside its header",
            ),
            ("flipped header", header_flipped, "no zero header"),
            ("version 1", version_1, "a c4-cache file of version 1"),
            ("foreign", book, "a c4-book file, not a c4-cache file"),
            (
                "bad key",
                with(&[encode(1, 0, 0), encode(1 << 49, 0, 0)]),
                "record 1: its key is not a position's",
            ),
            (
                "score out of range",
                with(&[encode(1, 19, 19)]),
                "record 0: a bound is not a score",
            ),
            (
                "unknown upper as lower",
                with(&[encode(1, UNKNOWN_HIGH, UNKNOWN_HIGH)]),
                "a bound is not a score",
            ),
            (
                "lower above upper",
                with(&[encode(1, 3, 2)]),
                "its lower bound is above its upper bound",
            ),
            (
                "contradiction",
                with(&[encode(1, 3, 3), encode(5, 0, 0), encode(1, 4, UNKNOWN_HIGH)]),
                "record 2 contradicts an earlier one",
            ),
        ];
        for (case, bytes, problem) in cases {
            std::fs::write(&path, bytes).unwrap();
            let e = error(dir);
            assert!(e.contains(problem), "{case}: {e}");
        }
        // Both kinds of bound at the ends of the range are good.
        std::fs::write(
            &path,
            with(&[
                encode(1, MIN_SCORE as i8, MAX_SCORE as i8),
                encode(2, UNKNOWN_LOW, MIN_SCORE as i8),
                encode(3, MAX_SCORE as i8, UNKNOWN_HIGH),
            ]),
        )
        .unwrap();
        let c = Cache::open(dir).unwrap();
        assert_eq!((c.len(), c.lower_bound(3)), (3, Some(MAX_SCORE)));
    }

    #[test]
    fn a_damaged_cache_is_set_aside_and_the_solver_starts_an_empty_one() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        let path = dir.join(CACHE_FILE);
        Cache::open(dir).unwrap().insert(1, -3).unwrap();
        let mut bad = std::fs::read(&path).unwrap();
        *bad.last_mut().unwrap() ^= 0x80;
        for n in 1..=2 {
            std::fs::write(&path, &bad).unwrap();
            let (mut c, aside) = Cache::open_setting_aside(dir).unwrap();
            let aside = aside.expect("the damaged file set aside");
            assert_eq!(aside, dir.join(format!("cache.bin.corrupt-{n}")));
            // The damaged bytes are kept as they were, for whoever wants to look at them.
            assert_eq!(std::fs::read(&aside).unwrap(), bad);
            assert!(c.is_empty() && !path.exists());
            c.insert(2, 5).unwrap();
        }
        // The new cache is a good one, and what the damaged one held is not believed.
        let (c, aside) = Cache::open_setting_aside(dir).unwrap();
        assert_eq!(
            (c.len(), c.get(2), c.get(1), aside),
            (1, Some(5), None, None)
        );
    }
}
