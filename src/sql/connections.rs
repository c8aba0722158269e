//! A worker's open sandboxes, one per database file, opened on first use with fixed options.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::sandbox::{OpenOptions, Sandbox};
use crate::error::Result;

/// Sandboxes by database path.
pub struct Connections {
    options: OpenOptions,
    open: HashMap<PathBuf, Sandbox>,
}

impl Connections {
    /// No connection yet; each will open with `options`.
    pub fn new(options: OpenOptions) -> Connections {
        Connections { options, open: HashMap::new() }
    }

    /// The sandbox for `path`, opening it if needed.
    pub fn get(&mut self, path: &Path) -> Result<&Sandbox> {
        if !self.open.contains_key(path) {
            let sb = Sandbox::open(path, &self.options)?;
            self.open.insert(path.to_path_buf(), sb);
        }
        Ok(&self.open[path])
    }
}
