//! Label sanity without truth: a bank with no U (an imported bank without gold or a truth file)
//! cannot be audited for inflation, but its labels can still be checked against every
//! independent verifier that scored it (`v_<name>` tables of the run): the share of memories on
//! which r and V agree (both trusted or both flagged), with its 95 % Wilson interval. The labels
//! "look inverted" when r disagrees with every verifier more often than it agrees (each
//! interval below 0.5) — what ReasoningBank's released bank would show against any judge.

use std::path::Path;

use arrow::array::{Array, AsArray};
use arrow::datatypes::{DataType, Int64Type};
use serde::Serialize;

use crate::analysis::stats::{Z95, wilson};
use crate::error::{Error, Result};

/// r against one verifier.
#[derive(Clone, Debug, Serialize)]
pub struct AgreementRow {
    /// The verifier.
    pub verifier: String,
    /// Memories it scored.
    pub scored: i64,
    /// Memories where r and V agree (r >= 0.5 and V >= 0.5, or both below).
    pub agree: i64,
    /// agree / scored.
    pub agreement: Option<f64>,
    /// 95 % Wilson interval.
    pub lo: Option<f64>,
    /// Upper end.
    pub hi: Option<f64>,
}

/// The no-truth sanity of one arm of a run.
#[derive(Clone, Debug, Serialize)]
pub struct NoTruth {
    /// The arm.
    pub arm: String,
    /// Memories.
    pub memories: i64,
    /// Share stored trusted.
    pub trusted_share: f64,
    /// Where the labels came from (an imported bank says).
    pub label_source: Option<String>,
    /// r against each verifier.
    pub agreement: Vec<AgreementRow>,
    /// labels look inverted / labels agree with the verifiers / mixed / no verifier.
    pub verdict: &'static str,
}

/// The no-truth sanity of `arm` (default: the run's only or first arm) in the run folder `dir`.
pub fn no_truth(dir: &Path, arm: Option<&str>) -> Result<NoTruth> {
    let run = (dir.display().to_string(), dir.to_path_buf());
    crate::session::block_on(async {
        let (ctx, names) = crate::runs::session_for(std::slice::from_ref(&run)).await?;
        let ints = |b: &arrow::array::RecordBatch, c: &str| -> Result<Vec<i64>> {
            let col = arrow::compute::cast(
                b.column_by_name(c).ok_or_else(|| Error::input(dir, format!("no {c}")))?,
                &DataType::Int64,
            )?;
            Ok(col.as_primitive::<Int64Type>().iter().map(|v| v.unwrap_or(0)).collect())
        };
        let arms =
            crate::session::collect(&ctx, "SELECT DISTINCT CAST(arm AS VARCHAR) AS arm FROM episodes ORDER BY arm")
                .await?;
        let arms = arrow::compute::cast(arms.column(0), &DataType::Utf8)?;
        let arms: Vec<String> = arms.as_string::<i32>().iter().flatten().map(str::to_string).collect();
        let arm = match arm {
            Some(a) if arms.iter().any(|x| x == a) => a.to_string(),
            Some(a) => return Err(Error::input(dir, format!("no arm '{a}' in this run (arms: {})", arms.join(", ")))),
            None => arms.first().cloned().ok_or_else(|| Error::input(dir, "no episodes"))?,
        };
        let quoted = arm.replace('\'', "''");
        let totals = crate::session::collect(
            &ctx,
            &format!("SELECT count(*) AS n, sum(CASE WHEN COALESCE(r, 0) >= 1 THEN 1 ELSE 0 END) AS trusted FROM episodes WHERE CAST(arm AS VARCHAR) = '{quoted}'"),
        )
        .await?;
        let (n, trusted) = (ints(&totals, "n")?[0], ints(&totals, "trusted")?[0]);
        let label_source = crate::session::collect(
            &ctx,
            &format!("SELECT min(label_source) AS s FROM episodes WHERE CAST(arm AS VARCHAR) = '{quoted}'"),
        )
        .await
        .ok()
        .and_then(|b| {
            let s = arrow::compute::cast(b.column(0), &DataType::Utf8).ok()?;
            let s = s.as_string::<i32>();
            (s.len() > 0 && s.is_valid(0)).then(|| s.value(0).to_string())
        });
        let mut agreement = Vec::new();
        for v in names.iter().filter(|n| n.starts_with("v_")) {
            let sql = format!(
                "SELECT count(*) AS scored, sum(CASE WHEN (COALESCE(e.r, 0) >= 0.5) = (t.v >= 0.5) THEN 1 ELSE 0 END) AS agree \
                 FROM episodes e JOIN \"{v}\" t ON CAST(t.arm AS VARCHAR) = CAST(e.arm AS VARCHAR) AND t.seed = e.seed AND t.step = e.step \
                 WHERE t.v IS NOT NULL AND CAST(e.arm AS VARCHAR) = '{quoted}'"
            );
            let b = crate::session::collect(&ctx, &sql).await?;
            let (scored, agree) = (ints(&b, "scored")?[0], ints(&b, "agree")?[0]);
            let interval = wilson(agree as f64, scored as f64, Z95);
            agreement.push(AgreementRow {
                verifier: v.trim_start_matches("v_").to_string(),
                scored,
                agree,
                agreement: (scored > 0).then(|| agree as f64 / scored as f64),
                lo: interval.map(|x| x.0),
                hi: interval.map(|x| x.1),
            });
        }
        let verdict = if agreement.iter().all(|a| a.scored == 0) {
            "no verifier scored the bank: run a judge, panel or evidence stage on it"
        } else if agreement.iter().filter(|a| a.scored > 0).all(|a| a.hi.is_some_and(|h| h < 0.5)) {
            "labels look inverted: r disagrees with every verifier more often than it agrees"
        } else if agreement.iter().filter(|a| a.scored > 0).all(|a| a.lo.is_some_and(|l| l > 0.5)) {
            "labels agree with every verifier more often than not"
        } else {
            "no evidence either way"
        };
        let trusted_share = if n == 0 { 0.0 } else { trusted as f64 / n as f64 };
        Ok(NoTruth { arm, memories: n, trusted_share, label_source, agreement, verdict })
    })
}

/// The no-truth sanity as Markdown.
pub fn markdown(t: &NoTruth, source: &str) -> String {
    let mut out = format!("# lucid audit: {source} (arm {}) — no truth\n\n", t.arm);
    if let Some(s) = &t.label_source {
        out.push_str(&format!("Labels: {s}.\n\n"));
    }
    out.push_str(&format!(
        "{} memories, {:.3} trusted. Without U (no gold, no truth file) the inflation audit (leniency, EIA, payoff) \
         cannot be computed: give `lucid import` a `--gold` or `--truth` file. The labels are checked against each \
         verifier instead.\n\n**{}**\n\n| verifier | scored | agree | agreement | lo | hi |\n|---|---|---|---|---|---|\n",
        t.memories, t.trusted_share, t.verdict
    ));
    let f = |x: Option<f64>| x.map_or("-".into(), |v| format!("{v:.3}"));
    for a in &t.agreement {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            a.verifier,
            a.scored,
            a.agree,
            f(a.agreement),
            f(a.lo),
            f(a.hi)
        ));
    }
    out
}
