//! `lucid ballista scheduler|executor`: Ballista's own processes with lucid's SQL functions
//! registered (the stock binaries cannot plan or run lucid's report SQL).

use clap::{Args, Subcommand};

use crate::error::Result;

/// `lucid ballista`.
#[cfg(feature = "ballista")]
pub fn run(a: &BallistaArgs) -> Result<()> {
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

/// `lucid ballista`.
#[derive(Args, Debug)]
pub struct BallistaArgs {
    /// Which process.
    #[command(subcommand)]
    pub role: BallistaRole,
}

/// A Ballista process with lucid's SQL functions.
#[derive(Subcommand, Debug)]
pub enum BallistaRole {
    /// The scheduler (plans queries).
    Scheduler {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:50050")]
        bind: std::net::SocketAddr,
    },
    /// An executor (runs query stages).
    Executor {
        /// The scheduler's address.
        #[arg(long, default_value = "127.0.0.1:50050")]
        scheduler: std::net::SocketAddr,
        /// Host to bind and advertise.
        #[arg(long, default_value = "127.0.0.1")]
        host: String,
        /// Arrow Flight port.
        #[arg(long, default_value_t = 50051)]
        port: u16,
        /// gRPC port.
        #[arg(long, default_value_t = 50052)]
        grpc_port: u16,
        /// Folder for shuffle files (default: a temp folder).
        #[arg(long)]
        work_dir: Option<String>,
        /// Concurrent tasks.
        #[arg(long, default_value_t = 2)]
        vcores: usize,
    },
}
