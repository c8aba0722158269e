//! Label sanity without truth: a bank with no U (an imported bank without gold or a truth file)
//! cannot be audited for inflation, but its labels can still be checked against every
//! independent verifier that scored it (`v_<name>` tables of the run): the share of memories on
//! which r and V agree (both trusted or both flagged), with its 95 % Wilson interval, and
//! Corr(r, V) with its 95 % interval (Fisher's z). The labels "look inverted" when r is
//! negatively correlated with every verifier (each interval below 0) — what ReasoningBank's
//! released bank shows against any judge. Agreement alone cannot say it: a lenient grader on a
//! bank of mostly wrong answers agrees with a good verifier on fewer than half the memories
//! while its labels still carry signal (Corr(r, V) > 0).

use std::path::Path;

use arrow::array::{Array, AsArray};
use arrow::datatypes::{DataType, Int64Type};
use serde::Serialize;

use crate::analysis::stats::{Z95, corr_from_sums, wilson};
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
    /// Corr(r, V) over the scored memories (r and V read as trusted / flagged; None: no spread).
    pub corr: Option<f64>,
    /// Its 95 % interval (Fisher's z with n - 3).
    pub corr_lo: Option<f64>,
    /// Upper end.
    pub corr_hi: Option<f64>,
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

/// Whether the run folder `dir` has truth for any memory: an `evaluation` table with rows (an
/// import whose gold matched no memory — Memento's case bank holds no answers to score — has the
/// table and no row).
pub fn has_truth(dir: &Path) -> Result<bool> {
    if !dir.join("evaluation").exists() {
        return Ok(false);
    }
    let run = (dir.display().to_string(), dir.to_path_buf());
    crate::session::block_on(async {
        let (ctx, names) = crate::runs::session_for(std::slice::from_ref(&run)).await?;
        if !names.iter().any(|n| n == "evaluation") {
            return Ok(false);
        }
        let b = crate::session::collect(&ctx, "SELECT count(*) AS n FROM evaluation").await?;
        let n = arrow::compute::cast(b.column(0), &DataType::Int64)?;
        Ok(n.as_primitive::<Int64Type>().iter().flatten().next().unwrap_or(0) > 0)
    })
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
                "SELECT count(*) AS scored, sum(CASE WHEN (COALESCE(e.r, 0) >= 0.5) = (t.v >= 0.5) THEN 1 ELSE 0 END) AS agree, \
                 sum(CASE WHEN COALESCE(e.r, 0) >= 0.5 THEN 1 ELSE 0 END) AS rt, sum(CASE WHEN t.v >= 0.5 THEN 1 ELSE 0 END) AS vt, \
                 sum(CASE WHEN COALESCE(e.r, 0) >= 0.5 AND t.v >= 0.5 THEN 1 ELSE 0 END) AS both \
                 FROM episodes e JOIN \"{v}\" t ON CAST(t.arm AS VARCHAR) = CAST(e.arm AS VARCHAR) AND t.seed = e.seed AND t.step = e.step \
                 WHERE t.v IS NOT NULL AND CAST(e.arm AS VARCHAR) = '{quoted}'"
            );
            let b = crate::session::collect(&ctx, &sql).await?;
            let (scored, agree) = (ints(&b, "scored")?[0], ints(&b, "agree")?[0]);
            let (rt, vt, both) = (ints(&b, "rt")?[0], ints(&b, "vt")?[0], ints(&b, "both")?[0]);
            agreement.push(agreement_row(v.trim_start_matches("v_"), scored, agree, [rt, vt, both]));
        }
        let verdict = verdict(&agreement);
        let trusted_share = if n == 0 { 0.0 } else { trusted as f64 / n as f64 };
        Ok(NoTruth { arm, memories: n, trusted_share, label_source, agreement, verdict })
    })
}

