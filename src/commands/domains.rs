//! `lucid domains`: every registered domain kind, with its benchmark sources, channels, prompt
//! variables and options (the registry's own description).

use std::io::Write;

use super::werr;
use crate::error::Result;

/// `lucid domains`.
pub fn run() -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(crate::domains::registry::describe().as_bytes()).map_err(werr)
}
