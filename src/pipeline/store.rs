//! The content-addressed stage store under `<runs_dir>/.store/`: `objects/` holds Parquet
//! tables named by the blake3 of their bytes, `stages/<key>.json` maps a cache key to the objects
//! it produced, `work/<key>/` holds checkpoints of unfinished instances. Every write is a temp
//! file renamed into place, so concurrent runs and kills never leave a half-written entry.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use arrow::array::RecordBatch;
use serde::{Deserialize, Serialize};

use super::cache_key::CacheKey;
use crate::error::{Error, Result};

/// A finished instance in the store.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StoredInstance {
    /// The key components (for `--explain` and `lucid cache ls`).
    pub key: CacheKey,
    /// Output table -> object hash.
    pub outputs: BTreeMap<String, String>,
    /// Output table -> rows.
    pub rows: BTreeMap<String, usize>,
    /// Seconds the instance took to compute.
    pub seconds: f64,
}

/// The store.
#[derive(Clone, Debug)]
pub struct Store {
    root: PathBuf,
}

fn werr(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Write { path: path.into(), source }
}

/// Write `bytes` to `path` atomically (unique temp file in the same folder, then rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(werr(dir))?;
    let tmp = dir.join(format!(".tmp-{}-{}", std::process::id(), unique()));
    std::fs::write(&tmp, bytes).map_err(werr(&tmp))?;
    std::fs::rename(&tmp, path).map_err(werr(path))
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    t ^ N.fetch_add(1, Ordering::Relaxed).rotate_left(48)
}

impl Store {
    /// The store of the runs in `runs_dir`: `<runs_dir>/.store`.
    pub fn in_runs_dir(runs_dir: &Path) -> Store {
        Store::new(runs_dir.join(".store"))
    }

    /// The store at `root` (created on first write).
    pub fn new(root: PathBuf) -> Store {
        Store { root }
    }

    /// Its folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where object `hash` lives.
    pub fn object_path(&self, hash: &str) -> PathBuf {
        self.root.join("objects").join(&hash[..2]).join(format!("{hash}.parquet"))
    }

    fn entry_path(&self, key: &str) -> PathBuf {
        self.root.join("stages").join(format!("{key}.json"))
    }

    /// Checkpoint folder of an unfinished instance.
    pub fn work_dir(&self, key: &str) -> PathBuf {
        self.root.join("work").join(key)
    }

    /// Write a table into the store; returns its content hash.
    pub fn put_table(&self, batch: &RecordBatch) -> Result<String> {
        let tmp_dir = self.root.join("tmp");
        std::fs::create_dir_all(&tmp_dir).map_err(werr(&tmp_dir))?;
        let tmp = tmp_dir.join(format!("{}-{}.parquet", std::process::id(), unique()));
        crate::table::write_parquet(&tmp, batch)?;
        let hash = crate::fingerprint::hash_file(&tmp)?.to_hex().to_string();
        let dest = self.object_path(&hash);
        if dest.is_file() {
            let _ = std::fs::remove_file(&tmp);
        } else {
            let dir = dest.parent().expect("object has a folder");
            std::fs::create_dir_all(dir).map_err(werr(dir))?;
            std::fs::rename(&tmp, &dest).map_err(werr(&dest))?;
        }
        Ok(hash)
    }

    /// Store object bytes fetched from elsewhere (the shared store), refusing bytes whose
    /// content hash is not `hash`.
    pub fn put_object_bytes(&self, hash: &str, bytes: &[u8]) -> Result<()> {
        let got = blake3::hash(bytes).to_hex();
        if got.as_str() != hash {
            return Err(Error::input(
                self.object_path(hash),
                format!("fetched object has content hash {got}, not {hash}"),
            ));
        }
        write_atomic(&self.object_path(hash), bytes)
    }

    /// Whether object `hash` exists with exactly that content.
    pub fn verify(&self, hash: &str) -> bool {
        crate::fingerprint::hash_file(&self.object_path(hash)).is_ok_and(|h| h.to_hex().as_str() == hash)
    }

    /// Read object `hash`.
    pub fn read_table(&self, hash: &str) -> Result<RecordBatch> {
        crate::table::read_parquet(&self.object_path(hash))
    }

    /// The entry for `key`, if present and readable.
    pub fn entry(&self, key: &str) -> Option<StoredInstance> {
        let text = std::fs::read_to_string(self.entry_path(key)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Record an entry.
    pub fn put_entry(&self, key: &str, entry: &StoredInstance) -> Result<()> {
        write_atomic(&self.entry_path(key), &serde_json::to_vec_pretty(entry).expect("entry serializes"))
    }

    /// Every entry: (key, entry, size of its objects in bytes).
    pub fn entries(&self) -> Vec<(String, StoredInstance)> {
        let Ok(rd) = std::fs::read_dir(self.root.join("stages")) else { return Vec::new() };
        let mut out: Vec<(String, StoredInstance)> = rd
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let key = e.path().file_stem()?.to_string_lossy().into_owned();
                Some((key.clone(), self.entry(&key)?))
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// Remove an entry (not its objects).
    pub fn remove_entry(&self, key: &str) {
        let _ = std::fs::remove_file(self.entry_path(key));
    }

    /// Every object hash present.
    pub fn objects(&self) -> Vec<String> {
        let mut out = Vec::new();
        let Ok(rd) = std::fs::read_dir(self.root.join("objects")) else { return out };
        for d in rd.filter_map(|e| e.ok()) {
            if let Ok(files) = std::fs::read_dir(d.path()) {
                out.extend(files.filter_map(|f| f.ok()?.path().file_stem().map(|s| s.to_string_lossy().into_owned())));
            }
        }
        out.sort();
        out
    }

    /// Put object `hash` at `dest` (hard link, or copy across file systems).
    pub fn link(&self, hash: &str, dest: &Path) -> Result<()> {
        let src = self.object_path(hash);
        let dir = dest.parent().expect("destination has a folder");
        std::fs::create_dir_all(dir).map_err(werr(dir))?;
        let tmp = dir.join(format!(".tmp-{}-{}", std::process::id(), unique()));
        if std::fs::hard_link(&src, &tmp).is_err() {
            std::fs::copy(&src, &tmp).map_err(werr(&tmp))?;
        }
        std::fs::rename(&tmp, dest).map_err(werr(dest))?;
        // rename(2) does nothing when both names are links to one file: drop the spare name.
        let _ = std::fs::remove_file(&tmp);
        Ok(())
    }
}
