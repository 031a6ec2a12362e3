//! Where the program keeps files it can make again (the shipped networks written out, the
//! Connect Four solver's cache outside a clone): `$ZERO_CACHE_DIR`, else
//! `$XDG_CACHE_HOME/zero`, else `~/.cache/zero`, else the system's temporary folder, as
//! scripts/libtorch.sh chooses for libtorch.

use std::path::PathBuf;

/// The folder itself (not created here: the files written into it create it).
pub fn cache_root() -> PathBuf {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = var("ZERO_CACHE_DIR") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = var("XDG_CACHE_HOME") {
        return PathBuf::from(dir).join("zero");
    }
    match var("HOME") {
        Some(home) => PathBuf::from(home).join(".cache/zero"),
        None => std::env::temp_dir().join("zero-cache"),
    }
}
