//! The README and the manual as the docs checks read them (`docs_honesty`, `docs_drift`): each
//! Markdown file's fenced blocks, inline code spans and links with their lines, the repository
//! paths and figures a line names.

use std::path::{Component, Path, PathBuf};

/// How a word in backticks that names a path of this repository begins.
pub const REPO_PREFIXES: &[&str] = &["src/", "tests/", "pipelines/", "schemas/", "data/", "docs/", ".ci/"];

/// Files at the repository's root named on their own.
pub const REPO_FILES: &[&str] = &["Cargo.toml", "justfile", "CHANGELOG.md"];

/// Units that make a number a figure (`min` before `ms` and `s`: the longest match wins).
pub const UNITS: &[&str] = &["min", "ms", "MB", "GB", "s", "%", "x", "×"];

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The text of a file, by its path from the repository root.
pub fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The 1-based line of byte `byte` of `text`.
pub fn line_at(text: &str, byte: usize) -> usize {
    text[..byte].matches('\n').count() + 1
}

/// A Markdown file as the checks read it.
pub struct Doc {
    /// Its path from the repository root (`README.md`, `docs/study.md`).
    pub path: String,
    /// Its fenced code blocks: the info string, and each line with its 1-based number.
    pub blocks: Vec<(String, Vec<(usize, String)>)>,
    /// Its inline code spans outside the fenced blocks, each with the line it starts on.
    pub spans: Vec<(usize, String)>,
    /// Its link and image targets (`[text](target)`), each with its line.
    pub links: Vec<(usize, String)>,
    /// Its whole text.
    pub text: String,
    /// Its text with every fenced line left blank (so line numbers hold).
    pub prose: String,
}

/// An open fence: its width in backticks, its info string, its lines so far (with their numbers).
pub type Fence = (usize, String, Vec<(usize, String)>);

impl Doc {
    pub fn parse(path: &str, text: &str) -> Doc {
        let mut blocks = Vec::new();
        // The lines outside fenced blocks; a fenced line is left blank, so numbers hold.
        let mut prose = Vec::new();
        // The open fence: its width in backticks, its info string, its lines so far.
        let mut open: Option<Fence> = None;
        for (i, line) in text.lines().enumerate() {
            let t = line.trim_start();
            let ticks = t.chars().take_while(|c| *c == '`').count();
            match open.take() {
                Some((width, info, lines)) if ticks >= width && t[ticks..].trim().is_empty() => {
                    blocks.push((info, lines));
                }
                Some((width, info, mut lines)) => {
                    lines.push((i + 1, line.to_string()));
                    open = Some((width, info, lines));
                }
                None if ticks >= 3 => open = Some((ticks, t[ticks..].trim().to_string(), Vec::new())),
                None => {
                    prose.push(line.to_string());
                    continue;
                }
            }
            prose.push(String::new());
        }
        let prose = prose.join("\n");
        Doc {
            path: path.to_string(),
            blocks,
            spans: code_spans(&prose),
            links: links(&prose),
            text: text.to_string(),
            prose,
        }
    }
}

/// The inline code spans of `prose` — from a run of backticks to the next run of as many, not
/// across a blank line — each with the line it starts on.
pub fn code_spans(prose: &str) -> Vec<(usize, String)> {
    let b = prose.as_bytes();
    let run = |at: usize| b[at..].iter().take_while(|c| **c == b'`').count();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'`' {
            i += 1;
            continue;
        }
        let n = run(i);
        let mut j = i + n;
        let mut close = None;
        while j < b.len() {
            if b[j] != b'`' {
                j += 1;
                continue;
            }
            let m = run(j);
            if m == n {
                close = Some(j);
                break;
            }
            j += m;
        }
        match close {
            Some(j) if !prose[i + n..j].contains("\n\n") => {
                out.push((line_at(prose, i), prose[i + n..j].to_string()));
                i = j + n;
            }
            _ => i += n,
        }
    }
    out
}

