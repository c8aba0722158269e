//! SQLite files that lucid's caches share between connections and processes (the response
//! cache, gold results, file hashes): opened in WAL mode with a generous busy timeout.

use std::path::Path;
use std::time::Duration;

use rusqlite::Connection;

use crate::error::{Error, Result};

/// Open (creating its folder) an SQLite file that several connections and processes write:
/// WAL journal, a generous busy timeout, and `schema` (idempotent `CREATE ... IF NOT EXISTS`).
/// Setting a fresh file up races with every other connection doing the same, and SQLite answers
/// some of those races "locked" without waiting (switching to WAL), so the setup is retried.
pub fn open_shared(path: &Path, schema: &str) -> Result<Connection> {
    let err = |source| Error::Sqlite { path: path.into(), source };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| Error::Write { path: dir.into(), source })?;
    }
    let conn = Connection::open(path).map_err(err)?;
    conn.busy_timeout(BUSY).map_err(err)?;
    let start = std::time::Instant::now();
    let mut wait = Duration::from_millis(2);
    loop {
        let setup = conn.pragma_update(None, "journal_mode", "wal").and_then(|()| conn.execute_batch(schema));
        match setup {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(e.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
                    && start.elapsed() < BUSY =>
            {
                std::thread::sleep(wait);
                wait = (wait * 2).min(Duration::from_millis(100));
            }
            other => return other.map(|()| conn).map_err(err),
        }
    }
}

/// How long a writer waits for another.
const BUSY: Duration = Duration::from_secs(60);
