//! The `lint` channel: the answer has the form its question asks for, read from the task's module
//! and question alone (no gold): a number, a decimal, a fraction in lowest terms, a polynomial in
//! the question's variables, True/False, a list in the order asked, one of the offered letters,
//! a clock time, digits of the asked base, one digit. It says nothing of whether the value is
//! right.

use super::answer::{self, MathValue};

/// The form a question asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum Form {
    /// An integer, written without `.` or `/`.
    Integer,
    /// An exact number written as an integer or a decimal (no `/`).
    Decimal,
    /// An integer or a fraction `a/b` in lowest terms (no `.`).
    Fraction,
    /// Any exact number.
    Number,
    /// A polynomial whose variables are among these.
    Polynomial(Vec<char>),
    /// True or False (also yes/no, 1/0).
    Boolean,
    /// Numbers separated by commas, ascending (or descending), as many as `Some(n)` when known.
    Sorted {
        /// Descending, not ascending.
        descending: bool,
        /// How many, when the question says.
        len: Option<usize>,
    },
    /// Distinct numbers, ascending (one number alone is a list of one).
    Roots,
    /// One of these letters (in any form [`answer::letter`] reads: `b`, `(b)`, `B`, ...).
    Choice(Vec<char>),
    /// A clock time (`H:MM AM|PM`, or on the 24-hour clock).
    Time,
    /// Digits of this base, with an optional `-`.
    Digits(u32),
    /// One decimal digit.
    Digit,
}

