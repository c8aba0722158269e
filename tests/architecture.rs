//! The layer order written at the top of `src/lib.rs`: no module of `src/` uses a module of a
//! layer above its own.

use std::path::{Path, PathBuf};

/// Each top-level module of the crate and its layer (the table in `src/lib.rs`).
const LAYERS: &[(&str, u8)] = &[
    ("error", 0),
    ("table", 0),
    ("columns", 0),
    ("fingerprint", 0),
    ("sqlite", 0),
    ("rng", 0),
    ("par", 0),
    ("cache_dir", 0),
    ("loopback", 0),
    ("notices", 0),
    ("sql", 1),
    ("python", 1),
    ("datasets", 1),
    ("embed", 1),
    ("llm", 1),
    ("model_files", 1),
    ("analysis", 1),
    ("session", 1),
    ("remote", 1),
    ("ballista", 1),
    // The domain seam and the episode records every domain shares, below the agent and the domains.
    ("seam", 2),
    ("eval", 2),
    ("agent", 3),
    ("runs", 3),
    ("report", 3),
    ("audit", 3),
    ("import", 3),
    ("pipeline", 4),
    // The generic memory loop: below the domains registry, which runs it in each domain.
    ("memory_loop", 4),
    ("domains", 5),
    ("stages", 6),
    ("cli", 7),
    ("commands", 7),
    ("view", 7),
    ("dispatch", 7),
];

fn layer(module: &str) -> Option<u8> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|(_, l)| *l)
}

/// Every file below `dir` whose name ends with `.{ext}`.
fn files_with_ext(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files_with_ext(&p, ext, out);
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
}

/// The top-level modules named by `crate::` paths in `text` (also inside `use crate::{a, b::c}`).
fn used_modules(text: &str) -> Vec<String> {
    names_after(text, "crate::")
}

/// The first path segment after each `prefix` in `text`, each name of a `{...}` group included.
fn names_after(text: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices(prefix) {
        let rest = &text[i + prefix.len()..];
        let names: Vec<&str> = match rest.strip_prefix('{') {
            Some(group) => group[..group.find('}').unwrap_or(group.len())].split(',').collect(),
            None => vec![rest],
        };
        for n in names {
            let n = n.trim_start();
            let end = n.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(n.len());
            out.push(n[..end].to_string());
        }
    }
    out
}

/// `src/` and every Rust file below it.
fn src_files() -> (PathBuf, Vec<PathBuf>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    files_with_ext(&src, "rs", &mut files);
    (src, files)
}

#[test]
fn no_module_uses_a_layer_above_its_own() {
    let (src, files) = src_files();
    let mut upward = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let module = rel.components().next().unwrap().as_os_str().to_string_lossy().trim_end_matches(".rs").to_string();
        // build.rs is the build script (Cargo.toml's `build`), not a module of the crate.
        if module == "lib" || module == "main" || module == "build" {
            continue;
        }
        let own =
            layer(&module).unwrap_or_else(|| panic!("{}: module `{module}` has no layer in LAYERS", rel.display()));
        let text = std::fs::read_to_string(f).unwrap();
        for used in used_modules(&text) {
            if used.is_empty() || used == module {
                continue;
            }
            let theirs =
                layer(&used).unwrap_or_else(|| panic!("{}: uses `crate::{used}`, which has no layer", rel.display()));
            if theirs > own {
                upward.push(format!("{} (layer {own}) uses crate::{used} (layer {theirs})", rel.display()));
            }
        }
    }
    upward.sort();
    upward.dedup();
    assert!(upward.is_empty(), "upward imports:\n{}", upward.join("\n"));
}

#[test]
fn every_module_of_lib_rs_has_a_layer() {
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    for line in lib.lines() {
        let decl = line.trim().trim_start_matches("pub ");
        if let Some(name) = decl.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
            assert!(layer(name).is_some(), "src/lib.rs declares `{name}`, which tests/architecture.rs does not place");
        }
    }
}

