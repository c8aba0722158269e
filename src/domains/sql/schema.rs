//! The schema a model sees, read once per database through a read-only connection and cut to a
//! character budget at a table boundary: the `CREATE TABLE` statements (`create`, default), or one
//! line per table, `name(column TYPE, ...)` (`compact`, friendlier to small models).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// How a schema is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SchemaStyle {
    /// The `CREATE TABLE` statements as stored.
    #[default]
    Create,
    /// `table(column TYPE, ...)`, one line per table.
    Compact,
}

/// Schemas by database path.
#[derive(Default)]
pub struct Schemas {
    by_path: HashMap<PathBuf, String>,
}

impl Schemas {
    /// The schema text of `db`, at most `max_chars` characters (0: no limit).
    pub fn get(&mut self, db: &Path, style: SchemaStyle, max_chars: usize) -> Result<&str> {
        if !self.by_path.contains_key(db) {
            let text = describe(db, style, max_chars)?;
            self.by_path.insert(db.to_path_buf(), text);
        }
        Ok(&self.by_path[db])
    }
}

/// The tables of `db`, in creation order, written in `style`, cut to `max_chars`.
pub fn describe(db: &Path, style: SchemaStyle, max_chars: usize) -> Result<String> {
    let err = |source| Error::Sqlite { path: db.into(), source };
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(err)?;
    let mut stmt = conn
        .prepare(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
             AND sql IS NOT NULL ORDER BY rowid",
        )
        .map_err(err)?;
    let tables: Vec<(String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(err)?
        .collect::<std::result::Result<_, _>>()
        .map_err(err)?;
    let mut out = String::new();
    for (i, (name, sql)) in tables.iter().enumerate() {
        let piece = match style {
            SchemaStyle::Create => format!("{};\n", sql.trim()),
            SchemaStyle::Compact => {
                let mut cols = conn.prepare("SELECT name, type FROM pragma_table_info(?1)").map_err(err)?;
                let cols: Vec<String> = cols
                    .query_map([name], |r| {
                        let (n, t): (String, String) = (r.get(0)?, r.get(1)?);
                        Ok(if t.is_empty() { n } else { format!("{n} {t}") })
                    })
                    .map_err(err)?
                    .collect::<std::result::Result<_, _>>()
                    .map_err(err)?;
                format!("{name}({})\n", cols.join(", "))
            }
        };
        if max_chars > 0 && out.len() + piece.len() > max_chars && i > 0 {
            out.push_str(&format!("-- ({} more tables not shown)\n", tables.len() - i));
            break;
        }
        out.push_str(&piece);
    }
    Ok(out.trim_end().to_string())
}
