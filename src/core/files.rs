//! The one way files are written and checked.
//!
//! - [`write_atomic`]: a file appears whole or not at all (temporary name, fsync, rename), so a
//!   crash, Ctrl-C or full disk never leaves half a file where a good one was.
//! - Binary files carry a header ([`Format`]): a magic, the kind of file, a version, the
//!   payload's length and a CRC-32 of it, so that a truncated, corrupt or foreign file is a
//!   clear error naming the file and what to do, never a panic or silently wrong data.
//! - Append-only files of fixed records (the solver's cache) start with the same magic, kind
//!   and version ([`Format::stream_header`], written whole by [`create_new_atomic`]) and check
//!   each record themselves.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{anyhow, bail, Context, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Writes `bytes` to `path` atomically: to a temporary file of a unique name in the same
/// directory, synced, then renamed over `path` (and the directory synced). On any error the
/// temporary file is removed and `path` is untouched.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = create_parent(path)?;
    let tmp = temporary_name(path);
    if let Err(e) = write_synced(&tmp, bytes) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot write {}", path.display()));
    }
    if let Err(e) = std::fs::rename(&tmp, path) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot replace {}", path.display()));
    }
    sync_dir(dir.as_deref());
    Ok(())
}

/// Creates `path` holding `bytes`, whole or not at all, unless a file is there already (which
/// is left as it is): the start of an append-only file that several writers may create at
/// once. Returns whether this call created it.
pub fn create_new_atomic(path: &Path, bytes: &[u8]) -> Result<bool> {
    if path.exists() {
        return Ok(false);
    }
    let dir = create_parent(path)?;
    let tmp = temporary_name(path);
    // A hard link, unlike a rename, fails when the name is taken.
    let linked = write_synced(&tmp, bytes).map(|_| std::fs::hard_link(&tmp, path));
    let _ = std::fs::remove_file(&tmp);
    let created = match linked {
        Err(e) => return Err(e).with_context(|| format!("cannot write {}", path.display())),
        Ok(Ok(())) => true,
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
        // A file system without hard links: create the file, then write it at once.
        Ok(Err(_)) => match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
        {
            Ok(mut f) => f.write_all(bytes).and_then(|_| f.sync_all()).map(|_| true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(e),
        }
        .with_context(|| format!("cannot create {}", path.display()))?,
    };
    if created {
        sync_dir(dir.as_deref());
    }
    Ok(created)
}

/// Writes a new file and syncs it.
fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = std::fs::File::create(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// Makes a rename or a new name in `dir` durable; some file systems cannot sync a directory,
/// and the file itself is already safe then.
fn sync_dir(dir: Option<&Path>) {
    if let Ok(d) = std::fs::File::open(dir.unwrap_or(Path::new("."))) {
        let _ = d.sync_all();
    }
}

/// Creates the directory `path` goes in; returns it (`None` for a bare file name).
fn create_parent(path: &Path) -> Result<Option<PathBuf>> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(d) = dir {
        std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
    }
    Ok(dir.map(Path::to_path_buf))
}

/// Whether `name` is one of [`temporary_name`]'s: `.NAME.tmp.PID.N`.
fn is_temporary(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('.') else {
        return false;
    };
    let mut parts = rest.rsplitn(4, '.');
    let numeric =
        |p: Option<&str>| p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    numeric(parts.next())
        && numeric(parts.next())
        && parts.next() == Some("tmp")
        && parts.next().is_some_and(|n| !n.is_empty())
}

/// Removes the temporary files that writers killed mid-write left in `dir` (not in its
/// subdirectories); returns how many. Only for a directory no other process is writing to,
/// such as a locked run's.
pub fn remove_temporaries(dir: &Path) -> Result<usize> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", dir.display())),
    };
    let mut removed = 0;
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot read {}", dir.display()))?;
        let name = entry.file_name();
        if is_temporary(&name.to_string_lossy()) && entry.path().is_file() {
            std::fs::remove_file(entry.path())
                .with_context(|| format!("cannot remove {}", entry.path().display()))?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// `.NAME.tmp.PID.N` beside `path`: unique between processes and between threads.
fn temporary_name(path: &Path) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    path.with_file_name(format!(".{name}.tmp.{}.{n}", std::process::id()))
}