/// Files outside a domain's folder that may use it, and why (each is written down in
/// `src/domains/mod.rs`'s and docs/architecture.md's layout).
const REACHES_INTO_A_DOMAIN: &[(&str, &str)] = &[
    // The one place a domain is named.
    ("domains/registry.rs", "*"),
    // `lucid exec`: the SQL sandbox's own tool shows the text-to-SQL detector on one query.
    ("commands/exec.rs", "sql"),
];

/// Stages, commands and the pipeline reach a domain only through the registry: no file outside
/// `src/domains/<kind>/` uses `crate::domains::<kind>` (the listed exceptions aside).
#[test]
fn only_the_registry_reaches_into_a_domain_folder() {
    let (src, files) = src_files();
    let kinds: Vec<String> = std::fs::read_dir(src.join("domains"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(kinds.contains(&"sql".to_string()) && kinds.contains(&"factual".to_string()), "{kinds:?}");
    let mut found = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(f).unwrap();
        for k in &kinds {
            if rel.starts_with(&format!("domains/{k}/")) {
                continue;
            }
            let allowed = REACHES_INTO_A_DOMAIN.iter().any(|(file, kind)| rel == *file && (*kind == "*" || kind == k));
            let uses = text.contains(&format!("crate::domains::{k}")) || text.contains(&format!("domains::{{{k}"));
            if uses && !allowed {
                found.push(format!("{rel} uses crate::domains::{k}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "files reaching into a domain's folder (use the registry, crate::domains::registry):\n{}",
        found.join("\n")
    );
}

/// String literals naming a domain (its kind or its data package) outside its folder, and why each
/// stays: a name in a YAML key users write, a file extension or a column that happens to spell it.
const NAMES_A_DOMAIN: &[(&str, &str)] = &[
    // The registry: the one place a domain is named (its default, for tables written before
    // domains said their name).
    ("domains/registry.rs", "sql"),
    // The question-answer layout is the factual domain's; `lucid import` writes banks in it.
    ("datasets/qa/tables.rs", "factual"),
    // An answer type (an ISO or currency code), not the domain.
    ("datasets/qa/mod.rs", "code"),
    // The evidence stage's YAML key `factual:` (its corpus options, as before domains).
    ("stages/evidence.rs", "factual"),
    // The `sql` column of BIRD-style prediction files, and `.sql` file extensions.
    ("stages/predictions.rs", "sql"),
    ("eval/inputs.rs", "sql"),
    ("datasets/bundled.rs", "sql"),
    ("commands/query.rs", "sql"),
];

/// No file outside `src/domains/<kind>/` writes a domain's name or its data package's as a string
/// (the listed exceptions aside): the commands, stages and model files ask the registry.
#[test]
fn no_file_outside_a_domain_names_it() {
    let (src, files) = src_files();
    let mut names: Vec<(String, String)> = Vec::new();
    for e in lucid::domains::registry::all().into_iter().filter(|e| src.join("domains").join(e.folder).is_dir()) {
        names.push((e.folder.to_string(), e.name.to_string()));
        names.extend(e.packages.iter().map(|p| (e.folder.to_string(), p.name.to_string())));
    }
    assert!(names.iter().any(|(_, n)| n == "facts"), "{names:?}");
    let mut found = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(f).unwrap();
        for (line, lit) in code_literals(&text) {
            for (_, name) in &names {
                let named = lit == *name;
                let inside = names.iter().any(|(k, _)| rel.starts_with(&format!("domains/{k}/")));
                let allowed = NAMES_A_DOMAIN.iter().any(|(file, n)| rel == *file && n == name);
                if named && !inside && !allowed {
                    found.push(format!("src/{rel}:{line}: \"{lit}\""));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "domain names outside their folders (ask crate::domains::registry):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_checker_sees_grouped_and_inline_paths() {
    let text = "use crate::{pipeline::stage::Stage, sql};\nlet x = crate::stages::registry::Stages;";
    assert_eq!(used_modules(text), vec!["pipeline", "sql", "stages"]);
}

/// A stage kind's name is written once, in its stage's file (`<Stage>::KIND`): the pipeline, the
/// commands and the rest of the crate know stages through the `Stage` hooks and the registry,
/// never by comparing a kind string.
#[test]
fn stage_kind_strings_live_in_src_stages_only() {
    use lucid::pipeline::registry::Registry;
    let (src, files) = src_files();
    let mut found = Vec::new();
    for f in files.iter().filter(|f| !f.starts_with(src.join("stages"))) {
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line.contains("stage.kind()") && line.contains("==") {
                found.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
            }
            for kind in lucid::stages::registry::Stages::KINDS {
                let quoted = format!("\"{kind}\"");
                // Kind names that are also ordinary words elsewhere (a report folder, a JSON key
                // of `lucid models bench`) are allowed only when not compared with a kind.
                if line.contains(&quoted) && (line.contains("kind") || line.contains("==")) {
                    found.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(found.is_empty(), "stage kinds named outside src/stages:\n{}", found.join("\n"));
}

/// Feature test modules share fixtures through `tests/support/` only: none imports another.
#[test]
fn no_test_module_imports_another() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let modules: Vec<String> = std::fs::read_dir(&tests)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|m| m != "lib" && m != "skipped")
        .collect();
    let mut found = Vec::new();
    for m in &modules {
        let text = std::fs::read_to_string(tests.join(format!("{m}.rs"))).unwrap();
        // Paths in code, not in string literals (this file's own checker test quotes some).
        let code: String = text.lines().map(|l| l.split('"').next().unwrap_or("")).collect::<Vec<_>>().join("\n");
        for used in used_modules(&code) {
            if used != "support" && used != *m && modules.contains(&used) {
                found.push(format!("tests/{m}.rs uses crate::{used}"));
            }
        }
    }
    assert!(found.is_empty(), "test modules importing each other:\n{}", found.join("\n"));
}

/// The string literals of a Rust file's non-test code (comments and `#[cfg(test)]` modules left out).
fn code_literals(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        if line.trim_start().starts_with("//") {
            continue;
        }
        let mut rest = line;
        while let Some(start) = rest.find('"') {
            let after = &rest[start + 1..];
            let mut end = None;
            let mut escaped = false;
            for (i, c) in after.char_indices() {
                match c {
                    '\\' if !escaped => escaped = true,
                    '"' if !escaped => {
                        end = Some(i);
                        break;
                    }
                    _ => escaped = false,
                }
            }
            let Some(end) = end else { break };
            out.push((n + 1, after[..end].to_string()));
            rest = &after[end + 1..];
        }
    }
    out
}

/// Every table name and column name documented in `schemas/` (the tables a run holds).
fn documented_tables_and_columns() -> (Vec<String>, Vec<String>) {
    let mut files = Vec::new();
    files_with_ext(&Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas"), "json", &mut files);
    let (mut tables, mut columns) = (Vec::new(), Vec::new());
    for f in files {
        let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
        if let Some(t) = doc["table"].as_str() {
            tables.push(t.to_string());
        }
        for c in doc["columns"].as_array().into_iter().flatten() {
            if let Some(name) = c["name"].as_str() {
                columns.push(name.to_string());
            }
        }
    }
    (tables, columns)
}

/// The pipeline (spec, plan, store, scheduler, the episode scheduler) and the engines it runs on
/// (the SQL session and its functions, the shared store, Ballista, the model files) are generic:
/// no stage kind, standard arm, run table or table column is written in them (the label-free
/// check's `gold` table excepted). What a stage kind, an arm or a column means lives in the
/// stages, the agent, the domains, `columns.rs` and `runs.rs`. (The SQL sandbox, the chat
/// backends and the encoder are engines of their own formats: an API's JSON keys, an execution
/// status, the embeddings table they write.)
#[test]
fn the_pipeline_and_the_engines_name_no_kind_arm_table_or_column() {
    use lucid::pipeline::registry::Registry;
    let (src, files) = src_files();
    let generic = |f: &Path| {
        let rel = f.strip_prefix(&src).unwrap();
        ["pipeline", "remote", "analysis"].iter().any(|d| rel.starts_with(d))
            || ["session.rs", "ballista.rs", "model_files.rs"].iter().any(|f| rel == Path::new(f))
    };
    let (tables, columns) = documented_tables_and_columns();
    let arms: Vec<&str> = lucid::columns::ARM_ORDER.iter().map(|(a, _)| *a).filter(|a| *a != "all").collect();
    let named = |lit: &str| {
        lucid::stages::registry::Stages::KINDS.contains(&lit)
            || arms.contains(&lit)
            || (tables.iter().any(|t| t == lit) && lit != "gold")
            || columns.iter().any(|c| c == lit)
    };
    let mut found = Vec::new();
    for f in files.iter().filter(|f| generic(f)) {
        for (line, lit) in code_literals(&std::fs::read_to_string(f).unwrap()) {
            if named(&lit) {
                found.push(format!("{}:{line}: \"{lit}\"", f.strip_prefix(&src).unwrap().display()));
            }
        }
    }
    assert!(!tables.is_empty() && !columns.is_empty(), "schemas/ documents no table");
    assert!(found.is_empty(), "the pipeline or an engine names a kind, arm, table or column:\n{}", found.join("\n"));
}

/// The type arguments of every `Result<…>` in `text` whose error type is `String`.
fn string_errors(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("Result<") {
        let args = &text[i + 7..];
        let (mut depth, mut comma, mut end) = (0i32, None, None);
        for (j, c) in args.char_indices() {
            match c {
                '<' | '(' => depth += 1,
                ')' => depth -= 1,
                '>' if depth == 0 => {
                    end = Some(j);
                    break;
                }
                '>' => depth -= 1,
                ',' if depth == 0 => comma = Some(j),
                _ => {}
            }
        }
        if let (Some(c), Some(e)) = (comma, end)
            && args[c + 1..e].trim() == "String"
        {
            out.push(format!("Result<{}>", &args[..e]));
        }
    }
    out
}

/// Errors are typed: no function of `src/` returns `Result<_, String>` (a message with no type
/// and no source); `error::Invalid` and `error::Fault` say what kind of failure a message is.
#[test]
fn src_has_no_string_errors() {
    let (src, files) = src_files();
    let mut found = Vec::new();
    for f in &files {
        for r in string_errors(&std::fs::read_to_string(f).unwrap()) {
            found.push(format!("{}: {r}", f.strip_prefix(&src).unwrap().display()));
        }
    }
    assert!(found.is_empty(), "Result<_, String> in src:\n{}", found.join("\n"));
}

#[test]
fn the_string_error_checker_sees_nested_and_qualified_results() {
    let text =
        "fn a() -> std::result::Result<Vec<(u32, String)>, String> {}\nfn b() -> Result<BTreeMap<String, String>> {}";
    assert_eq!(string_errors(text), vec!["Result<Vec<(u32, String)>, String>"]);
    let lits = code_literals("let a = \"x\\\"y\"; // \"no\"\n// \"comment\"\n#[cfg(test)]\nlet b = \"test\";");
    assert_eq!(lits, vec![(1, "x\\\"y".to_string()), (1, "no".to_string())]);
}

/// One meaning per public type name: no two public structs, enums, type aliases or traits of
/// `src/` share a name (a reader meeting `Bank` or `Verdict` knows which one it is).
#[test]
fn public_type_names_are_unique() {
    let (src, files) = src_files();
    let mut seen: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for line in text.lines() {
            let decl = line.trim_start();
            for kw in ["pub struct ", "pub enum ", "pub type ", "pub trait "] {
                if let Some(rest) = decl.strip_prefix(kw) {
                    let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
                    seen.entry(rest[..end].to_string())
                        .or_default()
                        .push(f.strip_prefix(&src).unwrap().display().to_string());
                }
            }
        }
    }
    let twice: Vec<String> =
        seen.into_iter().filter(|(_, at)| at.len() > 1).map(|(n, at)| format!("{n}: {}", at.join(", "))).collect();
    assert!(twice.is_empty(), "public type names defined more than once:\n{}", twice.join("\n"));
}

/// The README's layout section names every top-level module of `src/` (a file as `name.rs`, a
/// folder as `name/`), so a module added, moved or renamed shows up there.
#[test]
fn the_readme_layout_names_every_module_of_src() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let start = readme.find("\n## Layout\n").expect("README has a Layout section");
    let layout = &readme[start + 1..];
    let layout = &layout[..layout[3..].find("\n## ").map_or(layout.len(), |e| e + 3)];
    let words: Vec<&str> = layout.split(|c: char| c.is_whitespace() || c == '(' || c == ',').collect();
    let mut missing = Vec::new();
    for e in std::fs::read_dir(root.join("src")).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let entry = if p.is_dir() { format!("{name}/") } else { name };
        if !words.contains(&entry.as_str()) {
            missing.push(format!("src/{entry}"));
        }
    }
    missing.sort();
    assert!(missing.is_empty(), "not in the README's layout section:\n{}", missing.join("\n"));
}

/// The sibling modules file `text` (in module folder `parent`, as `crate::a::b`) uses: `super::x`
/// and `crate::<parent>::x` paths, groups included.
fn sibling_uses(text: &str, parent: &str) -> Vec<String> {
    let mut out = names_after(text, "super::");
    if !parent.is_empty() {
        out.extend(names_after(text, &format!("crate::{parent}::")));
    }
    out
}

/// No two files of one folder of `src/` use each other (an import circle: neither can be read,
/// tested or moved alone).
#[test]
fn no_two_modules_of_a_folder_use_each_other() {
    let (src, files) = src_files();
    let mut uses: std::collections::BTreeMap<(String, String), Vec<String>> = Default::default();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let name = rel.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "mod" || name == "lib" || name == "main" {
            continue;
        }
        let parent = rel.parent().map(|p| p.to_string_lossy().replace('/', "::")).unwrap_or_default();
        let text = std::fs::read_to_string(f).unwrap();
        let code: String = text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
        let mut used = sibling_uses(&code, &parent);
        used.retain(|u| u != &name && !u.is_empty());
        used.sort();
        used.dedup();
        uses.insert((parent, name), used);
    }
    let mut circles = Vec::new();
    for ((parent, a), used) in &uses {
        for b in used {
            let back = uses.get(&(parent.clone(), b.clone())).is_some_and(|u| u.contains(a));
            if back && a < b {
                circles.push(format!(
                    "src/{}/{a}.rs <-> src/{}/{b}.rs",
                    parent.replace("::", "/"),
                    parent.replace("::", "/")
                ));
            }
        }
    }
    assert!(circles.is_empty(), "import circles:\n{}", circles.join("\n"));
    // The reader sees the shapes the circle this test was written for had.
    let seen = sibling_uses("use super::episode::recorded_call;\nuse crate::agent::{proxy::Proxy, bank};", "agent");
    assert_eq!(seen, ["episode", "proxy", "bank"]);
}

/// The runner knows no report: the study's report is the `run` command's job (`report_due`).
#[test]
fn the_pipeline_names_no_report() {
    let (src, files) = src_files();
    let named: Vec<String> = files
        .iter()
        .filter(|f| f.strip_prefix(&src).unwrap().starts_with("pipeline"))
        .filter(|f| used_modules(&std::fs::read_to_string(f).unwrap()).iter().any(|m| m == "report"))
        .map(|f| f.display().to_string())
        .collect();
    assert!(named.is_empty(), "the pipeline uses crate::report: {named:?}");
}

/// `src/agent/` holds the agent-program box alone (#73): the memory loop's files live in
/// `src/memory_loop/`, the episode records and tables every domain writes in `src/seam/`.
#[test]
fn the_agent_folder_is_the_box_alone() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files: Vec<String> = std::fs::read_dir(src.join("agent"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["descriptors.rs", "mod.rs", "program.rs", "proxy.rs", "sandbox.rs", "watch.rs"]);
    for loop_file in
        ["episode.rs", "retrieval.rs", "bank.rs", "arms.rs", "scheduler.rs", "run.rs", "stage.rs", "kinds.rs"]
    {
        assert!(src.join("memory_loop").join(loop_file).is_file(), "src/memory_loop/{loop_file} is missing");
    }
}
