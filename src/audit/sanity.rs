//! Label sanity, the audit's first table: where the labels came from (an imported bank says), the
//! share trusted, and whether the labels point the right way at all. Corr(r, U) has the sign of
//! s - l (sensitivity minus leniency), whose 95 % interval is Newcombe's hybrid score interval
//! for a difference of two proportions (Newcombe 1998, method 10, from the two Wilson
//! intervals); the labels "look inverted" when that interval lies below 0 — trusted memories are
//! wrong more often than untrusted ones, the fault ReasoningBank's released code had
//! (`if reward == 0: status = "success"`).

use serde::Serialize;

use super::AuditBank;
use crate::analysis::stats::{Z95, pearson, wilson};

/// The label sanity row.
#[derive(Clone, Debug, Serialize)]
pub struct SanityRow {
    /// Where the labels came from (unknown for a bank that does not say).
    pub label_source: String,
    /// What an audit of such labels measures.
    pub meaning: String,
    /// Memories.
    pub memories: usize,
    /// Share stored trusted (r >= 0.5).
    pub trusted_share: f64,
    /// Corr(r, U).
    pub corr_r_u: Option<f64>,
    /// s - l: P(trusted | right) - P(trusted | wrong).
    pub s_minus_l: Option<f64>,
    /// Its 95 % interval (Newcombe).
    pub lo: Option<f64>,
    /// Upper end.
    pub hi: Option<f64>,
    /// Trusted and right, trusted and wrong, untrusted and right, untrusted and wrong.
    pub counts: [usize; 4],
    /// labels look inverted / labels carry signal / no evidence either way.
    pub verdict: &'static str,
}

/// What labels from `source` measure (an imported bank's label source; else the agent's own).
fn meaning(source: &str) -> String {
    serde_json::from_value::<crate::import::presets::LabelSource>(source.into())
        .map_or_else(|_| "the agent's stored labels".into(), |s| s.meaning().to_string())
}

/// The sanity row of `bank`.
pub fn sanity(bank: &AuditBank) -> Vec<SanityRow> {
    let trusted = |i: usize| bank.r[i] >= 0.5;
    let right = |i: usize| bank.u[i] >= 0.5;
    let n = bank.r.len();
    let mut counts = [0usize; 4];
    for i in 0..n {
        counts[match (trusted(i), right(i)) {
            (true, true) => 0,
            (true, false) => 1,
            (false, true) => 2,
            (false, false) => 3,
        }] += 1;
    }
    let [tr, tw, ur, uw] = counts.map(|c| c as f64);
    let (s, l) = ((tr + ur > 0.0).then(|| tr / (tr + ur)), (tw + uw > 0.0).then(|| tw / (tw + uw)));
    let interval = match (s, l, wilson(tr, tr + ur, Z95), wilson(tw, tw + uw, Z95)) {
        (Some(s), Some(l), Some((s_lo, s_hi)), Some((l_lo, l_hi))) => {
            let d = s - l;
            Some((
                d,
                d - ((s - s_lo).powi(2) + (l_hi - l).powi(2)).sqrt(),
                d + ((s_hi - s).powi(2) + (l - l_lo).powi(2)).sqrt(),
            ))
        }
        _ => None,
    };
    let verdict = match interval {
        Some((_, _, hi)) if hi < 0.0 => "labels look inverted",
        Some((_, lo, _)) if lo > 0.0 => "labels carry signal",
        _ => "no evidence either way",
    };
    let source = bank.label_source.clone().unwrap_or_else(|| "unknown".into());
    vec![SanityRow {
        meaning: meaning(&source),
        label_source: source,
        memories: n,
        trusted_share: if n == 0 { 0.0 } else { (tr + tw) / n as f64 },
        corr_r_u: pearson(&bank.r, &bank.u),
        s_minus_l: interval.map(|x| x.0),
        lo: interval.map(|x| x.1),
        hi: interval.map(|x| x.2),
        counts,
        verdict,
    }]
}
