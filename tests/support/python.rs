//! The pinned interpreter of the code sandbox, loaded once per test binary (compiled once per
//! machine, then from the cache), and where `lucid models fetch code` put it.

use std::path::PathBuf;
use std::sync::LazyLock;

use lucid::python::Python;

/// The `code` model package's folder.
pub fn code_dir() -> PathBuf {
    lucid::model_files::model_path(&lucid::model_files::models_dir(&lucid::cache_dir::cache_dir()), "code")
}

/// One interpreter for the whole test binary (compiled once, then from the cache).
pub static PY: LazyLock<Python> =
    LazyLock::new(|| lucid::python::package::interpreter(&lucid::cache_dir::cache_dir()).unwrap());
