//! The `substitute` channel: where a question has a solution that can be checked without its
//! answer, check it exactly (rationals, polynomials with rational coefficients). An equation's
//! root substituted back; a system's value leaves the other equations consistent; a list of roots
//! is every distinct rational root, ascending; a factorisation multiplied out is the question's
//! polynomial; an n-th term formula gives every listed term; a gcd divides both numbers with
//! coprime quotients; an lcm is a common multiple with coprime quotients; a remainder lies in
//! range and leaves a multiple; prime factors are prime, divide the number and exhaust it.
//! [`check`] is None where the question matches none of these templates (the channel is silent).

use super::answer::{self, MathValue};
use super::exact::{self, Poly, Rat, gcd};

/// Whether `answer` is a checked solution of `question` (None: no check applies).
pub fn check(module: &str, question: &str, answer: &str) -> Option<bool> {
    let q = question.trim();
    let value = answer::parse(answer);
    match module {
        "algebra__linear_1d" | "algebra__linear_2d" => {
            let (eqs, v) = solve_question(q)?;
            Some(answer::number(&value).is_some_and(|x| consistent(&eqs, v, x)))
        }
        "algebra__polynomial_roots" => match q.strip_prefix("Factor ") {
            Some(e) => {
                let p = exact::parse(e.trim_end_matches('.'))?;
                Some(matches!(&value, Some(MathValue::Poly(a)) if *a == p))
            }
            None => {
                let (eqs, v) = solve_question(q)?;
                let [(l, r)] = eqs.as_slice() else { return None };
                let roots = distinct_rational_roots(&l.minus(r)?, v)?;
                Some(answer::numbers(&value).is_some_and(|a| a == roots))
            }
        },
        "algebra__sequence_nth_term" => {
            let i = q.find("'th term of ")?;
            let v = q[..i].chars().last()?;
            let terms: Vec<Rat> = q[i + 12..]
                .trim_end_matches(['?', '.'])
                .split(',')
                .map(|t| exact::parse(t.trim())?.as_constant())
                .collect::<Option<_>>()?;
            (terms.len() >= 3).then_some(())?;
            Some(matches!(&value, Some(MathValue::Poly(p)) if nth_term_fits(p, v, &terms)))
        }
        "numbers__gcd" => {
            let [a, b] = integers(q)[..] else { return None };
            let c = int(&value);
            Some(c.is_some_and(|c| c > 0 && a % c == 0 && b % c == 0 && gcd(a / c, b / c) == 1))
        }
        "numbers__lcm" => {
            let [a, b] = if q.contains("denominator") { denominators(q)? } else { integers(q)[..].try_into().ok()? };
            let (a, b) = (a.abs(), b.abs());
            let c = int(&value);
            Some(c.is_some_and(|c| c > 0 && a > 0 && b > 0 && c % a == 0 && c % b == 0 && gcd(c / a, c / b) == 1))
        }
        "numbers__div_remainder" => {
            let [p, d] = integers(q)[..] else { return None };
            let r = int(&value);
            Some(r.is_some_and(|r| d != 0 && (0..d.abs()).contains(&r) && (p - r) % d == 0))
        }
        "numbers__list_prime_factors" => {
            let [n] = integers(q)[..] else { return None };
            (n > 1 && n < 10_000_000_000_000).then_some(())?;
            let factors =
                answer::numbers(&value).and_then(|l| l.iter().map(|r| r.is_int().then_some(r.numer())).collect());
            Some(factors.is_some_and(|f: Vec<i128>| prime_factors_of(&f, n)))
        }
        _ => None,
    }
}

/// The equations and the asked variable of a "solve" question, in the generator's templates:
/// `Solve EQ for v.`, `Solve EQ.`, `What is v in EQ?`, `Find v such that EQ.`, `Let EQ.
/// Calculate v.` (EQ: equations separated by `, `).
pub fn solve_question(q: &str) -> Option<(Vec<(Poly, Poly)>, char)> {
    let letter = |s: &str| {
        let s = s.trim();
        (s.len() == 1 && s.chars().all(|c| c.is_ascii_lowercase())).then(|| s.chars().next()).flatten()
    };
    let (eq, v) = if let Some(rest) = q.strip_prefix("Solve ") {
        let rest = rest.strip_suffix('.')?;
        match rest.rsplit_once(" for ") {
            Some((eq, v)) => (eq, letter(v)),
            None => (rest, None),
        }
    } else if let Some(rest) = q.strip_prefix("What is ") {
        let (v, eq) = rest.strip_suffix('?')?.split_once(" in ")?;
        (eq, letter(v))
    } else if let Some(rest) = q.strip_prefix("Find ").or_else(|| q.strip_prefix("Determine ")) {
        let (v, eq) = ["such that", "given that", "so that"].iter().find_map(|w| rest.split_once(&format!(" {w} ")))?;
        (eq.strip_suffix('.')?, letter(v.trim_end_matches(',')))
    } else if let Some(rest) = q.strip_prefix("Let ").or_else(|| q.strip_prefix("Suppose ")) {
        let (eq, ask) = rest.split_once(". ")?;
        let ask = ask.strip_prefix("What is ").or_else(|| ask.strip_prefix("Calculate "))?;
        (eq, letter(ask.trim_end_matches(['?', '.'])))
    } else {
        return None;
    };
    let eqs: Vec<(Poly, Poly)> = eq
        .split(", ")
        .map(|e| {
            let (l, r) = e.split_once('=')?;
            Some((exact::parse(l)?, exact::parse(r)?))
        })
        .collect::<Option<_>>()?;
    let v = match v {
        Some(v) => v,
        None => {
            let mut vars: Vec<char> = eqs.iter().flat_map(|(l, r)| [l.variables(), r.variables()].concat()).collect();
            vars.sort_unstable();
            vars.dedup();
            let [v] = vars[..] else { return None };
            v
        }
    };
    Some((eqs, v))
}

