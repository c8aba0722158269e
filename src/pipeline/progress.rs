//! Progress of running stage instances: an indicatif bar per instance on a terminal, plain
//! rate-limited log lines otherwise (CI, pipes). Cheap to clone and to call from any thread.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Shared progress display for one `lucid run`.
#[derive(Clone)]
pub struct Display {
    multi: Option<MultiProgress>,
    quiet: bool,
}

impl Display {
    /// Bars when stderr is a terminal, log lines otherwise; nothing when `quiet`.
    pub fn new(quiet: bool) -> Display {
        let tty = std::io::stderr().is_terminal();
        Display { multi: (tty && !quiet).then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr())), quiet }
    }

    /// Progress of one instance named `name`.
    pub fn start(&self, name: &str) -> Progress {
        let bar = self.multi.as_ref().map(|m| {
            let bar = m.add(ProgressBar::new(0));
            bar.set_style(
                ProgressStyle::with_template("{prefix:>32} [{bar:30}] {pos}/{len} {per_sec} {msg}")
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            bar.set_prefix(name.to_string());
            bar
        });
        Progress {
            inner: Arc::new(Mutex::new(State {
                name: name.into(),
                total: 0,
                done: 0,
                start: Instant::now(),
                last_log: None,
                message: None,
                notes: Default::default(),
            })),
            bar,
            quiet: self.quiet,
        }
    }

    /// Print a line without tearing the bars.
    pub fn println(&self, line: &str) {
        match &self.multi {
            Some(m) => {
                let _ = m.println(line);
            }
            None if !self.quiet => eprintln!("{line}"),
            None => {}
        }
    }
}

struct State {
    name: String,
    total: u64,
    done: u64,
    start: Instant,
    last_log: Option<Instant>,
    /// What the stage says of where it stands (replaces the rate-based ETA when set).
    message: Option<String>,
    notes: std::collections::BTreeMap<String, serde_json::Value>,
}

/// Progress of one stage instance.
#[derive(Clone)]
pub struct Progress {
    inner: Arc<Mutex<State>>,
    bar: Option<ProgressBar>,
    quiet: bool,
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress")
    }
}

impl Progress {
    /// Progress that shows nothing (tests, library use).
    pub fn hidden() -> Progress {
        Display { multi: None, quiet: true }.start("")
    }

    /// Set the amount of work.
    pub fn set_total(&self, total: u64) {
        self.inner.lock().expect("progress lock").total = total;
        if let Some(b) = &self.bar {
            b.set_length(total);
        }
    }

    /// Mark `n` more units done (may also be units resumed from a checkpoint).
    pub fn advance(&self, n: u64) {
        let mut s = self.inner.lock().expect("progress lock");
        s.done += n;
        if let Some(b) = &self.bar {
            b.inc(n);
            return;
        }
        let now = Instant::now();
        if self.quiet || s.last_log.is_some_and(|t| now - t < Duration::from_secs(2)) && s.done < s.total {
            return;
        }
        s.last_log = Some(now);
        let secs = s.start.elapsed().as_secs_f64().max(1e-9);
        let rate = s.done as f64 / secs;
        let eta = if rate > 0.0 { (s.total.saturating_sub(s.done)) as f64 / rate } else { 0.0 };
        match &s.message {
            Some(m) => eprintln!("  {}: {}/{} ({rate:.1}/s, {m})", s.name, s.done, s.total),
            None => eprintln!("  {}: {}/{} ({rate:.1}/s, eta {eta:.0}s)", s.name, s.done, s.total),
        }
    }

    /// Say where the stage stands (shown beside the count, instead of the rate-based ETA).
    pub fn message(&self, msg: String) {
        if let Some(b) = &self.bar {
            b.set_message(msg.clone());
        }
        self.inner.lock().expect("progress lock").message = Some(msg);
    }

    /// Say something the user should see before the stage goes on (printed even with `--quiet`,
    /// and kept in the manifest entry's `notes.warnings`).
    pub fn warn(&self, line: &str) {
        match &self.bar {
            Some(b) => b.println(format!("warning: {line}")),
            None => eprintln!("warning: {line}"),
        }
        let mut inner = self.inner.lock().expect("progress lock");
        let warnings = inner.notes.entry("warnings".into()).or_insert_with(|| serde_json::json!([]));
        if let Some(list) = warnings.as_array_mut() {
            list.push(line.into());
        }
    }

    /// Record a fact about this instance for its manifest entry (`notes`).
    pub fn note(&self, key: &str, value: serde_json::Value) {
        self.inner.lock().expect("progress lock").notes.insert(key.into(), value);
    }

    /// The facts recorded with [`Progress::note`].
    pub fn notes(&self) -> std::collections::BTreeMap<String, serde_json::Value> {
        self.inner.lock().expect("progress lock").notes.clone()
    }

    /// Remove the bar.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// A stage's progress is where the library code it calls says what happens: a progress line is
/// the bar's message, a warning [`Progress::warn`]'s (shown even with `--quiet`, kept in the
/// manifest entry).
impl crate::notices::Notices for Progress {
    fn progress(&self, line: &str) {
        self.message(line.to_string());
    }
    fn warn(&self, line: &str) {
        Progress::warn(self, line);
    }
}
