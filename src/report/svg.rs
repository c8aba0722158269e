//! Small, dependency-free SVG charts for the HTML report: axes with ticks, lines, points, bars
//! with error whiskers, dashed reference lines and a legend. Everything is inline markup, so the
//! page needs no network and no script.

use std::fmt::Write;

/// Colours of series, in order (colour-blind-safe palette).
pub const PALETTE: [&str; 6] = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9"];

const W: f64 = 570.0;
const H: f64 = 320.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 165.0;
const TOP: f64 = 28.0;
const BOTTOM: f64 = 44.0;

/// A chart being drawn.
pub struct Chart {
    body: String,
    /// Marks outside the plot area (category labels), never clipped.
    labels: String,
    /// Series marks drawn (a chart with none says so).
    drawn: usize,
    legend: Vec<(String, String, bool)>,
    x: (f64, f64),
    y: (f64, f64),
    title: String,
    x_label: String,
    y_label: String,
}

/// `s` safe inside HTML/SVG text and attribute values.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

impl Chart {
    /// A chart with data ranges `x` and `y` (each widened to a non-empty span).
    pub fn new(title: &str, x_label: &str, y_label: &str, x: (f64, f64), y: (f64, f64)) -> Chart {
        let widen = |(a, b): (f64, f64)| if (b - a).abs() < 1e-12 { (a - 0.5, b + 0.5) } else { (a, b) };
        Chart {
            body: String::new(),
            labels: String::new(),
            drawn: 0,
            legend: Vec::new(),
            x: widen(x),
            y: widen(y),
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
        }
    }

    fn px(&self, x: f64) -> f64 {
        LEFT + (x - self.x.0) / (self.x.1 - self.x.0) * (W - LEFT - RIGHT)
    }

    fn py(&self, y: f64) -> f64 {
        H - BOTTOM - (y - self.y.0) / (self.y.1 - self.y.0) * (H - TOP - BOTTOM)
    }

    /// A polyline through `points` (NaN points break nothing: they are skipped).
    pub fn line(&mut self, points: &[(f64, f64)], color: &str, label: &str, dashed: bool) {
        let pts: Vec<String> = points
            .iter()
            .filter(|p| p.0.is_finite() && p.1.is_finite())
            .map(|&(x, y)| format!("{:.1},{:.1}", self.px(x), self.py(y)))
            .collect();
        if pts.is_empty() {
            return;
        }
        self.drawn += 1;
        let dash = if dashed { " stroke-dasharray=\"6 4\"" } else { "" };
        let _ = write!(
            self.body,
            "<polyline class=\"series\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{dash} points=\"{}\"/>",
            pts.join(" ")
        );
        self.legend.push((label.into(), color.into(), dashed));
    }

    /// Points (circles) at `points`.
    pub fn points(&mut self, points: &[(f64, f64)], color: &str, label: &str) {
        for &(x, y) in points.iter().filter(|p| p.0.is_finite() && p.1.is_finite()) {
            self.drawn += 1;
            let _ = write!(
                self.body,
                "<circle class=\"series\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"{color}\"/>",
                self.px(x),
                self.py(y)
            );
        }
        self.legend.push((label.into(), color.into(), false));
    }

    /// A text label just right of the point at (`x`, `y`) (never part of the legend).
    pub fn point_label(&mut self, x: f64, y: f64, text: &str) {
        if !(x.is_finite() && y.is_finite()) {
            return;
        }
        let _ = write!(
            self.body,
            "<text class=\"point-label\" x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\">{}</text>",
            self.px(x) + 6.0,
            self.py(y) - 4.0,
            esc(text)
        );
    }

    /// A bar from 0 to `y` centred at `x`, `width` data units wide, with a whisker `(lo, hi)`.
    pub fn bar(&mut self, x: f64, width: f64, y: f64, (lo, hi): (f64, f64), color: &str, label: &str) {
        self.drawn += 1;
        let (x0, x1) = (self.px(x - width / 2.0), self.px(x + width / 2.0));
        let (y0, y1) = (self.py(0.0_f64.max(self.y.0)), self.py(y));
        let _ = write!(
            self.body,
            "<rect class=\"series\" x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{color}\"><title>{}</title></rect>",
            y1.min(y0),
            x1 - x0,
            (y0 - y1).abs(),
            esc(label)
        );
        if lo.is_finite() && hi.is_finite() {
            let xm = self.px(x);
            let _ = write!(
                self.body,
                "<path d=\"M{xm:.1},{:.1}V{:.1}M{:.1},{:.1}H{:.1}M{:.1},{:.1}H{:.1}\" stroke=\"#222\" stroke-width=\"1.5\"/>",
                self.py(lo),
                self.py(hi),
                xm - 5.0,
                self.py(lo),
                xm + 5.0,
                xm - 5.0,
                self.py(hi),
                xm + 5.0
            );
        }
    }