/// Appends one line to a file (for logs of records such as metrics), creating it if needed.
pub fn append_line(path: &Path, line: &str) -> Result<()> {
    create_parent(path)?;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    // One write of the whole line, so a crash leaves at most one partial last line.
    f.write_all(format!("{line}\n").as_bytes())
        .and_then(|_| f.sync_data())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Reads a JSON file; `None` if it does not exist.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<Option<T>> {
    match std::fs::read(path) {
        Ok(bytes) => parse_json(path, &bytes).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// A value from the bytes of a JSON file, as [`read_json`] reads it; `path` names the file in
/// the error. A file that is not JSON at all is damaged; one that is JSON without the fields
/// expected (a hand edit of `run.json`, say) is named with the field and its place, since
/// correcting that one field keeps the run.
pub fn parse_json<T: DeserializeOwned>(path: &Path, bytes: &[u8]) -> Result<T> {
    serde_json::from_slice(bytes).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => anyhow::anyhow!(
            "{} is JSON but does not hold what zero reads there: {e}; correct that there, or \
             delete the file to start over",
            path.display()
        ),
        _ => anyhow::Error::new(e).context(format!(
            "{} is corrupt; delete it to start over",
            path.display()
        )),
    })
}

/// Writes a value as pretty JSON, atomically.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    write_atomic(path, serde_json::to_string_pretty(value)?.as_bytes())
}

/// A kind of binary file: its name in the header, the version this program writes and reads,
/// and what a user should do with a file that cannot be read.
#[derive(Clone, Copy, Debug)]
pub struct Format {
    /// At most 16 ASCII bytes, e.g. `selfplay-chunk`.
    pub kind: &'static str,
    pub version: u32,
    /// The advice after a failure, e.g. "delete it to play these games again".
    pub remedy: &'static str,
}

const MAGIC: &[u8; 8] = b"ZEROFILE";
const KIND_BYTES: usize = 16;
/// magic, kind, version (u32), payload length (u64), payload CRC-32 (u32).
const HEADER_BYTES: usize = 8 + KIND_BYTES + 4 + 8 + 4;
/// magic, kind, version: the header of an append-only file.
pub const STREAM_HEADER_BYTES: usize = 8 + KIND_BYTES + 4;

impl Format {
    fn kind_field(&self) -> [u8; KIND_BYTES] {
        let mut k = [0u8; KIND_BYTES];
        let n = self.kind.len().min(KIND_BYTES);
        k[..n].copy_from_slice(&self.kind.as_bytes()[..n]);
        k
    }

    /// An error about `path`: the problem, then this format's remedy.
    pub fn error(&self, path: &Path, problem: impl std::fmt::Display) -> anyhow::Error {
        anyhow!("{}: {problem}; {}", path.display(), self.remedy)
    }

    /// Checks magic, kind and version at the start of `bytes`.
    fn check_start(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        if bytes.starts_with(MAGIC) && bytes.len() < STREAM_HEADER_BYTES {
            return Err(self.error(path, "truncated inside its header".to_string()));
        }
        if bytes.len() < STREAM_HEADER_BYTES || &bytes[..8] != MAGIC {
            return Err(self.error(
                path,
                format!("not a {} file of zero (no zero header)", self.kind),
            ));
        }
        let kind = &bytes[8..8 + KIND_BYTES];
        if kind != self.kind_field() {
            let found = String::from_utf8_lossy(kind)
                .trim_end_matches('\0')
                .to_string();
            return Err(self.error(path, format!("a {found} file, not a {} file", self.kind)));
        }
        let version = u32::from_le_bytes(bytes[24..28].try_into()?);
        if version != self.version {
            return Err(self.error(
                path,
                format!(
                    "a {} file of version {version}; this program reads version {}",
                    self.kind, self.version
                ),
            ));
        }
        Ok(())
    }

