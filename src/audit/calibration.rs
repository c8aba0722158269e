//! Global calibration of a bank's scores (Lemma 1): label-blind maps of the self-grade
//! (mean-subtract, z-score, min-max, temperature, sigmoid) are monotone, so Spearman rho(Q, U),
//! AUC and the top-10 gold rate stay exactly what they were; gold-fit maps (Platt, isotonic) read
//! U and can move them only as far as ties allow; the oracle (Q = U) is the ceiling.

use serde::Serialize;

use super::AuditBank;
use crate::analysis::stats::{self, ranks, spearman};

/// One calibration map and what it leaves of the ranking.
#[derive(Clone, Debug, Serialize)]
pub struct CalibrationRow {
    /// The map.
    pub map: String,
    /// Whether it reads U (gold-fit).
    pub reads_u: bool,
    /// Spearman rho(Q, U).
    pub spearman: Option<f64>,
    /// AUC: P(a right memory scores above a wrong one), ties half.
    pub auc: Option<f64>,
    /// Share of right memories among the 10 best scored; memories tied at the 10th score share
    /// the places left (the expected share when ties are broken at random, whatever the row order).
    pub top10: f64,
}

/// AUC by average ranks (Mann-Whitney).
fn auc(q: &[f64], u: &[f64]) -> Option<f64> {
    let r = ranks(q);
    let pos: Vec<f64> = (0..q.len()).filter(|&i| u[i] >= 0.5).map(|i| r[i]).collect();
    let (np, nn) = (pos.len() as f64, (q.len() - pos.len()) as f64);
    (np > 0.0 && nn > 0.0).then(|| (pos.iter().sum::<f64>() - np * (np + 1.0) / 2.0) / (np * nn))
}

fn top10(q: &[f64], u: &[f64]) -> f64 {
    let mut sorted: Vec<f64> = q.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let k = q.len().min(10);
    let Some(&cut) = k.checked_sub(1).map(|i| &sorted[i]) else { return 0.0 };
    let right = |keep: &dyn Fn(f64) -> bool| {
        let ins: Vec<usize> = (0..q.len()).filter(|&i| keep(q[i])).collect();
        (ins.len() as f64, ins.iter().filter(|&&i| u[i] >= 0.5).count() as f64)
    };
    let (above, right_above) = right(&|x| x.total_cmp(&cut).is_gt());
    let (tied, right_tied) = right(&|x| x.total_cmp(&cut).is_eq());
    (right_above + (k as f64 - above) * right_tied / tied) / k as f64
}

/// Platt scaling: the logistic fit of U on the score (Newton's method), applied to the score.
fn platt(q: &[f64], u: &[f64]) -> Vec<f64> {
    let (mut a, mut b) = (0.0f64, 0.0f64);
    for _ in 0..50 {
        let (mut ga, mut gb, mut haa, mut hab, mut hbb) = (0.0, 0.0, 1e-9, 0.0, 1e-9);
        for (&x, &y) in q.iter().zip(u) {
            let p = 1.0 / (1.0 + (-(a * x + b)).exp());
            let w = p * (1.0 - p);
            ga += (p - y) * x;
            gb += p - y;
            haa += w * x * x;
            hab += w * x;
            hbb += w;
        }
        let det = haa * hbb - hab * hab;
        if det.abs() < 1e-12 {
            break;
        }
        a -= (hbb * ga - hab * gb) / det;
        b -= (haa * gb - hab * ga) / det;
    }
    q.iter().map(|&x| 1.0 / (1.0 + (-(a * x + b)).exp())).collect()
}

