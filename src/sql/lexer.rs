//! A small SQLite tokenizer: enough to find statement boundaries and string literals without
//! executing anything. It never fails: unterminated quotes or comments run to the end of input.

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Spaces, tabs, newlines.
    Space,
    /// `-- ...` or `/* ... */`.
    Comment,
    /// `'...'` (the token text keeps the quotes; see [`Token::string_value`]).
    Str,
    /// `x'..'` blob literal.
    Blob,
    /// `"..."`, `` `...` `` or `[...]`.
    QuotedIdent,
    /// A bare word: keyword or identifier.
    Word,
    /// A numeric literal.
    Number,
    /// `;`
    Semicolon,
    /// Any other operator or punctuation (`=`, `<>`, `(`, `,` ...).
    Punct,
}

/// One token: its kind and its byte span in the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token<'a> {
    /// The kind.
    pub kind: Kind,
    /// The exact source text.
    pub text: &'a str,
    /// Byte offset of the token in the input.
    pub start: usize,
}

impl Token<'_> {
    /// The value of a `Str` token with its quotes removed and `''` unescaped.
    pub fn string_value(&self) -> Option<String> {
        if self.kind != Kind::Str {
            return None;
        }
        let inner = self.text.strip_prefix('\'')?;
        let inner = inner.strip_suffix('\'').unwrap_or(inner);
        Some(inner.replace("''", "'"))
    }

    /// Whether this is the keyword `kw` (case-insensitive).
    pub fn is_keyword(&self, kw: &str) -> bool {
        self.kind == Kind::Word && self.text.eq_ignore_ascii_case(kw)
    }

    /// Whether the token carries meaning (not space or comment).
    pub fn is_significant(&self) -> bool {
        !matches!(self.kind, Kind::Space | Kind::Comment)
    }
}

/// Split `sql` into tokens, covering every byte.
pub fn tokenize(sql: &str) -> Vec<Token<'_>> {
    let bytes = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        let c = bytes[i];
        let kind = match c {
            b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' => {
                while i < bytes.len() && matches!(bytes[i], b' ' | b'\t' | b'\n' | b'\r' | b'\x0c') {
                    i += 1;
                }
                Kind::Space
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                Kind::Comment
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = sql[i + 2..].find("*/").map_or(bytes.len(), |p| i + 2 + p + 2);
                Kind::Comment
            }
            b'\'' => {
                i = skip_quoted(bytes, i, b'\'');
                Kind::Str
            }
            b'x' | b'X' if bytes.get(i + 1) == Some(&b'\'') => {
                i = skip_quoted(bytes, i + 1, b'\'');
                Kind::Blob
            }
            b'"' | b'`' => {
                i = skip_quoted(bytes, i, c);
                Kind::QuotedIdent
            }
            b'[' => {
                i = sql[i..].find(']').map_or(bytes.len(), |p| i + p + 1);
                Kind::QuotedIdent
            }
            b';' => {
                i += 1;
                Kind::Semicolon
            }
            b'0'..=b'9' => {
                i = skip_number(bytes, i);
                Kind::Number
            }
            b'.' if bytes.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                i = skip_number(bytes, i);
                Kind::Number
            }
            _ if c == b'_' || c == b'$' || c.is_ascii_alphabetic() || c >= 0x80 => {
                while i < bytes.len()
                    && (bytes[i] == b'_' || bytes[i] == b'$' || bytes[i].is_ascii_alphanumeric() || bytes[i] >= 0x80)
                {
                    i += 1;
                }
                Kind::Word
            }
            _ => {
                let two = sql.get(i..i + 2).unwrap_or("");
                i += if matches!(two, "<=" | ">=" | "<>" | "!=" | "==" | "||" | "<<" | ">>" | "->") { 2 } else { 1 };
                while !sql.is_char_boundary(i) {
                    i += 1;
                }
                Kind::Punct
            }
        };
        out.push(Token { kind, text: &sql[start..i], start });
    }
    out
}