    /// A label under the x axis at data position `x` (bar charts).
    pub fn x_tick_label(&mut self, x: f64, text: &str) {
        let _ = write!(
            self.labels,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">{}</text>",
            self.px(x),
            H - BOTTOM + 14.0,
            esc(text)
        );
    }

    /// Add a legend entry with no mark of its own.
    pub fn legend(&mut self, label: &str, color: &str) {
        self.legend.push((label.into(), color.into(), false));
    }

    /// The finished `<svg>` element; `numeric_x` draws x ticks.
    pub fn finish(self, numeric_x: bool) -> String {
        let mut s = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" \
             role=\"img\" aria-label=\"{t}\"><rect width=\"{W}\" height=\"{H}\" fill=\"#fff\"/>\
             <text x=\"{LEFT}\" y=\"18\" font-size=\"13\" font-weight=\"bold\">{t}</text>",
            t = esc(&self.title)
        );
        let (x0, x1, y0, y1) = (LEFT, W - RIGHT, TOP, H - BOTTOM);
        let _ = write!(s, "<path d=\"M{x0},{y0}V{y1}H{x1}\" stroke=\"#444\" fill=\"none\"/>");
        for i in 0..=4 {
            let v = self.y.0 + (self.y.1 - self.y.0) * f64::from(i) / 4.0;
            let py = self.py(v);
            let _ = write!(
                s,
                "<path d=\"M{x0},{py:.1}H{x1}\" stroke=\"#eee\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" \
                 text-anchor=\"end\">{}</text>",
                x0 - 4.0,
                py + 3.0,
                tick(v)
            );
            if numeric_x {
                let v = self.x.0 + (self.x.1 - self.x.0) * f64::from(i) / 4.0;
                let _ = write!(
                    s,
                    "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"middle\">{}</text>",
                    self.px(v),
                    y1 + 14.0,
                    tick(v)
                );
            }
        }
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\
             <text x=\"14\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\" transform=\"rotate(-90 14 {:.1})\">{}</text>",
            (x0 + x1) / 2.0,
            H - 8.0,
            esc(&self.x_label),
            (y0 + y1) / 2.0,
            (y0 + y1) / 2.0,
            esc(&self.y_label)
        );
        // Series are clipped to the plot area (a fitted line may leave it).
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let _ = write!(
            s,
            "<clipPath id=\"plot{id}\"><rect x=\"{x0}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\"/></clipPath>\
             <g clip-path=\"url(#plot{id})\">{}</g>",
            y0 - 6.0,
            x1 - x0 + 6.0,
            y1 - y0 + 6.0,
            self.body
        );
        s.push_str(&self.labels);
        if self.drawn == 0 {
            let _ = write!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" fill=\"#777\" text-anchor=\"middle\">no data (undefined for this run)</text>",
                (x0 + x1) / 2.0,
                (y0 + y1) / 2.0
            );
        }
        let mut seen = Vec::new();
        for (label, color, dashed) in &self.legend {
            if label.is_empty() || seen.contains(label) {
                continue;
            }
            let y = TOP + 6.0 + 16.0 * seen.len() as f64;
            let dash = if *dashed { " stroke-dasharray=\"6 4\"" } else { "" };
            let _ = write!(
                s,
                "<path d=\"M{:.1},{y:.1}h18\" stroke=\"{color}\" stroke-width=\"3\"{dash}/><text x=\"{:.1}\" y=\"{:.1}\" \
                 font-size=\"11\">{}</text>",
                W - RIGHT + 10.0,
                W - RIGHT + 32.0,
                y + 4.0,
                esc(label)
            );
            seen.push(label.clone());
        }
        s.push_str("</svg>");
        s
    }
}

fn tick(v: f64) -> String {
    if v.abs() >= 10.0 || (v.fract() == 0.0 && v.abs() >= 1.0) { format!("{v:.0}") } else { format!("{v:.2}") }
}
