//! Workers that share a pipeline through a store URL (`lucid run --store s3://…`): the local
//! stage store in the runs folder stays the working copy, and the shared store is where results,
//! checkpoints and claims meet. A miss is served from the shared store when another worker
//! finished it; otherwise it is claimed ([`crate::remote::claims`]) and computed by exactly one
//! worker, which renews its lease while it works, uploads each checkpoint part as it is saved,
//! and publishes its outputs and entry with create-only puts after checking it still holds the
//! claim. A worker that takes over a lapsed claim starts from the parts the earlier holders wrote
//! while they held it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::store::{Store, StoredInstance};
use crate::error::{Error, Result};
use crate::remote::claims::{self, Claim, ClaimAttempt};
use crate::remote::listing::object_key;
use crate::remote::{Remote, unique_name};

/// Default lease: a holder silent this long (store clock) is taken over.
pub const DEFAULT_LEASE_S: f64 = 30.0;

/// This process's view of a shared store.
#[derive(Debug)]
pub struct Shared {
    /// The store.
    pub remote: Arc<Remote>,
    /// This worker's name in claims.
    pub holder: String,
    /// The lease, milliseconds.
    pub lease_ms: i64,
}

/// A claim being worked on: the lease renewer runs until it is dropped.
pub struct Holding {
    /// The claim.
    pub claim: Claim,
    stop: Arc<AtomicBool>,
    lost: Arc<AtomicBool>,
    renewer: Option<std::thread::JoinHandle<()>>,
    work_dir: PathBuf,
}

impl Shared {
    /// Open `url` for this worker with a lease of `lease_s` seconds.
    pub fn open(url: &str, lease_s: f64) -> Result<Shared> {
        let remote = Arc::new(Remote::open(url)?);
        Ok(Shared { remote, holder: unique_name(), lease_ms: (lease_s * 1e3) as i64 })
    }

    /// The finished instance `digest` from the shared store, its objects copied into `store`.
    pub fn fetch(&self, store: &Store, digest: &str) -> Result<Option<StoredInstance>> {
        let Some(bytes) = self.remote.get(&entry_key(digest))? else { return Ok(None) };
        let entry: StoredInstance = serde_json::from_slice(&bytes)
            .map_err(|e| Error::environment_from(format!("store {}: {}", self.remote.url(), entry_key(digest)), e))?;
        for hash in entry.outputs.values() {
            if store.verify(hash) {
                continue;
            }
            let key = object_key(hash);
            let Some(obj) = self.remote.get(&key)? else {
                return Err(Error::environment(format!("store {}: {key} is listed but missing", self.remote.url())));
            };
            store.put_object_bytes(hash, &obj)?;
        }
        store.put_entry(digest, &entry)?;
        Ok(Some(entry))
    }

    /// Make a result this worker had in its local store (computed before it shared the pipeline)
    /// available to the others: its objects and entry, create-only, when the store lacks it.
    pub fn share_hit(&self, store: &Store, digest: &str, entry: &StoredInstance) -> Result<()> {
        if self.remote.get(&entry_key(digest))?.is_some() {
            return Ok(());
        }
        self.upload_objects(store, entry)?;
        self.create_entry(digest, entry)?;
        Ok(())
    }

    /// Write the entry of instance `digest`, create-only; false when one is already there.
    fn create_entry(&self, digest: &str, entry: &StoredInstance) -> Result<bool> {
        self.remote.create(&entry_key(digest), serde_json::to_vec_pretty(entry).expect("entry serializes"))
    }

    /// Upload the output objects of `entry` from `store` (create-only: present ones are kept).
    fn upload_objects(&self, store: &Store, entry: &StoredInstance) -> Result<()> {
        for hash in entry.outputs.values() {
            let path = store.object_path(hash);
            let bytes = std::fs::read(&path).map_err(|source| Error::Read { path: path.clone(), source })?;
            self.remote.create(&object_key(hash), bytes)?;
        }
        Ok(())
    }

    /// Claim `digest` for this worker.
    pub fn claim(&self, digest: &str) -> Result<ClaimAttempt> {
        claims::try_claim(&self.remote, digest, &self.holder, self.lease_ms)
    }