fn skip_quoted(bytes: &[u8], open: usize, quote: u8) -> usize {
    let mut i = open + 1;
    while i < bytes.len() {
        if bytes[i] == quote {
            if bytes.get(i + 1) == Some(&quote) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    bytes.len()
}

fn skip_number(bytes: &[u8], mut i: usize) -> usize {
    if bytes[i] == b'0' && matches!(bytes.get(i + 1), Some(b'x' | b'X')) {
        i += 2;
        while i < bytes.len() && bytes[i].is_ascii_hexdigit() {
            i += 1;
        }
        return i;
    }
    while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
        i += 1;
    }
    if i < bytes.len() && matches!(bytes[i], b'e' | b'E') {
        let mut j = i + 1;
        if j < bytes.len() && matches!(bytes[j], b'+' | b'-') {
            j += 1;
        }
        if j < bytes.len() && bytes[j].is_ascii_digit() {
            i = j;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
        }
    }
    i
}

/// Python's `sqlite3` rule for one `execute()`: after the first statement (up to and including its
/// `;`), only whitespace and comments may follow, else "You can only execute one statement at a
/// time". A second `;` counts as a statement (`SELECT 1;;` is refused, `SELECT 1; -- x` is not).
pub fn is_single_statement(sql: &str) -> bool {
    let tokens = tokenize(sql);
    match tokens.iter().position(|t| t.kind == Kind::Semicolon) {
        None => true,
        Some(p) => tokens[p + 1..].iter().all(|t| !t.is_significant()),
    }
}

/// Whether the first keyword is one that can only read (SELECT, WITH, VALUES, EXPLAIN, PRAGMA),
/// or there is no statement at all. A first line of defence before the authorizer: it also stops
/// statements the authorizer never sees, such as `VACUUM INTO 'file'`.
pub fn starts_read_only(sql: &str) -> bool {
    match tokenize(sql).iter().find(|t| t.is_significant() && t.kind != Kind::Semicolon) {
        None => true,
        Some(t) if t.text == "(" => true,
        Some(t) => ["SELECT", "WITH", "VALUES", "EXPLAIN", "PRAGMA"].iter().any(|k| t.is_keyword(k)),
    }
}

/// Whether the text holds no statement at all (only whitespace, comments or one `;`): Python's
/// `sqlite3` runs such text and returns no rows.
pub fn is_empty_statement(sql: &str) -> bool {
    tokenize(sql).iter().all(|t| !t.is_significant() || t.kind == Kind::Semicolon)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statement_rule_matches_python_sqlite3() {
        // Expected values observed with CPython 3.11's sqlite3 (see tests/eval_rule.rs for more).
        for ok in ["", "  -- c\n", "SELECT 1;", "SELECT 1; -- x", "select 1 /* x */ ;  ", ";", "SELECT ';'"] {
            assert!(is_single_statement(ok), "{ok:?}");
        }
        for bad in ["SELECT 1;;", "SELECT 1; SELECT 2", "SELECT 1;\n;"] {
            assert!(!is_single_statement(bad), "{bad:?}");
        }
    }

    #[test]
    fn string_literals_unescape() {
        let toks = tokenize("SELECT * FROM t WHERE name = 'O''Brien' AND x = \"col\"");
        let strs: Vec<_> = toks.iter().filter_map(|t| t.string_value()).collect();
        assert_eq!(strs, vec!["O'Brien".to_string()]);
        assert!(toks.iter().any(|t| t.kind == Kind::QuotedIdent && t.text == "\"col\""));
    }

    #[test]
    fn tokens_cover_the_input() {
        let sql = "SELECT a.b, 1.5e3, x'00', [we ird] FROM t -- tail";
        let joined: String = tokenize(sql).iter().map(|t| t.text).collect();
        assert_eq!(joined, sql);
    }
}
