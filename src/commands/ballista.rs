//! `lucid ballista scheduler|executor`: Ballista's own processes with lucid's SQL functions
//! registered (the stock binaries cannot plan or run lucid's report SQL).

use crate::cli::BallistaArgs;
use crate::error::Result;

/// `lucid ballista`.
#[cfg(feature = "ballista")]
pub fn run(a: &BallistaArgs) -> Result<()> {
    use crate::cli::BallistaRole;
    match &a.role {
        BallistaRole::Scheduler { bind } => crate::ballista::scheduler(*bind),
        BallistaRole::Executor { scheduler, host, port, grpc_port, work_dir, vcores } => {
            crate::ballista::executor(&crate::ballista::ExecutorPlace {
                scheduler: *scheduler,
                host: host.clone(),
                port: *port,
                grpc_port: *grpc_port,
                work_dir: work_dir.clone(),
                vcores: *vcores,
            })
        }
    }
}

/// `lucid ballista` in a build without the feature.
#[cfg(not(feature = "ballista"))]
pub fn run(a: &BallistaArgs) -> Result<()> {
    let _ = &a.role;
    Err(not_built())
}

/// The error of a Ballista request in a build without the `ballista` feature.
#[cfg(not(feature = "ballista"))]
pub fn not_built() -> crate::error::Error {
    crate::error::Error::usage("this lucid was built without Ballista: cargo build --release --features ballista")
}