    /// Start working on a won claim: the local work folder is rebuilt from the parts earlier
    /// holders wrote while they held the instance, the lease renewer starts, and each part saved
    /// from now on is uploaded under this epoch.
    pub fn hold(&self, claim: Claim, work_dir: &Path) -> Result<Holding> {
        let _ = std::fs::remove_dir_all(work_dir);
        std::fs::create_dir_all(work_dir).map_err(|source| Error::Write { path: work_dir.into(), source })?;
        for (folder, part) in claims::valid_parts(&self.remote, &claim.key, claim.epoch)? {
            if let Some(bytes) = self.remote.get(&format!("work/{}/{folder}/{part}", claim.key))? {
                super::store::write_atomic(&work_dir.join(&part), &bytes)?;
            }
        }
        let (stop, lost) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
        let renewer = {
            let (remote, claim, stop, lost) = (self.remote.clone(), claim.clone(), stop.clone(), lost.clone());
            let every = Duration::from_millis((self.lease_ms / 4).max(100) as u64);
            std::thread::spawn(move || renew(&remote, &claim, &stop, &lost, every))
        };
        let uploader = PartUploader { remote: self.remote.clone(), claim: claim.clone(), lost: lost.clone() };
        uploaders().lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(work_dir.into(), uploader);
        Ok(Holding { claim, stop, lost, renewer: Some(renewer), work_dir: work_dir.into() })
    }

    /// Publish a computed instance: its objects, then its entry, each create-only, after the
    /// fencing check. When another worker's entry for the key is already there, that one is the
    /// result (copied into `store`) and is returned instead.
    pub fn publish(
        &self,
        store: &Store,
        digest: &str,
        entry: &StoredInstance,
        holding: &Holding,
    ) -> Result<StoredInstance> {
        holding.check(&self.remote)?;
        self.upload_objects(store, entry)?;
        holding.check(&self.remote)?;
        if self.create_entry(digest, entry)? {
            return Ok(entry.clone());
        }
        self.fetch(store, digest)?.ok_or_else(|| Error::environment(format!("{} vanished", entry_key(digest))))
    }
}

/// The key of instance `digest`'s entry in the shared store.
fn entry_key(digest: &str) -> String {
    format!("stages/{digest}.json")
}

impl Holding {
    /// Fencing: an error when this worker no longer holds the claim.
    pub fn check(&self, remote: &Remote) -> Result<()> {
        if self.lost.load(Ordering::SeqCst) {
            return Err(Error::environment(format!("lost its claim on {}: not publishing", self.claim.key)));
        }
        self.claim.check(remote)
    }
}

impl Drop for Holding {
    fn drop(&mut self) {
        uploaders().lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&self.work_dir);
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.renewer.take() {
            let _ = t.join();
        }
    }
}

fn renew(remote: &Remote, claim: &Claim, stop: &AtomicBool, lost: &AtomicBool, every: Duration) {
    let mut n = 0;
    let tick = Duration::from_millis(50);
    loop {
        let mut waited = Duration::ZERO;
        while waited < every {
            if stop.load(Ordering::SeqCst) {
                return;
            }
            std::thread::sleep(tick);
            waited += tick;
        }
        n += 1;
        if claim.check(remote).is_err() {
            lost.store(true, Ordering::SeqCst);
            return;
        }
        if let Err(e) = claim.renew(remote, n) {
            eprintln!("warning: lease of {} not renewed: {e}", claim.key);
        }
    }
}

/// Uploads the checkpoint parts of one held instance.
struct PartUploader {
    remote: Arc<Remote>,
    claim: Claim,
    lost: Arc<AtomicBool>,
}

fn uploaders() -> &'static Mutex<HashMap<PathBuf, PartUploader>> {
    static MAP: std::sync::OnceLock<Mutex<HashMap<PathBuf, PartUploader>>> = std::sync::OnceLock::new();
    MAP.get_or_init(Default::default)
}

/// Called by the checkpoint code after it saved `file` in `work_dir`: upload it under the
/// holder's epoch when the instance is held through a shared store (nothing otherwise). A part
/// that cannot be uploaded costs only its recomputation after a takeover.
pub fn part_saved(work_dir: &Path, file: &Path) {
    let held = {
        let map = uploaders().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        map.get(work_dir).map(|u| PartUploader {
            remote: u.remote.clone(),
            claim: u.claim.clone(),
            lost: u.lost.clone(),
        })
    };
    let Some(u) = held else { return };
    if u.lost.load(Ordering::SeqCst) || u.claim.check(&u.remote).is_err() {
        return;
    }
    let (Some(name), Ok(bytes)) = (file.file_name(), std::fs::read(file)) else { return };
    let key = format!("work/{}/e{:06}/{}", u.claim.key, u.claim.epoch, name.to_string_lossy());
    if let Err(e) = u.remote.create(&key, bytes) {
        eprintln!("warning: checkpoint part not uploaded ({e}); a takeover would redo these items");
    }
}
