//! The tool-use domain's data: the Berkeley Function Calling Leaderboard's tasks as its own wheel
//! carries them (`bfcl-eval` 2026.3.23, Apache-2.0): `bfcl_eval/data/BFCL_v4_<category>.json`
//! (JSON Lines of `{id, question, function}`) and `data/possible_answer/` beside them (`{id,
//! ground_truth}`). `lucid models fetch tools` takes the wheel alone (pinned, sha256-checked, none
//! of its dependencies: lucid reads its files, never imports it). `check.py`, committed beside
//! this file, runs BFCL's own checker on recorded predictions for the test that holds lucid's
//! port to it (`tests/tools_domain.rs`).

use std::path::{Path, PathBuf};

use crate::datasets::wheels::{DataPackage, Wheel};
use crate::error::Result;

/// The pinned wheel.
pub const WHEELS: &[Wheel] = &[Wheel {
    package: "bfcl-eval",
    version: "2026.3.23",
    sha256: "3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a",
    marker: "bfcl_eval/data/BFCL_v4_simple_python.json",
}];

/// The data package (`lucid models fetch tools`), unpacked under the models folder's `tools/`.
pub const PACKAGE: DataPackage = DataPackage {
    name: "tools",
    about: "the tool-use domain: BFCL v4's function-calling tasks and possible answers (bfcl-eval 2026.3.23's wheel, sha256-checked, without its dependencies)",
    wheels: WHEELS,
    default: true,
    built: None,
    needs: &[],
};

/// The multi-turn environments' package (`lucid models fetch tools-multiturn`): mpmath, which
/// BFCL's math environment imports, with BFCL's wheel and the sandbox's interpreter as its needs.
pub const MULTI_TURN: DataPackage = DataPackage {
    name: "tools-multiturn",
    about: "BFCL's multi-turn environments in the Python sandbox: mpmath 1.3.0 (sha256-checked), with the tools and python packages",
    wheels: &[crate::python::package::MPMATH],
    default: true,
    built: None,
    needs: &[PACKAGE, crate::python::package::PACKAGE],
};

/// The folder holding `mpmath/` for the multi-turn environments, or an error naming the fetch.
pub fn mpmath_dir(cache_dir: &Path) -> Result<PathBuf> {
    MULTI_TURN.require(&crate::model_files::models_dir(cache_dir), crate::python::package::MPMATH.package)
}

/// The unpacked wheel's folder (the one holding `bfcl_eval/`), or an error naming the fetch.
pub fn package_dir(cache_dir: &Path) -> Result<PathBuf> {
    PACKAGE.require(&crate::model_files::models_dir(cache_dir), WHEELS[0].package)
}

/// A category's task file and possible-answer file under the unpacked wheel `dir`.
pub fn category_files(dir: &Path, category: &str) -> (PathBuf, PathBuf) {
    let data = dir.join("bfcl_eval").join("data");
    let name = format!("BFCL_v4_{category}.json");
    (data.join(&name), data.join("possible_answer").join(name))
}
