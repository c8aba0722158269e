//! `cross-path`: the answer computed a second way. The model writes a short program for the
//! problem — shown the problem only, never the stored answer nor a reference — and the program
//! runs in the Python sandbox ([`crate::python`]: no file, socket or clock of the machine, fuel
//! and memory limits); the stored answer is checked against what it prints. Agreement is by value
//! ([`super::answer::same`]), with one allowance for the program's floating point: a printed
//! float (`0.4166666666666667`, `2e-06`) agrees with a number within a relative 1e-11 (or 1e-12
//! near zero): it is `5/12`, the rounded `0.4167` is not. A float whose bound reaches a quarter
//! (2.5e10 and beyond), too coarse to tell neighbouring integers apart, is no second path. The
//! channel is silent (no claim) when the text holds no program, the program fails or hits a
//! limit, or prints nothing readable as an answer: no second path, no disagreement. The
//! `selftest` stage runs it as a verifier (`v_<id>` = 1 when the paths agree).

use super::answer;
use crate::python::{PyLimits, Python};

/// One program's limits: 4 G instructions (about 16 interpreter starts), 256 MiB, 64 KiB of
/// output; the wall-clock backstop as the sandbox's default.
pub fn limits() -> PyLimits {
    PyLimits { fuel: 4_000_000_000, memory_bytes: 256 << 20, output_bytes: 64 << 10, ..PyLimits::default() }
}

/// The program in a model's text: its first fenced block, else the whole text, dedented; None
/// when nothing but blank lines remains.
pub fn program(text: &str) -> Option<String> {
    let block = crate::python::program::fenced(text).unwrap_or(text);
    let code = crate::python::program::dedent(block);
    (!code.trim().is_empty()).then(|| code.trim_end().to_string() + "\n")
}

/// The answer a program printed: its last non-blank line of output, without the brackets of a
/// printed Python list or tuple and the quotes of a printed string.
pub fn printed(stdout: &str) -> Option<String> {
    let line = stdout.lines().map(str::trim).rfind(|l| !l.is_empty())?;
    fn unwrap(s: &str, open: char, close: char) -> Option<&str> {
        s.strip_prefix(open).and_then(|s| s.strip_suffix(close)).map(str::trim)
    }
    let bare = unwrap(line, '[', ']')
        .or_else(|| unwrap(line, '(', ')').filter(|s| s.contains(',')))
        .or_else(|| unwrap(line, '\'', '\''))
        .or_else(|| unwrap(line, '"', '"'))
        .unwrap_or(line);
    Some(bare.to_string())
}

/// Whether the program's answer `printed` and the stored `stored` agree, for a task of `module`:
/// by value, item by item for lists, a printed float within float error (see the module); None
/// where the printed line cannot tell — a float too coarse to tell the two apart, or a base
/// conversion that printed no number.
pub fn agree(module: &str, printed: &str, stored: &str) -> Option<bool> {
    if module == "numbers__base_conversion" {
        return digits(printed).map(|p| answer::same(module, &p, stored));
    }
    if answer::same(module, printed, stored) {
        return Some(true);
    }
    let items: Vec<&str> = printed.split(',').map(str::trim).collect();
    let stored_items: Vec<&str> = stored.split(',').map(str::trim).collect();
    if items.len() == 1 || items.len() != stored_items.len() {
        return near(module, printed, stored);
    }
    let verdicts: Vec<Option<bool>> = items.iter().zip(&stored_items).map(|(p, s)| near(module, p, s)).collect();
    if verdicts.contains(&Some(false)) {
        Some(false)
    } else if verdicts.iter().all(|v| *v == Some(true)) {
        Some(true)
    } else {
        None
    }
}

/// One value: equal, or a printed float within float error of the stored number; None where the
/// float's error bound reaches a quarter and the two are within one of each other.
fn near(module: &str, printed: &str, stored: &str) -> Option<bool> {
    if answer::same(module, printed, stored) {
        return Some(true);
    }
    let float = printed.contains(['.', 'e', 'E']).then(|| printed.trim().parse::<f64>().ok()).flatten();
    let Some(p) = float.filter(|p| p.is_finite()) else { return Some(false) };
    let Some(s) = answer::number(&answer::parse(stored)).map(|r| r.numer() as f64 / r.denom() as f64) else {
        return Some(false);
    };
    let bound = (FLOAT_ERROR * p.abs().max(s.abs())).max(1e-12);
    if bound >= 0.25 && (p - s).abs() <= 1.0 {
        return None;
    }
    Some((p - s).abs() <= bound)
}

