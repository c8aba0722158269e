//! The report as one self-contained HTML page: the headline plots (EX with intervals, error
//! against retrieved corruption with the fitted lines, the corruption trajectory against the
//! attractor's prediction, the k-sweep) as inline SVG, then every table. No script, no network.

use std::fmt::Write;

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Float64Type};

use super::Report;
use super::svg::{Chart, PALETTE, esc};
use crate::error::Result;

/// Column `name` as numbers (None: missing, NULL or not numeric).
fn nums(b: &RecordBatch, name: &str) -> Vec<Option<f64>> {
    let Some(c) = b.column_by_name(name) else { return vec![None; b.num_rows()] };
    match arrow::compute::cast(c, &DataType::Float64) {
        Ok(a) => a.as_primitive::<Float64Type>().iter().collect(),
        Err(_) => vec![None; b.num_rows()],
    }
}

/// Column `name` as text (None: missing or NULL).
fn texts(b: &RecordBatch, name: &str) -> Vec<Option<String>> {
    let Some(c) = b.column_by_name(name) else { return vec![None; b.num_rows()] };
    match arrow::compute::cast(c, &DataType::Utf8) {
        Ok(a) => {
            let a = a.as_string::<i32>();
            (0..a.len()).map(|i| a.is_valid(i).then(|| a.value(i).to_string())).collect()
        }
        Err(_) => vec![None; b.num_rows()],
    }
}

fn ex_chart(b: &RecordBatch, multi: bool) -> Option<String> {
    let (run, arm, seed, diff) = (texts(b, "run"), texts(b, "arm"), texts(b, "seed"), texts(b, "difficulty"));
    let (ex, lo, hi) = (nums(b, "ex"), nums(b, "lo"), nums(b, "hi"));
    let rows: Vec<usize> = (0..b.num_rows())
        .filter(|&i| seed[i].is_none() && diff[i].as_deref() == Some("all") && ex[i].is_some())
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut c = Chart::new(
        "EX per arm (seeds pooled), 95 % Wilson",
        "",
        "EX (%)",
        (-0.6, rows.len() as f64 - 0.4),
        (0.0, 100.0),
    );
    for (x, &i) in rows.iter().enumerate() {
        let label = match (multi, &run[i], &arm[i]) {
            (true, Some(r), Some(a)) => format!("{r}: {a}"),
            (_, _, Some(a)) => a.clone(),
            _ => String::new(),
        };
        let color = PALETTE[x % PALETTE.len()];
        let whisker = (lo[i].unwrap_or(f64::NAN), hi[i].unwrap_or(f64::NAN));
        c.bar(x as f64, 0.7, ex[i].unwrap_or(0.0), whisker, color, &label);
        c.x_tick_label(x as f64, &label);
    }
    Some(c.finish(false))
}

fn coupling_chart(bins: &RecordBatch, fits: &RecordBatch, run: &str, arm: &str) -> Option<String> {
    let (brun, barm, bdiff) = (texts(bins, "run"), texts(bins, "arm"), texts(bins, "difficulty"));
    let (bx, berr) = (nums(bins, "corruption"), nums(bins, "err"));
    let (frun, farm, fseed, fdiff) =
        (texts(fits, "run"), texts(fits, "arm"), texts(fits, "seed"), texts(fits, "difficulty"));
    let (kappa, e0) = (nums(fits, "kappa"), nums(fits, "e0"));
    let mut c = Chart::new(
        &format!("Error vs retrieved corruption ({run}: {arm})"),
        "retrieved corruption (trusted-but-wrong share)",
        "error rate",
        (0.0, 1.0),
        (0.0, 1.0),
    );
    let mut any = false;
    for (j, d) in ["all", "simple", "moderate", "challenging"].iter().enumerate() {
        let color = PALETTE[j];
        let pts: Vec<(f64, f64)> = (0..bins.num_rows())
            .filter(|&i| {
                brun[i].as_deref() == Some(run) && barm[i].as_deref() == Some(arm) && bdiff[i].as_deref() == Some(d)
            })
            .filter_map(|i| Some((bx[i]?, berr[i]?)))
            .collect();
        if pts.is_empty() {
            continue;
        }
        any = true;
        c.points(&pts, color, d);
        let fit = (0..fits.num_rows()).find(|&i| {
            frun[i].as_deref() == Some(run)
                && farm[i].as_deref() == Some(arm)
                && fseed[i].is_none()
                && fdiff[i].as_deref() == Some(d)
        });
        if let Some((k, e)) = fit.and_then(|i| Some((kappa[i]?, e0[i]?))) {
            c.line(&[(0.0, e), (1.0, e + k)], color, &format!("{d} {e:.2}{k:+.2}x"), false);
        }
    }
    any.then(|| c.finish(true))
}

