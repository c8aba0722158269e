//! The README and the manual under `docs/` keep their word. The README is a front door: at most
//! 250 lines, the two commands in its first code block. Every repository path, `lucid` command,
//! flag and stage kind they name exists (in the tree, in the binary's `--help`, in the stage
//! registry), no path or link leaves the repository, and every figure in the README and the manual
//! is one a file under `tests/bench/results/` holds (`docs_drift` plants each kind of drift and
//! checks counts against the code). A failure names the file, the line and the offending text.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::docs::{
    Doc, documents, figures, line_at, link_path, missing_paths, read, repo_path, root, texts_below, unmeasured_figures,
};

/// The README's longest allowed length, in lines.
const README_MAX_LINES: usize = 250;
/// The README's first command: the offline demo.
const DEMO_COMMAND: &str = "cargo run --release -- demo";
/// The README's second command: the tests (`.ci/run` runs it).
const TEST_COMMAND: &str = "cargo test";
/// The info strings of fenced blocks whose lines are shell commands.
const SHELL_LANGS: &[&str] = &["", "sh", "bash", "shell", "console"];
/// What may wrap the word `lucid` in a command line (`"$(lucid models path smollm2)"`).
const OPENERS: [char; 6] = ['"', '\'', '(', '$', '[', '`'];

/// `line` without its shell comment (from a `#` that starts a word).
fn strip_comment(line: &str) -> &str {
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        if c == '#' && prev.is_whitespace() {
            return &line[..i];
        }
        prev = c;
    }
    line
}

/// The command lines of `doc`, each with the line it starts on: every inline code span, and
/// every line of its shell blocks with `#` comments cut and `\` continuations joined.
fn command_lines(doc: &Doc) -> Vec<(usize, String)> {
    let mut out = doc.spans.clone();
    for (info, lines) in &doc.blocks {
        if !SHELL_LANGS.contains(&info.as_str()) {
            continue;
        }
        let mut pending: Option<(usize, String)> = None;
        for (n, line) in lines {
            let code = strip_comment(line).trim_end();
            let (start, mut text) = pending.take().unwrap_or((*n, String::new()));
            text.push(' ');
            text.push_str(code.trim_end_matches('\\'));
            if code.ends_with('\\') {
                pending = Some((start, text));
            } else {
                out.push((start, text));
            }
        }
        out.extend(pending);
    }
    out
}

/// A `lucid` command named in the docs.
struct Named {
    /// `file:line`.
    at: String,
    /// The subcommand (`run`, `theory`).
    command: String,
    /// The words after it, up to the end of the command (a pipe, a redirection, `;`).
    words: Vec<String>,
    /// The whole command line, for messages.
    text: String,
}

/// A word without the punctuation that may close it (`view`:, `fetch`).
fn bare_word(word: &str) -> &str {
    word.trim_end_matches(|c: char| !c.is_ascii_alphanumeric())
}

/// Every `lucid <command> ...` in the inline code spans and shell blocks of `docs`.
fn named_commands(docs: &[Doc]) -> Vec<Named> {
    let mut out = Vec::new();
    for doc in docs {
        for (line, text) in command_lines(doc) {
            let words: Vec<&str> = text.split_whitespace().collect();
            for (i, word) in words.iter().enumerate() {
                if word.trim_start_matches(OPENERS) != "lucid" {
                    continue;
                }
                let Some(command) = words.get(i + 1).copied().map(bare_word) else { continue };
                if !command.starts_with(|c: char| c.is_ascii_lowercase()) {
                    continue;
                }
                let subshell = word.contains("$(");
                let mut rest = Vec::new();
                for w in &words[i + 2..] {
                    let end = matches!(*w, "|" | "||" | "&&" | ";")
                        || w.starts_with(['>', '<'])
                        || (subshell && w.contains(')'))
                        || w.trim_start_matches(OPENERS) == "lucid";
                    if end {
                        break;
                    }
                    rest.push(w.to_string());
                }
                out.push(Named {
                    at: format!("{}:{line}", doc.path),
                    command: command.to_string(),
                    words: rest,
                    text: text.trim().to_string(),
                });
            }
        }
    }
    out
}

/// What `lucid ... --help` lists: the subcommands and the long flags.
#[derive(Clone, Default)]
struct Help {
    commands: BTreeSet<String>,
    flags: BTreeSet<String>,
}

/// The help of `lucid <path>`, parsed: the first word of each line under `Commands:`, and the long
/// flags of each option line (a line whose first word starts with `-`, indented as options are,
/// not as their descriptions).
fn parse_help(text: &str) -> Help {
    let mut help = Help::default();
    let mut section = "";
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if !line.starts_with(' ') {
            section = line.trim_end();
            continue;
        }
        let t = line.trim_start();
        let indent = line.len() - t.len();
        if section == "Commands:" && indent == 2 {
            help.commands.extend(t.split_whitespace().next().map(str::to_string));
        } else if t.starts_with('-') && indent <= 6 {
            for word in t.split_whitespace() {
                match long_flag(word.trim_end_matches(',')) {
                    Some(flag) => {
                        help.flags.insert(flag);
                    }
                    None if word.starts_with('-') => {}
                    None => break,
                }
            }
        }
    }
    help
}

