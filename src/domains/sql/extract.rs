//! The SQL out of the executor's text, exactly as the model wrote it.

/// The SQL in an executor's answer, exactly as the model wrote it.
///
/// Candidates, in order: each fenced block (```sql, ```sqlite or plain ```, closed or not), then
/// the whole text; the first candidate holding a `SELECT`/`WITH` keyword gives the query, which
/// starts at that keyword (so a schema echoed before it is skipped) and runs, read as SQLite
/// tokens (quoted identifiers of every style, string literals and comments are opaque), to the
/// first `;` or closing fence outside them — in unfenced text also to the first blank line
/// outside them. Whitespace and comments after the last token are dropped; nothing inside the
/// query is touched. `None` when there is no query.
pub fn extract_sql(text: &str) -> Option<String> {
    // (where the block's body starts, where a naive search puts its end)
    let mut blocks: Vec<(usize, usize)> = Vec::new();
    let mut at = 0;
    while let Some(open) = text[at..].find("```").map(|i| at + i) {
        let after = open + 3;
        let body = match text[after..].find('\n') {
            Some(nl) if text[after..after + nl].trim().chars().all(|c| c.is_ascii_alphanumeric()) => after + nl + 1,
            _ => after,
        };
        // A closing fence is ``` not followed by an info string (```sql opens, it never closes).
        let close = text[body..]
            .match_indices("```")
            .map(|(i, _)| body + i)
            .find(|&i| !text[i + 3..].chars().next().is_some_and(|c| c.is_ascii_alphanumeric()));
        blocks.push((body, close.unwrap_or(text.len())));
        at = close.map_or(text.len(), |c| c + 3);
    }
    let fenced = blocks.iter().find_map(|&(body, end)| {
        let start = body + code_query_start(&text[body..end])?;
        let sql = statement(&text[start..], false)?;
        // A quote left open inside the block must not swallow the fence and the prose after it:
        // a statement that runs past the block's first fence stands only if a fence follows it.
        let rest = text[start + sql.len()..].trim_start().trim_start_matches(';').trim_start();
        if start + sql.len() > end && !rest.starts_with("```") {
            return statement(&text[start..end], false);
        }
        Some(sql)
    });
    fenced.or_else(|| statement(&text[query_start(text)?..], true))
}

/// The statement at the start of `text`, up to its end as [`extract_sql`] defines it.
fn statement(text: &str, unfenced: bool) -> Option<String> {
    use crate::sql::lexer::{Kind, tokenize};
    let mut end = 0;
    for t in tokenize(text) {
        let fence = text[t.start..].starts_with("```");
        let blank_line = unfenced && t.kind == Kind::Space && t.text.matches('\n').count() >= 2;
        if fence || blank_line || t.kind == Kind::Semicolon {
            break;
        }
        if t.is_significant() {
            end = t.start + t.text.len();
        }
    }
    // Only a quote or comment left open can end in whitespace.
    let sql = text[..end].trim_end();
    (!sql.is_empty()).then(|| sql.to_string())
}

/// Byte offset of the first `SELECT` or `WITH` keyword of code (a fenced block): comments and
/// string literals are skipped (`-- select the top 5` is not the query).
fn code_query_start(code: &str) -> Option<usize> {
    crate::sql::lexer::tokenize(code).iter().find(|t| t.is_keyword("SELECT") || t.is_keyword("WITH")).map(|t| t.start)
}

/// Byte offset of the first word-bounded `SELECT` or `WITH` (any case) of prose, where an
/// apostrophe is not a quote.
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
