//! Answer-free checks that live next to execution: the inputs of the LUCID detector. They read
//! the question (and its evidence), the produced SQL and how it executed — never a reference
//! query or a reference result.

use super::lexer::{self, Kind, Token};

/// Shortest literal (after trimming LIKE wildcards and spaces) the grounding check considers.
pub const MIN_LITERAL_CHARS: usize = 3;

/// The literal-grounding channel: string literals the SQL filters on that do not occur in the
/// question or its evidence.
///
/// The rule, in order:
/// 1. Take every single-quoted string literal that stands as a filter operand: right after a
///    comparison (`=`, `==`, `!=`, `<>`, `<`, `<=`, `>`, `>=`), after `LIKE`/`GLOB` (optionally
///    `NOT`), or inside an `IN (...)` list. Literals in the select list, in function arguments
///    such as `strftime('%Y', ..)`, or after `THEN`/`ELSE` are not filters and are skipped.
/// 2. Trim `%` and `_` wildcards of LIKE patterns and surrounding spaces.
/// 3. Skip it when it is not entity-like: fewer than [`MIN_LITERAL_CHARS`] characters, or made of
///    digits and punctuation only (numbers, dates, times such as '2019-01-01').
/// 4. It is grounded when it occurs, case-insensitively and with runs of whitespace folded, as a
///    substring of the question or of the evidence (BIRD's evidence is part of the task input).
///
/// Returns the ungrounded literals, in order of appearance; the channel fires when it is non-empty.
pub fn ungrounded_literals(question: &str, evidence: &str, sql: &str) -> Vec<String> {
    ungrounded_literals_min(question, evidence, sql, MIN_LITERAL_CHARS)
}

/// [`ungrounded_literals`] with another shortest-literal threshold.
pub fn ungrounded_literals_min(question: &str, evidence: &str, sql: &str, min_chars: usize) -> Vec<String> {
    let context = fold(&format!("{question}\n{evidence}"));
    filter_literals_min(sql, min_chars).into_iter().filter(|lit| !context.contains(&fold(lit))).collect()
}

/// The entity-like filter literals of `sql` (steps 1–3 of [`ungrounded_literals`]).
pub fn filter_literals(sql: &str) -> Vec<String> {
    filter_literals_min(sql, MIN_LITERAL_CHARS)
}

fn filter_literals_min(sql: &str, min_chars: usize) -> Vec<String> {
    let tokens: Vec<Token<'_>> = lexer::tokenize(sql).into_iter().filter(Token::is_significant).collect();
    let mut out = Vec::new();
    let mut in_list_depth: Option<usize> = None;
    let mut depth = 0usize;
    for (i, tok) in tokens.iter().enumerate() {
        match tok.text {
            "(" => {
                depth += 1;
                if in_list_depth.is_none() && i > 0 && tokens[i - 1].is_keyword("IN") {
                    in_list_depth = Some(depth);
                }
            }
            ")" => {
                if in_list_depth == Some(depth) {
                    in_list_depth = None;
                }
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
        if tok.kind != Kind::Str {
            continue;
        }
        let prev = i.checked_sub(1).map(|p| &tokens[p]);
        let is_filter = in_list_depth == Some(depth)
            || prev.is_some_and(|p| {
                matches!(p.text, "=" | "==" | "!=" | "<>" | "<" | "<=" | ">" | ">=")
                    || p.is_keyword("LIKE")
                    || p.is_keyword("GLOB")
            });
        if !is_filter {
            continue;
        }
        let Some(value) = tok.string_value() else { continue };
        let trimmed = value.trim_matches(|c: char| c == '%' || c == '_' || c == '*' || c.is_whitespace());
        if is_entity_like(trimmed, min_chars) {
            out.push(trimmed.to_string());
        }
    }
    out
}

fn is_entity_like(s: &str, min_chars: usize) -> bool {
    s.chars().count() >= min_chars && s.chars().any(char::is_alphabetic)
}

/// Lower-case with whitespace runs folded to one space.
fn fold(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}