/// Whether `v = x` leaves the equations solvable: each becomes linear (or constant) in at most
/// one other variable, and they agree on it.
fn consistent(eqs: &[(Poly, Poly)], v: char, x: Rat) -> bool {
    let Some(rest) = eqs.iter().map(|(l, r)| l.minus(r)?.substitute(v, x)).collect::<Option<Vec<Poly>>>() else {
        return false;
    };
    let mut other: Option<Rat> = None;
    for p in &rest {
        if let Some(c) = p.as_constant() {
            if !c.is_zero() {
                return false;
            }
            continue;
        }
        // a*u + b = 0 in the one remaining variable.
        let [u] = p.variables()[..] else { return false };
        if p.degree_in(u) != 1 {
            return false;
        }
        let a = p.0.get(&vec![(u, 1)]).copied().unwrap_or(Rat::int(0));
        let b = p.0.get(&Vec::new()).copied().unwrap_or(Rat::int(0));
        let Some(sol) = b.negated().and_then(|nb| nb.over(a)) else { return false };
        match other {
            Some(s) if s != sol => return false,
            _ => other = Some(sol),
        }
    }
    true
}

/// The distinct rational roots of `p` (univariate in `v`), ascending (None: not univariate in
/// `v`, or coefficients too large to search).
pub fn distinct_rational_roots(p: &Poly, v: char) -> Option<Vec<Rat>> {
    if p.variables().iter().any(|x| *x != v) || p.as_constant().is_some() {
        return None;
    }
    let deg = p.degree_in(v);
    let coef = |e: u32| p.0.get(&if e == 0 { Vec::new() } else { vec![(v, e)] }).copied().unwrap_or(Rat::int(0));
    let scale = (0..=deg).map(coef).try_fold(1i128, |l, c| l.checked_mul(c.denom() / gcd(l, c.denom()).max(1)))?;
    let ints: Vec<i128> = (0..=deg).map(|e| coef(e).times(Rat::int(scale)).map(Rat::numer)).collect::<Option<_>>()?;
    let low = ints.iter().position(|c| *c != 0)?;
    let (a0, an) = (ints[low], ints[deg as usize]);
    let mut roots = if low > 0 { vec![Rat::int(0)] } else { Vec::new() };
    for p_ in divisors(a0)? {
        for q_ in divisors(an)? {
            for s in [1, -1] {
                let r = Rat::new(s * p_, q_)?;
                if !roots.contains(&r) && p.substitute(v, r)?.as_constant().is_some_and(Rat::is_zero) {
                    roots.push(r);
                }
            }
        }
    }
    roots.sort();
    Some(roots)
}

/// The positive divisors of `n` (None: `n` too large to search).
fn divisors(n: i128) -> Option<Vec<i128>> {
    let n = n.abs();
    if n == 0 || n > 100_000_000_000_000 {
        return None;
    }
    let mut out = Vec::new();
    let mut i = 1;
    while i * i <= n {
        if n % i == 0 {
            out.push(i);
            if i != n / i {
                out.push(n / i);
            }
        }
        i += 1;
    }
    Some(out)
}

/// Whether `p` (a polynomial in `v` of degree at most `terms.len() - 2`) gives `terms` at
/// `v = 1, 2, ...`; with that degree bound the formula is unique.
fn nth_term_fits(p: &Poly, v: char, terms: &[Rat]) -> bool {
    p.variables().iter().all(|x| *x == v)
        && (p.degree_in(v) as usize) + 2 <= terms.len()
        && terms.iter().enumerate().all(|(i, t)| {
            p.substitute(v, Rat::int(i as i128 + 1)).and_then(|x| x.as_constant()).is_some_and(|x| x == *t)
        })
}