fn trajectory_chart(traj: &RecordBatch, attractor: Option<&RecordBatch>) -> Option<String> {
    let (run, arm, seed) = (texts(traj, "run"), texts(traj, "arm"), texts(traj, "seed"));
    let (bank, corr) = (nums(traj, "bank"), nums(traj, "corruption_r"));
    let mut series: Vec<(String, String, String)> = Vec::new();
    for i in 0..traj.num_rows() {
        let key = (
            run[i].clone().unwrap_or_default(),
            arm[i].clone().unwrap_or_default(),
            seed[i].clone().unwrap_or_default(),
        );
        if !series.contains(&key) {
            series.push(key);
        }
    }
    series.retain(|s| s.1 != "oracle");
    series.truncate(PALETTE.len());
    if series.is_empty() {
        return None;
    }
    let x_max = bank.iter().flatten().fold(1.0, |a: f64, &b| a.max(b));
    let mut c = Chart::new(
        "Trusted-bank corruption as the bank grows; dashed: predicted p*",
        "memories in the bank",
        "share of r = 1 memories that are wrong",
        (0.0, x_max),
        (0.0, 1.0),
    );
    for (j, (r, a, s)) in series.iter().enumerate() {
        let color = PALETTE[j];
        let pts: Vec<(f64, f64)> = (0..traj.num_rows())
            .filter(|&i| run[i].as_deref() == Some(r) && arm[i].as_deref() == Some(a) && seed[i].as_deref() == Some(s))
            .filter_map(|i| Some((bank[i]?, corr[i]?)))
            .collect();
        c.line(&pts, color, &format!("{a} s{s}"), false);
        if let Some(att) = attractor {
            let (ar, aa, asd, p) = (texts(att, "run"), texts(att, "arm"), texts(att, "seed"), nums(att, "p_star"));
            if let Some(p) = (0..att.num_rows())
                .find(|&i| ar[i].as_deref() == Some(r) && aa[i].as_deref() == Some(a) && asd[i].as_deref() == Some(s))
                .and_then(|i| p[i])
            {
                c.line(&[(0.0, p), (x_max, p)], color, &format!("p* {a} s{s}"), true);
            }
        }
    }
    Some(c.finish(true))
}

