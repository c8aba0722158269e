//! Claims on stage instances: exactly one worker computes an instance at a time, with no server
//! but the store. A claim is the object `claims/<key>/e<epoch>.json`, written with a
//! create-if-absent put, so of any number of workers trying the same epoch one wins. Its holder
//! renews a lease by writing new objects `claims/<key>/e<epoch>.r<n>`; a claim whose newest
//! object is older than the lease, by the store's clock ([`Remote::now_ms`]), has lapsed and
//! another worker takes the instance over by creating epoch + 1. Machines' clocks are never
//! compared.
//!
//! Fencing: a holder checks, before each write it publishes, that no higher epoch exists
//! ([`Claim::check`]); a worker that stalled past its lease and wakes up finds the new epoch and
//! stops. Its checkpoint parts written after the takeover are ignored by everyone (a part of
//! epoch e counts only if the store wrote it before it wrote epoch e + 1), and the instance's
//! result is itself a create-only object, so two workers never publish two results.

use serde::{Deserialize, Serialize};

use super::{Listed, Remote};
use crate::error::{Error, Result};

/// What a claim object holds.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ClaimRecord {
    /// The worker (`host-pid-time-n`).
    pub holder: String,
    /// The claim's epoch, from 1.
    pub epoch: u64,
    /// The lease the holder renews within, milliseconds.
    pub lease_ms: i64,
}

/// Where an instance's claims stand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimState {
    /// The newest claim.
    pub record: ClaimRecord,
    /// Store time of the newest object of that epoch (claim or renewal), ms.
    pub last_ms: i64,
    /// Store time of each epoch's claim object, ms (epoch -> time), oldest first.
    pub claimed_ms: Vec<(u64, i64)>,
}

/// A claim this worker holds.
#[derive(Clone, Debug)]
pub struct Claim {
    /// The instance key.
    pub key: String,
    /// Its epoch.
    pub epoch: u64,
    /// This worker.
    pub holder: String,
    /// The claim taken over, when the instance had an earlier holder.
    pub took_over: Option<ClaimRecord>,
}

/// The outcome of [`try_claim`].
#[derive(Clone, Debug)]
pub enum ClaimAttempt {
    /// This worker holds the instance now.
    Won(Claim),
    /// Another worker holds it, its lease renewed `idle_ms` ago by the store's clock.
    Held {
        /// The holder's claim.
        record: ClaimRecord,
        /// Store time since its last renewal.
        idle_ms: i64,
    },
}

fn dir(key: &str) -> String {
    format!("claims/{key}")
}

fn claim_name(epoch: u64) -> String {
    format!("e{epoch:06}.json")
}

/// Parse `e000003.json` (claim) or `e000003.r00000012` (renewal) into the epoch.
fn epoch_of(name: &str) -> Option<u64> {
    let rest = name.strip_prefix('e')?;
    rest.get(..6)?.parse().ok()
}

/// The claims on `key`, None when nobody ever claimed it.
pub fn state(remote: &Remote, key: &str) -> Result<Option<ClaimState>> {
    let listed: Vec<Listed> = remote.list(&dir(key))?;
    let mut claimed_ms: Vec<(u64, i64)> = listed
        .iter()
        .filter(|l| l.name.ends_with(".json"))
        .filter_map(|l| Some((epoch_of(&l.name)?, l.written_ms)))
        .collect();
    claimed_ms.sort();
    let Some(&(epoch, _)) = claimed_ms.last() else { return Ok(None) };
    let last_ms =
        listed.iter().filter(|l| epoch_of(&l.name) == Some(epoch)).map(|l| l.written_ms).max().unwrap_or_default();
    let key_of = format!("{}/{}", dir(key), claim_name(epoch));
    let bytes = remote.get(&key_of)?.unwrap_or_default();
    let record: ClaimRecord = serde_json::from_slice(&bytes)
        .map_err(|e| Error::environment_from(format!("store {}: {key_of}: not a claim", remote.url()), e))?;
    Ok(Some(ClaimState { record, last_ms, claimed_ms }))
}

/// How a claim stands now, by the store's clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Standing {
    /// The instance key.
    pub key: String,
    /// Its newest claim.
    pub record: ClaimRecord,
    /// Store time since the holder's last renewal, ms.
    pub idle_ms: i64,
    /// Whether the instance's result is published (`stages/<key>.json`).
    pub done: bool,
}

impl Standing {
    /// `done`, `held` (lease live) or `lapsed`.
    pub fn state(&self) -> &'static str {
        if self.done {
            "done"
        } else if self.idle_ms <= self.record.lease_ms {
            "held"
        } else {
            "lapsed"
        }
    }
}