/// The long flag `word` is (`--set` of `--set=x` or `[--set`), if it is one.
fn long_flag(word: &str) -> Option<String> {
    let name: String = word
        .trim_start_matches(['[', '(', '"', '\''])
        .strip_prefix("--")?
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect();
    (!name.is_empty()).then(|| format!("--{name}"))
}

/// `lucid <path> --help`, run once per path.
#[derive(Default)]
struct Helps(BTreeMap<String, Help>);

impl Helps {
    fn get(&mut self, path: &[&str]) -> Help {
        self.0
            .entry(path.join(" "))
            .or_insert_with(|| {
                let out = Command::new(env!("CARGO_BIN_EXE_lucid")).args(path).arg("--help").output().unwrap();
                let shown = format!("lucid {} --help", path.join(" "));
                assert!(out.status.success(), "{shown} failed: {}", String::from_utf8_lossy(&out.stderr));
                parse_help(&String::from_utf8_lossy(&out.stdout))
            })
            .clone()
    }
}

/// The README is a front door: short, with the offline demo and the tests as the first code
/// block, and CI runs the same test command.
#[test]
fn the_readme_is_a_front_door_with_the_two_commands_first() {
    let text = read("README.md");
    let lines = text.lines().count();
    assert!(lines <= README_MAX_LINES, "README.md has {lines} lines, over {README_MAX_LINES}: move detail to docs/");
    let readme = Doc::parse("README.md", &text);
    let (_, first) = readme.blocks.first().expect("README.md has no fenced code block");
    let commands: Vec<&str> = first.iter().map(|(_, l)| strip_comment(l).trim()).collect();
    let at = first.first().map_or(0, |(n, _)| *n);
    for want in [DEMO_COMMAND, TEST_COMMAND] {
        assert!(
            commands.contains(&want),
            "README.md:{at}: the first code block does not hold `{want}`; it holds:\n{}",
            commands.join("\n")
        );
    }
    assert!(
        read(".ci/run").lines().any(|l| l.trim() == TEST_COMMAND),
        ".ci/run does not run the README's test command `{TEST_COMMAND}`"
    );
}

/// Every repository path in backticks and every relative link of the README and the manual
/// exists, and no link leaves the repository.
#[test]
fn every_repository_path_in_the_docs_exists() {
    let bad = missing_paths(&documents(), &|p| root().join(p).exists());
    assert!(bad.is_empty(), "paths named in README.md or docs/ that are not in the repository:\n{}", bad.join("\n"));
}

/// Every `lucid <command>` in the README and the manual is a subcommand of `lucid --help`, and the
/// README names every subcommand.
#[test]
fn every_lucid_command_in_the_docs_exists() {
    let top = Helps::default().get(&[]);
    assert!(top.commands.contains("run"), "no commands read from lucid --help: {:?}", top.commands);
    let mut bad = Vec::new();
    for n in named_commands(&documents()) {
        if !top.commands.contains(&n.command) {
            bad.push(format!("{}: `lucid {}` is not a command of lucid --help (in `{}`)", n.at, n.command, n.text));
        }
    }
    let readme = read("README.md");
    for c in top.commands.iter().filter(|c| *c != "help") {
        if !readme.contains(&format!("`lucid {c}`")) {
            bad.push(format!("README.md: `lucid {c}` (a command of lucid --help) is not in its commands table"));
        }
    }
    assert!(bad.is_empty(), "commands in README.md or docs/ that lucid does not have:\n{}", bad.join("\n"));
}

/// Every `--flag` written after `lucid <command>` (and its subcommand, as in `lucid theory
/// attractor --kappa`) in the same code span or shell line is a flag of that command's `--help`.
#[test]
fn every_flag_after_a_lucid_command_in_the_docs_exists() {
    let mut helps = Helps::default();
    let top = helps.get(&[]);
    let mut bad = Vec::new();
    for n in named_commands(&documents()) {
        if !top.commands.contains(&n.command) {
            continue; // every_lucid_command_in_the_docs_exists says so
        }
        let Help { commands, mut flags } = helps.get(&[n.command.as_str()]);
        let sub = n.words.first().map(|w| bare_word(w.as_str())).filter(|s| *s != "help" && commands.contains(*s));
        if let Some(sub) = sub {
            flags.extend(helps.get(&[n.command.as_str(), sub]).flags);
        }
        for flag in n.words.iter().filter_map(|w| long_flag(w.as_str())) {
            if !flags.contains(&flag) {
                bad.push(format!("{}: `{flag}` is not a flag of `lucid {}` (in `{}`)", n.at, n.command, n.text));
            }
        }
    }
    assert!(bad.is_empty(), "flags in README.md or docs/ that lucid does not take:\n{}", bad.join("\n"));
}

