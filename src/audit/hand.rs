//! The audit from a few hand labels (`lucid audit BANK --labels FILE`): U is known only for the
//! labelled memories, so leniency, sensitivity, the label sanity check (Corr(r, U) and whether
//! the labels look inverted), each verifier's EIA axes and its demotion payoff are estimated
//! from them with the stratified design of [`super::design`], each with a 95 % interval from the
//! posterior of [`super::posterior`]. Leniency and sensitivity are the self-grade's over the
//! episodes it graded, as the full audit and `grader.sql` count them.

use serde::Serialize;

use super::bank::{AuditBank, demote};
use super::design::{Sample, Strata, corr, corr_terms, ratio};
use super::estimator::{Design, Labels, Scale, Summary};

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
}

/// The EIA thresholds of a hand-label audit.
#[derive(Clone, Copy, Debug)]
pub struct HandOptions {
    /// EIA decorrelation threshold.
    pub tau_dec: f64,
    /// EIA truthfulness threshold.
    pub tau_tru: f64,
}

/// Every quantity of `bank` estimated from `labels` (sampled among strata `s`).
pub fn estimates(bank: &AuditBank, s: &Strata, labels: &Labels) -> Vec<(Quantity, Summary)> {
    let design = Design::new(&s.of, s.sizes.len(), labels);
    quantities(bank)
        .into_iter()
        .map(|q| {
            let e = q.estimate(&design);
            (q, e)
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
    let rows_out: Vec<HandRow> = estimates(bank, &s, labels)
        .into_iter()
        .map(|(q, e)| HandRow {
            quantity: q.name().into(),
            verifier: q.verifier.clone(),
            estimate: e.value,
            lo: Some(e.lo),
            hi: Some(e.hi),
            se: e.value.map(|_| e.se).filter(|s| s.is_finite()),
        })
        .collect();
    let find = |name: &str, v: Option<&str>| rows_out.iter().find(|r| r.quantity == name && r.verifier.as_deref() == v);
    let eia = bank
        .verifiers
        .iter()
        .map(|(name, _)| {
            let mut e =
                verdict(name, find("corr_nu_b", Some(name)), find("corr_v_u", Some(name)), labels.picked.len(), o);
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
    let (twice, disagreements) = labels.twice();
    let labeller = if twice == 0 {
        "one labeller: the labels are taken as the truth. A labeller who errs biases every estimate and the \
         intervals do not show it; label some memories twice (a second labeller's column u2 in the sheet) to \
         measure it"
            .to_string()
    } else {
        let d = disagreements as f64 / twice as f64;
        let e = (1.0 - (1.0 - 2.0 * d.min(0.49)).sqrt()) / 2.0;
        format!(
            "{twice} memories labelled twice, the labels disagree on {disagreements} ({:.1} %): the intervals carry a \
             labelling error of about {:.1} % per label (and correct its bias), assuming the two labellers err \
             independently and as often on right memories as on wrong ones",
            100.0 * d,
            100.0 * e
        )
    };
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
    })
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
    out.push_str("## Estimates\n\n| quantity | verifier | estimate | lo | hi |\n|---|---|---|---|---|\n");
    for r in &a.rows {
        let note = if r.estimate.is_none() { " (undefined in this sample: the whole range)" } else { "" };
        out.push_str(&format!(
            "| {} | {} | {}{note} | {} | {} |\n",
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
