//! The third audited `unsafe` module: the interpreter compiled once per machine and cached.
//!
//! Compiling CPython's 26 MB module with Cranelift takes seconds; a compiled artifact loads in
//! about a millisecond. wasmtime's `Module::deserialize_file` is `unsafe` because it maps machine
//! code from disk and trusts it: this module only ever loads a file it wrote itself, under a name
//! that carries the module's BLAKE3 and the engine's compatibility hash (wasmtime version and
//! every setting that changes code), next to a record of the artifact's own BLAKE3, checked
//! before loading (a truncated or altered file is recompiled, never mapped). Files are written to
//! a temporary name and renamed, so concurrent processes never see half a file.

#![allow(unsafe_code)]

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use wasmtime::{Engine, Module};

use crate::error::{Error, Result};

/// The compiled module for `engine`, from the cache or compiled now (and cached).
pub fn module(engine: &Engine, wasm: &Path, blake3: &str, cache_dir: &Path) -> Result<Module> {
    let source_hash = crate::fingerprint::hash_file(wasm)?.to_hex().to_string();
    if source_hash != blake3 {
        return Err(Error::input(
            wasm,
            format!(
                "BLAKE3 {source_hash}, expected {blake3}: not the pinned interpreter (remove its folder and run `lucid models fetch python`)"
            ),
        ));
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut h);
    let dir = cache_dir.join("python-wasm");
    let artifact = dir.join(format!("{}-{:016x}.cwasm", &blake3[..16], h.finish()));
    let record = artifact.with_extension("blake3");
    if let Some(m) = load(engine, &artifact, &record) {
        return Ok(m);
    }
    let bytes = std::fs::read(wasm).map_err(|source| Error::Read { path: wasm.into(), source })?;
    let module =
        Module::new(engine, &bytes).map_err(|e| Error::input(wasm, format!("wasmtime cannot compile it: {e}")))?;
    if let Ok(compiled) = module.serialize() {
        let _ = std::fs::create_dir_all(&dir);
        let _ = write_atomic(&artifact, &compiled)
            .and_then(|()| write_atomic(&record, blake3::hash(&compiled).to_hex().as_bytes()));
    }
    Ok(module)
}

/// The cached artifact, if present and intact.
fn load(engine: &Engine, artifact: &Path, record: &Path) -> Option<Module> {
    let expected = std::fs::read_to_string(record).ok()?;
    let actual = crate::fingerprint::hash_file(artifact).ok()?.to_hex().to_string();
    if expected.trim() != actual {
        return None;
    }
    // SAFETY: `artifact` was written by `module` above from `Module::serialize` of an engine
    // with the same compatibility hash (its name), and its content still has the BLAKE3
    // recorded when it was written; wasmtime checks the header's version and settings again.
    unsafe { Module::deserialize_file(engine, artifact) }.ok()
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp: PathBuf = path.with_extension(format!("tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}
