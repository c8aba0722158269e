//! The drift `tests/docs_honesty.rs` and this file catch, each kind shown caught on a planted
//! text (#73): a figure no results file holds, a path that is not in the repository, a link or a
//! path outside it, a count of tasks or domains that disagrees with the code, a README whose two
//! commands are not in its first lines, a domains module comment that leaves a domain out. The
//! checks on the real tree: counts here, the rest in `docs_honesty`.

use std::path::Path;
use std::process::Command;

use crate::support::docs::{
    Counts, Doc, documents, front_door, missing_paths, read, root, unmeasured_figures, unnamed_domains, wrong_counts,
};
use crate::support::probes::{Probe, require};

/// The README's two commands, and how far down they may stand.
const COMMANDS: [&str; 2] = ["cargo run --release -- demo", "cargo test"];
const COMMANDS_WITHIN: usize = 25;

/// The domain kinds lucid's binary registers: the registry's, less any a test of this binary
/// registered from outside `src/` (the toy domain), whose folder is not under `src/domains/`.
fn shipped_kinds() -> Vec<lucid::domains::registry::Entry> {
    let domains = root().join("src/domains");
    lucid::domains::registry::all().into_iter().filter(|e| domains.join(e.folder).is_dir()).collect()
}

/// Benchmarks the docs size that lucid reads but does not ship, with their authors' counts.
fn elsewhere() -> Vec<(usize, String)> {
    vec![
        (1534, "BIRD's dev split (its authors' count; read from a BIRD-layout folder)".to_string()),
        (274, "SpiderMan-train's questions that the scripted loop in tests/unchanged.rs runs".to_string()),
    ]
}

/// Each shipped source of every registered domain (a source that needs no `path`), read whole by
/// the lucid binary: its number of tasks.
fn source_sizes() -> Vec<(usize, String)> {
    let lucid = env!("CARGO_BIN_EXE_lucid");
    let dir = tempfile::tempdir().unwrap();
    let mut out = Vec::new();
    for entry in shipped_kinds() {
        for source in entry.sources.iter().filter(|s| !s.needs_path) {
            let name = format!("size_{}", source.name);
            let yaml = format!(
                "name: {name}\nseeds: [0]\nstages:\n  - id: benchmark\n    kind: benchmark\n    config:\n      source: {}\n",
                source.name
            );
            let pipeline = dir.path().join(format!("{name}.yaml"));
            std::fs::write(&pipeline, yaml).unwrap();
            let run = Command::new(lucid).current_dir(dir.path()).args(["run", "-q"]).arg(&pipeline).output().unwrap();
            assert!(run.status.success(), "loading {}: {}", source.name, String::from_utf8_lossy(&run.stderr));
            let q = Command::new(lucid)
                .current_dir(dir.path())
                .args(["query", "--format", "csv", &format!("runs/{name}"), "SELECT count(*) AS n FROM tasks"])
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&q.stdout);
            let n: usize = text.lines().nth(1).and_then(|l| l.trim().parse().ok()).unwrap_or_else(|| panic!("{text}"));
            out.push((n, source.name.to_string()));
        }
    }
    out
}

/// Every `.rs` file below `dir`, with its path from the repository root and its text.
fn sources_below(dir: &Path, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources_below(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel = p.strip_prefix(root()).unwrap().display().to_string();
            out.push((rel, std::fs::read_to_string(&p).unwrap()));
        }
    }
}

/// Every count of tasks in the README, the manual's prose and the source (comments, the sources'
/// descriptions `lucid domains` prints) is the size of a source read whole, and every claim of
/// "N domains" is the number registered.
#[test]
fn counts_in_the_docs_and_the_code_are_the_codes() {
    if ![Probe::Facts, Probe::Code, Probe::Math, Probe::Tools, Probe::ToolsMultiTurn].into_iter().all(require) {
        return;
    }
    let counts = Counts { sources: source_sizes(), elsewhere: elsewhere(), domains: shipped_kinds().len() };
    let mut files: Vec<(String, String)> = documents().into_iter().map(|d| (d.path, d.prose)).collect();
    sources_below(&root().join("src"), &mut files);
    let bad = wrong_counts(&files, &counts);
    assert!(bad.is_empty(), "counts that disagree with the code:\n{}", bad.join("\n"));
}