/// Isotonic regression of U on the score (pool adjacent violators), applied to the score. Tied
/// scores form one block before any merge (the fit may not tell them apart by reading U, and a
/// merge on a tie group's partial mean would depend on the row order inside it).
fn isotonic(q: &[f64], u: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..q.len()).collect();
    idx.sort_by(|&a, &b| q[a].total_cmp(&q[b]));
    // The tie groups, in score order: (sum of U, count, members).
    let mut groups: Vec<(f64, f64, Vec<usize>)> = Vec::new();
    for i in idx {
        match groups.last_mut() {
            Some(last) if last.2.last().is_some_and(|&j| q[j] == q[i]) => {
                last.0 += u[i];
                last.1 += 1.0;
                last.2.push(i);
            }
            _ => groups.push((u[i], 1.0, vec![i])),
        }
    }
    // Blocks merged while a block's mean exceeds the next one's.
    let mut blocks: Vec<(f64, f64, Vec<usize>)> = Vec::new();
    for g in groups {
        blocks.push(g);
        while blocks.len() > 1 {
            let n = blocks.len();
            if blocks[n - 2].0 / blocks[n - 2].1 <= blocks[n - 1].0 / blocks[n - 1].1 {
                break;
            }
            let last = blocks.pop().expect("two blocks");
            let prev = blocks.last_mut().expect("two blocks");
            prev.0 += last.0;
            prev.1 += last.1;
            prev.2.extend(last.2);
        }
    }
    let mut out = vec![0.0; q.len()];
    for (s, c, members) in blocks {
        for i in members {
            out[i] = s / c;
        }
    }
    out
}

/// The calibration table of `bank`'s self-grade.
pub fn calibration(bank: &AuditBank) -> Vec<CalibrationRow> {
    let (r, u) = (&bank.r, &bank.u);
    let mean = stats::mean(r);
    let (lo, hi) = r.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
    let span = (hi - lo).max(1e-12);
    let maps: Vec<(&str, bool, Vec<f64>)> = vec![
        ("identity", false, r.clone()),
        ("mean-subtract", false, r.iter().map(|x| x - mean).collect()),
        ("z-score", false, stats::z_scores(r)),
        ("min-max", false, r.iter().map(|x| (x - lo) / span).collect()),
        ("temperature T=0.5", false, r.iter().map(|x| x / 0.5).collect()),
        ("sigmoid", false, r.iter().map(|x| 1.0 / (1.0 + (-x).exp())).collect()),
        ("platt (gold-fit)", true, platt(r, u)),
        ("isotonic (gold-fit)", true, isotonic(r, u)),
        ("oracle", true, u.clone()),
    ];
    maps.into_iter()
        .map(|(name, reads_u, q)| CalibrationRow {
            map: name.into(),
            reads_u,
            spearman: spearman(&q, u),
            auc: auc(&q, u),
            top10: top10(&q, u),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_top_ten_does_not_depend_on_row_order() {
        // 20 memories tied at the top, 5 of them right: any order gives 5 / 20 of the 10 places.
        let q = vec![1.0; 20];
        let u: Vec<f64> = (0..20).map(|i| f64::from(u8::from(i < 5))).collect();
        let mut rev = u.clone();
        rev.reverse();
        assert_eq!(super::top10(&q, &u), 0.25);
        assert_eq!(super::top10(&q, &rev), 0.25);
        // Above the tie, every place counts.
        let q2: Vec<f64> = (0..20).map(|i| if i < 4 { 2.0 } else { 1.0 }).collect();
        assert!((super::top10(&q2, &u) - (4.0 + 6.0 * 1.0 / 16.0) / 10.0).abs() < 1e-12);
    }

    use super::isotonic;

    /// A tie group whose first member is wrong is one block before any merge (by hand: the
    /// score-0 group has mean 1/2, the score-1 group 3/4: already increasing, two blocks).
    #[test]
    fn isotonic_merges_whole_tie_groups_whatever_their_row_order() {
        let q = [0.0, 0.0, 1.0, 1.0, 1.0, 1.0];
        let u = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0];
        assert_eq!(isotonic(&q, &u), vec![0.5, 0.5, 0.75, 0.75, 0.75, 0.75]);
        let u_rev = [0.0, 1.0, 1.0, 1.0, 1.0, 0.0];
        assert_eq!(isotonic(&q, &u_rev), vec![0.5, 0.5, 0.75, 0.75, 0.75, 0.75]);
    }
}
