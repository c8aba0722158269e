//! The shared response-cache tier: a model answer paid for on one machine is not paid for again
//! on another. Each answer is the create-once object `responses/<hh>/<key>.json`, keyed exactly as
//! the local SQLite cache (backend, model, server, messages, decoding, sample), which stays the
//! first tier. Two workers asking the same new question at the same moment may both pay: the
//! second write finds the object there, and the duplicate is counted ([`duplicates`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use serde::{Deserialize, Serialize};

use super::Remote;
use crate::error::Result;

/// What one shared answer holds.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct SharedAnswer {
    /// The completion's text.
    pub text: String,
    /// Prompt tokens.
    pub tokens_in: u32,
    /// Completion tokens.
    pub tokens_out: u32,
}

static TIER: RwLock<Option<Arc<Remote>>> = RwLock::new(None);
static HITS: AtomicU64 = AtomicU64::new(0);
static DUPLICATES: AtomicU64 = AtomicU64::new(0);

/// Use `remote` as this process's second tier (`lucid run --store`), or none.
pub fn set_tier(remote: Option<Arc<Remote>>) {
    *TIER.write().unwrap_or_else(std::sync::PoisonError::into_inner) = remote;
}

fn tier() -> Option<Arc<Remote>> {
    TIER.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
}

fn key_of(key: &str) -> String {
    format!("responses/{}/{key}.json", &key[..2.min(key.len())])
}

/// The shared answer for request `key`, when a tier is set and holds one.
pub fn lookup(key: &str) -> Option<SharedAnswer> {
    let remote = tier()?;
    let bytes = remote.get(&key_of(key)).ok()??;
    let answer = serde_json::from_slice(&bytes).ok()?;
    HITS.fetch_add(1, Ordering::Relaxed);
    Some(answer)
}

/// Offer a paid answer to the tier; counts a duplicate when another worker stored it first.
pub fn offer(key: &str, answer: &SharedAnswer) -> Result<()> {
    let Some(remote) = tier() else { return Ok(()) };
    if !remote.create(&key_of(key), serde_json::to_vec(answer).expect("answer serializes"))? {
        DUPLICATES.fetch_add(1, Ordering::Relaxed);
    }
    Ok(())
}

/// Answers this process took from the shared tier.
pub fn hits() -> u64 {
    HITS.load(Ordering::Relaxed)
}

/// Answers this process paid for that another worker had paid for at the same moment.
pub fn duplicates() -> u64 {
    DUPLICATES.load(Ordering::Relaxed)
}
