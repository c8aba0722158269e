//! One place that says what is happening: library code that has progress to show or a warning
//! to give hands it to the [`Notices`] its caller owns, instead of printing it, so a command
//! decides where lines go (standard error, nowhere under `--quiet`, a test's list).

use std::sync::Mutex;

/// Where progress lines and warnings go.
pub trait Notices: Send + Sync {
    /// A line of progress (what is being done, what is ready).
    fn progress(&self, line: &str);
    /// A warning: something went wrong that the work survived.
    fn warn(&self, line: &str);
}

/// Standard error, as the commands show notices (`quiet`: warnings only).
#[derive(Clone, Copy, Debug, Default)]
pub struct Stderr {
    /// Drop progress lines, keep warnings.
    pub quiet: bool,
}

impl Notices for Stderr {
    fn progress(&self, line: &str) {
        if !self.quiet {
            eprintln!("{line}");
        }
    }
    fn warn(&self, line: &str) {
        eprintln!("warning: {line}");
    }
}

/// Every notice kept in order (`warning: ` before a warning), for a caller that shows them
/// elsewhere or a test that reads them.
#[derive(Debug, Default)]
pub struct Collected(Mutex<Vec<String>>);

impl Collected {
    /// The notices so far.
    pub fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
    fn push(&self, line: String) {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(line);
    }
}

impl Notices for Collected {
    fn progress(&self, line: &str) {
        self.push(line.to_string());
    }
    fn warn(&self, line: &str) {
        self.push(format!("warning: {line}"));
    }
}
