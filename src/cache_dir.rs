//! Where lucid keeps derived files (built bundled databases, the gold-result cache, models):
//! `$LUCID_CACHE_DIR`, else `$XDG_CACHE_HOME/lucid`, else `~/.cache/lucid`, else `.lucid/cache`.

use std::path::PathBuf;

/// The cache root (not created here).
pub fn cache_dir() -> PathBuf {
    let from_env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    from_env("LUCID_CACHE_DIR")
        .or_else(|| from_env("XDG_CACHE_HOME").map(|p| p.join("lucid")))
        .or_else(|| from_env("HOME").map(|p| p.join(".cache").join("lucid")))
        .unwrap_or_else(|| PathBuf::from(".lucid/cache"))
}
