//! The audit from a few hand labels (`lucid audit BANK --labels FILE`): U is known only for the
//! labelled memories, so leniency, sensitivity, the label sanity check (Corr(r, U) and whether
//! the labels look inverted), each verifier's EIA axes and its demotion payoff are estimated
//! from them with the stratified design of [`super::design`], each with a 95 % interval.

use serde::Serialize;

use super::bank::{AuditBank, demote};
use super::design::{Interval, Sample, Scale, Strata, corr, corr_terms, interval, ratio};

/// One estimated quantity.
#[derive(Clone, Debug, Serialize)]
pub struct HandRow {
    /// What is estimated (`leniency`, `corr_v_u`, ...).
    pub quantity: String,
    /// The verifier it is about (None: the self-grade).
    pub verifier: Option<String>,
    /// The estimate (None: undefined in this sample).
    pub estimate: Option<f64>,
    /// 95 % interval.
    pub lo: Option<f64>,
    /// Upper end.
    pub hi: Option<f64>,
}

/// A stratum of the design, as the output lists it.
#[derive(Clone, Debug, Serialize)]
pub struct StratumRow {
    /// label x flags.
    pub stratum: String,
    /// Memories in the bank.
    pub memories: usize,
    /// Of them, labelled.
    pub labelled: usize,
}

/// One verifier's EIA verdict from the estimates.
#[derive(Clone, Debug, Serialize)]
pub struct HandEia {
    /// The verifier.
    pub verifier: String,
    /// The point estimates pass (|Corr(nu, b)| < tau_dec and Corr(V, U) > tau_tru).
    pub pass: bool,
    /// Both intervals clear their thresholds on the same side as the estimates: the verdict does
    /// not hang on the sample.
    pub settled: bool,
}

/// The hand-label audit.
#[derive(Clone, Debug, Serialize)]
pub struct HandAudit {
    /// Memories in the bank.
    pub memories: usize,
    /// Memories labelled.
    pub labelled: usize,
    /// Where the bank's own labels came from (an imported bank says).
    pub label_source: Option<String>,
    /// The design.
    pub strata: Vec<StratumRow>,
    /// Every estimate.
    pub rows: Vec<HandRow>,
    /// EIA per verifier.
    pub eia: Vec<HandEia>,
    /// Label sanity from Corr(r, U): labels look inverted / labels carry signal / no evidence
    /// either way.
    pub sanity: &'static str,
}

/// What a [`Quantity`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum What {
    Accuracy,
    Leniency,
    Sensitivity,
    CorrRU,
    CorrNuB,
    CorrVU,
    Payoff,
}

/// One quantity of the hand-label audit over a bank's r and one verifier's V (for the
/// verifier's quantities): per-memory terms whose weighted totals it is a function of.
pub struct Quantity {
    what: What,
    /// The verifier it is about (None: the self-grade).
    pub verifier: Option<String>,
    r: std::sync::Arc<Vec<f64>>,
    v: std::sync::Arc<Vec<f64>>,
    /// Q after demoting with V.
    q: std::sync::Arc<Vec<f64>>,
}

/// The payoff: Corr(Q, U) - Corr(r, U) from totals [n, r, r^2, U, U, rU, Q, Q^2, QU].
fn payoff(t: &[f64]) -> Option<f64> {
    Some(corr(&[t[0], t[6], t[7], t[3], t[4], t[8]])? - corr(&t[..6])?)
}

/// The quantities of `bank` (its r and verifiers; U comes with each call): accuracy, leniency,
/// sensitivity, Corr(r, U), then per verifier Corr(nu, b), Corr(V, U) and the payoff.
pub fn quantities(bank: &AuditBank) -> Vec<Quantity> {
    let r = std::sync::Arc::new(bank.r.clone());
    let none = std::sync::Arc::new(Vec::new());
    let mut out: Vec<Quantity> = [What::Accuracy, What::Leniency, What::Sensitivity, What::CorrRU]
        .into_iter()
        .map(|what| Quantity { what, verifier: None, r: r.clone(), v: none.clone(), q: none.clone() })
        .collect();
    for (name, v) in &bank.verifiers {
        let (v, q) = (std::sync::Arc::new(v.clone()), std::sync::Arc::new(demote(&bank.r, v)));
        for what in [What::CorrNuB, What::CorrVU, What::Payoff] {
            out.push(Quantity { what, verifier: Some(name.clone()), r: r.clone(), v: v.clone(), q: q.clone() });
        }
    }
    out
}

