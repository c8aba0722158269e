//! Reading the self-grader's answer: the verdict out of its dedicated status line (every domain).

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
/// The first word of its value (letters only, after decoration) decides: `CORRECT` or
/// `INCORRECT` (any case), followed by the end of the line, decoration, or a separator and then
/// anything (`VERDICT: CORRECT. The query counts ...`, `VERDICT: INCORRECT - wrong table`).
/// Any other first word (`NOT CORRECT`, `PARTIALLY CORRECT`), a question mark or an alternative
/// (`CORRECT?`, `CORRECT/INCORRECT`, `CORRECT or INCORRECT`) makes the line unparseable. The
/// last status line decides; none is unparseable. Prose such as "the query is correct" or "not
/// correct" outside a status line is never read.
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
        last = Some(verdict_value(value.trim_start_matches(decoration)));
    }
    last.unwrap_or(Verdict::Unparseable)
}

/// The verdict a status line's value gives (see [`parse_verdict`]).
fn verdict_value(value: &str) -> Verdict {
    let end = value.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(value.len());
    let (word, after) = value.split_at(end);
    let verdict = if word.eq_ignore_ascii_case("correct") {
        Verdict::Correct
    } else if word.eq_ignore_ascii_case("incorrect") {
        Verdict::Incorrect
    } else {
        return Verdict::Unparseable;
    };
    let after = after.trim_start_matches(['*', '_', '`', '"', '\'', ')', ']']);
    let next_word = after.trim_start().trim_start_matches(['(', '[']).split(|c: char| !c.is_ascii_alphabetic()).next();
    let ambiguous =
        after.trim_start().starts_with(['?', '/', '|']) || next_word.is_some_and(|w| w.eq_ignore_ascii_case("or"));
    if ambiguous { Verdict::Unparseable } else { verdict }
}