    /// Header and payload as one file's bytes.
    pub fn encode(&self, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_BYTES + payload.len());
        out.extend_from_slice(&self.stream_header());
        out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        out.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
        out.extend_from_slice(payload);
        out
    }

    /// The payload of a file's bytes, after checking the header, the length and the checksum.
    pub fn decode<'a>(&self, path: &Path, bytes: &'a [u8]) -> Result<&'a [u8]> {
        self.check_start(path, bytes)?;
        if bytes.len() < HEADER_BYTES {
            return Err(self.error(path, "truncated inside its header"));
        }
        let length = u64::from_le_bytes(bytes[28..36].try_into()?);
        let crc = u32::from_le_bytes(bytes[36..40].try_into()?);
        let payload = &bytes[HEADER_BYTES..];
        if payload.len() as u64 != length {
            return Err(self.error(
                path,
                format!(
                    "truncated or padded: its header says {length} bytes of data, it holds {}",
                    payload.len()
                ),
            ));
        }
        if crc32fast::hash(payload) != crc {
            return Err(self.error(path, "corrupt (its checksum does not match)"));
        }
        Ok(payload)
    }

    /// The first bytes of an append-only file of this format.
    pub fn stream_header(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(STREAM_HEADER_BYTES);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.kind_field());
        out.extend_from_slice(&self.version.to_le_bytes());
        out
    }

    /// The records after the header of an append-only file.
    pub fn stream_records<'a>(&self, path: &Path, bytes: &'a [u8]) -> Result<&'a [u8]> {
        self.check_start(path, bytes)?;
        Ok(&bytes[STREAM_HEADER_BYTES..])
    }

    /// An error about `path` in this format's words, ending with its remedy.
    pub fn corrupt(&self, path: &Path, problem: impl std::fmt::Display) -> anyhow::Error {
        self.error(path, format!("corrupt ({problem})"))
    }

    /// Saves `value` (postcard-encoded) under this format's header, atomically.
    pub fn save<T: Serialize>(&self, path: &Path, value: &T) -> Result<()> {
        let bytes = self
            .encode_value(value)
            .with_context(|| format!("cannot encode {}", path.display()))?;
        write_atomic(path, &bytes)
    }

    /// Loads a value saved by [`Format::save`].
    pub fn load<T: DeserializeOwned>(&self, path: &Path) -> Result<T> {
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        self.decode_value(path, &bytes)
    }

    /// The bytes of the file [`Format::save`] writes: `value`, postcard-encoded, under this
    /// format's header.
    pub fn encode_value<T: Serialize>(&self, value: &T) -> Result<Vec<u8>> {
        Ok(self.encode(&postcard::to_allocvec(value)?))
    }

    /// The value in a file's bytes, as [`Format::load`] reads it; `path` names the file in
    /// errors.
    pub fn decode_value<T: DeserializeOwned>(&self, path: &Path, bytes: &[u8]) -> Result<T> {
        let payload = self.decode(path, bytes)?;
        let (value, rest) =
            postcard::take_from_bytes::<T>(payload).map_err(|e| self.corrupt(path, e))?;
        if !rest.is_empty() {
            return Err(self.corrupt(path, format!("{} bytes after its data", rest.len())));
        }
        Ok(value)
    }
}

