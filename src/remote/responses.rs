//! The shared response-cache tier: a model answer paid for on one machine is not paid for again
//! on another. Each answer is the create-once object `responses/<hh>/<key>.json`, keyed exactly as
//! the local SQLite cache (backend, model, server, messages, decoding, sample), which stays the
//! first tier (`llm::cache::CachedModel`). Two workers asking the same new question at the same
//! moment may both pay: the second write finds the object there and counts a duplicate, in this
//! process and in the store (`responses-duplicates/`, one object each), so the count survives the
//! worker ([`duplicates_in`]).

use std::sync::atomic::{AtomicU64, Ordering};

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

static HITS: AtomicU64 = AtomicU64::new(0);
static DUPLICATES: AtomicU64 = AtomicU64::new(0);

fn key_of(key: &str) -> String {
    format!("responses/{}/{key}.json", &key[..2.min(key.len())])
}

/// The shared answer for request `key`, if another worker stored one.
pub fn lookup(remote: &Remote, key: &str) -> Option<SharedAnswer> {
    let bytes = remote.get(&key_of(key)).ok()??;
    let answer = serde_json::from_slice(&bytes).ok()?;
    HITS.fetch_add(1, Ordering::Relaxed);
    Some(answer)
}

/// Offer a paid answer: true when stored, false when another worker had stored it first (both
/// paid: a duplicate, counted).
pub fn offer(remote: &Remote, key: &str, answer: &SharedAnswer) -> Result<bool> {
    let created = remote.create(&key_of(key), serde_json::to_vec(answer).expect("answer serializes"))?;
    if !created {
        DUPLICATES.fetch_add(1, Ordering::Relaxed);
        remote.create(&format!("responses-duplicates/{key}.{}", super::unique_name()), Vec::new())?;
    }
    Ok(created)
}

/// Answers paid twice by racing workers, over every worker of the store.
pub fn duplicates_in(remote: &Remote) -> Result<usize> {
    Ok(remote.list("responses-duplicates")?.len())
}

/// Answers this process took from the shared tier.
pub fn hits() -> u64 {
    HITS.load(Ordering::Relaxed)
}

/// Answers this process paid for that another worker had paid for at the same moment.
pub fn duplicates() -> u64 {
    DUPLICATES.load(Ordering::Relaxed)
}
