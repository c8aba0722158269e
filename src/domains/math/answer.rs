//! A math answer as a value: a number or polynomial ([`super::exact`]), True/False, a list, a
//! multiple-choice letter or a clock time; and the answer line read out of a model's text.
//! Gold comparison ([`same`]) is by value (`-4/14` is `-2/7`, `0.5` is `1/2`, `(x+1)**2` is
//! `x**2 + 2*x + 1`), except where the written digits are the answer (a number in another base).

use super::exact::{self, Poly, Rat};

/// A parsed answer.
#[derive(Clone, Debug, PartialEq)]
pub enum MathValue {
    /// A number or polynomial.
    Poly(Poly),
    /// True or False (also yes / no).
    Bool(bool),
    /// A comma-separated list, in its order.
    List(Vec<MathValue>),
    /// A multiple-choice letter (`c`, `(c)`).
    Choice(char),
    /// A clock time, minutes after midnight.
    Time(u32),
}

/// The value of an answer (None: none of these forms).
pub fn parse(text: &str) -> Option<MathValue> {
    let t = text.trim().trim_end_matches('.').trim();
    if t.is_empty() || t.len() > 400 {
        return None;
    }
    match t.to_ascii_lowercase().as_str() {
        "true" | "yes" => return Some(MathValue::Bool(true)),
        "false" | "no" => return Some(MathValue::Bool(false)),
        _ => {}
    }
    if let Some(m) = time(t) {
        return Some(MathValue::Time(m));
    }
    let inner = t.strip_prefix('(').and_then(|s| s.strip_suffix(')')).unwrap_or(t);
    if inner.len() == 1 && inner.chars().all(|c| c.is_ascii_lowercase()) && t != inner {
        return Some(MathValue::Choice(inner.chars().next().expect("one char")));
    }
    if t.contains(',') {
        return t
            .split(',')
            .map(|x| exact::parse(x.trim()).map(MathValue::Poly))
            .collect::<Option<Vec<_>>>()
            .map(MathValue::List);
    }
    exact::parse(t).map(MathValue::Poly)
}

/// `H:MM AM|PM` as minutes after midnight.
pub fn time(t: &str) -> Option<u32> {
    let (clock, half) = t.trim().rsplit_once(' ')?;
    let (h, m) = clock.split_once(':')?;
    let (h, m): (u32, u32) = (h.parse().ok()?, m.parse().ok()?);
    if !(1..=12).contains(&h) || m > 59 || m.to_string().len() > 2 {
        return None;
    }
    let pm = match half.to_ascii_uppercase().as_str() {
        "AM" => false,
        "PM" => true,
        _ => return None,
    };
    Some((h % 12 + if pm { 12 } else { 0 }) * 60 + m)
}

/// One word for a value's form (what `episodes.form` records).
pub fn form(v: Option<&MathValue>) -> &'static str {
    match v {
        None => "unparsed",
        Some(MathValue::Bool(_)) => "boolean",
        Some(MathValue::List(_)) => "list",
        Some(MathValue::Choice(_)) => "choice",
        Some(MathValue::Time(_)) => "time",
        Some(MathValue::Poly(p)) => match p.as_constant() {
            Some(r) if r.is_int() => "integer",
            Some(_) => "rational",
            None => "polynomial",
        },
    }
}

/// The value written canonically (numbers in lowest terms, polynomials expanded).
pub fn canonical(v: &MathValue) -> String {
    match v {
        MathValue::Poly(p) => p.to_string(),
        MathValue::Bool(b) => if *b { "True" } else { "False" }.into(),
        MathValue::List(l) => l.iter().map(canonical).collect::<Vec<_>>().join(", "),
        MathValue::Choice(c) => c.to_string(),
        MathValue::Time(m) => {
            format!("{}:{:02} {}", (m / 60 + 11) % 12 + 1, m % 60, if *m >= 720 { "PM" } else { "AM" })
        }
    }
}

/// Whether `answer` says what `gold` says, for a task of `module`. A number in another base
/// (`numbers__base_conversion`) is its digits, compared as written (case aside); a letter may be
/// written bare or in parentheses; everything else by value, and as text (spaces aside) where
/// the gold is none of the forms.
pub fn same(module: &str, gold: &str, answer: &str) -> bool {
    let squeeze = |s: &str| s.trim().trim_end_matches('.').split_whitespace().collect::<String>().to_ascii_lowercase();
    if module == "numbers__base_conversion" {
        return squeeze(gold) == squeeze(answer);
    }
    match (parse(gold), parse(answer)) {
        (Some(MathValue::Choice(g)), Some(a)) => a == MathValue::Choice(g) || bare_letter(answer) == Some(g),
        (Some(MathValue::Poly(g)), Some(MathValue::Choice(_))) if g.variables().len() == 1 && g.0.len() == 1 => {
            // A bare letter gold (`c`) parses as the variable c; the answer `(c)` is that choice.
            Some(MathValue::Choice(g.variables()[0])) == parse(answer) && squeeze(gold).len() == 1
        }
        (Some(g), Some(a)) => g == a,
        (None, _) => squeeze(gold) == squeeze(answer),
        (Some(_), None) => false,
    }
}

