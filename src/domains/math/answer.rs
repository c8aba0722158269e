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
    /// A multiple-choice letter (`(c)`, `c)`, `C`, `Option C`), lowercase.
    Choice(char),
    /// A clock time, minutes after midnight.
    Time(u32),
}

/// The value of an answer (None: none of these forms). True/False are also yes/no; a time is
/// `H:MM` with `AM`/`PM` (`am`, `a.m.`, spaced or not), or without on the 24-hour clock
/// (`04:55`, `16:55`); a letter is a choice when marked (`(b)`, `b)`, `Option b`) or a capital
/// (`B`) — a bare lowercase letter is the variable; a list is separated by `,` or `;`, its last
/// item perhaps by `and` (`2, 7 and 2381`).
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
    if let Some(c) = choice(t, false) {
        return Some(MathValue::Choice(c));
    }
    let items = items(t);
    if items.len() > 1 {
        return items
            .into_iter()
            .map(|x| exact::parse(x).map(MathValue::Poly))
            .collect::<Option<_>>()
            .map(MathValue::List);
    }
    exact::parse(t).map(MathValue::Poly)
}

/// The items of a list: split at `,` and `;`, and at ` and ` (an item's leading `and` aside, as
/// in `2, 7, and 2381`).
fn items(t: &str) -> Vec<&str> {
    t.split([',', ';'])
        .flat_map(|part| {
            let part = part.trim();
            part.strip_prefix("and ").unwrap_or(part).split(" and ")
        })
        .map(str::trim)
        .collect()
}

/// A clock time as minutes after midnight: `H:MM` with a half (`AM`, `am`, `a.m.`, `PM`, ...,
/// spaced or not; H from 1 to 12), or without one on the 24-hour clock (H from 0 to 23).
pub fn time(t: &str) -> Option<u32> {
    let lower = t.trim().trim_end_matches('.').to_ascii_lowercase();
    let half = [("am", false), ("a.m", false), ("pm", true), ("p.m", true)]
        .into_iter()
        .find_map(|(s, pm)| lower.strip_suffix(s).map(|clock| (clock, pm)));
    let clock = half.map_or(lower.as_str(), |(c, _)| c).trim();
    let (h, m) = clock.split_once(':')?;
    let digits =
        |s: &str, n: std::ops::RangeInclusive<usize>| n.contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(h, 1..=2) || !digits(m, 2..=2) {
        return None;
    }
    let (h, m): (u32, u32) = (h.parse().ok()?, m.parse().ok()?);
    let hour = match half {
        Some((_, pm)) => (1..=12).contains(&h).then(|| h % 12 + if pm { 12 } else { 0 }),
        None => (h <= 23).then_some(h),
    };
    (m <= 59).then_some(hour? * 60 + m)
}

/// The letter a choice names: `(b)`, `b)`, `(B)`, `B`, `Option B`, `option (b)`, `Choice: b`;
/// a bare lowercase `b` too where `bare`.
fn choice(t: &str, bare: bool) -> Option<char> {
    let t = t.trim().trim_end_matches('.').trim();
    let lower = t.to_ascii_lowercase();
    let named = ["option", "choice"].iter().find_map(|w| lower.strip_prefix(w)).filter(|r| r.starts_with([' ', ':']));
    let rest = named.map_or(t, |r| t[t.len() - r.len()..].trim_start_matches(':').trim());
    let inner = rest.strip_prefix('(').unwrap_or(rest).strip_suffix(')');
    let marked = inner.is_some() || named.is_some();
    let mut chars = inner.unwrap_or(rest).chars();
    let (Some(c), None) = (chars.next(), chars.next()) else { return None };
    (c.is_ascii_alphabetic() && (marked || bare || c.is_ascii_uppercase())).then(|| c.to_ascii_lowercase())
}

