//! Bounded data parallelism on scoped threads: each worker keeps its own state (e.g. open
//! database connections) and pulls the next item from a shared counter, so slow items never
//! hold up a whole chunk. Results come back in item order.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Map `f` over `items` on up to `jobs` threads; `init` makes each worker's state.
pub fn par_map_with<T, S, R>(
    items: &[T],
    jobs: usize,
    init: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, &T) -> R + Sync,
) -> Vec<R>
where
    T: Sync,
    R: Send,
{
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<(usize, R)>> = Mutex::new(Vec::with_capacity(items.len()));
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            s.spawn(|| {
                let mut state = init();
                let mut local = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    local.push((i, f(&mut state, item)));
                }
                out.lock().expect("no worker panics while holding the lock").extend(local);
            });
        }
    });
    let mut out = out.into_inner().expect("no worker panicked");
    out.sort_unstable_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, r)| r).collect()
}

/// Default parallelism: the machine's cores.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
