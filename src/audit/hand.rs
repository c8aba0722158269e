//! The audit from a few hand labels (`lucid audit BANK --labels FILE`): U is known only for the
//! labelled memories, so leniency, sensitivity, the label sanity check (Corr(r, U) and whether
//! the labels look inverted), each verifier's EIA axes and its demotion payoff are estimated
//! from them with the stratified design of [`super::design`], each with a 95 % interval from
//! [`super::estimator`]. Leniency and sensitivity are the self-grade's over the
//! episodes it graded, as the full audit and `grader.sql` count them. Beside the bank-level
//! shares and Corr(V, U), a PPI++ estimate where the verifiers' scores narrow it; the labellers'
//! error (stated or estimated), their agreement and the warnings a reader needs first.

use serde::Serialize;

use super::bank::{AuditBank, demote};
use super::design::{Sample, Strata, corr, corr_terms, ratio};
use super::estimator::{Design, LabelError, LabellerAgreement, Labels, Ppi, Scale, Summary};

/// One estimated quantity.
#[derive(Clone, Debug, Serialize)]
pub struct HandRow {
    /// What is estimated (`leniency`, `corr_v_u`, ...).
    pub quantity: String,
    /// The verifier it is about (None: the self-grade).
    pub verifier: Option<String>,
    /// The estimate (None: undefined in this sample, its interval the quantity's whole range).
    pub estimate: Option<f64>,
    /// 95 % interval.
    pub lo: Option<f64>,
    /// Upper end.
    pub hi: Option<f64>,
    /// Standard error (linearized; None where the estimate is undefined).
    pub se: Option<f64>,
    /// The PPI++ estimate beside it (accuracy, leniency, sensitivity, Corr(V, U); None: the
    /// verifiers' scores do not narrow the interval, or the quantity is not one of these).
    pub ppi: Option<PpiRow>,
}

/// A quantity's PPI++ estimate ([`super::estimator::Ppi`]).
#[derive(Clone, Debug, Serialize)]
pub struct PpiRow {
    /// The estimate.
    pub estimate: f64,
    /// 95 % interval.
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
    /// The power-tuning weight.
    pub lambda: f64,
    /// What predicts U (`v_<name>`, `r`: the self-grade, `mean of verifiers`).
    pub predictor: String,
    /// Its width over the stratified interval's (below 1).
    pub width_ratio: f64,
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
    /// Fewer than two labels with memories left unlabelled: its share rests on the prior.
    pub thin: bool,
}

/// One verifier's EIA verdict from the estimates.
#[derive(Clone, Debug, Serialize)]
pub struct HandEia {
    /// The verifier.
    pub verifier: String,
    /// The point estimates pass (|Corr(nu, b)| < tau_dec and Corr(V, U) > tau_tru).
    pub pass: bool,
    /// The intervals decide the verdict: a pass needs both intervals clear of their thresholds;
    /// a failure is settled when either interval alone fails.
    pub settled: bool,
    /// For a verdict not settled: about how many more labels (in all, drawn as `--sample` draws)
    /// would narrow the deciding interval enough, assuming its width shrinks as 1/sqrt(labels).
    pub more_labels: Option<usize>,
    /// Where those labels would go: per stratum, how many more (the sheet's allocation of the
    /// larger sample, less what is labelled).
    pub more_by_stratum: Vec<(String, usize)>,
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
    /// Blank rows of the labels file (not labelled: fewer labels, wider intervals).
    pub blanks: usize,
    /// Memories labelled twice, and the share of them the two labels disagree on.
    pub labelled_twice: usize,
    /// Of them, the two labels disagree.
    pub disagreements: usize,
    /// How the labeller enters the intervals.
    pub labeller: String,
    /// The two labellers' agreement on the memories both labelled.
    pub agreement: LabellerAgreement,
    /// The labelling error the labels are read through.
    pub label_error: LabelErrorRow,
    /// What the reader must know before trusting a number: too few labels, labellers who agree
    /// too well or too badly.
    pub warnings: Vec<String>,
}