impl Quantity {
    /// Its name (a [`HandRow::quantity`]).
    pub fn name(&self) -> &'static str {
        match self.what {
            What::Accuracy => "accuracy",
            What::Leniency => "leniency",
            What::Sensitivity => "sensitivity",
            What::CorrRU => "corr_r_u",
            What::CorrNuB => "corr_nu_b",
            What::CorrVU => "corr_v_u",
            What::Payoff => "payoff",
        }
    }

    /// The terms of memory `i` with truth `u`.
    fn terms(&self, i: usize, u: f64) -> Vec<f64> {
        let r = self.r[i];
        let trusted = f64::from(u8::from(r >= 0.5));
        let scored = || !self.v[i].is_nan();
        match self.what {
            What::Accuracy => vec![1.0, u],
            What::Leniency => vec![1.0 - u, trusted * (1.0 - u)],
            What::Sensitivity => vec![u, trusted * u],
            What::CorrRU => corr_terms(r, u, true),
            What::CorrNuB => corr_terms(self.v[i] - u, r - u, scored()),
            What::CorrVU => corr_terms(self.v[i], u, scored()),
            What::Payoff => {
                let q = self.q[i];
                vec![1.0, r, r * r, u, u, r * u, q, q * q, q * u]
            }
        }
    }

    /// Whether memory `i` with truth `u` is in its domain.
    fn inside(&self, i: usize, u: f64) -> bool {
        match self.what {
            What::Leniency => u < 0.5,
            What::Sensitivity => u >= 0.5,
            What::CorrNuB | What::CorrVU => !self.v[i].is_nan(),
            _ => true,
        }
    }

    fn f(&self, t: &[f64]) -> Option<f64> {
        match self.what {
            What::Accuracy | What::Leniency | What::Sensitivity => ratio(t),
            What::CorrRU | What::CorrNuB | What::CorrVU => corr(t),
            What::Payoff => payoff(t),
        }
    }

    fn scale(&self) -> Scale {
        match self.what {
            What::Accuracy | What::Leniency | What::Sensitivity => Scale::Proportion,
            What::CorrRU | What::CorrNuB | What::CorrVU => Scale::Correlation,
            What::Payoff => Scale::Difference,
        }
    }

    /// Its value over the whole bank with truth `u` (the planted value of a simulation).
    pub fn exact(&self, u: &[f64]) -> Option<f64> {
        let mut total: Vec<f64> = Vec::new();
        for (i, &ui) in u.iter().enumerate() {
            let t = self.terms(i, ui);
            if total.is_empty() {
                total = vec![0.0; t.len()];
            }
            total.iter_mut().zip(&t).for_each(|(a, b)| *a += b);
        }
        self.f(&total)
    }

    /// Its estimate and interval from the labels `u` of the memories `picked` (a `sample` of them).
    pub fn estimate(&self, sample: &Sample, picked: &[usize], u: &[f64]) -> Option<Interval> {
        let terms: Vec<Vec<f64>> = picked.iter().zip(u).map(|(&i, &u)| self.terms(i, u)).collect();
        let domain = picked.iter().zip(u).filter(|&(&i, &u)| self.inside(i, u)).count();
        interval(sample, &terms, |t| self.f(t), self.scale(), domain)
    }
}