/// The variables of a question's expressions (single letters standing alone).
pub fn variables(question: &str) -> Vec<char> {
    let c: Vec<char> = question.chars().collect();
    let mut out: Vec<char> = (0..c.len())
        .filter(|&i| {
            c[i].is_ascii_lowercase()
                && (i == 0 || !c[i - 1].is_ascii_alphabetic())
                && c.get(i + 1).is_none_or(|n| !n.is_ascii_alphabetic() && *n != '\'')
        })
        .map(|i| c[i])
        .filter(|v| *v != 'a' || ["a*", "*a", "(a)"].iter().any(|p| question.contains(p)))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The letters offered as `(a) ... (b) ...`.
pub fn offered(question: &str) -> Vec<char> {
    ('a'..='z').filter(|l| question.contains(&format!("({l})"))).collect()
}

/// The form `question` of `module` asks for (None: lint cannot speak to it).
pub fn expected(module: &str, question: &str) -> Option<Form> {
    let q = question.trim();
    let yes_no = ["Is ", "Are ", "Do ", "Does "].iter().any(|p| q.starts_with(p));
    Some(match module {
        "algebra__linear_1d" | "algebra__linear_1d_composed" | "algebra__linear_2d" => Form::Number,
        "algebra__polynomial_roots" if q.starts_with("Factor ") => Form::Polynomial(variables(q)),
        "algebra__polynomial_roots" => Form::Roots,
        "algebra__sequence_next_term" | "arithmetic__add_sub_multiple" | "arithmetic__nearest_integer_root" => {
            Form::Integer
        }
        "algebra__sequence_nth_term" => {
            let v = q.find("'th term").and_then(|i| q[..i].chars().last())?;
            Form::Polynomial(vec![v])
        }
        "arithmetic__add_or_sub" | "arithmetic__mul" | "measurement__conversion" | "numbers__round_number" => {
            Form::Decimal
        }
        "arithmetic__div" | "arithmetic__mixed" | "arithmetic__mul_div_multiple" => Form::Fraction,
        "probability__swr_p_level_set" | "probability__swr_p_sequence" => Form::Fraction,
        "calculus__differentiate" | "polynomials__add" | "polynomials__collect" | "polynomials__expand" => {
            Form::Polynomial(variables(q))
        }
        "comparison__closest" | "comparison__kth_biggest" if !offered(q).is_empty() => Form::Choice(offered(q)),
        "comparison__closest" | "comparison__kth_biggest" => Form::Number,
        "comparison__pair" if yes_no => Form::Boolean,
        "comparison__pair" => Form::Number,
        "comparison__sort" => {
            let descending = q.contains("decreasing") || q.contains("descending");
            Form::Sorted { descending, len: sort_items(q) }
        }
        "measurement__time" if q.starts_with("How many minutes") => Form::Integer,
        "measurement__time" => Form::Time,
        "numbers__base_conversion" => Form::Digits(target_base(q)?),
        "numbers__div_remainder" | "numbers__gcd" | "numbers__lcm" | "polynomials__evaluate" => Form::Integer,
        "numbers__is_factor" | "numbers__is_prime" => Form::Boolean,
        "numbers__list_prime_factors" => Form::Sorted { descending: false, len: None },
        "numbers__place_value" => Form::Digit,
        _ => return None,
    })
}

/// How many numbers `Sort L in ... order.` / `Put L in ... order.` / `Sort L.` lists.
fn sort_items(q: &str) -> Option<usize> {
    let rest = q.strip_prefix("Sort ").or_else(|| q.strip_prefix("Put "))?;
    let list = rest.split(" in ").next()?.trim_end_matches('.');
    Some(list.split(',').count())
}

/// The `N` of `... in base N?` / `... to base N.`.
fn target_base(q: &str) -> Option<u32> {
    let i = q.rfind("base ")?;
    q[i + 5..].trim_end_matches(['.', '?']).trim().parse().ok().filter(|b| (2..=36).contains(b))
}

/// Whether `text` is written in `form` (the lint channel fires when it is not).
pub fn fits(form: &Form, text: &str) -> bool {
    let t = text.trim().trim_end_matches('.').trim();
    let value = answer::parse(t);
    let constant = |v: &Option<MathValue>| matches!(v, Some(MathValue::Poly(p)) if p.as_constant().is_some());
    match form {
        Form::Integer => value.as_ref().and_then(answer::integer).is_some() && !t.contains(['.', '/']),
        Form::Decimal => constant(&value) && !t.contains('/'),
        Form::Fraction => constant(&value) && !t.contains('.') && lowest_terms(t),
        Form::Number => constant(&value),
        Form::Polynomial(vars) => {
            matches!(&value, Some(MathValue::Poly(p)) if p.variables().iter().all(|v| vars.contains(v)))
        }
        Form::Boolean => matches!(value, Some(MathValue::Bool(_))) || t == "1" || t == "0",
        Form::Sorted { descending, len } => {
            let numbers = answer::numbers(&value);
            numbers.as_ref().is_some_and(|n| {
                let ordered = n.windows(2).all(|w| if *descending { w[0] >= w[1] } else { w[0] <= w[1] });
                ordered && len.is_none_or(|l| l == n.len())
            })
        }
        Form::Roots => answer::numbers(&value).is_some_and(|n| n.windows(2).all(|w| w[0] < w[1])),
        Form::Choice(letters) => answer::letter(t).is_some_and(|c| letters.contains(&c)),
        Form::Time => matches!(value, Some(MathValue::Time(_))),
        Form::Digits(base) => {
            let digits = t.strip_prefix('-').unwrap_or(t);
            !digits.is_empty()
                && digits.chars().all(|c| c.to_digit(36).is_some_and(|d| d < *base))
                && (digits == "0" || !digits.starts_with('0'))
        }
        Form::Digit => t.len() == 1 && t.chars().all(|c| c.is_ascii_digit()),
    }
}

/// Whether a written `a/b` (if any) is in lowest terms with `b > 1`.
fn lowest_terms(t: &str) -> bool {
    let Some((a, b)) = t.split_once('/') else { return true };
    match (a.trim().trim_start_matches('-').parse::<i128>(), b.trim().parse::<i128>()) {
        (Ok(a), Ok(b)) => b > 1 && super::exact::Rat::new(a, b).is_some_and(|r| r.denom() == b),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_follow_the_question() {
        let f = |m: &str, q: &str| expected(m, q).unwrap();
        assert!(fits(&f("arithmetic__div", "Divide 19 by 117750."), "19/117750"));
        assert!(!fits(&f("arithmetic__div", "Divide 19 by 117750."), "38/235500"));
        assert!(!fits(&f("arithmetic__div", "Divide 19 by 117750."), "0.000161"));
        assert!(fits(&f("comparison__sort", "Sort 5, 133, -40, -12 in increasing order."), "-40, -12, 5, 133"));
        assert!(!fits(&f("comparison__sort", "Sort 5, 133, -40, -12 in increasing order."), "133, 5, -12, -40"));
        assert!(!fits(&f("comparison__sort", "Sort 5, 133, -40, -12 in increasing order."), "-40, -12, 5"));
        assert!(fits(&f("algebra__sequence_nth_term", "What is the u'th term of -362, -367, -374?"), "-u**2 - 359"));
        assert!(!fits(&f("algebra__sequence_nth_term", "What is the u'th term of -362, -367, -374?"), "-n**2 - 359"));
        assert!(fits(&f("comparison__closest", "Which is the closest to 0?  (a) -259/2  (b) 5  (c) -2/7"), "c"));
        assert!(!fits(&f("comparison__closest", "Which is the closest to 0?  (a) -259/2  (b) 5  (c) -2/7"), "d"));
        assert!(fits(&f("numbers__base_conversion", "What is -54 (base 7) in base 14?"), "-2b"));
        assert!(!fits(&f("numbers__base_conversion", "What is -54 (base 7) in base 14?"), "-2z"));
        assert!(fits(&f("numbers__is_prime", "Is 33924721 a prime number?"), "False"));
        assert!(!fits(&f("numbers__is_prime", "Is 33924721 a prime number?"), "7"));
        assert!(fits(&f("measurement__time", "What is 462 minutes before 12:37 PM?"), "4:55 AM"));
        assert!(fits(&f("algebra__polynomial_roots", "Find k such that k**2 - 1 = 0."), "-1, 1"));
        assert!(!fits(&f("algebra__polynomial_roots", "Find k such that k**2 - 1 = 0."), "1, -1"));
        assert_eq!(variables("Find the first derivative of -4*j*n**2 - 3601*j*n wrt n."), vec!['j', 'n']);
    }
}
