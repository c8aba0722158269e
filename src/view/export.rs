//! `lucid view --export DIR`: the page as static files that open from disk with no server — the
//! rows and the comparison in `data.js`, every episode's body in `details/<chunk>.js` (500
//! episodes a file, loaded when one of them is opened, so a large run opens as fast as a small
//! one). The bodies are those the server answers with, all assembled at once
//! ([`Catalog::bodies`]: one query per table, not per episode). The SQL box and the search of
//! model text need the server; the page says so.

use std::path::Path;

use serde_json::Value;

use super::assets;
use super::data::{Catalog, row_key};
use crate::error::{Error, Result};

/// Episodes per details file.
pub const CHUNK: usize = 500;

/// Write the export of `catalog` into `dir`; returns the number of episodes.
pub fn export(catalog: &Catalog, dir: &Path) -> Result<usize> {
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|source| Error::Write { path, source })
    };
    std::fs::create_dir_all(dir.join("details")).map_err(|source| Error::Write { path: dir.into(), source })?;
    write("index.html", &super::page("<script src=\"data.js\"></script>"))?;
    write("app.js", assets::APP)?;
    write("style.css", assets::STYLE)?;
    write("data.js", &super::data_script(catalog, false))?;
    let mut all = catalog.bodies(None)?;
    for (i, chunk) in catalog.rows.chunks(CHUNK).enumerate() {
        let mut bodies = serde_json::Map::new();
        for r in chunk {
            let k = row_key(r);
            let body = all.remove(&k).ok_or_else(|| Error::query(format!("episode {k} has no body")))?;
            bodies.insert(k, body);
        }
        write(&format!("details/{i}.js"), &format!("LUCID_DETAIL({});\n", Value::Object(bodies)))?;
    }
    Ok(catalog.rows.len())
}