/// The targets of the links and images in `prose` (`](target)`, a title after it dropped), each
/// with its line.
pub fn links(prose: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (at, _) in prose.match_indices("](") {
        let rest = &prose[at + 2..];
        if let Some(end) = rest.find(')') {
            let target = rest[..end].split_whitespace().next().unwrap_or("");
            out.push((line_at(prose, at), target.to_string()));
        }
    }
    out
}

/// `README.md` and every `docs/*.md`, parsed.
pub fn documents() -> Vec<Doc> {
    let mut manual: Vec<String> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ holds the manual")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    manual.sort();
    let mut paths = vec!["README.md".to_string()];
    paths.extend(manual);
    paths.iter().map(|p| Doc::parse(p, &read(p))).collect()
}

/// The repository path `word` names, if it looks like one: without the punctuation around it, a
/// `:line` suffix or an `#anchor`; None for placeholders (`*`, `<kind>`) and other words.
pub fn repo_path(word: &str) -> Option<String> {
    let w = word.trim_start_matches(['(', '[', '{', '"', '\'']);
    let w = w.split('#').next().unwrap_or("");
    let w = w.split(':').next().unwrap_or("");
    let w = w.trim_end_matches([')', ']', '}', ',', ';', '.', '"', '\'']);
    if w.is_empty() || w.contains(['*', '<', '>', '{', '}', '$', '…']) {
        return None;
    }
    (REPO_PREFIXES.iter().any(|p| w.starts_with(p)) || REPO_FILES.contains(&w)).then(|| w.to_string())
}

/// The path from the repository root that a relative link in a file of folder `dir` points at;
/// None for a URL, an anchor on the same page, or a path outside the repository.
pub fn link_path(dir: &Path, target: &str) -> Option<PathBuf> {
    let t = target.split('#').next().unwrap_or("");
    if t.is_empty() || t.contains("://") || t.starts_with("mailto:") || t.starts_with('/') {
        return None;
    }
    let mut path = PathBuf::new();
    for c in dir.join(t).components() {
        match c {
            Component::Normal(part) => path.push(part),
            Component::CurDir => {}
            Component::ParentDir if path.pop() => {}
            _ => return None,
        }
    }
    Some(path)
}

/// The figures of `line`: a number (digits, with `.` or `,` between digits) not glued to a word
/// before it, then a unit of [`UNITS`] ending a word — right after the number or one space
/// after it, except `x` and `×`, which count only against the number (`3 seeds x 44` is no
/// figure, `1.4x` is).
pub fn figures(line: &str) -> Vec<String> {
    quantities(line, UNITS)
}

/// The quantities of `line` in `units`, read as [`figures`] reads them.
pub fn quantities(line: &str, units: &[&str]) -> Vec<String> {
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let at = |k: usize| chars.get(k).map(|(_, c)| *c);
    let byte = |k: usize| chars.get(k).map_or(line.len(), |(b, _)| *b);
    let mut out = Vec::new();
    let mut k = 0;
    while k < chars.len() {
        let glued = k > 0 && at(k - 1).is_some_and(|p| p.is_alphanumeric() || matches!(p, '_' | '.' | ','));
        if glued || !chars[k].1.is_ascii_digit() {
            k += 1;
            continue;
        }
        let mut e = k + 1;
        loop {
            match at(e) {
                Some(c) if c.is_ascii_digit() => e += 1,
                Some('.' | ',') if at(e + 1).is_some_and(|c| c.is_ascii_digit()) => e += 2,
                _ => break,
            }
        }
        let spaced = at(e) == Some(' ');
        let u = if spaced { e + 1 } else { e };
        let unit = units.iter().find(|unit| {
            let n = unit.chars().count();
            let word: String = (u..u + n).filter_map(at).collect();
            word == **unit
                && !at(u + n).is_some_and(|c| c.is_alphanumeric() || c == '_')
                && !(spaced && matches!(**unit, "x" | "×"))
        });
        match unit {
            Some(unit) => {
                let end = u + unit.chars().count();
                out.push(line[byte(k)..byte(end)].to_string());
                k = end;
            }
            None => k = e,
        }
    }
    out
}

