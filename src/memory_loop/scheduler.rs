//! Steps scheduled by their dependencies: a step runs as soon as every step it depends on is
//! done, at most `concurrency` at once, the lowest ready step first (so with one at a time the
//! order is the sequential one). Jobs are prepared and completed on the calling thread, which
//! owns the state (a memory bank), and run on worker threads. Used by the memory loop, whose
//! episode t depends only on the episodes it retrieves.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::panic::AssertUnwindSafe;
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// Longest dependency chain ending at each step (1 for a step with no dependencies); every
/// dependency must be an earlier step.
pub fn depths(deps: &[Vec<usize>]) -> Vec<usize> {
    let mut d = vec![0usize; deps.len()];
    for t in 0..deps.len() {
        d[t] = 1 + deps[t].iter().map(|&p| d[p]).max().unwrap_or(0);
    }
    d
}

/// The file a running stage writes its [`LoopProgress`] to, in its work folder (read by `lucid status`).
pub const STATUS_FILE: &str = "progress.json";

/// Where a running episode loop stands: written by the loop as episodes finish
/// ([`LoopProgress::write`]) and read by `lucid status` ([`LoopProgress::read`]), one record.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LoopProgress {
    /// Steps done (including those done before this run).
    pub done: usize,
    /// Steps running now.
    pub in_flight: usize,
    /// Steps whose dependencies are done, waiting for a slot.
    pub ready: usize,
    /// Steps in all.
    pub total: usize,
    /// The longest chain of steps still to run (rounds of latency left at unbounded concurrency).
    pub depth_left: usize,
    /// The critical path of the whole DAG.
    pub critical_path: usize,
    /// Mean seconds per step so far.
    pub mean_step_secs: f64,
    /// Estimated seconds left: the larger of depth_left and (steps left / concurrency) rounds.
    pub eta_secs: f64,
}

impl LoopProgress {
    /// Write it to `work_dir`'s status file (best effort: progress is advisory).
    pub fn write(&self, work_dir: &std::path::Path) {
        if let Ok(bytes) = serde_json::to_vec(self) {
            let _ = std::fs::write(work_dir.join(STATUS_FILE), bytes);
        }
    }

    /// The status file in `work_dir`, when there is a readable one.
    pub fn read(work_dir: &std::path::Path) -> Option<LoopProgress> {
        serde_json::from_slice(&std::fs::read(work_dir.join(STATUS_FILE)).ok()?).ok()
    }
}

impl std::fmt::Display for LoopProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}/{} done, {} in flight, {} ready; depth left {} of {}, {:.1} s per episode, eta {:.0} s",
            self.done,
            self.total,
            self.in_flight,
            self.ready,
            self.depth_left,
            self.critical_path,
            self.mean_step_secs,
            self.eta_secs
        )
    }
}