/// Whether `factors` are the distinct primes of `n`, ascending.
fn prime_factors_of(factors: &[i128], n: i128) -> bool {
    let mut rest = n;
    for w in factors.windows(2) {
        if w[0] >= w[1] {
            return false;
        }
    }
    for &f in factors {
        if f < 2 || rest % f != 0 || !is_prime(f) {
            return false;
        }
        while rest % f == 0 {
            rest /= f;
        }
    }
    rest == 1
}

/// Primality by trial division (called on divisors of a number below 10^13).
pub fn is_prime(n: i128) -> bool {
    if n < 2 {
        return false;
    }
    let mut i = 2;
    while i * i <= n {
        if n % i == 0 {
            return false;
        }
        i += 1;
    }
    true
}

/// The integers written in `q` (a `-` right before a digit is a sign; parts of decimals and
/// fractions are left out).
pub fn integers(q: &str) -> Vec<i128> {
    let c: Vec<char> = q.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        if c[i].is_ascii_digit() {
            let start = if i > 0 && c[i - 1] == '-' { i - 1 } else { i };
            let mut j = i;
            while j < c.len() && c[j].is_ascii_digit() {
                j += 1;
            }
            let part_of_more = (start > 0 && matches!(c[start - 1], '.' | '/'))
                || (j + 1 < c.len() && matches!(c[j], '.' | '/') && c[j + 1].is_ascii_digit());
            if let (false, Ok(n)) = (part_of_more, c[start..j].iter().collect::<String>().parse()) {
                out.push(n);
            }
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// The two denominators of "the common denominator of a/b and c/d".
fn denominators(q: &str) -> Option<[i128; 2]> {
    let ds: Vec<i128> = q
        .split('/')
        .skip(1)
        .map(|s| s.chars().take_while(char::is_ascii_digit).collect::<String>().parse().ok())
        .collect::<Option<_>>()?;
    ds.try_into().ok()
}

fn int(v: &Option<MathValue>) -> Option<i128> {
    v.as_ref().and_then(answer::integer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solutions_check_without_the_answer() {
        let c = |m: &str, q: &str, a: &str| check(m, q, a);
        assert_eq!(c("algebra__linear_1d", "Solve 2679 = 127*r + 14*r for r.", "19"), Some(true));
        assert_eq!(c("algebra__linear_1d", "Solve 2679 = 127*r + 14*r for r.", "20"), Some(false));
        let q2 = "Solve 38*v - 39*v - 22 = 4*w, -2*w - 36 = 3*v for w.";
        assert_eq!(c("algebra__linear_2d", q2, "-3"), Some(true));
        assert_eq!(c("algebra__linear_2d", q2, "-4"), Some(false));
        let r = "Find k such that -k**4 + 203*k**3 + 6009*k**2 - 12623*k + 6412 = 0.";
        assert_eq!(c("algebra__polynomial_roots", r, "-28, 1, 229"), Some(true));
        assert_eq!(c("algebra__polynomial_roots", r, "-28, 229"), Some(false));
        assert_eq!(c("algebra__polynomial_roots", "Factor 4*c**2 - 48*c + 128.", "4*(c - 8)*(c - 4)"), Some(true));
        assert_eq!(c("algebra__polynomial_roots", "Factor 4*c**2 - 48*c + 128.", "4*(c - 8)*(c + 4)"), Some(false));
        let s = "What is the u'th term of -362, -367, -374, -383, -394?";
        assert_eq!(c("algebra__sequence_nth_term", s, "-u**2 - 2*u - 359"), Some(true));
        assert_eq!(c("algebra__sequence_nth_term", s, "-u**2 - 2*u - 358"), Some(false));
        assert_eq!(c("numbers__gcd", "What is the highest common divisor of 141552 and 144?", "144"), Some(true));
        assert_eq!(c("numbers__gcd", "What is the highest common divisor of 141552 and 144?", "72"), Some(false));
        assert_eq!(c("numbers__lcm", "What is the common denominator of 93/196 and 69/350?", "4900"), Some(true));
        assert_eq!(c("numbers__lcm", "What is the common denominator of 93/196 and 69/350?", "9800"), Some(false));
        assert_eq!(c("numbers__div_remainder", "What is the remainder when 534 is divided by 137?", "123"), Some(true));
        assert_eq!(
            c("numbers__list_prime_factors", "List the prime factors of 508728.", "2, 3, 11, 41, 47"),
            Some(true)
        );
        assert_eq!(c("numbers__list_prime_factors", "List the prime factors of 508728.", "2, 3, 11, 41"), Some(false));
        assert_eq!(c("arithmetic__add_or_sub", "What is 1 + 1?", "2"), None);
    }
}
