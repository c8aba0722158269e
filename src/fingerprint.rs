//! Content fingerprints: blake3 of a file's bytes ([`hash_file`], [`file_fingerprint`]), and of
//! large files that many stages and runs read (databases), computed once per (path, size,
//! modification time) and remembered in the process ([`database_hash`]) and on disk
//! ([`content_hash`], `<cache>/file-hashes.sqlite`), so a 1.5 GB BIRD folder is hashed once, not
//! on every run, and an edited file is hashed again.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};
use std::time::UNIX_EPOCH;

use rusqlite::{OptionalExtension, params};

use crate::error::{Error, Result};

/// Bump when what a stored hash means changes.
const FORMAT: u32 = 1;

/// (path, size, modification time in ns) of a file as it is now.
type Stamp = (PathBuf, u64, i64);

fn stamp(path: &Path) -> Result<Stamp> {
    let meta = std::fs::metadata(path).map_err(|source| Error::Read { path: path.into(), source })?;
    let mtime =
        meta.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map_or(-1, |d| d.as_nanos() as i64);
    Ok((path.to_path_buf(), meta.len(), mtime))
}

/// Hashes of this process by the file's stamp: a chunked stage evaluates many times against the
/// same databases, and BIRD's are 1.5 GB.
static MEMO: LazyLock<Mutex<HashMap<Stamp, blake3::Hash>>> = LazyLock::new(Default::default);

fn remembered(id: &Stamp) -> Option<blake3::Hash> {
    MEMO.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(id).copied()
}

fn remember(id: Stamp, h: blake3::Hash) {
    MEMO.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(id, h);
}

/// blake3 (hex) of the file at `path`, cached in the process and in `cache_dir`.
pub fn content_hash(path: &Path, cache_dir: &Path) -> Result<String> {
    let id = stamp(path)?;
    if let Some(h) = remembered(&id) {
        return Ok(h.to_hex().to_string());
    }
    let db = cache_dir.join("file-hashes.sqlite");
    let conn = crate::sqlite::open_shared(
        &db,
        "CREATE TABLE IF NOT EXISTS file_hashes (format INTEGER NOT NULL, path TEXT NOT NULL, size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL, hash TEXT NOT NULL, PRIMARY KEY (format, path, size, mtime_ns))",
    )?;
    let err = |source| Error::Sqlite { path: db.clone(), source };
    let (p, size, mtime) = (id.0.to_string_lossy().into_owned(), id.1 as i64, id.2);
    let stored: Option<String> = conn
        .query_row(
            "SELECT hash FROM file_hashes WHERE format = ?1 AND path = ?2 AND size = ?3 AND mtime_ns = ?4",
            params![FORMAT, p, size, mtime],
            |r| r.get(0),
        )
        .optional()
        .map_err(err)?;
    let hash = match stored.and_then(|h| blake3::Hash::from_hex(h).ok()) {
        Some(h) => h,
        None => {
            let h = hash_file(path)?;
            conn.execute(
                "INSERT OR REPLACE INTO file_hashes VALUES (?1, ?2, ?3, ?4, ?5)",
                params![FORMAT, p, size, mtime, h.to_hex().to_string()],
            )
            .map_err(err)?;
            h
        }
    };
    remember(id, hash);
    Ok(hash.to_hex().to_string())
}

/// blake3 of a database file, remembered for the life of the process by (path, size,
/// modification time).
pub fn database_hash(path: &Path) -> Result<blake3::Hash> {
    let id = stamp(path)?;
    if let Some(h) = remembered(&id) {
        return Ok(h);
    }
    let h = hash_file(path)?;
    remember(id, h);
    Ok(h)
}

/// blake3 of a file's bytes.
pub fn hash_file(path: &Path) -> Result<blake3::Hash> {
    let mut h = blake3::Hasher::new();
    h.update_reader(std::fs::File::open(path).map_err(|source| Error::Read { path: path.into(), source })?)
        .map_err(|source| Error::Read { path: path.into(), source })?;
    Ok(h.finalize())
}

/// blake3 of a file, hex; errors name the file.
pub fn file_fingerprint(path: &std::path::Path) -> Result<String> {
    Ok(hash_file(path)?.to_hex().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edited_file_gets_a_new_hash_and_an_unchanged_one_is_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.sqlite");
        std::fs::write(&f, b"one").unwrap();
        let h1 = content_hash(&f, dir.path()).unwrap();
        assert_eq!(h1, blake3::hash(b"one").to_hex().to_string());
        assert_eq!(content_hash(&f, dir.path()).unwrap(), h1);
        std::fs::write(&f, b"two, longer").unwrap();
        let h2 = content_hash(&f, dir.path()).unwrap();
        assert_eq!(h2, blake3::hash(b"two, longer").to_hex().to_string());
        let rows: i64 = rusqlite::Connection::open(dir.path().join("file-hashes.sqlite"))
            .unwrap()
            .query_row("SELECT count(*) FROM file_hashes", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 2);
    }
}
