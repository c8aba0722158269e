//! Rendering EX results: BIRD's per-difficulty table (same layout as its `print_data`) and the
//! per-question JSON lines.

use std::io::Write;
use std::path::Path;

use serde_json::json;

use super::engine::PairResult;
use super::inputs::EvalSet;
use super::query_run::{QueryRun, Ran};
use crate::error::{Error, Result};

/// BIRD's difficulty levels, in its column order.
pub const LEVELS: [&str; 3] = ["simple", "moderate", "challenging"];

/// Counts and accuracy (percent) per level and in total.
#[derive(Clone, Debug, PartialEq)]
pub struct AccuracyTable {
    /// Pairs per level (simple, moderate, challenging, total).
    pub counts: [usize; 4],
    /// Correct pairs per level.
    pub correct: [usize; 4],
}

impl AccuracyTable {
    /// Tally results by difficulty; difficulties outside BIRD's three count in the total only.
    pub fn tally(results: &[PairResult], difficulties: &[String]) -> AccuracyTable {
        let mut t = AccuracyTable { counts: [0; 4], correct: [0; 4] };
        for (r, d) in results.iter().zip(difficulties) {
            let res = usize::from(r.verdict.res());
            if let Some(l) = LEVELS.iter().position(|l| l == d) {
                t.counts[l] += 1;
                t.correct[l] += res;
            }
            t.counts[3] += 1;
            t.correct[3] += res;
        }
        t
    }

    /// Accuracy in percent of level `i` (0..4), `None` when it has no pair.
    pub fn accuracy(&self, i: usize) -> Option<f64> {
        (self.counts[i] > 0).then(|| 100.0 * self.correct[i] as f64 / self.counts[i] as f64)
    }

    /// BIRD's layout: header, counts, the ACCURACY rule and the accuracy row.
    pub fn render(&self) -> String {
        let mut s = format!("{:20} {:20} {:20} {:20} {:20}\n", "", LEVELS[0], LEVELS[1], LEVELS[2], "total");
        s += &format!("{:20}", "count");
        for c in self.counts {
            s += &format!(" {c:<20}");
        }
        s += "\n======================================    ACCURACY    =====================================\n";
        s += &format!("{:20}", "accuracy");
        for i in 0..4 {
            match self.accuracy(i) {
                Some(a) => s += &format!(" {a:<20.2}"),
                None => s += &format!(" {:<20}", "-"),
            }
        }
        s.push('\n');
        s
    }
}

fn status(run: Option<&QueryRun>) -> &'static str {
    Ran::status(run.map(|r| &r.ran))
}

/// Write one JSON line per pair, in input order: `{"idx", "res", ...}`.
pub fn write_per_question(path: &Path, set: &EvalSet, results: &[PairResult]) -> Result<()> {
    let werr = |source| Error::Write { path: path.into(), source };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| Error::Write { path: dir.into(), source })?;
    }
    let tmp = path.with_extension("jsonl.tmp");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp).map_err(werr)?);
    for (i, r) in results.iter().enumerate() {
        let gold = &set.gold[i];
        let error = r.pred.as_ref().and_then(|p| match &p.ran {
            Ran::Error(e) => Some(e.as_str()),
            _ => None,
        });
        let line = json!({
            "idx": i,
            "res": r.verdict.res(),
            "question_id": gold.question_id,
            "db_id": gold.db_id,
            "difficulty": set.difficulties[i],
            "verdict": r.verdict.as_str(),
            "pred_status": status(r.pred.as_ref()),
            "gold_status": status(Some(&r.gold)),
            "pred_rows": r.pred.as_ref().and_then(|p| match p.ran { Ran::Rows { n_rows, .. } => Some(n_rows), _ => None }),
            "pred_ms": r.pred.as_ref().map(|p| p.elapsed.as_secs_f64() * 1e3),
            "gold_ms": r.gold.elapsed.as_secs_f64() * 1e3,
            "gold_cached": r.gold.cached,
            "error": error,
        });
        writeln!(out, "{line}").map_err(werr)?;
    }
    out.flush().map_err(werr)?;
    drop(out);
    std::fs::rename(&tmp, path).map_err(werr)
}
