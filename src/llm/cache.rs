//! The response cache: an SQLite file (WAL, safe under concurrent writers) keyed by the hash of
//! (backend, model, messages, decoding, sample index), so identical prompts across arms, seeds
//! and reruns cost one call. Failures are not cached. Hits and misses are counted.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};

use super::{CallFailure, ChatModel, ChatRequest, Completion, ModelIdentity};
use crate::error::{Error, Result};

/// The cache key of a request to a model (hex blake3).
pub fn request_key(id: &ModelIdentity, req: &ChatRequest) -> String {
    let bytes = serde_json::to_vec(&(id, req)).expect("request serializes");
    blake3::hash(&bytes).to_hex().to_string()
}

/// A model wrapped with the response cache.
pub struct CachedModel {
    inner: Arc<dyn ChatModel>,
    conn: Mutex<Connection>,
    path: PathBuf,
    /// Calls answered from the cache.
    pub hits: AtomicU64,
    /// Calls that went to the model.
    pub misses: AtomicU64,
    /// The shared store's second tier (`lucid run --store`), when workers share a pipeline.
    tier: Option<Arc<crate::remote::Remote>>,
    /// Calls answered from the shared tier (counted in `hits` too).
    pub shared_hits: AtomicU64,
    /// Paid calls whose answer another worker had stored first (both paid).
    pub duplicates: AtomicU64,
}

impl CachedModel {
    /// Wrap `inner` with the cache file at `path`.
    pub fn new(inner: Arc<dyn ChatModel>, path: &Path) -> Result<CachedModel> {
        let conn = crate::sqlite::open_shared(
            path,
            "CREATE TABLE IF NOT EXISTS responses (
                key TEXT PRIMARY KEY, backend TEXT NOT NULL, model TEXT NOT NULL, request TEXT NOT NULL,
                text TEXT NOT NULL, tokens_in INTEGER NOT NULL, tokens_out INTEGER NOT NULL, latency_ms REAL NOT NULL)",
        )?;
        Ok(CachedModel {
            inner,
            conn: Mutex::new(conn),
            path: path.into(),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            tier: None,
            shared_hits: AtomicU64::new(0),
            duplicates: AtomicU64::new(0),
        })
    }

    /// This cache with `tier` as its second tier (answers other workers paid for).
    pub fn with_shared_tier(mut self, tier: Option<Arc<crate::remote::Remote>>) -> CachedModel {
        self.tier = tier;
        self
    }

    fn lookup(&self, key: &str) -> Option<Completion> {
        let conn = self.conn.lock().expect("cache lock");
        conn.query_row("SELECT text, tokens_in, tokens_out FROM responses WHERE key = ?1", params![key], |r| {
            Ok(Completion {
                text: r.get(0)?,
                tokens_in: r.get(1)?,
                tokens_out: r.get(2)?,
                latency: Duration::ZERO,
                attempts: 0,
                cache_hit: true,
            })
        })
        .optional()
        .ok()
        .flatten()
    }

    fn store(&self, key: &str, req: &ChatRequest, c: &Completion) -> Result<()> {
        let id = self.inner.identity();
        let request = serde_json::to_string(req).expect("request serializes");
        let conn = self.conn.lock().expect("cache lock");
        conn.execute(
            "INSERT OR REPLACE INTO responses VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                key,
                id.backend,
                id.model,
                request,
                c.text,
                c.tokens_in,
                c.tokens_out,
                c.latency.as_secs_f64() * 1e3
            ],
        )
        .map_err(|source| Error::Sqlite { path: self.path.clone(), source })?;
        Ok(())
    }
}

impl ChatModel for CachedModel {
    fn identity(&self) -> ModelIdentity {
        self.inner.identity()
    }

    fn supports_choices(&self) -> bool {
        self.inner.supports_choices()
    }

    fn chat(&self, req: &ChatRequest) -> Result<Completion, CallFailure> {
        let key = request_key(&self.inner.identity(), req);
        // Identical requests in flight at once (two arms at the same step) make one call: the
        // second waits for the first and reads its answer from the cache.
        let slot = in_flight(&key);
        let _guard = slot.lock().expect("in-flight lock");
        let out = self.chat_once(&key, req);
        drop(_guard);
        release(&key, slot);
        out
    }
}

type Slot = Arc<Mutex<()>>;

static IN_FLIGHT: std::sync::LazyLock<Mutex<std::collections::HashMap<String, Slot>>> =
    std::sync::LazyLock::new(Default::default);

fn in_flight(key: &str) -> Slot {
    IN_FLIGHT.lock().expect("in-flight map").entry(key.to_string()).or_default().clone()
}

fn release(key: &str, slot: Slot) {
    let mut map = IN_FLIGHT.lock().expect("in-flight map");
    // The map's reference and ours: nobody else waits on this key.
    if Arc::strong_count(&slot) == 2 {
        map.remove(key);
    }
}

impl CachedModel {
    fn chat_once(&self, key: &str, req: &ChatRequest) -> Result<Completion, CallFailure> {
        if let Some(hit) = self.lookup(key) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Ok(hit);
        }
        if let Some(shared) = self.tier.as_ref().and_then(|t| crate::remote::responses::lookup(t, key)) {
            let c = Completion {
                text: shared.text,
                tokens_in: shared.tokens_in,
                tokens_out: shared.tokens_out,
                latency: Duration::ZERO,
                attempts: 0,
                cache_hit: true,
            };
            self.hits.fetch_add(1, Ordering::Relaxed);
            self.shared_hits.fetch_add(1, Ordering::Relaxed);
            if let Err(e) = self.store(key, req, &c) {
                eprintln!("warning: response cache: {e}");
            }
            return Ok(c);
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let c = self.inner.chat(req)?;
        if let Some(tier) = &self.tier {
            let shared = crate::remote::responses::SharedAnswer {
                text: c.text.clone(),
                tokens_in: c.tokens_in,
                tokens_out: c.tokens_out,
            };
            match crate::remote::responses::offer(tier, key, &shared) {
                Ok(true) => {}
                Ok(false) => {
                    self.duplicates.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) => eprintln!("warning: shared response cache: {e}"),
            }
        }
        // A cache write failure must not lose the answer: report it and return the answer.
        if let Err(e) = self.store(key, req, &c) {
            eprintln!("warning: response cache: {e}");
        }
        Ok(c)
    }
}