/// Every claim in the store and how it stands (one listing of `claims/`, one of `stages/`).
pub fn standings(remote: &Remote) -> Result<Vec<Standing>> {
    let done: std::collections::HashSet<String> =
        remote.list("stages")?.into_iter().filter_map(|l| l.name.strip_suffix(".json").map(String::from)).collect();
    let mut keys: Vec<String> =
        remote.list("claims")?.into_iter().filter_map(|l| l.name.split_once('/').map(|(k, _)| k.to_string())).collect();
    keys.dedup();
    let now = remote.now_ms()?;
    let mut out = Vec::new();
    for key in keys {
        if let Some(s) = state(remote, &key)? {
            out.push(Standing { done: done.contains(&key), idle_ms: now - s.last_ms, record: s.record, key });
        }
    }
    Ok(out)
}

/// Claim `key` for `holder`: win a first claim, take over a lapsed one, or learn who holds it.
pub fn try_claim(remote: &Remote, key: &str, holder: &str, lease_ms: i64) -> Result<ClaimAttempt> {
    for _ in 0..3 {
        let current = state(remote, key)?;
        let (epoch, took_over) = match &current {
            None => (1, None),
            Some(s) if s.record.holder == holder => {
                return Ok(ClaimAttempt::Won(Claim {
                    key: key.into(),
                    epoch: s.record.epoch,
                    holder: holder.into(),
                    took_over: None,
                }));
            }
            Some(s) => {
                let idle_ms = remote.now_ms()? - s.last_ms;
                if idle_ms <= s.record.lease_ms {
                    return Ok(ClaimAttempt::Held { record: s.record.clone(), idle_ms });
                }
                (s.record.epoch + 1, Some(s.record.clone()))
            }
        };
        let record = ClaimRecord { holder: holder.into(), epoch, lease_ms };
        let bytes = serde_json::to_vec(&record).expect("claim serializes");
        if remote.create(&format!("{}/{}", dir(key), claim_name(epoch)), bytes)? {
            return Ok(ClaimAttempt::Won(Claim { key: key.into(), epoch, holder: holder.into(), took_over }));
        }
        // Another worker created this epoch first: read who, and answer from that.
    }
    match state(remote, key)? {
        Some(s) => Ok(ClaimAttempt::Held { record: s.record, idle_ms: 0 }),
        None => Err(Error::environment(format!("store {}: claims on {key} vanished", remote.url()))),
    }
}

impl Claim {
    /// Renew the lease: one more create-only object of this epoch (`n` counts renewals).
    pub fn renew(&self, remote: &Remote, n: u64) -> Result<()> {
        remote.create(&format!("{}/e{:06}.r{n:08}", dir(&self.key), self.epoch), Vec::new())?;
        Ok(())
    }

    /// Fencing: an error when a higher epoch exists (this worker lost the instance).
    pub fn check(&self, remote: &Remote) -> Result<()> {
        match state(remote, &self.key)? {
            Some(s) if s.record.epoch > self.epoch => Err(Error::environment(format!(
                "lost its claim on {} (epoch {}) to {} (epoch {}): its lease lapsed; not publishing",
                self.key, self.epoch, s.record.holder, s.record.epoch
            ))),
            _ => Ok(()),
        }
    }
}

/// The checkpoint parts of `key` a new holder may resume from: of each earlier epoch, the parts
/// the store wrote before it wrote the next epoch's claim. Returns (epoch folder name, part name).
pub fn valid_parts(remote: &Remote, key: &str, up_to_epoch: u64) -> Result<Vec<(String, String)>> {
    let claims = state(remote, key)?.map(|s| s.claimed_ms).unwrap_or_default();
    let next_claim = |e: u64| claims.iter().find(|(x, _)| *x == e + 1).map(|(_, t)| *t);
    let mut out = Vec::new();
    for l in remote.list(&format!("work/{key}"))? {
        let Some((folder, part)) = l.name.split_once('/') else { continue };
        let Some(e) = folder.strip_prefix('e').and_then(|x| x.parse::<u64>().ok()) else { continue };
        if e >= up_to_epoch {
            continue;
        }
        if next_claim(e).is_none_or(|t| l.written_ms < t) {
            out.push((folder.to_string(), part.to_string()));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epochs_parse_from_claims_and_renewals() {
        assert_eq!(epoch_of("e000003.json"), Some(3));
        assert_eq!(epoch_of("e000012.r00000007"), Some(12));
        assert_eq!(epoch_of("clock"), None);
    }
}