/// The letter an answer names, in any form [`choice`] reads, a bare lowercase letter included.
pub fn letter(answer: &str) -> Option<char> {
    choice(answer, true)
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
/// (`numbers__base_conversion`) is its digits, compared as written (case aside); a letter gold
/// (`(c)`, or a bare `c` in a `comparison__` module, where letters name the offered choices) is
/// met by that letter in any form [`letter`] reads; a True/False gold also by `1`/`0`;
/// everything else by value, and as text (spaces aside) where the gold is none of the forms.
pub fn same(module: &str, gold: &str, answer: &str) -> bool {
    let squeeze = |s: &str| s.trim().trim_end_matches('.').split_whitespace().collect::<String>().to_ascii_lowercase();
    if module == "numbers__base_conversion" {
        return squeeze(gold) == squeeze(answer);
    }
    let g = parse(gold);
    if let Some(c) = choice_gold(module, gold, g.as_ref()) {
        return letter(answer) == Some(c);
    }
    match (g, value(answer)) {
        (Some(MathValue::Bool(g)), Some(MathValue::Poly(a))) => a.as_constant() == Some(Rat::int(i128::from(g))),
        (Some(g), Some(a)) => g == a,
        (None, _) => squeeze(gold) == squeeze(answer),
        (Some(_), None) => false,
    }
}

/// The letter a gold names: a choice (`(c)`), or a bare letter where the module's letters are
/// choices (`comparison__closest`, `comparison__kth_biggest`).
fn choice_gold(module: &str, gold: &str, value: Option<&MathValue>) -> Option<char> {
    match value? {
        MathValue::Choice(c) => Some(*c),
        MathValue::Poly(_) if module.starts_with("comparison__") => choice(gold, true),
        _ => None,
    }
}

/// An answer's value where the gold is no letter: a marked letter (`(c)`) is then the
/// expression it spells (the variable c), if any.
fn value(answer: &str) -> Option<MathValue> {
    match parse(answer) {
        Some(MathValue::Choice(_)) => exact::parse(answer.trim().trim_end_matches('.')).map(MathValue::Poly),
        v => v,
    }
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

/// The labels an answer line may start with, lowercase.
const LABELS: [&str; 3] = ["final answer", "answer", "a"];

/// The answer line of a model's text: the rest of the last line that starts with `Answer:` /
/// `Final answer:` (any case, Markdown bold around the label aside) or, where that is empty, the
/// line after it; else the first non-empty line; without its markup ([`unmarked`]).
pub fn answer_line(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let labelled = (0..lines.len()).rev().find_map(|i| {
        let rest = unmarked(labelled(lines[i])?);
        let rest = if rest.is_empty() { unmarked(lines.get(i + 1)?) } else { rest };
        (!rest.is_empty()).then_some(rest)
    });
    let a = labelled.or_else(|| lines.first().map(|l| unmarked(l)))?;
    (!a.is_empty()).then_some(a)
}

/// The rest of a line labelled `Answer:` / `Final answer:` / `A:`, where the label may be bold
/// (`**Answer:**`, `**Answer**:`) or a heading (`## Answer:`).
fn labelled(line: &str) -> Option<&str> {
    let l = line.trim_start_matches(['*', '#', ' ']);
    let lower = l.to_ascii_lowercase();
    LABELS
        .iter()
        .find_map(|p| lower.starts_with(p).then(|| l[p.len()..].trim_start_matches('*').strip_prefix(':')).flatten())
}

/// Markup around an answer, as (opening, closing) pairs.
const WRAPPERS: [(&str, &str); 3] = [("\\boxed{", "}"), ("\\(", "\\)"), ("\\[", "\\]")];

/// An answer without its markup: every `$`; then, repeatedly at its edges, `\boxed{...}`,
/// `\(...\)`, `\[...\]`, Markdown bold and italics (`*`), backticks, quotes and a final period. Only
/// the edges: no expression starts or ends with `*`, and inside one (`u**3`) it is a power.
fn unmarked(text: &str) -> String {
    let mut a = text.replace('$', "");
    loop {
        let t = a.trim().trim_matches(['*', '`', '"']).trim().trim_end_matches('.').trim();
        let t = WRAPPERS.iter().find_map(|(o, c)| t.strip_prefix(o)?.strip_suffix(c)).unwrap_or(t);
        if t.len() == a.len() {
            return a;
        }
        a = t.to_string();
    }
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

    #[test]
    fn bold_is_markup_at_the_edges_and_a_power_inside() {
        for text in ["Answer: u**3 + u**2 - 225", "**Answer:** u**3 + u**2 - 225", "**Answer: u**3 + u**2 - 225**"] {
            assert_eq!(answer_line(text).as_deref(), Some("u**3 + u**2 - 225"), "{text}");
        }
        for text in ["**42**", "Answer: **42**", "**Answer**: 42", "## Answer: `42`.", "**Answer:**\n42"] {
            assert_eq!(answer_line(text).as_deref(), Some("42"), "{text}");
        }
    }

    #[test]
    fn numbers_read_in_every_common_notation() {
        let right = [
            ("15046", "15046e0"),
            ("0.00695", "6.95E-3"),
            ("-4000", "-4e+3"),
            ("2/7", "\\frac{2}{7}"),
            ("-41/22", "-\\dfrac{41}{22}"),
            ("-41/22", "\\tfrac{-41}{22}"),
            ("2/7", "2÷7"),
            ("-3", "−3"),
            ("u**2 - 1", "u² − 1"),
            ("2*x**3", "2·x³"),
            ("0.001", "10⁻³"),
            ("3*x**2", "3x^{2}"),
        ];
        for (gold, answer) in right {
            assert!(same("m", gold, answer), "{answer} is {gold}");
        }
        let wrong = [
            ("15046", "15046e1"),
            ("0.00695", "6.95E-4"),
            ("2/7", "\\frac{7}{2}"),
            ("2/7", "2÷8"),
            ("u**2 - 1", "u³ - 1"),
            ("0.001", "10⁻²"),
            ("2*e - 3", "2e-3"),
        ];
        for (gold, answer) in wrong {
            assert!(!same("m", gold, answer), "{answer} is not {gold}");
        }
        assert_eq!(parse("2e"), parse("2*e"));
    }

    #[test]
    fn lists_booleans_letters_and_times_read_in_their_common_forms() {
        let cases = [
            (
                "numbers__list_prime_factors",
                "2, 7, 2381",
                ["2; 7; 2381", "2, 7 and 2381", "2, 7, and 2381"],
                "2, 7 and 2383",
            ),
            ("numbers__is_prime", "True", ["1", "yes", "True."], "0"),
            ("numbers__is_factor", "False", ["0", "no", "false"], "1"),
            ("comparison__kth_biggest", "b", ["B", "b)", "(B)"], "C"),
            ("comparison__closest", "c", ["Option C", "option (c)", "C."], "Option B"),
            ("measurement__time", "4:55 AM", ["04:55", "4:55 a.m.", "4:55AM"], "4:55 p.m."),
            ("measurement__time", "4:28 PM", ["16:28", "4:28 p.m.", "04:28 pm"], "4:28"),
        ];
        for (module, gold, right, wrong) in cases {
            for answer in right {
                assert!(same(module, gold, answer), "{answer} is {gold} ({module})");
            }
            assert!(!same(module, gold, wrong), "{wrong} is not {gold} ({module})");
        }
        // A number gold is not met by a boolean, nor a variable by a capital.
        assert!(!same("numbers__place_value", "1", "True"));
        assert!(!same("polynomials__collect", "j", "J"));
        assert!(same("polynomials__collect", "j", "(j)"));
        assert_eq!(parse("24:00"), None);
        assert_eq!(parse("4:5 AM"), None);
    }
}
