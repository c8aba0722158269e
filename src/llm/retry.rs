//! Retries with exponential backoff and full jitter, honouring a server's `Retry-After`.

use std::time::Duration;

use crate::error::Fault;
use serde::{Deserialize, Serialize};

/// When and how long to retry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryPolicy {
    /// Attempts in all (1 = no retry).
    #[serde(default = "default_attempts")]
    pub max_attempts: u32,
    /// First backoff ceiling, milliseconds.
    #[serde(default = "default_base")]
    pub base_delay_ms: u64,
    /// Longest wait, milliseconds (also caps `Retry-After`).
    #[serde(default = "default_max")]
    pub max_delay_ms: u64,
}

fn default_attempts() -> u32 {
    6
}
fn default_base() -> u64 {
    500
}
fn default_max() -> u64 {
    60_000
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { max_attempts: default_attempts(), base_delay_ms: default_base(), max_delay_ms: default_max() }
    }
}

/// Outcome of one attempt.
#[derive(Debug)]
pub enum Attempt<T> {
    /// Done.
    Ok(T),
    /// Worth retrying (429, 5xx, timeout, dropped connection, malformed body); the server's wait.
    Retry {
        /// What happened.
        message: String,
        /// `Retry-After`, if the server sent one.
        retry_after: Option<Duration>,
    },
    /// Not worth retrying (400, 401, 403, 404 ...).
    Fatal(String),
}

impl RetryPolicy {
    /// The wait before attempt `n + 1` after attempt `n` (1-based) failed: a uniform draw in
    /// `[0, min(max, base * 2^(n-1))]`, but at least the server's `Retry-After` (capped at max).
    pub fn delay(&self, n: u32, retry_after: Option<Duration>, jitter: f64) -> Duration {
        let ceiling = self.base_delay_ms.saturating_mul(1u64 << (n - 1).min(30)).min(self.max_delay_ms);
        let backoff = Duration::from_millis((ceiling as f64 * jitter.clamp(0.0, 1.0)) as u64);
        let max = Duration::from_millis(self.max_delay_ms);
        backoff.max(retry_after.unwrap_or_default().min(max))
    }

    /// Run `f(attempt)` until it succeeds, fails fatally, or attempts run out.
    /// Returns the value or the last message, with the number of attempts made.
    pub fn run<T>(&self, mut f: impl FnMut(u32) -> Attempt<T>) -> (Result<T, Fault>, u32) {
        let mut rng = jitter_seed();
        let mut n = 0;
        loop {
            n += 1;
            match f(n) {
                Attempt::Ok(v) => return (Ok(v), n),
                Attempt::Fatal(m) => return (Err(Fault::new(m)), n),
                Attempt::Retry { message, retry_after } => {
                    if n >= self.max_attempts.max(1) {
                        return (Err(Fault::new(message)), n);
                    }
                    rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let jitter = (rng >> 11) as f64 / (1u64 << 53) as f64;
                    std::thread::sleep(self.delay(n, retry_after, jitter));
                }
            }
        }
    }
}

fn jitter_seed() -> u64 {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    t ^ (std::process::id() as u64).rotate_left(32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_is_capped_and_honours_retry_after() {
        let p = RetryPolicy { max_attempts: 5, base_delay_ms: 100, max_delay_ms: 1000 };
        assert_eq!(p.delay(1, None, 1.0), Duration::from_millis(100));
        assert_eq!(p.delay(3, None, 1.0), Duration::from_millis(400));
        assert_eq!(p.delay(10, None, 1.0), Duration::from_millis(1000));
        assert_eq!(p.delay(2, None, 0.5), Duration::from_millis(100));
        assert_eq!(p.delay(1, Some(Duration::from_millis(700)), 0.0), Duration::from_millis(700));
        assert_eq!(p.delay(1, Some(Duration::from_secs(90)), 0.0), Duration::from_millis(1000));
        let mut calls = 0;
        let quick = RetryPolicy { max_attempts: 3, base_delay_ms: 1, max_delay_ms: 2 };
        let (r, n) = quick.run(|_| {
            calls += 1;
            Attempt::<()>::Retry { message: "503".into(), retry_after: None }
        });
        assert_eq!((r.map_err(|f| f.to_string()), n, calls), (Err("503".to_string()), 3, 3));
        let (r, n) = quick.run(|_| Attempt::<()>::Fatal("401".into()));
        assert_eq!((r.map_err(|f| f.to_string()), n), (Err("401".to_string()), 1));
    }
}
