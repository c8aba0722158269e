//! The ways of writing a number or polynomial that [`super::exact`] reads beyond plain ASCII:
//! LaTeX fractions (`\frac{2}{7}`, `\dfrac`, `\tfrac`), `\cdot` / `\times` / `\div`, braces
//! (`x^{2}`), the signs `×` `·` `÷` `−`, and superscript powers (`u²`, `10⁻³`).

use std::borrow::Cow;

/// The LaTeX fraction commands, each read as `((numerator)/(denominator))`.
const FRACTIONS: [&str; 3] = ["\\frac", "\\dfrac", "\\tfrac"];

/// LaTeX commands read as an operator or as nothing.
const COMMANDS: [(&str, &str); 7] =
    [("\\cdot", "*"), ("\\times", "*"), ("\\div", "/"), ("\\left", ""), ("\\right", ""), ("\\,", ""), ("\\!", "")];

/// `text` with its LaTeX written plainly: fractions as quotients of parenthesised parts, the
/// commands of [`COMMANDS`] as their operators, braces as parentheses. Any other command is left
/// (and so no value); None where a fraction lacks its two `{...}` parts.
pub fn latex(text: &str) -> Option<Cow<'_, str>> {
    if !text.contains(['\\', '{', '}']) {
        return Some(Cow::Borrowed(text));
    }
    let mut s = text.to_string();
    for (command, plain) in COMMANDS {
        s = s.replace(command, plain);
    }
    while let Some((at, command)) = FRACTIONS.iter().filter_map(|f| s.find(f).map(|i| (i, f.len()))).min() {
        let (numerator, rest) = group(&s[at + command..])?;
        let (denominator, rest) = group(rest)?;
        s = format!("{}(({numerator})/({denominator})){rest}", &s[..at]);
    }
    Some(Cow::Owned(s.replace('{', "(").replace('}', ")")))
}

/// The inside of the balanced `{...}` that `s` starts with (spaces aside), and what follows it.
fn group(s: &str) -> Option<(&str, &str)> {
    let s = s.trim_start().strip_prefix('{')?;
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return Some((&s[..i], &s[i + 1..])),
            '}' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// The operator a sign stands for: `+ - * /` themselves, `−` (minus sign) `-`, `×` `·` `⋅` `*`,
/// `÷` `/`.
pub fn operator(c: char) -> Option<char> {
    match c {
        '+' | '-' | '*' | '/' => Some(c),
        '−' => Some('-'),
        '×' | '·' | '⋅' => Some('*'),
        '÷' => Some('/'),
        _ => None,
    }
}

/// The digit a superscript digit is (`²` is 2).
pub fn superscript(c: char) -> Option<u32> {
    match c {
        '⁰' => Some(0),
        '¹' => Some(1),
        '²' => Some(2),
        '³' => Some(3),
        '⁴'..='⁹' => Some(c as u32 - '⁴' as u32 + 4),
        _ => None,
    }
}

/// The power written in superscripts from `c[i]` (`⁻³`, `²`): its exponent and the index after
/// it (None: no superscript digit there).
pub fn superscript_power(c: &[char], i: usize) -> Option<(i64, usize)> {
    let (negative, start) = match c.get(i) {
        Some('⁻') => (true, i + 1),
        Some('⁺') => (false, i + 1),
        _ => (false, i),
    };
    let mut end = start;
    let mut e: i64 = 0;
    while let Some(d) = c.get(end).and_then(|&x| superscript(x)) {
        e = e.checked_mul(10)?.checked_add(i64::from(d))?;
        end += 1;
    }
    (end > start).then_some((if negative { -e } else { e }, end))
}

/// The exponent of a scientific numeral whose mantissa ends at `c[i]`: `e` or `E`, an optional
/// sign and digits, with no letter, digit or `.` right after (`2e3` is 2000, `2e` stays `2*e`,
/// `2e3x` is no numeral); and the index after it.
pub fn scientific(c: &[char], i: usize) -> Option<(i32, usize)> {
    if !matches!(c.get(i), Some('e' | 'E')) {
        return None;
    }
    let signed = matches!(c.get(i + 1), Some('+' | '-'));
    let start = i + 1 + usize::from(signed);
    let end = (start..c.len()).find(|&j| !c[j].is_ascii_digit()).unwrap_or(c.len());
    if end == start || end - start > 4 || c.get(end).is_some_and(|n| n.is_alphanumeric() || *n == '.') {
        return None;
    }
    let digits: i32 = c[start..end].iter().collect::<String>().parse().ok()?;
    Some((if c[i + 1] == '-' { -digits } else { digits }, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latex_reads_as_plain_text() {
        assert_eq!(latex("-\\frac{2}{7}").as_deref(), Some("-((2)/(7))"));
        assert_eq!(latex("\\dfrac{\\tfrac{1}{2}}{3}").as_deref(), Some("((((1)/(2)))/(3))"));
        assert_eq!(latex("3 \\cdot x^{2}").as_deref(), Some("3 * x^(2)"));
        assert_eq!(latex("\\frac{2}"), None);
        assert_eq!(latex("\\sqrt{2}").as_deref(), Some("\\sqrt(2)"));
    }

    #[test]
    fn superscripts_and_exponents_are_read_where_written_whole() {
        let c = |s: &str| s.chars().collect::<Vec<_>>();
        assert_eq!(superscript_power(&c("u²"), 1), Some((2, 2)));
        assert_eq!(superscript_power(&c("10⁻¹²"), 2), Some((-12, 5)));
        assert_eq!(superscript_power(&c("u⁻"), 1), None);
        assert_eq!(scientific(&c("15046e0"), 5), Some((0, 7)));
        assert_eq!(scientific(&c("6.95E-3"), 4), Some((-3, 7)));
        assert_eq!(scientific(&c("2e"), 1), None);
        assert_eq!(scientific(&c("2e3x"), 1), None);
        assert_eq!(scientific(&c("2e - 3"), 1), None);
    }
}
