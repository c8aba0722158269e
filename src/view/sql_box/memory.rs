//! The SQL box's memory: a bound per query ([`PER_QUERY`]) inside one for all of them
//! ([`ALL_QUERIES`]), as DataFusion's [`MemoryPool`]. Every running query draws from one
//! process-wide [`GreedyMemoryPool`] of [`ALL_QUERIES`] through a [`QueryPool`] of its own that
//! refuses past [`PER_QUERY`]; what the operators that hold data account (sorts, aggregates,
//! joins, TopK's heap, window buffers) and every batch passed between operators
//! ([`super::metered`]) draws from it. A reservation past either bound fails the query with
//! DataFusion's "Resources exhausted", which the box answers in words ([`exhausted`]). Nothing
//! spills: the query's runtime has no disk manager, so the box writes no file either.

use std::fmt::{Display, Formatter};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};

use datafusion::error::{DataFusionError, Result};
use datafusion::execution::disk_manager::{DiskManagerBuilder, DiskManagerMode};
use datafusion::execution::memory_pool::{
    GreedyMemoryPool, MemoryConsumer, MemoryLimit, MemoryPool, MemoryReservation,
};
use datafusion::execution::runtime_env::{RuntimeEnv, RuntimeEnvBuilder};

/// The most memory one query of the SQL box may hold.
pub const PER_QUERY: usize = 256 << 20;

/// The most memory all running queries of the SQL box may hold together.
pub const ALL_QUERIES: usize = 512 << 20;

/// The pool every query draws from.
static ALL: LazyLock<Arc<dyn MemoryPool>> = LazyLock::new(|| Arc::new(GreedyMemoryPool::new(ALL_QUERIES)));

/// One query's share of the process-wide pool: at most [`PER_QUERY`], and only what the pool
/// of all queries still has.
#[derive(Debug)]
pub struct QueryPool {
    all: Arc<dyn MemoryPool>,
    limit: usize,
    used: AtomicUsize,
}

impl QueryPool {
    /// A pool of at most `limit` bytes drawn from `all`.
    pub fn new(all: Arc<dyn MemoryPool>, limit: usize) -> QueryPool {
        QueryPool { all, limit, used: AtomicUsize::new(0) }
    }
}

impl Display for QueryPool {
    fn fmt(&self, f: &mut Formatter<'_>) -> std::fmt::Result {
        write!(f, "query(used: {} of {} bytes) in {}", self.used.load(Ordering::Relaxed), self.limit, self.all)
    }
}

impl MemoryPool for QueryPool {
    fn name(&self) -> &str {
        "lucid view query"
    }

    fn register(&self, consumer: &MemoryConsumer) {
        self.all.register(consumer);
    }

    fn unregister(&self, consumer: &MemoryConsumer) {
        self.all.unregister(consumer);
    }

    fn grow(&self, reservation: &MemoryReservation, additional: usize) {
        self.used.fetch_add(additional, Ordering::Relaxed);
        self.all.grow(reservation, additional);
    }

    fn shrink(&self, reservation: &MemoryReservation, shrink: usize) {
        self.used.fetch_sub(shrink, Ordering::Relaxed);
        self.all.shrink(reservation, shrink);
    }

    fn try_grow(&self, reservation: &MemoryReservation, additional: usize) -> Result<()> {
        let limit = self.limit;
        self.used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                (used + additional <= limit).then_some(used + additional)
            })
            .map_err(|used| {
                DataFusionError::ResourcesExhausted(format!(
                    "{} needed {} MiB more with {} MiB held: past the query's bound of {} MiB",
                    reservation.consumer().name(),
                    mib(additional),
                    mib(used),
                    mib(limit)
                ))
            })?;
        if let Err(e) = self.all.try_grow(reservation, additional) {
            self.used.fetch_sub(additional, Ordering::Relaxed);
            return Err(e);
        }
        Ok(())
    }

    fn reserved(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    fn memory_limit(&self) -> MemoryLimit {
        MemoryLimit::Finite(self.limit)
    }
}

/// A query's runtime: `base`'s object stores and caches, a [`QueryPool`] of its own in the pool
/// of all queries, and no disk manager (nothing spills, nothing is written).
pub fn runtime(base: &RuntimeEnv) -> Result<Arc<RuntimeEnv>> {
    RuntimeEnvBuilder::from_runtime_env(base)
        .with_memory_pool(Arc::new(QueryPool::new(Arc::clone(&ALL), PER_QUERY)))
        .with_disk_manager_builder(DiskManagerBuilder::default().with_mode(DiskManagerMode::Disabled))
        .build_arc()
}

/// The memory now held by every running query together.
pub fn held() -> usize {
    ALL.reserved()
}

/// The bounds in words, as the page and the errors say them.
pub fn bounds() -> String {
    format!("{} MiB a query, {} MiB for all running queries together", mib(PER_QUERY), mib(ALL_QUERIES))
}

/// Whether `e` is a reservation refused by a pool (or a bound of [`super::bounded`]), and then
/// the box's message for it.
pub fn exhausted(e: &DataFusionError) -> Option<String> {
    let mut at = e;
    loop {
        match at {
            DataFusionError::ResourcesExhausted(why) => {
                return Some(format!(
                    "the query was stopped: it needed more memory than the SQL box allows ({}): {why} \
                     (`lucid query` has no such bound)",
                    bounds()
                ));
            }
            DataFusionError::Context(_, inner) => at = inner,
            DataFusionError::Shared(inner) => at = inner,
            DataFusionError::ArrowError(inner, _) if inner.to_string().contains("Resources exhausted") => {
                return Some(format!(
                    "the query was stopped: past the SQL box's memory bounds ({}): {inner}",
                    bounds()
                ));
            }
            other => {
                let text = other.to_string();
                return text.contains("Resources exhausted").then(|| {
                    format!("the query was stopped: past the SQL box's memory bounds ({}): {text}", bounds())
                });
            }
        }
    }
}

/// Bytes as whole MiB (rounded up).
pub fn mib(bytes: usize) -> usize {
    bytes.div_ceil(1 << 20)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_is_bounded_by_its_own_limit_and_by_what_all_queries_hold() {
        let all: Arc<dyn MemoryPool> = Arc::new(GreedyMemoryPool::new(100));
        let a: Arc<dyn MemoryPool> = Arc::new(QueryPool::new(Arc::clone(&all), 60));
        let b: Arc<dyn MemoryPool> = Arc::new(QueryPool::new(Arc::clone(&all), 60));
        let ra = MemoryConsumer::new("a").register(&a);
        let rb = MemoryConsumer::new("b").register(&b);
        ra.try_grow(50).unwrap();
        assert!(ra.try_grow(20).unwrap_err().to_string().contains("past the query's bound"));
        rb.try_grow(51).unwrap_err();
        assert_eq!((a.reserved(), b.reserved(), all.reserved()), (50, 0, 50));
        rb.try_grow(40).unwrap();
        drop(ra);
        assert_eq!((a.reserved(), all.reserved()), (0, 40));
        let e = DataFusionError::ResourcesExhausted("x".into());
        assert!(exhausted(&e).unwrap().contains("256 MiB a query"));
        assert!(exhausted(&DataFusionError::Plan("no".into())).is_none());
    }
}