/// The domains module's comment names every domain folder, so a new domain shows up there.
#[test]
fn the_domains_module_names_every_domain() {
    let text = read("src/domains/mod.rs");
    let doc: String = text.lines().filter_map(|l| l.strip_prefix("//!")).collect::<Vec<_>>().join("\n");
    let mut folders: Vec<&str> = shipped_kinds().iter().map(|e| e.folder).collect();
    folders.dedup();
    let bad = unnamed_domains(&doc, &folders);
    assert!(bad.is_empty(), "src/domains/mod.rs's comment does not name: {}", bad.join(", "));
}

/// The README opens with what lucid is and has its two commands within its first lines.
#[test]
fn the_readme_opens_with_what_lucid_is_and_its_two_commands() {
    let bad = front_door(&read("README.md"), &COMMANDS, COMMANDS_WITHIN);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// One of each kind of drift, planted: every check reports it, naming the file and the line.
#[test]
fn each_kind_of_drift_is_caught() {
    let planted = Doc::parse(
        "docs/planted.md",
        "# Planted\n\nThe study took 23 min 40 s.\n\nSee `src/nowhere.rs` and [the paper](../../shared/docs/PAPER.md).\n\
         The restatement is `../shared/docs/PAPER.md`.\nAll 3,411 tasks, in three domains.\n",
    );
    let results = "| run | 12 min |\n";
    let figures = unmeasured_figures(std::slice::from_ref(&planted), results);
    assert_eq!(figures.len(), 2, "{figures:?}");
    assert!(figures[0].starts_with("docs/planted.md:3: `23 min`"), "{figures:?}");
    assert!(figures[1].starts_with("docs/planted.md:3: `40 s`"), "{figures:?}");

    let paths = missing_paths(std::slice::from_ref(&planted), &|p| root().join(p).exists());
    assert_eq!(paths.len(), 3, "{paths:?}");
    assert!(paths.iter().any(|p| p.starts_with("docs/planted.md:5: `src/nowhere.rs` does not exist")), "{paths:?}");
    assert!(paths.iter().any(|p| p.starts_with("docs/planted.md:5: the link") && p.contains("leaves")), "{paths:?}");
    assert!(
        paths.iter().any(|p| p.starts_with("docs/planted.md:6: `../shared/docs/PAPER.md` is outside")),
        "{paths:?}"
    );
    let allowed = Doc::parse("docs/ok.md", "The benchmark in `../shared/data` and [web](https://example.org).\n");
    assert!(missing_paths(&[allowed], &|_| true).is_empty());

    let counts = Counts { sources: vec![(3475, "bfcl".to_string())], elsewhere: Vec::new(), domains: 6 };
    let wrong = wrong_counts(&[(planted.path.clone(), planted.prose.clone())], &counts);
    assert_eq!(wrong.len(), 2, "{wrong:?}");
    assert!(wrong[0].starts_with("docs/planted.md:7: `3,411 tasks` is the size of no source"), "{wrong:?}");
    assert!(wrong[1].starts_with("docs/planted.md:7: `three domains`, but 6"), "{wrong:?}");
    let fine = "All 3,475 tasks; 30 questions a seed; the two domains side by side; six domains.\n";
    assert!(wrong_counts(&[("x.md".to_string(), fine.to_string())], &counts).is_empty());

    let late =
        format!("# lucid\n\nWhat it is.\n{}\n```sh\ncargo run --release -- demo\ncargo test\n```\n", "\n".repeat(30));
    let door = front_door(&late, &COMMANDS, COMMANDS_WITHIN);
    assert_eq!(door.len(), 2, "{door:?}");
    assert!(door[0].contains("past the first 25 lines"), "{door:?}");
    let no_paragraph = front_door("# lucid\n\n## The two commands\n\ncargo test\n", &["cargo test"], COMMANDS_WITHIN);
    assert_eq!(no_paragraph.len(), 1, "{no_paragraph:?}");

    let three = "The domains: text-to-SQL ([`sql`]), factual QA ([`factual`]) and code ([`code`]).";
    assert_eq!(
        unnamed_domains(three, &["sql", "factual", "code", "math", "tools"]),
        ["src/domains/math/", "src/domains/tools/"]
    );
}