/// Fails unless `condition`, with a corruption error of `format` about `path`.
pub fn ensure(format: &Format, path: &Path, condition: bool, problem: &str) -> Result<()> {
    if condition {
        Ok(())
    } else {
        bail!(format.corrupt(path, problem))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporaries_left_by_killed_writers_are_removed_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let keep = [
            "best.safetensors",
            ".hidden",
            ".x.tmp.12",
            "a.tmp.1.2",
            ".x.tmp.a.2",
        ];
        let gone = [".best.safetensors.tmp.4242.0", ".state.json.tmp.1.17"];
        for name in keep.iter().chain(&gone) {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        // A name written by this very function is recognised.
        let made = temporary_name(&dir.path().join("run.json"));
        std::fs::write(&made, b"x").unwrap();
        assert_eq!(remove_temporaries(dir.path()).unwrap(), gone.len() + 1);
        for name in keep {
            assert!(dir.path().join(name).exists(), "{name}");
        }
        assert_eq!(remove_temporaries(&dir.path().join("absent")).unwrap(), 0);
    }

    #[test]
    fn json_errors_tell_a_damaged_file_from_a_missing_field() {
        #[derive(Debug, serde::Deserialize)]
        struct Inner {
            #[allow(dead_code)]
            sims: u32,
        }
        #[derive(Debug, serde::Deserialize)]
        struct Outer {
            #[allow(dead_code)]
            inner: Inner,
        }
        let path = Path::new("m/run.json");
        let message = |bytes: &[u8]| parse_json::<Outer>(path, bytes).unwrap_err().to_string();
        let damaged = message(b"{\"inner\": {\"si");
        assert_eq!(damaged, "m/run.json is corrupt; delete it to start over");
        let edited = message(b"{\"inner\": {\"plies\": 3}}");
        assert!(
            edited.starts_with("m/run.json is JSON but does not hold what zero reads there")
                && edited.contains("missing field `sims` at line 1")
                && edited.ends_with("delete the file to start over"),
            "{edited}"
        );
        let wrong_type = message(b"{\"inner\": {\"sims\": \"many\"}}");
        assert!(
            wrong_type.contains("invalid type: string \"many\""),
            "{wrong_type}"
        );
    }

    const TEST: Format = Format {
        kind: "test-record",
        version: 3,
        remedy: "delete it",
    };
    const OTHER: Format = Format {
        kind: "other-record",
        version: 3,
        remedy: "delete it",
    };

    #[test]
    fn containers_refuse_every_kind_of_damage() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/x.bin");
        TEST.save(&path, &(7u32, "seven".to_string())).unwrap();
        let back: (u32, String) = TEST.load(&path).unwrap();
        assert_eq!(back, (7, "seven".into()));
        let good = std::fs::read(&path).unwrap();
        let err = |bytes: &[u8]| -> String {
            std::fs::write(&path, bytes).unwrap();
            TEST.load::<(u32, String)>(&path).unwrap_err().to_string()
        };
        let e = err(&good[..good.len() - 1]);
        assert!(
            e.contains("truncated") && e.contains("x.bin") && e.ends_with("delete it"),
            "{e}"
        );
        let e = err(&good[..10]);
        assert!(e.contains("truncated inside its header"), "{e}");
        let e = err(&good[..30]);
        assert!(e.contains("truncated inside its header"), "{e}");
        let e = err(b"ZEROFIL");
        assert!(e.contains("no zero header"), "{e}");
        let mut flipped = good.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(err(&flipped).contains("checksum"));
        let mut v = good.clone();
        v[24] = 9;
        assert!(err(&v).contains("version 9"));
        assert!(err(b"").contains("no zero header"));
        std::fs::write(&path, &good).unwrap();
        let e = OTHER.load::<(u32, String)>(&path).unwrap_err().to_string();
        assert!(
            e.contains("a test-record file, not a other-record file"),
            "{e}"
        );
        // Only the named file was ever there: no temporary files are left behind.
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn create_new_atomic_creates_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/s.bin");
        assert!(create_new_atomic(&path, b"head").unwrap());
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"+rec")
            .unwrap();
        assert!(!create_new_atomic(&path, b"other").unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), b"head+rec");
        assert_eq!(
            std::fs::read_dir(path.parent().unwrap()).unwrap().count(),
            1
        );
    }

    #[test]
    fn write_atomic_leaves_the_old_file_when_it_cannot_write() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        // A directory in the way of the file cannot be replaced by it.
        let blocked = dir.path().join("d");
        std::fs::create_dir(&blocked).unwrap();
        assert!(write_atomic(&blocked, b"x").is_err());
        assert!(blocked.is_dir());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}
