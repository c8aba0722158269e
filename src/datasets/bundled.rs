//! The bundled mini benchmark shipped in `data/mini/` as text: one SQL file per database
//! (schema + rows) and a BIRD-style `questions.json`. Databases are built on first use into
//! `<cache>/bundled-<hash>/` (content-addressed by the SQL text, built in a temp folder and
//! renamed into place), so no binary is committed and an edit rebuilds them.

use std::path::{Path, PathBuf};

use super::Benchmark;
use crate::error::{Error, Result};

/// The bundled benchmark's source folder in this checkout.
pub fn default_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data").join("mini")
}

/// Build (if needed) and load the bundled benchmark from `src` into `cache`.
pub fn load(src: &Path, cache: &Path) -> Result<Benchmark> {
    let db_root = build_databases(src, cache)?;
    let mut bench = super::bird::load_files(&src.join("questions.json"), &db_root, None)?;
    bench.name = "bundled".into();
    Ok(bench)
}

/// Build every `src/databases/<db>.sql` into `<cache>/bundled-<hash>/<db>/<db>.sqlite`; returns
/// the database root. Reuses an earlier build of the same text.
pub fn build_databases(src: &Path, cache: &Path) -> Result<PathBuf> {
    let sql_dir = src.join("databases");
    let read_dir = |p: &Path| std::fs::read_dir(p).map_err(|source| Error::Read { path: p.into(), source });
    let mut files: Vec<PathBuf> = read_dir(&sql_dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "sql"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(Error::input(&sql_dir, "no .sql database files"));
    }
    let mut hasher = blake3::Hasher::new();
    let mut sources = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).map_err(|source| Error::Read { path: f.clone(), source })?;
        let db_id = f.file_stem().unwrap_or_default().to_string_lossy().to_string();
        hasher.update(db_id.as_bytes());
        hasher.update(&[0]);
        hasher.update(text.as_bytes());
        hasher.update(&[0]);
        sources.push((db_id, f.clone(), text));
    }
    let hash = hasher.finalize().to_hex();
    let root = cache.join(format!("bundled-{}", &hash[..16]));
    if root.is_dir() {
        return Ok(root);
    }
    std::fs::create_dir_all(cache).map_err(|source| Error::Write { path: cache.into(), source })?;
    let tmp = cache.join(format!(".bundled-tmp-{}-{}", std::process::id(), &hash[..8]));
    let _ = std::fs::remove_dir_all(&tmp);
    for (db_id, file, text) in &sources {
        let dir = tmp.join(db_id);
        std::fs::create_dir_all(&dir).map_err(|source| Error::Write { path: dir.clone(), source })?;
        let db = dir.join(format!("{db_id}.sqlite"));
        let conn = rusqlite::Connection::open(&db).map_err(|source| Error::Sqlite { path: db.clone(), source })?;
        conn.execute_batch(text).map_err(|e| Error::input_from(file, "does not build", e))?;
    }
    match std::fs::rename(&tmp, &root) {
        Ok(()) => Ok(root),
        // Another process built the same content first: use theirs.
        Err(_) if root.is_dir() => {
            let _ = std::fs::remove_dir_all(&tmp);
            Ok(root)
        }
        Err(source) => Err(Error::Write { path: root, source }),
    }
}