/// Run every step of `deps` not `done`. `prepare(state, t)` makes step t's job when it is ready;
/// `work(worker, t, job)` runs it on a worker thread (each with its own `init()` state);
/// `complete(state, t, result, status)` takes each result in completion order. At the first error
/// nothing more is started; the jobs in flight finish and are completed, then the error returns.
#[allow(clippy::too_many_arguments)]
pub fn schedule<S, W, J, R>(
    deps: &[Vec<usize>],
    done: &[bool],
    concurrency: usize,
    state: &mut S,
    init: impl Fn() -> W + Sync,
    prepare: impl Fn(&mut S, usize) -> J,
    work: impl Fn(&mut W, usize, J) -> Result<R> + Sync,
    mut complete: impl FnMut(&mut S, usize, R, &LoopProgress) -> Result<()>,
) -> Result<()>
where
    J: Send,
    R: Send,
{
    let n = deps.len();
    let concurrency = concurrency.max(1);
    let (dependents, mut waiting, height) = unfinished(deps, done);
    let mut ready: BinaryHeap<Reverse<usize>> = (0..n).filter(|&t| !done[t] && waiting[t] == 0).map(Reverse).collect();
    let done_before = done.iter().filter(|&&d| d).count();
    let mut status = LoopProgress {
        done: done_before,
        total: n,
        critical_path: depths(deps).into_iter().max().unwrap_or(0),
        ..LoopProgress::default()
    };
    let mut running: Vec<usize> = Vec::new();
    let (job_tx, job_rx) = mpsc::channel::<(usize, J)>();
    let job_rx = Mutex::new(job_rx);
    let (res_tx, res_rx) = mpsc::channel::<(usize, Duration, Result<R>)>();
    let mut failure: Option<Error> = None;
    let mut secs = 0.0;
    std::thread::scope(|scope| {
        for _ in 0..concurrency.min(n.max(1)) {
            let (job_rx, res_tx, init, work) = (&job_rx, res_tx.clone(), &init, &work);
            scope.spawn(move || work_jobs(job_rx, res_tx, init, work));
        }
        drop(res_tx);
        loop {
            while failure.is_none() && running.len() < concurrency {
                let Some(Reverse(t)) = ready.pop() else { break };
                let job = prepare(state, t);
                running.push(t);
                job_tx.send((t, job)).expect("workers wait for jobs while any is in flight");
            }
            if running.is_empty() {
                break;
            }
            let (t, took, out) = res_rx.recv().expect("a worker answers every job");
            running.retain(|&x| x != t);
            secs += took.as_secs_f64();
            status.done += 1;
            for &c in &dependents[t] {
                waiting[c] -= 1;
                if waiting[c] == 0 {
                    ready.push(Reverse(c));
                }
            }
            status.in_flight = running.len();
            status.ready = ready.len();
            status.depth_left = running.iter().chain(ready.iter().map(|r| &r.0)).map(|&s| height[s]).max().unwrap_or(0);
            status.mean_step_secs = secs / (status.done - done_before).max(1) as f64;
            let left = status.total - status.done;
            let rounds = (status.depth_left as f64).max(left as f64 / concurrency as f64);
            status.eta_secs = rounds * status.mean_step_secs;
            let outcome = out.and_then(|r| complete(state, t, r, &status));
            if let Err(e) = outcome {
                failure.get_or_insert(e);
            }
        }
        drop(job_tx);
    });
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The unfinished steps of `deps` (those not `done`) as a DAG: each one's unfinished dependents,
/// how many unfinished steps it waits for, and its height.
fn unfinished(deps: &[Vec<usize>], done: &[bool]) -> (Vec<Vec<usize>>, Vec<usize>, Vec<usize>) {
    let n = deps.len();
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut waiting: Vec<usize> = vec![0; n];
    for (t, ds) in deps.iter().enumerate().filter(|(t, _)| !done[*t]) {
        for &p in ds {
            assert!(p < t, "step {t} depends on a later step {p}");
            if !done[p] {
                dependents[p].push(t);
                waiting[t] += 1;
            }
        }
    }
    // Height: the longest chain of unfinished steps starting at each one.
    let mut height = vec![0usize; n];
    for t in (0..n).rev() {
        if !done[t] {
            height[t] = 1 + dependents[t].iter().map(|&c| height[c]).max().unwrap_or(0);
        }
    }
    (dependents, waiting, height)
}

/// One worker thread: its own state from `init`, then each job from `jobs` (until the channel
/// closes) run by `work` (a panic is the step's error), its result and time sent to `results`.
fn work_jobs<W, J, R>(
    jobs: &Mutex<mpsc::Receiver<(usize, J)>>,
    results: mpsc::Sender<(usize, Duration, Result<R>)>,
    init: &impl Fn() -> W,
    work: &impl Fn(&mut W, usize, J) -> Result<R>,
) {
    let mut w = init();
    loop {
        let next = jobs.lock().unwrap_or_else(std::sync::PoisonError::into_inner).recv();
        let Ok((t, job)) = next else { break };
        let start = Instant::now();
        let out = std::panic::catch_unwind(AssertUnwindSafe(|| work(&mut w, t, job)))
            .unwrap_or_else(|p| Err(Error::stage(format!("step {t}"), panic_text(&p))));
        if results.send((t, start.elapsed(), out)).is_err() {
            break;
        }
    }
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    let msg = p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned());
    format!("panicked: {}", msg.unwrap_or_else(|| "(no message)".into()))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// A random DAG: each step depends on up to 3 earlier ones.
    fn dag(n: usize, seed: u64) -> Vec<Vec<usize>> {
        let mut rng = crate::rng::SplitMix64(seed);
        (0..n)
            .map(|t| {
                let mut d: Vec<usize> =
                    (0..3).filter(|_| t > 0).map(|_| (rng.next_u64() % t as u64) as usize).collect();
                d.sort_unstable();
                d.dedup();
                d
            })
            .collect()
    }

    #[test]
    fn steps_run_after_their_dependencies_and_at_most_concurrency_at_once() {
        let deps = dag(300, 1);
        for (concurrency, done_every) in [(1, 0), (8, 0), (64, 7)] {
            let done: Vec<bool> = (0..deps.len()).map(|t| done_every > 0 && t % done_every == 0).collect();
            let live = AtomicUsize::new(0);
            let peak = AtomicUsize::new(0);
            // The state: which steps are complete, and in what order they completed.
            let mut state: (Vec<bool>, Vec<usize>) = (done.clone(), Vec::new());
            schedule(
                &deps,
                &done,
                concurrency,
                &mut state,
                || (),
                |(finished, _), t| {
                    assert!(deps[t].iter().all(|&p| finished[p]), "step {t} prepared before its dependencies");
                    t
                },
                |_, _, t| {
                    let now = live.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_micros(200 + (t as u64 * 7919) % 500));
                    live.fetch_sub(1, Ordering::SeqCst);
                    Ok(t)
                },
                |(finished, order), t, r, _| {
                    assert_eq!(t, r);
                    finished[t] = true;
                    order.push(t);
                    Ok(())
                },
            )
            .unwrap();
            let order = state.1;
            assert_eq!(order.len(), done.iter().filter(|d| !**d).count(), "every step once");
            assert!(peak.load(Ordering::SeqCst) <= concurrency);
            if concurrency == 1 {
                assert!(order.windows(2).all(|w| w[0] < w[1]), "one at a time is the sequential order");
            }
        }
    }

    #[test]
    fn an_error_stops_new_work_and_completes_what_is_in_flight() {
        let deps: Vec<Vec<usize>> = (0..50).map(|_| Vec::new()).collect();
        let mut completed = 0;
        let err = schedule(
            &deps,
            &[false; 50],
            4,
            &mut (),
            || (),
            |_, t| t,
            |_, _, t| if t == 5 { Err(Error::stage("x", "boom")) } else { Ok(t) },
            |_, _, _, _| {
                completed += 1;
                Ok(())
            },
        )
        .unwrap_err();
        assert!(err.to_string().contains("boom"));
        assert!(completed < 49, "no new work after the error ({completed})");
        assert_eq!(depths(&[vec![], vec![0], vec![0, 1], vec![]]), vec![1, 2, 3, 1]);
    }
}