/// `docs/pipelines.md`'s list of stage kinds is the registry's, both ways.
#[test]
fn the_stage_kinds_in_docs_pipelines_are_the_registry() {
    use lucid::pipeline::registry::Registry;
    let text = read("docs/pipelines.md");
    let start = text.find("\n## Stage kinds\n").expect("docs/pipelines.md has a `## Stage kinds` section") + 1;
    let section = &text[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
    let first = line_at(&text, start);
    let mut documented = BTreeMap::new();
    for (i, line) in section.lines().enumerate() {
        let Some(rest) = line.strip_prefix("- `") else { continue };
        let Some(end) = rest.find('`') else { continue };
        documented.insert(rest[..end].to_string(), first + i);
    }
    let kinds: BTreeSet<&str> = lucid::stages::registry::Stages::KINDS.iter().copied().collect();
    let mut bad = Vec::new();
    for (kind, line) in &documented {
        if !kinds.contains(kind.as_str()) {
            bad.push(format!("docs/pipelines.md:{line}: `{kind}` is not a stage kind (src/stages/registry.rs)"));
        }
    }
    for kind in &kinds {
        if !documented.contains_key(*kind) {
            bad.push(format!("docs/pipelines.md:{first}: the stage kind `{kind}` is not in the `## Stage kinds` list"));
        }
    }
    assert!(bad.is_empty(), "docs/pipelines.md's stage kinds and the registry differ:\n{}", bad.join("\n"));
}

/// A figure in the README or the manual (a number with a unit: s, ms, min, %, MB, GB, x, ×) is one
/// a results file holds, as written: figures are measured into `tests/bench/results/`, never
/// typed twice.
#[test]
fn every_figure_in_the_docs_is_in_a_results_file() {
    let mut results = String::new();
    texts_below(&root().join("tests/bench/results"), &mut results);
    assert!(!results.is_empty(), "tests/bench/results/ holds no text");
    let bad = unmeasured_figures(&documents(), &results);
    assert!(bad.is_empty(), "figures in README.md or docs/ that no results file holds:\n{}", bad.join("\n"));
}

/// The checkers themselves, on small texts.
#[test]
fn the_checkers_read_spans_blocks_links_help_and_figures() {
    let doc = Doc::parse(
        "docs/x.md",
        "a `lucid run p.yaml --set a=1` and ``b ` c``\n\n```sh\nlucid query r \\\n  --out f # --no\n```\n[t](../src/lib.rs#x)\n",
    );
    assert_eq!(doc.spans, vec![(1, "lucid run p.yaml --set a=1".to_string()), (1, "b ` c".to_string())]);
    assert_eq!(doc.blocks.len(), 1);
    assert_eq!(doc.links, vec![(7, "../src/lib.rs#x".to_string())]);
    let named = named_commands(std::slice::from_ref(&doc));
    let words: Vec<(&str, Vec<String>)> = named.iter().map(|n| (n.command.as_str(), n.words.clone())).collect();
    assert_eq!(
        words,
        vec![
            ("run", vec!["p.yaml".to_string(), "--set".to_string(), "a=1".to_string()]),
            ("query", vec!["r".to_string(), "--out".to_string(), "f".to_string()]),
        ]
    );
    assert_eq!(named[1].at, "docs/x.md:4");
    let sub = Doc::parse("x.md", "`llama-server -m \"$(lucid models path smollm2)\" --port 8080`");
    assert_eq!(named_commands(std::slice::from_ref(&sub))[0].words, vec!["path".to_string()]);
    assert_eq!(link_path(Path::new("docs"), "../src/lib.rs#x"), Some(PathBuf::from("src/lib.rs")));
    assert_eq!(link_path(Path::new("docs"), "../../shared/docs/PAPER.md"), None);
    assert_eq!(link_path(Path::new(""), "https://example.org"), None);
    assert_eq!(repo_path("(src/lib.rs:12),"), Some("src/lib.rs".to_string()));
    assert_eq!(repo_path("schemas/<domain>/"), None);
    assert_eq!(repo_path("runs/demo"), None);
    let help = parse_help(
        "Usage: lucid <COMMAND>\n\nCommands:\n  run   Run a pipeline\n          more words\n  help  Print this\n\n\
         Options:\n  -q, --quiet\n          No progress output: --not-a-flag\n      --set <KEY.PATH=VALUE>  Override\n",
    );
    assert_eq!(help.commands.into_iter().collect::<Vec<_>>(), vec!["help", "run"]);
    assert_eq!(help.flags.into_iter().collect::<Vec<_>>(), vec!["--quiet", "--set"]);
    assert_eq!(
        figures("took 5.4x, 6 min 11 s; 3 seeds x 44; 95 % CI; x86-64-v3; 10 seeds; 2× and -0.5 s, Qwen2.5 1,534 ms"),
        vec!["5.4x", "6 min", "11 s", "95 %", "2×", "0.5 s", "1,534 ms"]
    );
}
