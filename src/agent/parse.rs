//! Reading the model's answers: the SQL out of the executor's text, and the self-grade verdict
//! out of the grader's dedicated status line.

/// The self-grader's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// `VERDICT: CORRECT`.
    Correct,
    /// `VERDICT: INCORRECT`.
    Incorrect,
    /// No status line, or one whose value is neither word.
    Unparseable,
}

impl Verdict {
    /// The binary self-grade r (None when unparseable).
    pub fn r(self) -> Option<u8> {
        match self {
            Verdict::Correct => Some(1),
            Verdict::Incorrect => Some(0),
            Verdict::Unparseable => None,
        }
    }

    /// The word stored in `episodes.grade`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Correct => "correct",
            Verdict::Incorrect => "incorrect",
            Verdict::Unparseable => "unparseable",
        }
    }
}

/// The verdict of a grader's answer, read from its status line only.
///
/// The rule: a status line is a line that, after stripping surrounding whitespace and Markdown
/// decoration (`*`, `_`, `#`, `>`, `` ` ``), starts with `VERDICT` (any case) followed by `:`.
/// Its value, stripped of decoration and trailing punctuation, must be exactly `CORRECT` or
/// `INCORRECT` (any case). The last status line decides; none, or a last one with any other value
/// (`NOT CORRECT`, `PARTIALLY CORRECT`, `CORRECT?`), is unparseable. Prose such as "the query is
/// correct" or "not correct" outside a status line is never read.
pub fn parse_verdict(text: &str) -> Verdict {
    let decoration: &[char] = &['*', '_', '#', '>', '`', ' ', '\t'];
    let mut last = None;
    for line in text.lines() {
        let line = line.trim().trim_matches(decoration);
        let Some(head) = line.get(..7) else { continue };
        if !head.eq_ignore_ascii_case("verdict") {
            continue;
        }
        let rest = line[7..].trim_start_matches(decoration);
        let Some(value) = rest.strip_prefix(':') else { continue };
        let value = value.trim().trim_matches(decoration).trim_end_matches(['.', '!']).trim_matches(decoration);
        last = Some(if value.eq_ignore_ascii_case("correct") {
            Verdict::Correct
        } else if value.eq_ignore_ascii_case("incorrect") {
            Verdict::Incorrect
        } else {
            Verdict::Unparseable
        });
    }
    last.unwrap_or(Verdict::Unparseable)
}

/// The SQL in an executor's answer. Candidates, in order: each fenced block (```sql, ```sqlite or
/// plain ```, closed or not), then the whole text; the first candidate holding a `SELECT`/`WITH`
/// keyword gives the SQL, from that keyword to the candidate's end (so a schema echoed before the
/// query is skipped) — in the unfenced text, to the first fence or blank line — without trailing
/// `;` and whitespace. `None` when there is no query.
pub fn extract_sql(text: &str) -> Option<String> {
    let mut candidates = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        let body = match after.find('\n') {
            Some(nl) if after[..nl].trim().chars().all(|c| c.is_ascii_alphanumeric()) => &after[nl + 1..],
            _ => after,
        };
        // A closing fence is ``` not followed by an info string (```sql opens, it never closes).
        let close = body
            .match_indices("```")
            .map(|(i, _)| i)
            .find(|&i| !body[i + 3..].chars().next().is_some_and(|c| c.is_ascii_alphanumeric()));
        let (block, next) = match close {
            Some(close) => (&body[..close], &body[close + 3..]),
            None => (body, ""),
        };
        candidates.push(block);
        rest = next;
    }
    let blocks = candidates.len();
    candidates.push(text);
    candidates.into_iter().enumerate().find_map(|(n, c)| {
        let start = query_start(c)?;
        let mut sql = &c[start..];
        if n == blocks {
            // Unfenced: the query ends at a fence or a blank line (prose or examples follow).
            let end = [sql.find("```"), sql.find("\n\n")].into_iter().flatten().min().unwrap_or(sql.len());
            sql = &sql[..end];
        }
        let sql = sql.trim().trim_end_matches(|ch: char| ch == ';' || ch == '`' || ch.is_whitespace()).trim();
        (!sql.is_empty()).then(|| sql.to_string())
    })
}

/// Byte offset of the first word-bounded `SELECT` or `WITH` (any case).
fn query_start(text: &str) -> Option<usize> {
    let upper = text.to_ascii_uppercase();
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    ["SELECT", "WITH"]
        .iter()
        .filter_map(|kw| {
            upper
                .match_indices(kw)
                .map(|(i, _)| i)
                .find(|&i| !word(upper[..i].chars().next_back()) && !word(upper[i + kw.len()..].chars().next()))
        })
        .min()
}
