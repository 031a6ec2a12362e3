//! Data files compiled into the binary as the fallback for a file not found on disk: the binary
//! copied out of its clone still has what it needs (Connect Four's opening book, and any other
//! file a part of the program cannot do well without). A file on disk always wins, and is read
//! and checked by the same function as the copy built in, so a damaged file is still an error
//! and the copy built in passes the same checks.

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// A file compiled into the binary: where it comes from in the source tree, and its bytes.
#[derive(Clone, Copy, Debug)]
pub struct Bundled {
    /// Its path in the source tree (`data/connect4/book-4.bin`), to say what it is.
    pub name: &'static str,
    pub bytes: &'static [u8],
}

/// Where the bytes of a [`Bundled`] file were read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A file on disk.
    File(PathBuf),
    /// The copy compiled into the binary; its name in the source tree.
    BuiltIn(&'static str),
}

impl Origin {
    /// The path that errors about the bytes name: the file's, or a name that says the copy
    /// is built in.
    pub fn path(&self) -> PathBuf {
        match self {
            Origin::File(p) => p.clone(),
            Origin::BuiltIn(name) => PathBuf::from(format!("<built-in {name}>")),
        }
    }
    pub fn is_built_in(&self) -> bool {
        matches!(self, Origin::BuiltIn(_))
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File(p) => write!(f, "{}", p.display()),
            Origin::BuiltIn(name) => write!(f, "built in (the binary's copy of {name})"),
        }
    }
}

impl Bundled {
    /// Where the bytes come from: `found`, the file on disk if the caller found one, else the
    /// copy built in.
    pub fn origin(&self, found: Option<PathBuf>) -> Origin {
        match found {
            Some(path) => Origin::File(path),
            None => Origin::BuiltIn(self.name),
        }
    }

    /// Reads `found` (the file on disk, if the caller found one) or else the copy built in,
    /// with `read`, which checks the bytes and names the path it is given in its errors.
    pub fn load<T>(
        &self,
        found: Option<PathBuf>,
        read: impl FnOnce(&Path, &[u8]) -> Result<T>,
    ) -> Result<(T, Origin)> {
        let origin = self.origin(found);
        let value = match &origin {
            Origin::File(path) => {
                let bytes = std::fs::read(path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                read(path, &bytes)?
            }
            Origin::BuiltIn(_) => read(&origin.path(), self.bytes)?,
        };
        Ok((value, origin))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HELLO: Bundled = Bundled {
        name: "data/hello.txt",
        bytes: b"hello",
    };

    fn read_text(path: &Path, bytes: &[u8]) -> Result<String> {
        let text = std::str::from_utf8(bytes)
            .with_context(|| format!("{} is not text", path.display()))?;
        Ok(text.to_string())
    }

    #[test]
    fn a_file_found_wins_and_the_copy_built_in_answers_without_one() {
        let (text, origin) = HELLO.load(None, read_text).unwrap();
        assert_eq!(
            (text.as_str(), &origin),
            ("hello", &Origin::BuiltIn("data/hello.txt"))
        );
        assert!(origin.to_string().starts_with("built in") && origin.is_built_in());
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hello.txt");
        std::fs::write(&file, "on disk").unwrap();
        let (text, origin) = HELLO.load(Some(file.clone()), read_text).unwrap();
        assert_eq!(
            (text.as_str(), origin),
            ("on disk", Origin::File(file.clone()))
        );
        // A damaged file is an error naming it, not a quiet fall back to the copy built in.
        std::fs::write(&file, [0xff, 0xfe]).unwrap();
        let e = HELLO.load(Some(file.clone()), read_text).unwrap_err();
        assert!(e.to_string().contains("hello.txt is not text"), "{e}");
        let gone = dir.path().join("gone.txt");
        let e = HELLO.load(Some(gone), read_text).unwrap_err();
        assert!(format!("{e:#}").contains("cannot read"), "{e:#}");
    }
}