/// The labelling error as the output states it.
#[derive(Clone, Debug, Serialize)]
pub struct LabelErrorRow {
    /// `stated`, `estimated` (from the memories labelled twice) or `none` (labels taken as truth).
    pub source: &'static str,
    /// The first labeller's.
    pub first: LabelError,
    /// The second's.
    pub second: LabelError,
    /// The standard error of an estimated rate.
    pub se: Option<f64>,
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
    /// Whether each memory's self-grade parsed (empty: all).
    graded: std::sync::Arc<Vec<bool>>,
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
    let graded = std::sync::Arc::new(bank.graded.clone().unwrap_or_default());
    let none = std::sync::Arc::new(Vec::new());
    let mut out: Vec<Quantity> = [What::Accuracy, What::Leniency, What::Sensitivity, What::CorrRU]
        .into_iter()
        .map(|what| Quantity {
            what,
            verifier: None,
            r: r.clone(),
            graded: graded.clone(),
            v: none.clone(),
            q: none.clone(),
        })
        .collect();
    for (name, v) in &bank.verifiers {
        let (v, q) = (std::sync::Arc::new(v.clone()), std::sync::Arc::new(demote(&bank.r, v)));
        for what in [What::CorrNuB, What::CorrVU, What::Payoff] {
            out.push(Quantity {
                what,
                verifier: Some(name.clone()),
                r: r.clone(),
                graded: graded.clone(),
                v: v.clone(),
                q: q.clone(),
            });
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
        let graded = f64::from(u8::from(self.graded.get(i).is_none_or(|&g| g)));
        let scored = || !self.v[i].is_nan();
        match self.what {
            What::Accuracy => vec![1.0, u],
            What::Leniency => vec![graded * (1.0 - u), graded * trusted * (1.0 - u)],
            What::Sensitivity => vec![graded * u, graded * trusted * u],
            What::CorrRU => corr_terms(r, u, true),
            What::CorrNuB => corr_terms(self.v[i] - u, r - u, scored()),
            What::CorrVU => corr_terms(self.v[i], u, scored()),
            What::Payoff => {
                let q = self.q[i];
                vec![1.0, r, r * r, u, u, r * u, q, q * q, q * u]
            }
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

    /// Its estimate and interval from the labelled sample `design`.
    pub fn estimate(&self, design: &Design) -> Summary {
        design.summary(|i, u| self.terms(i, u), |t| self.f(t), self.scale())
    }

    /// Whether PPI++ estimates it (the bank-level shares and a verifier's Corr(V, U)).
    pub fn ppi_estimated(&self) -> bool {
        matches!(self.what, What::Accuracy | What::Leniency | What::Sensitivity | What::CorrVU)
    }

    /// Its stratified estimate and, for the quantities PPI++ estimates, the PPI++ one with the
    /// best of `predictors`.
    pub fn estimate_ppi(&self, design: &Design, predictors: &[Vec<f64>]) -> (Summary, Option<Ppi>) {
        if !self.ppi_estimated() || predictors.is_empty() {
            return (self.estimate(design), None);
        }
        let (s, p) = design.summary_ppi(|i, u| self.terms(i, u), |t| self.f(t), self.scale(), predictors);
        (s, p.predictor.map(|_| p))
    }
}

/// The EIA thresholds of a hand-label audit.
#[derive(Clone, Copy, Debug)]
pub struct HandOptions {
    /// EIA decorrelation threshold.
    pub tau_dec: f64,
    /// EIA truthfulness threshold.
    pub tau_tru: f64,
}

/// What PPI++ may predict U with: each verifier's score (unscored: 1/2), the self-grade r and
/// the verifiers' mean score, named.
pub fn predictors(bank: &AuditBank) -> Vec<(String, Vec<f64>)> {
    let clean = |v: &[f64]| v.iter().map(|x| if x.is_nan() { 0.5 } else { x.clamp(0.0, 1.0) }).collect::<Vec<_>>();
    let mut out: Vec<(String, Vec<f64>)> = bank.verifiers.iter().map(|(n, v)| (format!("v_{n}"), clean(v))).collect();
    if out.len() > 1 {
        let k = out.len() as f64;
        let mean = (0..bank.r.len()).map(|i| out.iter().map(|(_, v)| v[i]).sum::<f64>() / k).collect();
        out.push(("mean of verifiers".into(), mean));
    }
    out.push(("r".into(), clean(&bank.r)));
    out
}

/// Every quantity of `bank` estimated from `labels` (sampled among strata `s`): the stratified
/// estimate and the PPI++ one where it is narrower (its predictor an index of [`predictors`]).
pub fn estimates(bank: &AuditBank, s: &Strata, labels: &Labels) -> Vec<(Quantity, Summary, Option<Ppi>)> {
    let design = Design::new(&s.of, s.sizes.len(), labels);
    let preds: Vec<Vec<f64>> = predictors(bank).into_iter().map(|(_, p)| p).collect();
    quantities(bank)
        .into_iter()
        .map(|q| {
            let (e, p) = q.estimate_ppi(&design, &preds);
            (q, e, p)
        })
        .collect()
}

/// The hand-label audit of `bank` (its u ignored) from `labels`, of a labels file of `rows` rows
/// (blank ones included: the N the sample was drawn for).
pub fn hand_audit(bank: &AuditBank, rows: usize, labels: &Labels, o: HandOptions) -> crate::error::Result<HandAudit> {
    if labels.picked.is_empty() {
        return Err(crate::error::Error::usage("no memory is labelled: fill the u column (1 right, 0 wrong)"));
    }
    let s: Strata = super::design::strata(bank, rows);
    let sample = Sample::new(&s, &labels.picked);
    let thin = sample.thin();
    let names: Vec<String> = predictors(bank).into_iter().map(|(n, _)| n).collect();
    let rows_out: Vec<HandRow> = estimates(bank, &s, labels)
        .into_iter()
        .map(|(q, e, p)| HandRow {
            quantity: q.name().into(),
            verifier: q.verifier.clone(),
            estimate: e.value,
            lo: Some(e.lo),
            hi: Some(e.hi),
            se: e.value.map(|_| e.se).filter(|s| s.is_finite()),
            ppi: p.and_then(|p| {
                Some(PpiRow {
                    estimate: p.summary.value?,
                    lo: p.summary.lo,
                    hi: p.summary.hi,
                    lambda: p.lambda,
                    predictor: names[p.predictor?].clone(),
                    width_ratio: (p.summary.hi - p.summary.lo) / (e.hi - e.lo),
                })
            }),
        })
        .collect();
    let find = |name: &str, v: Option<&str>| rows_out.iter().find(|r| r.quantity == name && r.verifier.as_deref() == v);
    // A verdict reads the narrower of a row's two intervals (PPI++ is given only where narrower).
    let best = |r: Option<&HandRow>| {
        r.map(|r| match &r.ppi {
            Some(p) => HandRow { estimate: Some(p.estimate), lo: Some(p.lo), hi: Some(p.hi), ..r.clone() },
            None => r.clone(),
        })
    };
    let eia: Vec<HandEia> = bank
        .verifiers
        .iter()
        .map(|(name, _)| {
            let tru = best(find("corr_v_u", Some(name)));
            let mut e = verdict(name, find("corr_nu_b", Some(name)), tru.as_ref(), labels.picked.len(), o);
            if let Some(k) = e.more_labels {
                e.more_by_stratum = more_by_stratum(&s, &sample, k);
            }
            e
        })
        .collect();
    let sanity = match find("corr_r_u", None) {
        Some(HandRow { hi: Some(h), .. }) if *h < 0.0 => "labels look inverted",
        Some(HandRow { lo: Some(l), .. }) if *l > 0.0 => "labels carry signal",
        _ => "no evidence either way",
    };
    let agreement = labels.agreement();
    let errors = labels.errors();
    let (twice, disagreements) = (agreement.pairs(), agreement.disagreements());
    let label_error = LabelErrorRow {
        source: if labels.stated.iter().any(Option::is_some) {
            "stated"
        } else if errors.estimated {
            "estimated"
        } else {
            "none"
        },
        first: errors.first,
        second: errors.second,
        se: errors.estimated.then(|| errors.var.sqrt()),
    };
    let pct = |e: LabelError| {
        if e.wrong_as_right == e.right_as_wrong {
            format!("{:.1} % of labels", 100.0 * e.wrong_as_right)
        } else {
            format!(
                "{:.1} % of wrong memories labelled right and {:.1} % of right ones labelled wrong",
                100.0 * e.wrong_as_right,
                100.0 * e.right_as_wrong
            )
        }
    };
    let labeller = match label_error.source {
        "stated" if errors.first == errors.second => format!(
            "stated to err on {}: each label is read through that rate (which corrects its bias) and the \
             intervals carry the noise of reading it",
            pct(errors.first)
        ),
        "stated" => format!(
            "the first stated to err on {}, the second on {}: each label is read through its labeller's rate \
             and the intervals carry the noise of reading it",
            pct(errors.first),
            pct(errors.second)
        ),
        "estimated" => format!(
            "{twice} memories labelled twice, the labels disagree on {disagreements} ({:.1} %): the intervals carry a \
             labelling error of about {} per label, ±{:.1} (and correct its bias), assuming the two labellers err \
             independently and as often on right memories as on wrong ones",
            100.0 * disagreements as f64 / twice as f64,
            pct(errors.first),
            100.0 * errors.var.sqrt()
        ),
        _ => "one labeller: the labels are taken as the truth. A labeller who errs biases every estimate and the \
              intervals do not show it; state the error rate (--labeller-error) or label some memories twice (a \
              second labeller's column u2 in the sheet) to measure it"
            .to_string(),
    };
    let warnings = warnings(&agreement, labels, &eia);
    Ok(HandAudit {
        memories: bank.r.len(),
        labelled: labels.picked.len(),
        label_source: bank.label_source.clone(),
        strata: (0..s.sizes.len())
            .filter(|&h| s.sizes[h] > 0)
            .map(|h| StratumRow {
                stratum: s.names[h].clone(),
                memories: s.sizes[h],
                labelled: sample.labelled[h],
                thin: thin.contains(&h),
            })
            .collect(),
        rows: rows_out,
        eia,
        sanity,
        blanks: labels.blanks,
        labelled_twice: twice,
        disagreements,
        labeller,
        agreement,
        label_error,
        warnings,
    })
}

/// P(X <= k) for X ~ Binomial(m, p).
fn binomial_cdf(k: usize, m: usize, p: f64) -> f64 {
    if p <= 0.0 {
        return 1.0;
    }
    let (mut term, mut sum) = ((1.0 - p).powi(m as i32), 0.0);
    for j in 0..=k.min(m) {
        sum += term;
        term *= (m - j) as f64 / (j + 1) as f64 * p / (1.0 - p);
    }
    sum.min(1.0)
}

/// The warnings of a hand-label audit: labels too few to settle any verdict; two labellers who
/// agree beyond what independent errors at their stated rates allow (their errors are shared,
/// which labelling twice cannot see), or who disagree beyond it, or barely agree (kappa < 0.4).
fn warnings(a: &LabellerAgreement, labels: &Labels, eia: &[HandEia]) -> Vec<String> {
    let mut out = Vec::new();
    if !eia.is_empty() && eia.iter().all(|e| !e.settled) {
        let need = eia.iter().filter_map(|e| e.more_labels).min();
        out.push(format!(
            "{} labels are too few to settle any verdict{}: every number below is an interval wide enough to hold \
             both answers (lucid audit --plan says which memories to label next)",
            labels.picked.len(),
            need.map_or(String::new(), |k| format!(" (the nearest needs about {k} more)"))
        ));
    }
    let (m, k) = (a.pairs(), a.disagreements());
    if m > 0 && labels.stated.iter().any(Option::is_some) {
        let e = labels.errors();
        // Disagreement expected of independent errors at the stated rates (each labeller's mean rate).
        let (p, q) = (
            (e.first.wrong_as_right + e.first.right_as_wrong) / 2.0,
            (e.second.wrong_as_right + e.second.right_as_wrong) / 2.0,
        );
        let expected = p * (1.0 - q) + q * (1.0 - p);
        if binomial_cdf(k, m, expected) < 0.05 {
            out.push(format!(
                "the two labellers disagree on {k} of {m} memories labelled twice where independent errors at the \
                 stated rates would give about {:.1}: they agree too well — their errors are likely shared (a common \
                 bias), which labelling twice cannot measure, so the stated rates may be too low",
                expected * m as f64
            ));
        } else if k > 0 && 1.0 - binomial_cdf(k - 1, m, expected) < 0.05 {
            out.push(format!(
                "the two labellers disagree on {k} of {m} memories labelled twice, more than independent errors at the \
                 stated rates allow (about {:.1}): the stated rates are too low",
                expected * m as f64
            ));
        }
    }
    if m >= 10 && a.kappa.is_some_and(|x| x < 0.4) {
        out.push(format!(
            "the two labellers barely agree (Cohen's kappa {:+.2} on {m} memories): check that both label the same \
             thing the same way round before trusting any estimate",
            a.kappa.unwrap_or(0.0)
        ));
    }
    out
}

/// One verifier's EIA verdict from its two intervals (see [`HandEia`]); `n`: labels so far.
fn verdict(name: &str, dec: Option<&HandRow>, tru: Option<&HandRow>, n: usize, o: HandOptions) -> HandEia {
    let (td, tt) = (o.tau_dec, o.tau_tru);
    let get = |r: Option<&HandRow>| r.and_then(|r| Some((r.estimate?, r.lo?, r.hi?)));
    let (Some((d, dl, dh)), Some((t, tl, th))) = (get(dec), get(tru)) else {
        return HandEia {
            verifier: name.into(),
            pass: false,
            settled: false,
            more_labels: None,
            more_by_stratum: Vec::new(),
        };
    };
    let pass = d.abs() < td && t > tt;
    // How much an interval must shrink for its end to cross the threshold: (half / room)^2.
    let factor = |half: f64, room: f64| if room > 0.0 { (half / room).powi(2) } else { f64::INFINITY };
    let (settled, need) = if pass {
        let settled = dl > -td && dh < td && tl > tt;
        let need = factor(d - dl, d + td).max(factor(dh - d, td - d)).max(factor(t - tl, t - tt));
        (settled, need)
    } else {
        // Either failing axis alone settles a failure.
        let mut need = f64::INFINITY;
        if t <= tt {
            need = need.min(factor(th - t, tt - t));
        }
        if d >= td {
            need = need.min(factor(d - dl, d - td));
        }
        if d <= -td {
            need = need.min(factor(dh - d, -td - d));
        }
        let settled = th <= tt || dl >= td || dh <= -td;
        (settled, need)
    };
    let more_labels = (!settled && need.is_finite()).then(|| ((need - 1.0).max(0.0) * n as f64).ceil() as usize + 1);
    HandEia { verifier: name.into(), pass, settled, more_labels, more_by_stratum: Vec::new() }
}

/// `k` more labels spread over the strata as the sheet would allocate the larger sample.
fn more_by_stratum(s: &Strata, sample: &Sample, k: usize) -> Vec<(String, usize)> {
    let total: usize = sample.labelled.iter().sum::<usize>() + k;
    let Ok(take) = super::design::allocate(&s.sizes, total.min(s.sizes.iter().sum())) else { return Vec::new() };
    (0..s.sizes.len())
        .filter(|&h| take[h] > sample.labelled[h])
        .map(|h| (s.names[h].clone(), take[h] - sample.labelled[h]))
        .collect()
}

/// The hand-label audit as Markdown.
pub fn markdown(a: &HandAudit, source: &str) -> String {
    let f = |x: Option<f64>| x.map_or("-".into(), |v| format!("{v:+.3}"));
    let mut out = format!(
        "# lucid audit: {source} — from {} hand labels of {} memories\n\n\
         Estimates weight each labelled memory by its stratum's size over its labels; 95 % intervals from the \
         stratified linearized variance with the finite-population correction, each stratum's variance at least \
         what one more label of the other truth would give (a stratum whose labels agree is not certain).\n\n\
         **The labeller**: {}.\n\n",
        a.labelled, a.memories, a.labeller
    );
    for w in &a.warnings {
        out.push_str(&format!("**Warning**: {w}.\n\n"));
    }
    let g = &a.agreement;
    if g.pairs() > 0 {
        out.push_str(&format!(
            "**Agreement** of the two labellers on {} memories labelled twice: both right {}, both wrong {}, first right \
             and second wrong {}, first wrong and second right {}; Cohen's kappa {}.\n\n",
            g.pairs(),
            g.both_right,
            g.both_wrong,
            g.first_right_second_wrong,
            g.first_wrong_second_right,
            g.kappa.map_or("undefined (no spread)".into(), |k| format!("{k:+.2}"))
        ));
    }
    if a.blanks > 0 {
        out.push_str(&format!(
            "**Blanks**: {} rows left blank are not labelled (fewer labels, wider intervals).\n\n",
            a.blanks
        ));
    }
    let thin: Vec<&StratumRow> = a.strata.iter().filter(|s| s.thin).collect();
    if !thin.is_empty() {
        let names: Vec<String> =
            thin.iter().map(|s| format!("'{}' ({} of {})", s.stratum, s.labelled, s.memories)).collect();
        out.push_str(&format!(
            "**Strata with fewer than two labels**: {} — their share rests on the prior, so their intervals are \
             wide; label more of them.\n\n",
            names.join(", ")
        ));
    }
    out.push_str(&format!("## Label sanity\n\n**{}** (Corr(r, U) below).\n\n", a.sanity));
    if let Some(s) = &a.label_source {
        out.push_str(&format!("The bank's labels: {s}.\n\n"));
    }
    out.push_str(
        "## Estimates\n\nPPI++ (beside the stratified estimate where it is narrower): the verifiers' or the \
         self-grade's scores on every memory predict U, the labels correct the prediction, lambda weighs it (0: the \
         stratified estimate).\n\n| quantity | verifier | estimate | lo | hi | PPI++ estimate [lo, hi] | lambda, \
         predictor |\n|---|---|---|---|---|---|---|\n",
    );
    for r in &a.rows {
        let note = if r.estimate.is_none() { " (undefined in this sample: the whole range)" } else { "" };
        let (ppi, how) = match &r.ppi {
            Some(p) => (
                format!(
                    "{:+.3} [{:+.3}, {:+.3}] ({:.0} % of the width)",
                    p.estimate,
                    p.lo,
                    p.hi,
                    100.0 * p.width_ratio
                ),
                format!("{:.2}, {}", p.lambda, p.predictor),
            ),
            None => ("-".into(), "-".into()),
        };
        out.push_str(&format!(
            "| {} | {} | {}{note} | {} | {} | {ppi} | {how} |\n",
            r.quantity,
            r.verifier.as_deref().unwrap_or("self-grade"),
            f(r.estimate),
            f(r.lo),
            f(r.hi)
        ));
    }
    out.push_str("\n## EIA\n\n| verifier | passes | settled by the intervals |\n|---|---|---|\n");
    for e in &a.eia {
        let settled = match (e.settled, e.more_labels) {
            (true, _) => "yes".to_string(),
            (false, Some(k)) => {
                let per: Vec<String> = e.more_by_stratum.iter().map(|(h, n)| format!("{n} '{h}'")).collect();
                format!("no: label about {k} more memories ({})", per.join(", "))
            }
            (false, None) => "no: label more memories".to_string(),
        };
        out.push_str(&format!("| {} | {} | {settled} |\n", e.verifier, if e.pass { "yes" } else { "no" }));
    }
    out.push_str("\n## Design\n\n| stratum | memories | labelled |\n|---|---|---|\n");
    for s in &a.strata {
        out.push_str(&format!(
            "| {} | {} | {}{} |\n",
            s.stratum,
            s.memories,
            s.labelled,
            if s.thin { " (thin)" } else { "" }
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(quantity: &str, estimate: f64, lo: f64, hi: f64) -> HandRow {
        HandRow {
            quantity: quantity.into(),
            verifier: Some("v".into()),
            estimate: Some(estimate),
            lo: Some(lo),
            hi: Some(hi),
            se: None,
            ppi: None,
        }
    }

    #[test]
    fn a_failure_is_settled_by_either_interval_alone() {
        let o = HandOptions { tau_dec: 0.3, tau_tru: 0.3 };
        // An echo: Corr(nu, b) wholly above 0.3 fails it, whatever Corr(V, U) may be.
        let e =
            verdict("v", Some(&row("corr_nu_b", 0.82, 0.728, 0.910)), Some(&row("corr_v_u", 0.2, -0.1, 0.5)), 50, o);
        assert!(!e.pass && e.settled && e.more_labels.is_none(), "{e:?}");
        // A pass needs both.
        let e = verdict("v", Some(&row("corr_nu_b", 0.0, -0.1, 0.1)), Some(&row("corr_v_u", 0.6, 0.2, 0.8)), 50, o);
        assert!(e.pass && !e.settled, "{e:?}");
        // Corr(V, U)'s lower end must rise by 0.1 of its 0.4: (0.4 / 0.3)^2 = 1.78 times the labels.
        assert_eq!(e.more_labels, Some(40), "{e:?}");
        let e = verdict("v", Some(&row("corr_nu_b", 0.0, -0.1, 0.1)), Some(&row("corr_v_u", 0.6, 0.4, 0.8)), 50, o);
        assert!(e.pass && e.settled);
    }

    #[test]
    fn leniency_and_sensitivity_count_graded_episodes_only() {
        // Ungraded episodes are stored untrusted; the self-grade's leniency is over the graded.
        let bank = AuditBank {
            r: vec![1.0, 1.0, 0.0, 0.0, 1.0, 0.0],
            u: vec![0.0, 0.0, 0.0, 0.0, 1.0, 1.0],
            graded: Some(vec![true, true, true, false, true, true]),
            ..AuditBank::default()
        };
        let labels = Labels::single((0..6).collect(), bank.u.clone());
        let a = hand_audit(&bank, 6, &labels, HandOptions { tau_dec: 0.3, tau_tru: 0.3 }).unwrap();
        let full = super::super::grader::grader(&bank);
        let get = |q: &str| a.rows.iter().find(|r| r.quantity == q).unwrap().estimate;
        assert_eq!(get("leniency"), full[0].leniency);
        assert_eq!(get("leniency"), Some(2.0 / 3.0));
        assert_eq!(get("sensitivity"), full[0].sensitivity);
    }
}
