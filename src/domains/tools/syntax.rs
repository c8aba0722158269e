//! The Python expressions a model writes its calls in (`[get_weather(city='Paris', days=3)]`),
//! parsed as `ast.parse(text, mode="eval")` parses them, for the subset BFCL's decoder reads:
//! constants (numbers with `_`, `0x`/`0o`/`0b`, exponents; strings with `r`/`u` prefixes, escapes,
//! triple quotes and implicit concatenation; `True`, `False`, `None`, `...`), names, attributes,
//! calls with positional and keyword arguments, lists, tuples, dicts, subscripts, unary and binary
//! operators. Anything else (a lambda, a comparison, an f-string, bytes, a complex number, a set)
//! is refused, as BFCL's decoder refuses what it does not resolve.

use crate::error::Invalid;
use unicode_normalization::UnicodeNormalization;

/// A parsed expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// An int (within 128 bits).
    Int(i128),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// `True` / `False`.
    Bool(bool),
    /// `None`.
    None,
    /// `...`.
    Ellipsis,
    /// A name.
    Name(String),
    /// `value.attr`.
    Attribute(Box<Expr>, String),
    /// `func(args, key=value)`.
    Call(Box<Expr>, Vec<Expr>, Vec<(String, Expr)>),
    /// `[...]`.
    List(Vec<Expr>),
    /// `(...)` with a comma, or a bare `a, b`.
    Tuple(Vec<Expr>),
    /// `{k: v}`.
    Dict(Vec<(Expr, Expr)>),
    /// `value[index]`.
    Subscript(Box<Expr>, Box<Expr>),
    /// `-x`, `+x`, `~x`, `not x`.
    Unary(&'static str, Box<Expr>),
    /// `a op b`.
    Binary(Box<Expr>, &'static str, Box<Expr>),
    /// What Python parses but BFCL's decoder only drops as a positional argument and fails on
    /// anywhere else: a lambda, a comprehension, `*args`, an f-string, an int past 128 bits.
    Opaque(&'static str),
}

impl Expr {
    /// Whether an [`Expr::Opaque`] is in `self`.
    pub fn has_opaque(&self) -> bool {
        match self {
            Expr::Opaque(_) => true,
            Expr::Attribute(v, _) | Expr::Unary(_, v) => v.has_opaque(),
            Expr::Call(f, args, kw) => {
                f.has_opaque() || args.iter().any(Expr::has_opaque) || kw.iter().any(|(_, v)| v.has_opaque())
            }
            Expr::List(items) | Expr::Tuple(items) => items.iter().any(Expr::has_opaque),
            Expr::Dict(pairs) => pairs.iter().any(|(k, v)| k.has_opaque() || v.has_opaque()),
            Expr::Subscript(a, b) | Expr::Binary(a, _, b) => a.has_opaque() || b.has_opaque(),
            _ => false,
        }
    }
}

/// The deepest nesting of brackets read (Python allows 200, its tokenizer's `MAXLEVEL`; no BFCL
/// task or recorded reply nests past 10); chains of operators are held to it too. Every
/// recursion of the parser and of what reads its result is bounded by it, so a hostile reply is
/// refused instead of exhausting the stack.
const MAX_NESTING: i32 = 64;

/// Parse `text` as one Python expression (a top-level `a, b` is a tuple).
pub fn parse(text: &str) -> Result<Expr, Invalid> {
    let tokens = tokenize(text)?;
    let mut p = Parser { tokens, at: 0, unary: 0, operators: 0 };
    let e = p.exprlist(Tok::End)?;
    match p.peek() {
        Tok::End => Ok(e),
        t => Err(format!("unexpected {t:?} after the expression").into()),
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Int(i128),
    /// An int past 128 bits, or an f-string: read, never valued.
    Opaque(&'static str),
    Float(f64),
    Str(String),
    Name(String),
    Op(&'static str),
    End,
}

/// Operators, longest first.
const OPS: &[&str] = &[
    "...", "**", "//", "->", "<<", ">>", "(", ")", "[", "]", "{", "}", ",", ":", ".", "=", "+", "-", "*", "/", "%",
    "~", "@", "<", ">", "!", "&", "|", "^", ";",
];

fn tokenize(text: &str) -> Result<Vec<Tok>, Invalid> {
    let chars: Vec<char> = text.chars().collect();
    let (mut out, mut i, mut depth) = (Vec::new(), 0usize, 0i32);
    if chars.first().is_some_and(|c| *c == ' ' || *c == '\t') {
        return Err("unexpected indent".into());
    }
    while i < chars.len() {
        let c = chars[i];
        if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '\\' && chars.get(i + 1) == Some(&'\n') {
            i += 2;
        } else if c == '\n' || c == '\r' {
            if depth == 0 && chars[i..].iter().any(|c| !matches!(c, ' ' | '\t' | '\x0c' | '\n' | '\r')) {
                return Err("a newline outside brackets".into());
            }
            i += 1;
        } else if matches!(c, ' ' | '\t' | '\x0c') {
            // Python's tokenizer skips only these between tokens; any other whitespace (a
            // no-break space, a vertical tab) is an invalid character.
            i += 1;
        } else if c.is_ascii_digit() || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit)) {
            let (tok, next) = number(&chars, i)?;
            out.push(tok);
            i = next;
        } else if c == '"' || c == '\'' {
            let (s, next) = string(&chars, i, false)?;
            out.push(Tok::Str(s));
            i = next;
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            // Python's parser reads an identifier NFKC-normalised (`ﬁle` is `file`).
            let word: String = chars[start..i].iter().collect::<String>().nfkc().collect();
            if matches!(chars.get(i), Some('"' | '\'')) {
                match word.to_ascii_lowercase().as_str() {
                    "r" => {
                        let (s, next) = string(&chars, i, true)?;
                        out.push(Tok::Str(s));
                        i = next;
                        continue;
                    }
                    "u" => continue,
                    "f" | "rf" | "fr" => {
                        let (_, next) = string(&chars, i, word.len() > 1)?;
                        out.push(Tok::Opaque("an f-string"));
                        i = next;
                        continue;
                    }
                    _ => return Err(format!("a {word}-prefixed string is not read").into()),
                }
            }
            out.push(Tok::Name(word));
        } else {
            let rest: String = chars[i..chars.len().min(i + 3)].iter().collect();
            let op = OPS.iter().find(|o| rest.starts_with(**o)).ok_or_else(|| format!("unexpected character {c:?}"))?;
            depth += match *op {
                "(" | "[" | "{" => 1,
                ")" | "]" | "}" => -1,
                _ => 0,
            };
            if depth > MAX_NESTING {
                return Err("too many nested parentheses".into());
            }
            out.push(Tok::Op(op));
            i += op.chars().count();
        }
    }
    out.push(Tok::End);
    Ok(out)
}

fn number(chars: &[char], start: usize) -> Result<(Tok, usize), Invalid> {
    let mut i = start;
    let radix = match (chars[i], chars.get(i + 1).map(char::to_ascii_lowercase)) {
        ('0', Some('x')) => 16,
        ('0', Some('o')) => 8,
        ('0', Some('b')) => 2,
        _ => 10,
    };
    if radix != 10 {
        i += 2;
        let s = i;
        // One `_` may follow the prefix or a digit, and must be followed by a digit.
        while i < chars.len() && (chars[i].is_digit(radix) || chars[i] == '_') {
            if chars[i] == '_' && !chars.get(i + 1).is_some_and(|c| c.is_digit(radix)) {
                return Err("invalid number literal (an underscore not between digits)".into());
            }
            i += 1;
        }
        if i == s {
            return Err("invalid number literal (no digits after the prefix)".into());
        }
        let digits: String = chars[s..i].iter().filter(|c| **c != '_').collect();
        return Ok((i128::from_str_radix(&digits, radix).map_or(Tok::Opaque("an int past 128 bits"), Tok::Int), i));
    }
    let mut float = false;
    while i < chars.len() {
        let c = chars[i];
        if c.is_ascii_digit() {
            i += 1;
        } else if c == '_' {
            // `1_000`, never `1__0`, `10_`, `1_.5` or `1._5`.
            if !(i > start && chars[i - 1].is_ascii_digit() && chars.get(i + 1).is_some_and(char::is_ascii_digit)) {
                return Err("invalid decimal literal (an underscore not between digits)".into());
            }
            i += 1;
        } else if c == '.' && !float {
            float = true;
            i += 1;
        } else if (c == 'e' || c == 'E')
            && (chars.get(i + 1).is_some_and(char::is_ascii_digit)
                || (matches!(chars.get(i + 1), Some('+' | '-')) && chars.get(i + 2).is_some_and(char::is_ascii_digit)))
        {
            float = true;
            i += 2;
        } else {
            break;
        }
    }
    if chars.get(i).is_some_and(|c| *c == 'j' || *c == 'J') {
        return Err("a complex number is not read".into());
    }
    let text: String = chars[start..i].iter().filter(|c| **c != '_').collect();
    if float {
        return text.parse().map(|f| (Tok::Float(f), i)).map_err(|e| Invalid(format!("a number: {e}")));
    }
    if text.len() > 1 && text.starts_with('0') && text.chars().any(|c| c != '0') {
        return Err("leading zeros in a decimal integer literal are not permitted".into());
    }
    Ok((text.parse().map_or(Tok::Opaque("an int past 128 bits"), Tok::Int), i))
}

fn string(chars: &[char], start: usize, raw: bool) -> Result<(String, usize), Invalid> {
    let q = chars[start];
    let triple = chars.get(start + 1) == Some(&q) && chars.get(start + 2) == Some(&q);
    let mut i = start + if triple { 3 } else { 1 };
    let mut out = String::new();
    loop {
        let Some(&c) = chars.get(i) else { return Err("an unterminated string".into()) };
        if c == q && (!triple || (chars.get(i + 1) == Some(&q) && chars.get(i + 2) == Some(&q))) {
            return Ok((out, i + if triple { 3 } else { 1 }));
        }
        if c == '\n' && !triple {
            return Err("an unterminated string".into());
        }
        if c != '\\' {
            out.push(c);
            i += 1;
            continue;
        }
        let Some(&e) = chars.get(i + 1) else { return Err("an unterminated string".into()) };
        if raw {
            out.push('\\');
            out.push(e);
            i += 2;
            continue;
        }
        i += 2;
        match e {
            '\n' => {}
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                let mut k = 0;
                while k < 2 && chars.get(i).is_some_and(|c| c.is_digit(8)) {
                    v = v * 8 + chars[i].to_digit(8).unwrap_or(0);
                    i += 1;
                    k += 1;
                }
                out.push(char::from_u32(v).ok_or("a bad octal escape")?);
            }
            'x' | 'u' | 'U' => {
                let n = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let hex: String = chars.get(i..i + n).ok_or("a truncated escape")?.iter().collect();
                let v = u32::from_str_radix(&hex, 16).map_err(|_| "a bad escape")?;
                out.push(char::from_u32(v).ok_or("a bad escape")?);
                i += n;
            }
            // `\N{NAME}`: Unicode's character names, which lucid does not hold (BFCL's decoder reads it).
            'N' => return Err("a named escape (\\N{...}) lucid does not read".into()),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            '\\' | '\'' | '"' => out.push(e),
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
}

/// Python's hard keywords other than `True`, `False` and `None` (which are constants): none is a
/// name, so none may be an argument's keyword (`from=1` is a syntax error).
fn is_keyword(n: &str) -> bool {
    matches!(
        n,
        "and"
            | "as"
            | "assert"
            | "async"
            | "await"
            | "break"
            | "class"
            | "continue"
            | "def"
            | "del"
            | "elif"
            | "else"
            | "except"
            | "finally"
            | "for"
            | "from"
            | "global"
            | "if"
            | "import"
            | "in"
            | "is"
            | "lambda"
            | "nonlocal"
            | "not"
            | "or"
            | "pass"
            | "raise"
            | "return"
            | "try"
            | "while"
            | "with"
            | "yield"
    )
}

/// A call's positional and keyword arguments.
type Arguments = (Vec<Expr>, Vec<(String, Expr)>);

struct Parser {
    tokens: Vec<Tok>,
    at: usize,
    /// Unary operators open around the current token.
    unary: i32,
    /// Operators read so far (at most [`MAX_OPERATORS`]).
    operators: usize,
}

/// The most operators an expression may hold: with [`MAX_NESTING`], it bounds the depth of the
/// tree (a chain `1 + 1 + ...` is as deep as it is long).
const MAX_OPERATORS: usize = 256;

/// Binary operators by precedence, loosest first.
const LEVELS: &[&[&str]] = &[&["|"], &["^"], &["&"], &["<<", ">>"], &["+", "-"], &["*", "/", "//", "%", "@"]];

impl Parser {
    fn peek(&self) -> &Tok {
        &self.tokens[self.at]
    }
    fn next(&mut self) -> Tok {
        let t = self.tokens[self.at].clone();
        self.at = (self.at + 1).min(self.tokens.len() - 1);
        t
    }
    fn eat(&mut self, op: &str) -> bool {
        if matches!(self.peek(), Tok::Op(o) if *o == op) {
            self.next();
            return true;
        }
        false
    }
    fn expect(&mut self, op: &str) -> Result<(), Invalid> {
        if self.eat(op) { Ok(()) } else { Err(format!("expected {op:?}, found {:?}", self.peek()).into()) }
    }

    /// `a, b, c` up to `close` (a tuple when a comma is there).
    fn exprlist(&mut self, close: Tok) -> Result<Expr, Invalid> {
        let first = self.expr()?;
        if !matches!(self.peek(), Tok::Op(",")) {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat(",") {
            if *self.peek() == close {
                break;
            }
            items.push(self.expr()?);
        }
        Ok(Expr::Tuple(items))
    }

    fn expr(&mut self) -> Result<Expr, Invalid> {
        if matches!(self.peek(), Tok::Name(n) if n == "not") {
            self.next();
            let operand = self.nested(Self::expr)?;
            return Ok(Expr::Unary("not", Box::new(operand)));
        }
        if matches!(self.peek(), Tok::Name(n) if n == "lambda") {
            self.next();
            self.lambda_parameters()?;
            self.nested(Self::expr)?;
            return Ok(Expr::Opaque("a lambda"));
        }
        if matches!(self.peek(), Tok::Name(n) if n == "await" || n == "yield") {
            return Err("an await or a yield is not read".into());
        }
        let e = self.binary(0)?;
        let equals = matches!(self.tokens.get(self.at + 1), Some(Tok::Op("=")));
        match self.peek() {
            Tok::Op("<" | ">" | "!") => Err("a comparison is not read".into()),
            Tok::Op("=") if equals => Err("a comparison is not read".into()),
            Tok::Name(n) if matches!(n.as_str(), "if" | "and" | "or" | "in" | "is") => {
                Err(format!("`{n}` in an argument is not read").into())
            }
            _ => Ok(e),
        }
    }

    /// A lambda's parameters up to its `:`: names, `name=default`, `*args`, `**kw`, `/`, `*`.
    fn lambda_parameters(&mut self) -> Result<(), Invalid> {
        let mut names = Vec::<String>::new();
        while !self.eat(":") {
            if (self.eat("**") || self.eat("*") || self.eat("/")) && !matches!(self.peek(), Tok::Name(_)) {
                if !self.eat(",") {
                    self.expect(":")?;
                    break;
                }
                continue;
            }
            match self.next() {
                Tok::Name(n) if !is_keyword(&n) && !matches!(n.as_str(), "True" | "False" | "None") => {
                    if names.contains(&n) {
                        return Err("duplicate argument in a lambda".into());
                    }
                    names.push(n);
                }
                t => return Err(format!("unexpected {t:?} in a lambda's parameters").into()),
            }
            if self.eat("=") {
                self.nested(Self::expr)?;
            }
            if !self.eat(",") {
                self.expect(":")?;
                break;
            }
        }
        Ok(())
    }

    /// After an element, its comprehension clauses if `for` follows: `for target in iterable`
    /// (`if condition`)*, repeated. `Some(opaque)` when there were any.
    fn comprehension(&mut self) -> Result<Option<Expr>, Invalid> {
        let mut any = false;
        while matches!(self.peek(), Tok::Name(n) if n == "for" || n == "async") {
            if matches!(self.peek(), Tok::Name(n) if n == "async") {
                self.next();
            }
            self.next();
            any = true;
            loop {
                let target = self.nested(Self::primary)?;
                if !matches!(
                    target,
                    Expr::Name(_) | Expr::Attribute(..) | Expr::Subscript(..) | Expr::Tuple(_) | Expr::List(_)
                ) {
                    return Err("cannot assign to a comprehension's target".into());
                }
                if !self.eat(",") {
                    break;
                }
                if matches!(self.peek(), Tok::Name(n) if n == "in") {
                    break;
                }
            }
            if !matches!(self.peek(), Tok::Name(n) if n == "in") {
                return Err("expected `in` in a comprehension".into());
            }
            self.next();
            self.nested(|p| p.binary(0))?;
            while matches!(self.peek(), Tok::Name(n) if n == "if") {
                self.next();
                self.nested(|p| p.binary(0))?;
            }
        }
        Ok(any.then_some(Expr::Opaque("a comprehension")))
    }

    /// `parse` one level of unary operators deeper, within [`MAX_NESTING`].
    fn nested(&mut self, parse: impl FnOnce(&mut Self) -> Result<Expr, Invalid>) -> Result<Expr, Invalid> {
        self.unary += 1;
        self.operators += 1;
        if self.unary > MAX_NESTING || self.operators > MAX_OPERATORS {
            return Err("too many nested operators".into());
        }
        let e = parse(self);
        self.unary -= 1;
        e
    }

    /// Operators binding at least as tightly as `LEVELS[level]`, by precedence climbing: one
    /// frame per operator, none for an operand without one.
    fn binary(&mut self, level: usize) -> Result<Expr, Invalid> {
        let mut left = self.unary()?;
        loop {
            let found = match self.peek() {
                Tok::Op(o) => LEVELS.iter().position(|ops| ops.contains(o)).filter(|l| *l >= level).map(|l| (l, *o)),
                _ => None,
            };
            let Some((at, op)) = found else { return Ok(left) };
            self.next();
            let right = self.nested(|p| p.binary(at + 1))?;
            left = Expr::Binary(Box::new(left), op, Box::new(right));
        }
    }

    fn unary(&mut self) -> Result<Expr, Invalid> {
        for op in ["-", "+", "~"] {
            if self.eat(op) {
                return Ok(Expr::Unary(op, Box::new(self.nested(Self::unary)?)));
            }
        }
        let base = self.primary()?;
        if self.eat("**") {
            return Ok(Expr::Binary(Box::new(base), "**", Box::new(self.nested(Self::unary)?)));
        }
        Ok(base)
    }

    fn primary(&mut self) -> Result<Expr, Invalid> {
        let mut e = self.atom()?;
        loop {
            if self.eat(".") {
                match self.next() {
                    Tok::Name(n) => e = Expr::Attribute(Box::new(e), n),
                    t => return Err(format!("expected a name after '.', found {t:?}").into()),
                }
            } else if self.eat("(") {
                let (args, keywords) = self.arguments()?;
                e = Expr::Call(Box::new(e), args, keywords);
            } else if self.eat("[") {
                let index = self.exprlist(Tok::Op("]"))?;
                self.expect("]")?;
                e = Expr::Subscript(Box::new(e), Box::new(index));
            } else {
                return Ok(e);
            }
        }
    }

    fn arguments(&mut self) -> Result<Arguments, Invalid> {
        let (mut args, mut keywords) = (Vec::new(), Vec::<(String, Expr)>::new());
        while !self.eat(")") {
            if let (Tok::Name(n), Some(Tok::Op("="))) = (self.peek().clone(), self.tokens.get(self.at + 1)) {
                if is_keyword(&n) || matches!(n.as_str(), "True" | "False" | "None") {
                    return Err(format!("invalid syntax (the keyword `{n}` as an argument's name)").into());
                }
                // A repeated keyword parses (`ast.parse` leaves that error to the compiler).
                self.at += 2;
                keywords.push((n, self.expr()?));
            } else if self.eat("*") {
                // `*args` is a positional argument, allowed after keywords too.
                self.nested(Self::expr)?;
                args.push(Expr::Opaque("*args"));
            } else if matches!(self.peek(), Tok::Op("**")) {
                return Err("an unpacked keyword argument is not read".into());
            } else if keywords.is_empty() {
                let e = self.expr()?;
                match self.comprehension()? {
                    // A bare generator must be the only argument.
                    Some(g) if args.is_empty() && matches!(self.peek(), Tok::Op(")")) => args.push(g),
                    Some(_) => return Err("a generator expression must be parenthesized".into()),
                    None => args.push(e),
                }
            } else {
                return Err("a positional argument follows a keyword argument".into());
            }
            if !self.eat(",") {
                self.expect(")")?;
                break;
            }
        }
        Ok((args, keywords))
    }

    fn atom(&mut self) -> Result<Expr, Invalid> {
        match self.next() {
            Tok::Int(v) => Ok(Expr::Int(v)),
            Tok::Float(v) => Ok(Expr::Float(v)),
            Tok::Str(mut s) => {
                let mut fstring = false;
                loop {
                    match self.peek().clone() {
                        Tok::Str(more) => s.push_str(&more),
                        Tok::Opaque("an f-string") => fstring = true,
                        _ => break,
                    }
                    self.next();
                }
                Ok(if fstring { Expr::Opaque("an f-string") } else { Expr::Str(s) })
            }
            Tok::Name(n) if is_keyword(&n) => Err(format!("invalid syntax (the keyword `{n}`)").into()),
            Tok::Name(n) => Ok(match n.as_str() {
                "True" => Expr::Bool(true),
                "False" => Expr::Bool(false),
                "None" => Expr::None,
                _ => Expr::Name(n),
            }),
            Tok::Op("...") => Ok(Expr::Ellipsis),
            Tok::Opaque(what) => {
                while let Tok::Opaque(_) | Tok::Str(_) = self.peek() {
                    self.next();
                }
                Ok(Expr::Opaque(what))
            }
            Tok::Op("(") => {
                if self.eat(")") {
                    return Ok(Expr::Tuple(Vec::new()));
                }
                let e = self.exprlist(Tok::Op(")"))?;
                if !matches!(e, Expr::Tuple(_))
                    && let Some(c) = self.comprehension()?
                {
                    self.expect(")")?;
                    return Ok(c);
                }
                self.expect(")")?;
                Ok(e)
            }
            Tok::Op("[") => {
                let mut items = Vec::new();
                while !self.eat("]") {
                    let item = self.expr()?;
                    if items.is_empty()
                        && let Some(c) = self.comprehension()?
                    {
                        self.expect("]")?;
                        return Ok(c);
                    }
                    items.push(item);
                    if !self.eat(",") {
                        self.expect("]")?;
                        break;
                    }
                }
                Ok(Expr::List(items))
            }
            Tok::Op("{") => {
                let mut pairs = Vec::new();
                while !self.eat("}") {
                    let k = self.expr()?;
                    if !self.eat(":") {
                        return Err("a set is not read".into());
                    }
                    pairs.push((k, self.expr()?));
                    if !self.eat(",") {
                        self.expect("}")?;
                        break;
                    }
                }
                Ok(Expr::Dict(pairs))
            }
            t => Err(format!("unexpected {t:?}").into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_and_literals_parse_as_python_does() {
        let e = parse("f(a=1, b='x', c=[1.5, -2e3], d={'k': (1,)}, e=None)").unwrap();
        let Expr::Call(f, args, kw) = e else { panic!() };
        assert_eq!((*f, args.len(), kw.len()), (Expr::Name("f".into()), 0, 5));
        assert_eq!(kw[2].1, Expr::List(vec![Expr::Float(1.5), Expr::Unary("-", Box::new(Expr::Float(2e3)))]));
        assert_eq!(kw[3].1, Expr::Dict(vec![(Expr::Str("k".into()), Expr::Tuple(vec![Expr::Int(1)]))]));
        assert!(matches!(parse("f(a=1), g(b=2)").unwrap(), Expr::Tuple(v) if v.len() == 2));
        assert_eq!(parse("'a' \"b\"").unwrap(), Expr::Str("ab".into()));
        assert_eq!(
            parse("0x1F + 1_000").unwrap(),
            Expr::Binary(Box::new(Expr::Int(31)), "+", Box::new(Expr::Int(1000)))
        );
        assert_eq!(parse(r"'\u00e9\n'").unwrap(), Expr::Str("é\n".into()));
        let deep = format!("f(a={}1{})", "[".repeat(100_000), "]".repeat(100_000));
        assert!(parse(&deep).unwrap_err().to_string().contains("nested"));
        assert!(parse(&format!("f(a={}1)", "-".repeat(100_000))).unwrap_err().to_string().contains("nested"));
        let wide = format!("f(a={}1{})", "[1 + 1 + 1 + 1 + ".repeat(63), " + 1]".repeat(63));
        assert!(parse(&wide).unwrap_err().to_string().contains("operators"));
        assert!(parse(&format!("f(a={}1{})", "[".repeat(63), "]".repeat(63))).is_ok());
        assert!(parse(&format!("f(a={}1{})", "[".repeat(64), "]".repeat(64))).is_err());
        assert!(parse(&format!("f(a=1{})", " + 1".repeat(60))).is_ok());
        assert!(parse(&format!("f(a=1{})", " + 1".repeat(100_000))).is_err());
        assert!(parse(&format!("f(a={}1)", "2 ** ".repeat(100_000))).is_err());
        for bad in ["f(a=1j)", "f(a=", " f()", "f()\ng()", "{1, 2}", "f(a=b'x')"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