fn k_sweep_chart(b: &RecordBatch) -> Option<String> {
    let (run, arm, seed) = (texts(b, "run"), texts(b, "arm"), texts(b, "seed"));
    let (k, kappa, corr) = (nums(b, "k"), nums(b, "kappa"), nums(b, "mean_corruption"));
    let mut keys: Vec<(Option<String>, Option<String>, Option<String>)> = Vec::new();
    for i in 0..b.num_rows() {
        let key = (run[i].clone(), arm[i].clone(), seed[i].clone());
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    // Not the oracle, nor an arm and seed with nothing to draw (the sweep could not compute it: a
    // question without a vector).
    let fitted = |key: &(Option<String>, Option<String>, Option<String>)| {
        (0..b.num_rows()).any(|i| {
            (kappa[i].is_some() || corr[i].is_some()) && (run[i].clone(), arm[i].clone(), seed[i].clone()) == *key
        })
    };
    keys.retain(|key| key.1.as_deref() != Some("oracle") && fitted(key));
    keys.truncate(3);
    if keys.is_empty() {
        return None;
    }
    let lo = kappa.iter().flatten().fold(0.0, |a: f64, &b| a.min(b));
    let hi = kappa.iter().chain(&corr).flatten().fold(0.5, |a: f64, &b| a.max(b));
    let mut c = Chart::new(
        "k-sweep: kappa (solid) and corruption (dashed) by k",
        "k memories retrieved",
        "",
        (1.0, 8.0),
        (lo, hi * 1.1),
    );
    for (j, key) in keys.iter().enumerate() {
        let rows: Vec<usize> =
            (0..b.num_rows()).filter(|&i| (run[i].clone(), arm[i].clone(), seed[i].clone()) == *key).collect();
        let pts =
            |v: &[Option<f64>]| -> Vec<(f64, f64)> { rows.iter().filter_map(|&i| Some((k[i]?, v[i]?))).collect() };
        let name = format!("{} s{}", key.1.clone().unwrap_or_default(), key.2.clone().unwrap_or_default());
        c.line(&pts(&kappa), PALETTE[j], &format!("kappa {name}"), false);
        c.line(&pts(&corr), PALETTE[j], &format!("corruption {name}"), true);
    }
    Some(c.finish(true))
}

/// The start of a self-contained page titled `title`, up to `<body>` (styles inline).
pub fn head(title: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>\
         body{{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1180px;color:#222;padding:0 16px}}\
         h1{{font-size:22px}}h2{{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}}\
         .plots{{display:flex;flex-wrap:wrap;gap:12px}}.chart{{border:1px solid #ddd}}\
         blockquote{{margin:6px 0;color:#555;border-left:3px solid #bbb;padding-left:8px}}\
         table{{border-collapse:collapse;font-size:12px;margin:6px 0}}td,th{{border:1px solid #ddd;padding:2px 6px;text-align:right}}\
         th{{background:#f4f4f4}}td:first-child,td:nth-child(2){{text-align:left}}.wrap{{overflow-x:auto;max-height:420px}}\
         </style></head><body>",
        esc(title)
    )
}

/// A table of cell texts (the first row is the header), scrollable.
pub fn table(rows: &[Vec<String>]) -> String {
    let mut s = String::from("<div class=\"wrap\"><table>");
    for (i, row) in rows.iter().enumerate() {
        let tag = if i == 0 { "th" } else { "td" };
        s.push_str("<tr>");
        for c in row {
            let _ = write!(s, "<{tag}>{}</{tag}>", esc(c));
        }
        s.push_str("</tr>");
    }
    s.push_str("</table></div>");
    s
}

/// `report.html`.
pub fn render(report: &Report) -> Result<String> {
    let mut s = head("lucid report");
    let _ = write!(s, "<h1>lucid report: {}</h1>", esc(&report.runs.join(", ")));
    s.push_str(
        "<p>Intervals are 95 %: Wilson for proportions, a seeded bootstrap (2,000 resamples) for differences and \
         fits. Each table is a SQL file in <code>pipelines/reports/paper/</code>, rerunnable with \
         <code>lucid query RUN FILE</code>; <code>k_sweep</code> is recomputed from the stored embeddings. Rows with \
         an empty <code>seed</code> pool the seeds, and their intervals count a question once, its episodes under \
         every seed one cluster (Wilson at the effective sample size; questions resampled whole).</p>\
         <div class=\"plots\">",
    );
    let multi = report.runs.len() > 1;
    if let Some(svg) = report.table("ex").and_then(|b| ex_chart(b, multi)) {
        s.push_str(&svg);
    }
    if let (Some(bins), Some(fits)) = (report.table("coupling_bins"), report.table("coupling")) {
        for run in &report.runs {
            let arms = texts(bins, "arm");
            let arm = ["memento", "lucid"].into_iter().find(|a| arms.iter().flatten().any(|x| x == a));
            if let Some(svg) = arm.and_then(|a| coupling_chart(bins, fits, run, a)) {
                s.push_str(&svg);
            }
        }
    }
    if let Some(svg) = report.table("trajectory").and_then(|t| trajectory_chart(t, report.table("attractor"))) {
        s.push_str(&svg);
    }
    if let Some(svg) = report.table("k_sweep").and_then(k_sweep_chart) {
        s.push_str(&svg);
    }
    s.push_str("</div>");
    for t in &report.tables {
        let _ = write!(s, "<h2 id=\"{0}\">{0}</h2><blockquote>Paper: {1}</blockquote>", t.spec.name, esc(t.spec.paper));
        let Some(batch) = &t.batch else {
            let _ = write!(s, "<p><em>Not computed: the runs lack {}.</em></p>", t.spec.needs.join(" / "));
            continue;
        };
        s.push_str(&table(&super::markdown::cells(batch)?));
    }
    s.push_str("</body></html>\n");
    Ok(s)
}

/// A self-contained page titled `title` of lucid's own Markdown (headings, paragraphs and pipe
/// tables, as the audits print them; `**bold**` and `code` spans kept as text), escaped.
pub fn markdown_page(title: &str, md: &str) -> String {
    let mut s = head(title);
    let mut rows: Vec<Vec<String>> = Vec::new();
    let flush = |s: &mut String, rows: &mut Vec<Vec<String>>| {
        if !rows.is_empty() {
            s.push_str(&table(rows));
            rows.clear();
        }
    };
    for line in md.lines() {
        let t = line.trim();
        if let Some(cells) = t.strip_prefix('|').and_then(|c| c.strip_suffix('|')) {
            if !cells.split('|').all(|c| c.trim().chars().all(|ch| ch == '-' || ch == ':')) {
                rows.push(cells.split('|').map(|c| c.trim().replace("**", "")).collect());
            }
            continue;
        }
        flush(&mut s, &mut rows);
        let plain = |x: &str| esc(&x.replace("**", "").replace('`', ""));
        if let Some(h) = t.strip_prefix("## ") {
            let _ = write!(s, "<h2>{}</h2>", plain(h));
        } else if let Some(h) = t.strip_prefix("# ") {
            let _ = write!(s, "<h1>{}</h1>", plain(h));
        } else if !t.is_empty() {
            let _ = write!(s, "<p>{}</p>", plain(t));
        }
    }
    flush(&mut s, &mut rows);
    s.push_str("</body></html>\n");
    s
}
