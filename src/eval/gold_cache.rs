//! A persistent cache of gold-query results keyed by (database content hash, SQL, limits), so
//! every arm and seed of a study — and every rerun — executes each gold query once. An SQLite
//! file in WAL mode: safe with several lucid processes writing at once.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};

use super::query_run::{QueryRun, Ran};
use crate::error::{Error, Result};

/// Bump when what a cached result means changes.
const FORMAT: u32 = 1;

/// The open cache.
pub struct GoldCache {
    conn: Connection,
    path: PathBuf,
}

/// The key of one gold result: database bytes, query text and the row cap it ran under.
pub fn key(db_hash: &blake3::Hash, sql: &str, max_rows: u64) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(&FORMAT.to_le_bytes());
    h.update(db_hash.as_bytes());
    h.update(&max_rows.to_le_bytes());
    h.update(sql.as_bytes());
    *h.finalize().as_bytes()
}

impl GoldCache {
    /// Open or create the cache file.
    pub fn open(path: &Path) -> Result<GoldCache> {
        let conn = crate::sqlite::open_shared(
            path,
            "CREATE TABLE IF NOT EXISTS gold_results (
                key BLOB PRIMARY KEY, kind INTEGER NOT NULL, set_hash BLOB, n_rows INTEGER,
                truncated INTEGER, error TEXT, elapsed_us INTEGER NOT NULL, budget_us INTEGER NOT NULL)",
        )?;
        Ok(GoldCache { conn, path: path.into() })
    }

    /// A cached result still valid under `timeout`: a cached timeout counts only if it was given
    /// at least as long as `timeout`.
    pub fn get(&self, key: &[u8; 32], timeout: Duration) -> Result<Option<QueryRun>> {
        let err = |source| Error::Sqlite { path: self.path.clone(), source };
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT kind, set_hash, n_rows, truncated, error, elapsed_us, budget_us FROM gold_results WHERE key = ?1",
            )
            .map_err(err)?;
        let row = stmt
            .query_row(params![&key[..]], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, Option<Vec<u8>>>(1)?,
                    r.get::<_, Option<i64>>(2)?,
                    r.get::<_, Option<i64>>(3)?,
                    r.get::<_, Option<String>>(4)?,
                    r.get::<_, i64>(5)?,
                    r.get::<_, i64>(6)?,
                ))
            })
            .optional()
            .map_err(err)?;
        let Some((kind, set_hash, n_rows, truncated, error, elapsed_us, budget_us)) = row else { return Ok(None) };
        let ran = match kind {
            0 => {
                let bytes: [u8; 16] = set_hash.and_then(|b| b.try_into().ok()).unwrap_or_default();
                Ran::Rows {
                    set_hash: u128::from_le_bytes(bytes),
                    n_rows: n_rows.unwrap_or(0) as u64,
                    truncated: truncated.unwrap_or(0) != 0,
                }
            }
            1 => Ran::Error(error.unwrap_or_default()),
            _ if Duration::from_micros(budget_us as u64) >= timeout => Ran::Timeout,
            _ => return Ok(None),
        };
        Ok(Some(QueryRun { ran, elapsed: Duration::from_micros(elapsed_us as u64), cached: true }))
    }

    /// Store results in one transaction.
    pub fn put_all<'a>(
        &mut self,
        items: impl IntoIterator<Item = ([u8; 32], &'a QueryRun)>,
        timeout: Duration,
    ) -> Result<()> {
        let err = |source| Error::Sqlite { path: self.path.clone(), source };
        let tx = self.conn.transaction().map_err(err)?;
        {
            let mut stmt = tx
                .prepare("INSERT OR REPLACE INTO gold_results VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")
                .map_err(err)?;
            for (key, run) in items {
                let (kind, set_hash, n_rows, truncated, error) = match &run.ran {
                    Ran::Rows { set_hash, n_rows, truncated } => {
                        (0, Some(set_hash.to_le_bytes().to_vec()), Some(*n_rows as i64), Some(*truncated as i64), None)
                    }
                    Ran::Error(e) => (1, None, None, None, Some(e.as_str())),
                    Ran::Timeout => (2, None, None, None, None),
                };
                stmt.execute(params![
                    &key[..],
                    kind,
                    set_hash,
                    n_rows,
                    truncated,
                    error,
                    run.elapsed.as_micros() as i64,
                    timeout.as_micros() as i64
                ])
                .map_err(err)?;
            }
        }
        tx.commit().map_err(err)
    }
}