/// The text of every file below `dir` that is text.
pub fn texts_below(dir: &Path, out: &mut String) {
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.unwrap().path();
        if p.is_dir() {
            texts_below(&p, out);
        } else if let Ok(text) = std::fs::read_to_string(p.as_path()) {
            out.push_str(&text);
            out.push('\n');
        }
    }
}

/// Whether a relative link of a file in folder `dir` leaves the repository (`../../shared/…`,
/// or an absolute path on the writer's machine): a reader's clone has nothing there.
pub fn leaves_the_repository(dir: &Path, target: &str) -> bool {
    let t = target.split('#').next().unwrap_or("");
    if t.is_empty() || t.contains("://") || t.starts_with("mailto:") {
        return false;
    }
    t.starts_with('/') || link_path(dir, target).is_none()
}

/// Paths beside the checkout that the docs may name: the real benchmark the guide's layout puts
/// there, which tests read when it is present and skip visibly without.
pub const OUTSIDE_NAMED: &[&str] = &["../shared/data"];

/// Whether a word in backticks names a path outside the repository (`../x`), not one of
/// [`OUTSIDE_NAMED`].
fn outside(word: &str) -> bool {
    let w = word.trim_start_matches(['(', '[', '"', '\'']).trim_end_matches([')', ']', ',', ';', '.', '"', '\'', ':']);
    w.starts_with("../") && !OUTSIDE_NAMED.iter().any(|o| w == *o || w.starts_with(&format!("{o}/")))
}

/// Every repository path in backticks and every relative link of `docs` that `exists` does not
/// find, and every path or link that leaves the repository: `file:line` and what is wrong, each.
pub fn missing_paths(docs: &[Doc], exists: &dyn Fn(&Path) -> bool) -> Vec<String> {
    let mut bad = Vec::new();
    for doc in docs {
        for (line, span) in &doc.spans {
            for word in span.split_whitespace().filter(|w| outside(w)) {
                bad.push(format!("{}:{line}: `{word}` is outside the repository (in `{span}`)", doc.path));
            }
            for word in span.split_whitespace() {
                if let Some(path) = repo_path(word).filter(|p| !exists(Path::new(p))) {
                    bad.push(format!("{}:{line}: `{path}` does not exist (in `{span}`)", doc.path));
                }
            }
        }
        let dir = Path::new(&doc.path).parent().unwrap_or(Path::new(""));
        for (line, target) in &doc.links {
            if leaves_the_repository(dir, target) {
                bad.push(format!("{}:{line}: the link ({target}) leaves the repository", doc.path));
            } else if let Some(path) = link_path(dir, target).filter(|p| !exists(p)) {
                bad.push(format!(
                    "{}:{line}: the link ({target}) points at {}, which does not exist",
                    doc.path,
                    path.display()
                ));
            }
        }
    }
    bad
}

/// Every figure of `docs` (a number with a unit of [`UNITS`], in prose or in a block) that the
/// text of the results files, `results`, does not hold as written.
pub fn unmeasured_figures(docs: &[Doc], results: &str) -> Vec<String> {
    let mut bad = Vec::new();
    for doc in docs {
        for (i, line) in doc.text.lines().enumerate() {
            for figure in figures(line).into_iter().filter(|f| !results.contains(f.as_str())) {
                bad.push(format!(
                    "{}:{}: `{figure}` is in no file under tests/bench/results/: {}",
                    doc.path,
                    i + 1,
                    line.trim()
                ));
            }
        }
    }
    bad
}

/// The nouns a count of tasks is written with.
pub const TASK_NOUNS: &[&str] = &["tasks", "problems", "questions"];
/// Counts of tasks below this are parts of a benchmark (a seed's questions, a sample), not its size.
pub const WHOLE_FROM: usize = 100;
/// Number words a count of domains may be written in.
const NUMBER_WORDS: [&str; 10] = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];