/// r against one verifier from its counts: memories scored, agreeing, and [trusted, not flagged
/// by V, both].
fn agreement_row(verifier: &str, scored: i64, agree: i64, [rt, vt, both]: [i64; 3]) -> AgreementRow {
    let interval = wilson(agree as f64, scored as f64, Z95);
    let (rt, vt, both) = (rt as f64, vt as f64, both as f64);
    let corr = corr_from_sums(scored as f64, rt, rt, vt, vt, both);
    let corr_interval = corr.filter(|_| scored > 3).map(|c| {
        let (z, half) = (c.clamp(-0.999_999, 0.999_999).atanh(), Z95 / (scored as f64 - 3.0).sqrt());
        ((z - half).tanh(), (z + half).tanh())
    });
    AgreementRow {
        verifier: verifier.to_string(),
        scored,
        agree,
        agreement: (scored > 0).then(|| agree as f64 / scored as f64),
        lo: interval.map(|x| x.0),
        hi: interval.map(|x| x.1),
        corr,
        corr_lo: corr_interval.map(|x| x.0),
        corr_hi: corr_interval.map(|x| x.1),
    }
}

/// The verdict from r against every verifier: by the sign of Corr(r, V), never by agreement
/// alone.
fn verdict(agreement: &[AgreementRow]) -> &'static str {
    let scored: Vec<&AgreementRow> = agreement.iter().filter(|a| a.scored > 0).collect();
    if scored.is_empty() {
        "no verifier scored the bank: run a judge, panel or evidence stage on it"
    } else if scored.iter().all(|a| a.corr_hi.is_some_and(|h| h < 0.0)) {
        "labels look inverted: r is negatively correlated with every verifier"
    } else if scored.iter().all(|a| a.corr_lo.is_some_and(|l| l > 0.0)) {
        "labels carry signal: r is positively correlated with every verifier"
    } else {
        "no evidence either way"
    }
}

/// The no-truth sanity as Markdown.
pub fn markdown(t: &NoTruth, source: &str) -> String {
    let mut out = format!("# lucid audit: {source} (arm {}) — no truth\n\n", t.arm);
    if let Some(s) = &t.label_source {
        out.push_str(&format!("Labels: {s}.\n\n"));
    }
    out.push_str(&format!(
        "{} memories, {:.3} trusted. Without U the inflation audit (leniency, EIA, payoff) cannot be computed. Label \
         a sample by hand — `lucid audit {source} --sample 50` writes a sheet, `lucid audit {source} --labels \
         SHEET.csv` audits from it — or give `lucid import` a file that says which answers were right (`--log` for a \
         results log with a reward per task, `--truth` for per-memory truth, `--gold` for reference answers where the \
         bank holds answers). The labels are checked against each verifier instead.\n\n**{}**\n\n\
         | verifier | scored | agree | agreement | lo | hi | Corr(r, V) | lo | hi |\n|---|---|---|---|---|---|---|---|---|\n",
        t.memories, t.trusted_share, t.verdict
    ));
    let f = |x: Option<f64>| x.map_or("-".into(), |v| format!("{v:.3}"));
    for a in &t.agreement {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            a.verifier,
            a.scored,
            a.agree,
            f(a.agreement),
            f(a.lo),
            f(a.hi),
            f(a.corr),
            f(a.corr_lo),
            f(a.corr_hi)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{agreement_row, verdict};

    #[test]
    fn a_lenient_grader_on_a_hard_bank_is_not_called_inverted() {
        // 200 memories, 20 right; the self-grade trusts 19 of the right and 146 of the wrong
        // (sensitivity 0.95, leniency 0.81); a verifier that reads U. r agrees with it on
        // 19 + 34 = 53 memories (26 %), yet its labels carry signal.
        let row = agreement_row("truthful", 200, 53, [165, 20, 19]);
        assert!(row.hi.unwrap() < 0.5 && row.corr.unwrap() > 0.0, "{row:?}");
        assert_ne!(
            verdict(std::slice::from_ref(&row)),
            "labels look inverted: r is negatively correlated with every verifier"
        );
        // Labels stored the wrong way round are.
        let inverted = agreement_row("truthful", 200, 20, [110, 90, 0]);
        assert!(verdict(&[inverted]).starts_with("labels look inverted"));
    }
}
