//! `lucid audit BANK --labels FILE --plan`: how many more labels would settle each open EIA
//! verdict, in which strata, and which memories to label next. The count assumes an interval
//! narrows as one over the square root of its labels, with a margin (the new labels move the
//! estimate too); the memories are a seeded draw among each stratum's unlabelled ones (a blank
//! row or spare already on the sheet is named as such: fill its row), so they
//! can be added to the sheet and the labels read again as any stratified sample is.

use serde::Serialize;

use super::design::{Sample, Strata, allocate, draw_more};
use super::hand::HandAudit;

/// How much more than the 1 / sqrt(labels) rule the plan asks for: a margin for the estimate
/// moving as labels arrive.
pub const MARGIN: f64 = 1.3;

/// One verdict of the plan.
#[derive(Clone, Debug, Serialize)]
pub struct PlanRow {
    /// The verifier.
    pub verifier: String,
    /// Its point estimates pass EIA.
    pub pass: bool,
    /// Its intervals already decide it.
    pub settled: bool,
    /// More labels in all that would settle it (None: settled, or no number of labels can
    /// promise it: an estimate on its threshold).
    pub more: Option<usize>,
    /// Where, per stratum.
    pub by_stratum: Vec<(String, usize)>,
}

/// The plan.
#[derive(Clone, Debug, Serialize)]
pub struct LabelPlan {
    /// Memories labelled so far.
    pub labelled: usize,
    /// Per verifier.
    pub verdicts: Vec<PlanRow>,
    /// The memories to label next (enough for every open verdict that a number can settle), by
    /// index into the bank, with their strata and whether the sheet already has a row for them.
    pub next: Vec<(usize, String, bool)>,
}

/// The plan of `audit` (of a bank in strata `s`, `picked` labelled and `listed` on the sheet
/// unlabelled: not drawn again), its draw seeded by `seed`.
pub fn plan(audit: &HandAudit, s: &Strata, picked: &[usize], listed: &[usize], seed: u64) -> LabelPlan {
    let sample = Sample::new(s, picked);
    let n = picked.len();
    let room: usize = s.sizes.iter().sum();
    let extra = |more: usize| -> Vec<usize> {
        let total = (((n + more) as f64) * MARGIN).ceil() as usize;
        let take = allocate(&s.sizes, total.min(room)).unwrap_or_else(|_| s.sizes.clone());
        (0..s.sizes.len()).map(|h| take[h].saturating_sub(sample.labelled[h])).collect()
    };
    let mut most = vec![0; s.sizes.len()];
    let verdicts = audit
        .eia
        .iter()
        .map(|e| {
            let per = e.more_labels.filter(|_| !e.settled).map(extra);
            if let Some(p) = &per {
                most.iter_mut().zip(p).for_each(|(m, &x)| *m = (*m).max(x));
            }
            PlanRow {
                verifier: e.verifier.clone(),
                pass: e.pass,
                settled: e.settled,
                more: per.as_ref().map(|p| p.iter().sum()),
                by_stratum: per
                    .map(|p| (0..p.len()).filter(|&h| p[h] > 0).map(|h| (s.names[h].clone(), p[h])).collect())
                    .unwrap_or_default(),
            }
        })
        .collect();
    let next = draw_more(s, picked, &most, seed)
        .into_iter()
        .map(|i| (i, s.names[s.of[i]].clone(), listed.contains(&i)))
        .collect();
    LabelPlan { labelled: n, verdicts, next }
}

/// The plan as Markdown, the memories named by `ids`.
pub fn markdown(p: &LabelPlan, ids: &[String], source: &str) -> String {
    let mut out = format!(
        "# lucid audit --plan: {source} — {} memories labelled\n\n\
         | verifier | passes | settled | more labels that settle it | where |\n|---|---|---|---|---|\n",
        p.labelled
    );
    for r in &p.verdicts {
        let (more, per) = match (r.settled, r.more) {
            (true, _) => ("-".to_string(), String::new()),
            (false, Some(k)) => {
                (k.to_string(), r.by_stratum.iter().map(|(h, k)| format!("{k} '{h}'")).collect::<Vec<_>>().join(", "))
            }
            (false, None) => ("no number promises it (an estimate on its threshold)".to_string(), String::new()),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {more} | {per} |\n",
            r.verifier,
            if r.pass { "yes" } else { "no" },
            if r.settled { "yes" } else { "no" }
        ));
    }
    if p.next.is_empty() {
        out.push_str("\nNothing more to label: every verdict a number of labels can settle is settled.\n");
        return out;
    }
    out.push_str(&format!(
        "\n## The next {} memories to label\n\nLabel them — fill the row of one already on the sheet (`on_sheet`), \
         add a row for the others — and run `--labels` again; the margin of {MARGIN} over the 1 / sqrt(labels) rule \
         is for the estimates moving as labels arrive.\n\n```\nmemory,stratum,on_sheet\n",
        p.next.len()
    ));
    for (i, h, listed) in &p.next {
        out.push_str(&format!("{},\"{h}\",{listed}\n", ids[*i]));
    }
    out.push_str("```\n");
    out
}