/// What the code counts: each shipped source's tasks when read whole, the benchmarks the docs
/// may size without lucid shipping them, and the domains registered.
pub struct Counts {
    /// `(tasks, source)`, each shipped source read whole.
    pub sources: Vec<(usize, String)>,
    /// `(tasks, what)`: a benchmark lucid reads but does not ship, sized by its own authors.
    pub elsewhere: Vec<(usize, String)>,
    /// How many domain kinds the registry holds.
    pub domains: usize,
}

/// The lines of `files` (`(path, text)`: prose of the docs, source files) whose counts disagree
/// with `counts`: a count of [`TASK_NOUNS`] from [`WHOLE_FROM`] up that is no source's size, and
/// "N domains" from three up (a claim about them all) that is not the number registered.
pub fn wrong_counts(files: &[(String, String)], counts: &Counts) -> Vec<String> {
    let sizes = || counts.sources.iter().map(|(n, s)| format!("{s} {n}")).collect::<Vec<_>>().join(", ");
    let mut bad = Vec::new();
    for (path, text) in files {
        for (i, line) in text.lines().enumerate() {
            for q in quantities(line, TASK_NOUNS) {
                let n: usize = q.split(' ').next().unwrap_or("").replace(',', "").parse().unwrap_or(0);
                let known = counts.sources.iter().chain(&counts.elsewhere).any(|(m, _)| *m == n);
                if n >= WHOLE_FROM && !known {
                    bad.push(format!("{path}:{}: `{q}` is the size of no source (read whole: {})", i + 1, sizes()));
                }
            }
            let lower = line.to_lowercase();
            let mut claims: Vec<(usize, String)> = quantities(&lower, &["domains"])
                .into_iter()
                .filter_map(|q| Some((q.split(' ').next()?.parse().ok()?, q)))
                .collect();
            for (k, word) in NUMBER_WORDS.iter().enumerate() {
                let phrase = format!("{word} domains");
                let glued = |at: usize| lower[..at].chars().next_back().is_some_and(|c| c.is_alphanumeric());
                if lower.match_indices(&phrase).any(|(at, _)| !glued(at)) {
                    claims.push((k + 1, phrase));
                }
            }
            for (_, q) in claims.into_iter().filter(|(n, _)| *n >= 3 && *n != counts.domains) {
                bad.push(format!("{path}:{}: `{q}`, but {} domain kinds are registered", i + 1, counts.domains));
            }
        }
    }
    bad
}

/// The README's front door: it opens with what lucid is (a paragraph right under the title) and
/// every one of `commands` stands on a line of its own within its first `within` lines.
pub fn front_door(readme: &str, commands: &[&str], within: usize) -> Vec<String> {
    let mut bad = Vec::new();
    let mut lines = readme.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let title = lines.next();
    let first = lines.next();
    let opens = title.is_some_and(|(_, l)| l.starts_with("# "))
        && first.is_some_and(|(_, l)| !l.starts_with('#') && !l.starts_with("```") && !l.starts_with('|'));
    if !opens {
        bad.push("README.md:1: does not open with its title and a paragraph on what lucid is".to_string());
    }
    for want in commands {
        let at = readme.lines().position(|l| l.split(" #").next().unwrap_or("").trim() == *want);
        match at {
            Some(i) if i < within => {}
            Some(i) => bad.push(format!("README.md:{}: `{want}` is past the first {within} lines", i + 1)),
            None => bad.push(format!("README.md: `{want}` is on no line of its own")),
        }
    }
    bad
}

/// The domain folders of `folders` that the module comment `doc` does not name (as [`folder`]).
pub fn unnamed_domains(doc: &str, folders: &[&str]) -> Vec<String> {
    folders.iter().filter(|f| !doc.contains(&format!("[`{f}`]"))).map(|f| format!("src/domains/{f}/")).collect()
}
