//! The bank an audit reads: one row per memory with its self-grade r, its truth U and the scores
//! of candidate verifiers V. A verifier may leave a memory unscored (NaN): it is audited over the
//! memories it scored (EIA), and everywhere else an unscored memory is "not flagged" — it keeps
//! its label — so every verifier's demotion is measured on the whole bank.

use std::collections::HashMap;

use serde::Serialize;

/// A bank: one row per memory.
#[derive(Clone, Debug, Default)]
pub struct AuditBank {
    /// The stored label r (0..1): the self-grade, 0 for an episode that was never graded (stored
    /// untrusted).
    pub r: Vec<f64>,
    /// Post-hoc truth U (0 or 1).
    pub u: Vec<f64>,
    /// Candidate verifiers: name and score per memory (0..1; below 0.5 flags; NaN: unscored).
    pub verifiers: Vec<(String, Vec<f64>)>,
    /// The verifiers the ensembles and the gold-fit combine (the judges; not detector channels).
    pub judges: Vec<String>,
    /// Whether each memory's self-grade parsed (None: every memory was graded).
    pub graded: Option<Vec<bool>>,
    /// The seed (or any fold) of each memory, when the bank has one.
    pub seed: Option<Vec<i64>>,
    /// The cluster of each memory, when the bank has one: its question (one id per distinct
    /// question; the same question under several seeds is one cluster of the grader's intervals
    /// and of the payoff's bootstrap). None: every memory is its own cluster.
    pub cluster: Option<Vec<usize>>,
    /// A self-consistency score per memory (agreement of resampled answers; NaN: none).
    pub sc: Option<Vec<f64>>,
    /// How often each memory was retrieved (reuse count), when the bank has it.
    pub n: Option<Vec<f64>>,
    /// The arm, for the bank of an agent run.
    pub arm: Option<String>,
    /// What each verifier stage of an agent run spent (empty for a bank file).
    pub cost: Vec<CostRow>,
    /// Where the labels came from, when the bank says (an imported bank).
    pub label_source: Option<String>,
}

/// What one verifier cost over the bank (the cost table beside the EIA table).
#[derive(Clone, Debug, Default, Serialize)]
pub struct CostRow {
    /// The verifier.
    pub verifier: String,
    /// Memories it scored.
    pub scored: usize,
    /// Memories it left unscored (a failed call, an unparseable verdict, no evidence).
    pub skipped: usize,
    /// Model calls.
    pub calls: u64,
    /// Calls that failed after their retries.
    pub failed_calls: u64,
    /// Prompt and generated tokens.
    pub tokens: u64,
    /// Model seconds (0 for cache hits).
    pub seconds: f64,
}

impl AuditBank {
    /// The memories at `idx`.
    pub fn subset(&self, idx: &[usize]) -> AuditBank {
        let pick = |x: &[f64]| idx.iter().map(|&i| x[i]).collect::<Vec<_>>();
        AuditBank {
            r: pick(&self.r),
            u: pick(&self.u),
            verifiers: self.verifiers.iter().map(|(n, v)| (n.clone(), pick(v))).collect(),
            judges: self.judges.clone(),
            graded: self.graded.as_ref().map(|g| idx.iter().map(|&i| g[i]).collect()),
            seed: self.seed.as_ref().map(|s| idx.iter().map(|&i| s[i]).collect()),
            cluster: self.cluster.as_ref().map(|c| idx.iter().map(|&i| c[i]).collect()),
            sc: self.sc.as_deref().map(pick),
            n: self.n.as_deref().map(pick),
            arm: self.arm.clone(),
            cost: self.cost.clone(),
            label_source: self.label_source.clone(),
        }
    }

    /// b = r - U per memory.
    pub fn bias(&self) -> Vec<f64> {
        self.r.iter().zip(&self.u).map(|(r, u)| r - u).collect()
    }

    /// nu = V - U per memory, for verifier scores `v`.
    pub fn errors(&self, v: &[f64]) -> Vec<f64> {
        v.iter().zip(&self.u).map(|(v, u)| v - u).collect()
    }

    /// Whether memory `i`'s self-grade parsed.
    pub fn is_graded(&self, i: usize) -> bool {
        self.graded.as_ref().is_none_or(|g| g[i])
    }

    /// The memories of each cluster (question), clusters in order of first appearance; None when
    /// every memory is its own cluster (no cluster column, or no question repeats).
    pub fn clusters(&self) -> Option<Vec<Vec<usize>>> {
        let of = self.cluster.as_ref()?;
        let mut at: HashMap<usize, usize> = HashMap::new();
        let mut out: Vec<Vec<usize>> = Vec::new();
        for (i, &c) in of.iter().enumerate() {
            let k = *at.entry(c).or_insert_with(|| {
                out.push(Vec::new());
                out.len() - 1
            });
            out[k].push(i);
        }
        (out.len() < of.len()).then_some(out)
    }

    /// The scores of the judges (in bank order), the members of the ensembles and the gold-fit.
    pub fn judge_scores(&self) -> Vec<&[f64]> {
        self.verifiers.iter().filter(|(n, _)| self.judges.contains(n)).map(|(_, v)| &v[..]).collect()
    }
}

/// The memories verifier scores `v` scored.
pub fn scored(v: &[f64]) -> Vec<usize> {
    (0..v.len()).filter(|&i| !v[i].is_nan()).collect()
}

/// How many memories `v` left unscored.
pub fn unscored(v: &[f64]) -> usize {
    v.iter().filter(|x| x.is_nan()).count()
}

/// Memory `i` is demoted by `v`: trusted (r >= 0.5) and flagged (V < 0.5); an unscored memory
/// (NaN) is never flagged.
pub fn demotes(r: f64, v: f64) -> bool {
    r >= 0.5 && v < 0.5
}

/// Q after the demotion-only operator with verifier scores `v`: a trusted memory the verifier
/// flags gets Q = 0; every other memory, unscored ones included, keeps Q = r.
pub fn demote(r: &[f64], v: &[f64]) -> Vec<f64> {
    r.iter().zip(v).map(|(&r, &v)| if demotes(r, v) { 0.0 } else { r }).collect()
}

/// "N unscored: not flagged, kept their label", or empty when `v` scored every memory.
pub fn unscored_note(v: &[f64]) -> String {
    match unscored(v) {
        0 => String::new(),
        k => format!("{k} unscored: not flagged, kept their label"),
    }
}