/// A single lowercase letter, bare.
fn bare_letter(s: &str) -> Option<char> {
    let t = s.trim().trim_end_matches('.');
    (t.len() == 1).then(|| t.chars().next()).flatten().filter(|c| c.is_ascii_lowercase())
}

/// The number a value holds, if it is one.
pub fn number(v: &Option<MathValue>) -> Option<Rat> {
    v.as_ref().and_then(constant)
}

/// The number `v` is, if it is one.
fn constant(v: &MathValue) -> Option<Rat> {
    match v {
        MathValue::Poly(p) => p.as_constant(),
        _ => None,
    }
}

/// The numbers of a list (or of one number), in order.
pub fn numbers(v: &Option<MathValue>) -> Option<Vec<Rat>> {
    match v {
        Some(MathValue::List(items)) => items.iter().map(constant).collect(),
        Some(v) => constant(v).map(|c| vec![c]),
        None => None,
    }
}

/// The integer a value holds, if it is one.
pub fn integer(v: &MathValue) -> Option<i128> {
    match v {
        MathValue::Poly(p) => p.as_constant().filter(|r| r.is_int()).map(Rat::numer),
        _ => None,
    }
}

/// The answer line of a model's text: the rest of the last line that starts with `Answer:` /
/// `Final answer:` (any case, Markdown bold aside), else the first non-empty line; without
/// `$`, `\boxed{...}`, surrounding backticks, quotes or a final period.
pub fn answer_line(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let labelled = lines.iter().rev().find_map(|l| {
        let plain = l.replace("**", "");
        let lower = plain.to_ascii_lowercase();
        ["final answer:", "answer:", "a:"]
            .iter()
            .find(|p| lower.starts_with(*p))
            .map(|p| plain[p.len()..].trim().to_string())
            .filter(|a| !a.is_empty())
    });
    let line = labelled.or_else(|| lines.first().map(|l| l.to_string()))?;
    let mut a = line.replace('$', "");
    if let Some(inner) = a.strip_prefix("\\boxed{").and_then(|s| s.strip_suffix('}')) {
        a = inner.to_string();
    }
    let a = a.trim().trim_matches('`').trim_matches('"').trim().trim_end_matches('.').trim().to_string();
    (!a.is_empty()).then_some(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_compare_by_value() {
        assert!(same("arithmetic__div", "19/117750", "38/235500"));
        assert!(same("arithmetic__mul", "65785.5", "131571/2"));
        assert!(!same("arithmetic__mul", "65785.5", "65785.6"));
        assert!(same("numbers__is_prime", "True", "yes"));
        assert!(!same("numbers__is_prime", "True", "False"));
        assert!(same("comparison__sort", "-40, -12, 5, 133", "-40,-12,5,133"));
        assert!(!same("comparison__sort", "-40, -12, 5, 133", "133, 5, -12, -40"));
        assert!(same("comparison__closest", "c", "(c)"));
        assert!(!same("comparison__closest", "c", "b"));
        assert!(same("measurement__time", "4:55 AM", "4:55 am"));
        assert!(!same("measurement__time", "4:55 AM", "4:55 PM"));
        assert!(same("numbers__base_conversion", "-2b", "-2B"));
        assert!(!same("numbers__base_conversion", "2b", "b2"));
        assert!(same("algebra__polynomial_roots", "4*(c - 8)*(c - 4)", "4*c**2 - 48*c + 128"));
    }

    #[test]
    fn the_answer_line_is_read_from_labels_and_markup() {
        assert_eq!(answer_line("Let me think.\nAnswer: 42").as_deref(), Some("42"));
        assert_eq!(answer_line("**Final answer:** $\\boxed{-2/7}$").as_deref(), Some("-2/7"));
        assert_eq!(answer_line("19.\nmore").as_deref(), Some("19"));
        assert_eq!(answer_line("  \n"), None);
        assert_eq!(canonical(&parse("16:05 PM").unwrap_or(MathValue::Bool(false))), "False");
        assert_eq!(canonical(&parse("4:05 pm").unwrap()), "4:05 PM");
    }
}
