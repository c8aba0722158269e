//! `lucid view`: serve the page over runs (see `crate::view` for who may read the server), or
//! export it as static files.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use crate::error::Result;
use crate::view::data::Catalog;

/// `lucid view`.
pub fn run(a: &ViewArgs) -> Result<()> {
    let runs = crate::session::expand_runs(&a.runs)?;
    let names: Vec<&str> = runs.iter().map(|(n, _)| n.as_str()).collect();
    let catalog = Catalog::open(&runs)?;
    if let Some(dir) = &a.export {
        let n = crate::view::export::export(&catalog, dir)?;
        println!("lucid view: {n} episodes of {} exported to {}/index.html", names.join(", "), dir.display());
        return Ok(());
    }
    let episodes = catalog.rows.len();
    let server = crate::view::Server::bind(&a.address, catalog)?;
    // Beyond loopback the URL holds the launch's token: printed here once, never in a page.
    println!("lucid view: {episodes} episodes of {} at {}", names.join(", "), server.url());
    let _ = std::io::stdout().flush();
    if server.addr().ip().is_unspecified() {
        eprintln!(
            "lucid view: from another machine, put this machine's IP address in place of 127.0.0.1 \
             (a host name is refused: the server answers its own addresses only)"
        );
    }
    server.serve();
    Ok(())
}

/// `lucid view`.
#[derive(Args, Debug)]
pub struct ViewArgs {
    /// Runs (`runs/<name>`, a store's `s3://…/runs/<name>`) or a runs folder.
    #[arg(required = true, num_args = 1..)]
    pub runs: Vec<PathBuf>,
    /// Where to listen: loopback by default; another address requires the printed token.
    #[arg(long, default_value = "127.0.0.1:8377")]
    pub address: String,
    /// Write static files that open from disk with no server, instead of serving.
    #[arg(long, value_name = "DIR")]
    pub export: Option<PathBuf>,
}