/// A number in another base as printed: a sign, then digits and letters, without Python's
/// `0b`/`0o`/`0x` prefix (`bin(26)` prints `0b11010`); None when the line is not one.
fn digits(printed: &str) -> Option<String> {
    let t = printed.trim();
    let (sign, rest) = t.strip_prefix('-').map_or(("", t), |r| ("-", r));
    let lower = rest.to_ascii_lowercase();
    let body = ["0b", "0o", "0x"].iter().find_map(|p| lower.strip_prefix(p)).unwrap_or(&lower);
    (!body.is_empty() && body.chars().all(|c| c.is_ascii_alphanumeric())).then(|| format!("{sign}{body}"))
}

/// The relative error allowed a printed float: a program's cancellation (`5558/(-1855) + 3`)
/// loses digits, so far more than a few units in the last place.
const FLOAT_ERROR: f64 = 1e-11;

/// The cross-path check of the stored answer `stored` (a task of `module`) against the program
/// in `text`: Some((agrees, what happened)), None when the channel cannot speak (see the module).
pub fn check(py: &Python, module: &str, stored: &str, text: &str, limits: &PyLimits) -> Option<(bool, String)> {
    let code = program(text)?;
    let o = py.run_code(&code, b"", limits);
    if !o.success() {
        return None;
    }
    let got = printed(&o.stdout)?;
    if answer::parse(&got).is_none() && module != "numbers__base_conversion" {
        return None;
    }
    let agrees = agree(module, &got, stored)?;
    Some((agrees, if agrees { String::new() } else { format!("the program printed {got:?}") }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printed_values_read_as_answers() {
        assert_eq!(printed("working\n[-1, 2, 4]\n\n").as_deref(), Some("-1, 2, 4"));
        assert_eq!(printed("(3, 5)").as_deref(), Some("3, 5"));
        assert_eq!(printed("(c)").as_deref(), Some("(c)"));
        assert_eq!(printed("'1010'").as_deref(), Some("1010"));
        assert_eq!(printed("\n  \n"), None);
    }

    #[test]
    fn floats_agree_within_float_error_and_not_beyond() {
        let agree = |p, s| agree("arithmetic__div", p, s);
        assert_eq!(agree("0.4166666666666667", "5/12"), Some(true));
        assert_eq!(agree("5/12", "10/24"), Some(true));
        assert_eq!(agree("0.4167", "5/12"), Some(false));
        assert_eq!(agree("0.3333333333333333", "0.3333333333"), Some(false));
        assert_eq!(agree("0.30000000000000004", "0.3"), Some(true));
        assert_eq!(agree("5.551115123125783e-17", "0"), Some(true));
        assert_eq!(agree("-17.0", "-17"), Some(true));
        assert_eq!(agree("2e-06", "0.000002"), Some(true));
        assert_eq!(agree("nan", "0"), Some(false));
        assert_eq!(agree("-52.999999999996895", "-53"), Some(true));
        assert_eq!(agree("-1234567.4", "(-1234567.4) + 1"), Some(false));
        // Too coarse to tell an integer from the next: silent, unless equal as written.
        assert_eq!(agree("-84429494335481.4", "(-84429494335481.4) + 1"), None);
        assert_eq!(agree("-84429494335481.4", "-84429494335481.4"), Some(true));
        assert_eq!(agree("1.2345678901234568e+17", "123456789012345678"), None);
        assert_eq!(agree("-1, 4, 2", "-1, 2, 4"), Some(false));
        assert_eq!(agree("-1, 2, 4", "-1, 2, 4"), Some(true));
        // Lists item by item; a wildly wrong coarse float still disagrees.
        assert_eq!(agree("0.3333333333333333, 2.0", "1/3, 2"), Some(true));
        assert_eq!(agree("0.3333333333333333, 3.0", "1/3, 2"), Some(false));
        assert_eq!(agree("30000000000.0", "5"), Some(false));
        // Another base: Python's prefix dropped, a sentence no answer.
        let base = |p, s| super::agree("numbers__base_conversion", p, s);
        assert_eq!(base("0b11010", "11010"), Some(true));
        assert_eq!(base("-0x1f", "-1f"), Some(true));
        assert_eq!(base("11011", "11010"), Some(false));
        assert_eq!(base("the answer is 11010", "11010"), None);
    }

    #[test]
    fn a_program_is_its_first_fence_dedented() {
        assert_eq!(program("```python\n  x = 1\n  print(x)\n```").as_deref(), Some("x = 1\nprint(x)\n"));
        assert_eq!(program("print(2)").as_deref(), Some("print(2)\n"));
        assert_eq!(program("```\n\n```"), None);
    }
}
