//! A run's tables in the shared store: `runs/<name>/listing-<epoch>.json` maps each table to its
//! instances' objects. A rerun publishes a new listing with the next epoch (create-only; of two
//! runs publishing at once, one takes the next epoch and the other the one after); readers take
//! the newest. The Parquet itself stays where the stage store put it (`objects/`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Remote;
use crate::error::{Error, Result};

/// One published state of a run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct RunListing {
    /// The run's name.
    pub name: String,
    /// Its epoch, from 1.
    pub epoch: u64,
    /// The worker that published it.
    pub published_by: String,
    /// Table -> instance label -> object hash.
    pub tables: BTreeMap<String, BTreeMap<String, String>>,
}

/// The store key of stage-store object `hash`.
pub fn object_key(hash: &str) -> String {
    format!("objects/{}/{hash}.parquet", &hash[..2.min(hash.len())])
}

fn listing_name(epoch: u64) -> String {
    format!("listing-{epoch:06}.json")
}

fn epochs(remote: &Remote, name: &str) -> Result<Vec<u64>> {
    let mut out: Vec<u64> = remote
        .list(&format!("runs/{name}"))?
        .iter()
        .filter_map(|l| l.name.strip_prefix("listing-")?.strip_suffix(".json")?.parse().ok())
        .collect();
    out.sort();
    Ok(out)
}

/// Publish `tables` as the newest listing of run `name`; returns its epoch.
pub fn publish(
    remote: &Remote,
    name: &str,
    publisher: &str,
    tables: BTreeMap<String, BTreeMap<String, String>>,
) -> Result<u64> {
    let mut epoch = epochs(remote, name)?.last().copied().unwrap_or(0) + 1;
    loop {
        let listing = RunListing { name: name.into(), epoch, published_by: publisher.into(), tables: tables.clone() };
        let bytes = serde_json::to_vec_pretty(&listing).expect("listing serializes");
        if remote.create(&format!("runs/{name}/{}", listing_name(epoch)), bytes)? {
            return Ok(epoch);
        }
        epoch += 1;
    }
}

/// The newest listing of run `name`, None when it has none.
pub fn newest(remote: &Remote, name: &str) -> Result<Option<RunListing>> {
    let Some(epoch) = epochs(remote, name)?.last().copied() else { return Ok(None) };
    let key = format!("runs/{name}/{}", listing_name(epoch));
    let bytes = remote.get(&key)?.unwrap_or_default();
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| Error::environment_from(format!("store {}: {key}: not a run listing", remote.url()), e))
}

/// Split `s3://bucket/prefix/runs/NAME` (or `file:///…/runs/NAME`) into the store URL and the
/// run name; None for anything else.
pub fn split_run_url(url: &str) -> Option<(String, String)> {
    if !(url.starts_with("s3://") || url.starts_with("file://")) {
        return None;
    }
    let (store, name) = url.trim_end_matches('/').rsplit_once("/runs/")?;
    (!name.is_empty() && !name.contains('/')).then(|| (store.to_string(), name.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_urls_split_into_store_and_name() {
        assert_eq!(split_run_url("s3://b/p/runs/demo"), Some(("s3://b/p".into(), "demo".into())));
        assert_eq!(split_run_url("s3://b/runs/demo/"), Some(("s3://b".into(), "demo".into())));
        assert_eq!(split_run_url("runs/demo"), None);
        assert_eq!(split_run_url("s3://b/p/runs/"), None);
    }
}