/// The hand-label audit of `bank` (its u ignored) from labels `u` of the memories `picked`, of a
/// labels file of `rows` rows (blank ones included: the N the sample was drawn for).
pub fn hand_audit(
    bank: &AuditBank,
    rows: usize,
    picked: &[usize],
    u: &[f64],
    tau_dec: f64,
    tau_tru: f64,
) -> crate::error::Result<HandAudit> {
    let s: Strata = super::design::strata(bank, rows);
    let sample = Sample::new(&s, picked)?;
    let rows: Vec<HandRow> = quantities(bank)
        .iter()
        .map(|q| {
            let e = q.estimate(&sample, picked, u);
            HandRow {
                quantity: q.name().into(),
                verifier: q.verifier.clone(),
                estimate: e.map(|e| e.value).filter(|v| !v.is_nan()),
                lo: e.map(|e| e.lo),
                hi: e.map(|e| e.hi),
            }
        })
        .collect();
    let find = |name: &str, v: Option<&str>| rows.iter().find(|r| r.quantity == name && r.verifier.as_deref() == v);
    let eia = bank
        .verifiers
        .iter()
        .map(|(name, _)| {
            let (dec, tru) = (find("corr_nu_b", Some(name)), find("corr_v_u", Some(name)));
            let ok = |r: Option<&HandRow>, test: &dyn Fn(f64) -> bool| r.and_then(|r| r.estimate).is_some_and(test);
            let pass = ok(dec, &|d| d.abs() < tau_dec) && ok(tru, &|t| t > tau_tru);
            let ends = |r: Option<&HandRow>| r.and_then(|r| Some((r.lo?, r.hi?)));
            let settled = match (ends(dec), ends(tru)) {
                (Some((dl, dh)), Some((tl, th))) => {
                    let dec_settled = (dl > -tau_dec && dh < tau_dec) || dl >= tau_dec || dh <= -tau_dec;
                    let tru_settled = tl > tau_tru || th <= tau_tru;
                    if pass { dl > -tau_dec && dh < tau_dec && tl > tau_tru } else { dec_settled && tru_settled }
                }
                _ => false,
            };
            HandEia { verifier: name.clone(), pass, settled }
        })
        .collect();
    let sanity = match find("corr_r_u", None) {
        Some(HandRow { hi: Some(h), .. }) if *h < 0.0 => "labels look inverted",
        Some(HandRow { lo: Some(l), .. }) if *l > 0.0 => "labels carry signal",
        _ => "no evidence either way",
    };
    Ok(HandAudit {
        memories: bank.r.len(),
        labelled: picked.len(),
        label_source: bank.label_source.clone(),
        strata: (0..s.sizes.len())
            .filter(|&h| s.sizes[h] > 0)
            .map(|h| StratumRow { stratum: s.names[h].clone(), memories: s.sizes[h], labelled: sample.labelled[h] })
            .collect(),
        rows,
        eia,
        sanity,
    })
}

/// The hand-label audit as Markdown.
pub fn markdown(a: &HandAudit, source: &str) -> String {
    let f = |x: Option<f64>| x.map_or("-".into(), |v| format!("{v:+.3}"));
    let mut out = format!(
        "# lucid audit: {source} — from {} hand labels of {} memories\n\n\
         Estimates weight each labelled memory by its stratum's size over its labels; 95 % intervals from the \
         stratified jackknife with the finite-population correction.\n\n## Label sanity\n\n**{}** (Corr(r, U) below).\n\n\
         ## Estimates\n\n| quantity | verifier | estimate | lo | hi |\n|---|---|---|---|---|\n",
        a.labelled, a.memories, a.sanity
    );
    if let Some(s) = &a.label_source {
        out = out.replacen("## Label sanity\n\n", &format!("## Label sanity\n\nThe bank's labels: {s}.\n\n"), 1);
    }
    for r in &a.rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            r.quantity,
            r.verifier.as_deref().unwrap_or("self-grade"),
            f(r.estimate),
            f(r.lo),
            f(r.hi)
        ));
    }
    out.push_str("\n## EIA\n\n| verifier | passes | settled by the intervals |\n|---|---|---|\n");
    for e in &a.eia {
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            e.verifier,
            if e.pass { "yes" } else { "no" },
            if e.settled { "yes" } else { "no: label more memories" }
        ));
    }
    out.push_str("\n## Design\n\n| stratum | memories | labelled |\n|---|---|---|\n");
    for s in &a.strata {
        out.push_str(&format!("| {} | {} | {} |\n", s.stratum, s.memories, s.labelled));
    }
    out
}
