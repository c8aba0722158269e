//! Exact arithmetic for the math domain: rationals with 128-bit parts and polynomials with
//! rational coefficients in single-letter variables. An answer such as `-2/7`, `0.25`,
//! `4*(c - 8)*(c - 4)` or `2x^2 + 3` is parsed into one of these and compared by value, so two
//! spellings of one number or one polynomial are equal and nothing is rounded. Everything is
//! bounded: a number that overflows 128 bits, an exponent above [`MAX_POWER`] or a polynomial
//! of more than [`MAX_TERMS`] terms is no value (the comparison then falls back to the text).

use std::collections::BTreeMap;
use std::fmt;

use super::notation;

/// The largest exponent a parsed power may have.
pub const MAX_POWER: u32 = 64;
/// The most terms a polynomial may have.
pub const MAX_TERMS: usize = 4096;

/// A rational in lowest terms with a positive denominator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rat {
    n: i128,
    d: i128,
}

/// The greatest common divisor of `a` and `b`, non-negative.
pub fn gcd(mut a: i128, mut b: i128) -> i128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.abs()
}

impl Rat {
    /// `n / d` in lowest terms (None: `d` is 0 or a part overflows).
    pub fn new(n: i128, d: i128) -> Option<Rat> {
        if d == 0 {
            return None;
        }
        let g = gcd(n, d).max(1);
        let (n, d) = (n / g, d / g);
        if d < 0 { Some(Rat { n: n.checked_neg()?, d: d.checked_neg()? }) } else { Some(Rat { n, d }) }
    }
    /// The integer `n`.
    pub fn int(n: i128) -> Rat {
        Rat { n, d: 1 }
    }
    /// Its numerator.
    pub fn numer(self) -> i128 {
        self.n
    }
    /// Its denominator (positive).
    pub fn denom(self) -> i128 {
        self.d
    }
    /// Whether it is an integer.
    pub fn is_int(self) -> bool {
        self.d == 1
    }
    /// Whether it is zero.
    pub fn is_zero(self) -> bool {
        self.n == 0
    }
    /// The sum.
    pub fn plus(self, o: Rat) -> Option<Rat> {
        let g = gcd(self.d, o.d).max(1);
        let d = (self.d / g).checked_mul(o.d)?;
        let n = self.n.checked_mul(o.d / g)?.checked_add(o.n.checked_mul(self.d / g)?)?;
        Rat::new(n, d)
    }
    /// The negation.
    pub fn negated(self) -> Option<Rat> {
        Some(Rat { n: self.n.checked_neg()?, d: self.d })
    }
    /// The difference.
    pub fn minus(self, o: Rat) -> Option<Rat> {
        self.plus(o.negated()?)
    }
    /// The product.
    pub fn times(self, o: Rat) -> Option<Rat> {
        let (g1, g2) = (gcd(self.n, o.d).max(1), gcd(o.n, self.d).max(1));
        Rat::new((self.n / g1).checked_mul(o.n / g2)?, (self.d / g2).checked_mul(o.d / g1)?)
    }
    /// The quotient (None: `o` is zero).
    pub fn over(self, o: Rat) -> Option<Rat> {
        self.times(Rat::new(o.d, o.n)?)
    }
    /// `self` to the power `e`.
    pub fn pow(self, e: u32) -> Option<Rat> {
        Rat::new(self.n.checked_pow(e)?, self.d.checked_pow(e)?)
    }
}

/// By value (cross-multiplied; past 128 bits, as floating point).
impl Ord for Rat {
    fn cmp(&self, o: &Rat) -> std::cmp::Ordering {
        match (self.n.checked_mul(o.d), o.n.checked_mul(self.d)) {
            (Some(a), Some(b)) => a.cmp(&b),
            _ => (self.n as f64 / self.d as f64).total_cmp(&(o.n as f64 / o.d as f64)),
        }
    }
}

impl PartialOrd for Rat {
    fn partial_cmp(&self, o: &Rat) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl fmt::Display for Rat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.d == 1 { write!(f, "{}", self.n) } else { write!(f, "{}/{}", self.n, self.d) }
    }
}

/// A monomial: each variable with its exponent, by variable.
pub type Monomial = Vec<(char, u32)>;

/// A polynomial with rational coefficients: monomial -> nonzero coefficient.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Poly(pub BTreeMap<Monomial, Rat>);

impl Poly {
    /// The constant `r`.
    pub fn constant(r: Rat) -> Poly {
        let mut m = BTreeMap::new();
        if !r.is_zero() {
            m.insert(Vec::new(), r);
        }
        Poly(m)
    }
    /// The variable `v`.
    pub fn var(v: char) -> Poly {
        Poly(BTreeMap::from([(vec![(v, 1)], Rat::int(1))]))
    }
    /// Its value when it is a constant.
    pub fn as_constant(&self) -> Option<Rat> {
        match self.0.len() {
            0 => Some(Rat::int(0)),
            1 => self.0.get(&Vec::new()).copied(),
            _ => None,
        }
    }
    /// The variables it uses.
    pub fn variables(&self) -> Vec<char> {
        let mut v: Vec<char> = self.0.keys().flat_map(|m| m.iter().map(|(c, _)| *c)).collect();
        v.sort_unstable();
        v.dedup();
        v
    }
    /// Its degree in `v`.
    pub fn degree_in(&self, v: char) -> u32 {
        self.0.keys().flat_map(|m| m.iter().filter(|(c, _)| *c == v).map(|(_, e)| *e)).max().unwrap_or(0)
    }
    fn add_term(&mut self, m: Monomial, c: Rat) -> Option<()> {
        let sum = match self.0.get(&m) {
            Some(old) => old.plus(c)?,
            None => c,
        };
        if sum.is_zero() {
            self.0.remove(&m);
        } else {
            self.0.insert(m, sum);
        }
        (self.0.len() <= MAX_TERMS).then_some(())
    }
    /// The sum.
    pub fn plus(&self, o: &Poly) -> Option<Poly> {
        let mut out = self.clone();
        for (m, c) in &o.0 {
            out.add_term(m.clone(), *c)?;
        }
        Some(out)
    }
    /// The negation.
    pub fn negated(&self) -> Option<Poly> {
        Some(Poly(self.0.iter().map(|(m, c)| Some((m.clone(), c.negated()?))).collect::<Option<_>>()?))
    }
    /// The difference.
    pub fn minus(&self, o: &Poly) -> Option<Poly> {
        self.plus(&o.negated()?)
    }
    /// The product.
    pub fn times(&self, o: &Poly) -> Option<Poly> {
        let mut out = Poly::default();
        for (m1, c1) in &self.0 {
            for (m2, c2) in &o.0 {
                out.add_term(mul_monomials(m1, m2)?, c1.times(*c2)?)?;
            }
        }
        Some(out)
    }
    /// The quotient by a nonzero constant (None: `o` is not a nonzero constant).
    pub fn over(&self, o: &Poly) -> Option<Poly> {
        let c = o.as_constant()?;
        Some(Poly(self.0.iter().map(|(m, x)| Some((m.clone(), x.over(c)?))).collect::<Option<_>>()?))
    }
    /// `self` to the power `e` (at most [`MAX_POWER`]).
    pub fn pow(&self, e: u32) -> Option<Poly> {
        if e > MAX_POWER {
            return None;
        }
        if let Some(c) = self.as_constant() {
            return Some(Poly::constant(c.pow(e)?));
        }
        let mut out = Poly::constant(Rat::int(1));
        for _ in 0..e {
            out = out.times(self)?;
        }
        Some(out)
    }
    /// `self` with `v` replaced by the value `x`.
    pub fn substitute(&self, v: char, x: Rat) -> Option<Poly> {
        let mut out = Poly::default();
        for (m, c) in &self.0 {
            let mut coef = *c;
            let mut rest = Vec::new();
            for &(var, e) in m {
                if var == v {
                    coef = coef.times(x.pow(e)?)?;
                } else {
                    rest.push((var, e));
                }
            }
            out.add_term(rest, coef)?;
        }
        Some(out)
    }
    /// The `k`-th derivative in `v`.
    pub fn derivative(&self, v: char, k: u32) -> Option<Poly> {
        let mut p = self.clone();
        for _ in 0..k {
            let mut out = Poly::default();
            for (m, c) in &p.0 {
                let Some(&(_, e)) = m.iter().find(|(var, _)| *var == v) else { continue };
                let rest: Monomial = m
                    .iter()
                    .filter_map(|&(var, x)| if var != v { Some((var, x)) } else { (x > 1).then_some((var, x - 1)) })
                    .collect();
                out.add_term(rest, c.times(Rat::int(i128::from(e)))?)?;
            }
            p = out;
        }
        Some(p)
    }
}

fn mul_monomials(a: &Monomial, b: &Monomial) -> Option<Monomial> {
    let mut m: BTreeMap<char, u32> = a.iter().copied().collect();
    for &(v, e) in b {
        let x = m.entry(v).or_insert(0);
        *x = x.checked_add(e)?;
    }
    Some(m.into_iter().collect())
}

impl fmt::Display for Poly {
    /// Highest total degree first; `3*x**2*y - 1/2*x + 4`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return write!(f, "0");
        }
        let mut terms: Vec<(&Monomial, &Rat)> = self.0.iter().collect();
        terms.sort_by(|a, b| {
            let deg = |m: &Monomial| m.iter().map(|(_, e)| *e).sum::<u32>();
            deg(b.0).cmp(&deg(a.0)).then_with(|| a.0.cmp(b.0))
        });
        for (i, (m, c)) in terms.into_iter().enumerate() {
            let negative = c.numer() < 0;
            let abs = Rat::new(c.numer().abs(), c.denom()).expect("nonzero denominator");
            match (i, negative) {
                (0, true) => write!(f, "-")?,
                (0, false) => {}
                (_, true) => write!(f, " - ")?,
                (_, false) => write!(f, " + ")?,
            }
            let vars: Vec<String> =
                m.iter().map(|(v, e)| if *e == 1 { v.to_string() } else { format!("{v}**{e}") }).collect();
            match (abs == Rat::int(1) && !vars.is_empty(), vars.is_empty()) {
                (true, _) => write!(f, "{}", vars.join("*"))?,
                (false, true) => write!(f, "{abs}")?,
                (false, false) => write!(f, "{abs}*{}", vars.join("*"))?,
            }
        }
        Ok(())
    }
}

/// Parse an expression: numbers (integers, decimals and scientific numerals such as `1.5e-3`,
/// exactly), single-letter variables, `+ - * / ** ^`, parentheses, and a number written before
/// a variable or a parenthesis (`2x`, `3(x + 1)`); also the notations of [`notation`]: LaTeX
/// fractions, `×` `·` `÷` `−`, superscript powers. Division only by a constant. None: not such
/// an expression, or past the bounds.
pub fn parse(text: &str) -> Option<Poly> {
    let tokens = tokens(&notation::latex(text)?)?;
    let mut p = Parser { t: &tokens, i: 0, depth: 0 };
    let e = p.sum()?;
    (p.i == tokens.len()).then_some(e)
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(Rat),
    Var(char),
    Op(char),
    Pow,
    Open,
    Close,
}

fn tokens(text: &str) -> Option<Vec<Tok>> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        match c[i] {
            ' ' | '\t' => i += 1,
            '0'..='9' | '.' => {
                let start = i;
                while i < c.len() && (c[i].is_ascii_digit() || c[i] == '.') {
                    i += 1;
                }
                let mut n = decimal(&c[start..i].iter().collect::<String>())?;
                if let Some((e, end)) = notation::scientific(&c, i) {
                    n = n.times(ten_to(e)?)?;
                    i = end;
                }
                out.push(Tok::Num(n));
            }
            '*' if c.get(i + 1) == Some(&'*') => {
                out.push(Tok::Pow);
                i += 2;
            }
            '^' => {
                out.push(Tok::Pow);
                i += 1;
            }
            '(' => {
                out.push(Tok::Open);
                i += 1;
            }
            ')' => {
                out.push(Tok::Close);
                i += 1;
            }
            v if v.is_ascii_lowercase() => {
                // Single letters only: `sqrt`, `pi` are not polynomials.
                if c.get(i + 1).is_some_and(|n| n.is_ascii_alphabetic()) {
                    return None;
                }
                out.push(Tok::Var(v));
                i += 1;
            }
            s => {
                if let Some(op) = notation::operator(s) {
                    out.push(Tok::Op(op));
                    i += 1;
                } else {
                    // A power in superscripts (`u²`, `10⁻³`): `**`, its sign, its digits.
                    let (e, end) = notation::superscript_power(&c, i)?;
                    out.push(Tok::Pow);
                    if e < 0 {
                        out.push(Tok::Op('-'));
                    }
                    out.push(Tok::Num(Rat::int(i128::from(e.unsigned_abs()))));
                    i = end;
                }
            }
        }
        if out.len() > 4 * MAX_TERMS {
            return None;
        }
    }
    Some(out)
}

/// `10` to the power `e`, exactly.
fn ten_to(e: i32) -> Option<Rat> {
    let p = Rat::int(10).pow(e.unsigned_abs())?;
    if e < 0 { Rat::new(1, p.numer()) } else { Some(p) }
}

/// A decimal numeral exactly (`0.08` is 8/100).
pub fn decimal(s: &str) -> Option<Rat> {
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    if whole.is_empty() && frac.is_empty() || frac.contains('.') || s.len() > 36 {
        return None;
    }
    let digits = format!("{whole}{frac}");
    let n: i128 = if digits.is_empty() { 0 } else { digits.parse().ok()? };
    Rat::new(n, 10i128.checked_pow(u32::try_from(frac.len()).ok()?)?)
}

struct Parser<'a> {
    t: &'a [Tok],
    i: usize,
    depth: u32,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.t.get(self.i)
    }
    fn sum(&mut self) -> Option<Poly> {
        let mut acc = self.product()?;
        while let Some(Tok::Op(op @ ('+' | '-'))) = self.peek().cloned() {
            self.i += 1;
            let rhs = self.product()?;
            acc = if op == '+' { acc.plus(&rhs)? } else { acc.minus(&rhs)? };
        }
        Some(acc)
    }
    fn product(&mut self) -> Option<Poly> {
        let mut acc = self.unary()?;
        loop {
            match self.peek() {
                Some(Tok::Op('*')) => {
                    self.i += 1;
                    acc = acc.times(&self.unary()?)?;
                }
                Some(Tok::Op('/')) => {
                    self.i += 1;
                    acc = acc.over(&self.unary()?)?;
                }
                // Implicit product after a number or a closing parenthesis: `2x`, `3(x+1)`, `(x+1)(x-1)`.
                Some(Tok::Var(_) | Tok::Open) if matches!(self.t.get(self.i - 1), Some(Tok::Num(_) | Tok::Close)) => {
                    acc = acc.times(&self.power()?)?;
                }
                _ => return Some(acc),
            }
        }
    }
    fn unary(&mut self) -> Option<Poly> {
        match self.peek() {
            Some(Tok::Op('-')) => {
                self.i += 1;
                self.unary()?.negated()
            }
            Some(Tok::Op('+')) => {
                self.i += 1;
                self.unary()
            }
            _ => self.power(),
        }
    }
    fn power(&mut self) -> Option<Poly> {
        let base = self.atom()?;
        if self.peek() != Some(&Tok::Pow) {
            return Some(base);
        }
        self.i += 1;
        let e = self.exponent()?;
        let p = base.pow(u32::try_from(e.unsigned_abs()).ok()?)?;
        if e < 0 { Poly::constant(Rat::int(1)).over(&p) } else { Some(p) }
    }
    /// An integer exponent: `3`, `-3`, or a parenthesised constant (`(-3)`, from `^{-3}`).
    fn exponent(&mut self) -> Option<i128> {
        let e = match self.peek() {
            Some(Tok::Open) => self.atom()?.as_constant()?,
            Some(Tok::Op('-')) => {
                self.i += 1;
                self.exponent_number()?.negated()?
            }
            _ => self.exponent_number()?,
        };
        e.is_int().then(|| e.numer())
    }
    fn exponent_number(&mut self) -> Option<Rat> {
        let Some(Tok::Num(e)) = self.peek().cloned() else { return None };
        self.i += 1;
        Some(e)
    }
    fn atom(&mut self) -> Option<Poly> {
        let t = self.peek()?.clone();
        self.i += 1;
        match t {
            Tok::Num(r) => Some(Poly::constant(r)),
            Tok::Var(v) => Some(Poly::var(v)),
            Tok::Open => {
                self.depth += 1;
                if self.depth > 64 {
                    return None;
                }
                let e = self.sum()?;
                self.depth -= 1;
                (self.peek() == Some(&Tok::Close)).then(|| self.i += 1)?;
                Some(e)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Poly {
        parse(s).unwrap_or_else(|| panic!("{s} does not parse"))
    }

    #[test]
    fn spellings_of_one_value_are_equal_and_others_are_not() {
        assert_eq!(p("-2/7"), p("-4/14"));
        assert_eq!(p("0.25"), p("1/4"));
        assert_eq!(p("4*(c - 8)*(c - 4)"), p("4*c**2 - 48*c + 128"));
        assert_eq!(p("2x^2 + 3"), p("3 + 2*x**2"));
        assert_eq!(p("(y - 19)*(11*y + 5)/3"), p("11*y**2/3 - 68*y - 95/3"));
        assert_ne!(p("2*x**2 + 3"), p("2*x**2 + 4"));
        assert_ne!(p("x"), p("y"));
        assert_eq!(p("-6990296.92"), Poly::constant(Rat::new(-699029692, 100).unwrap()));
        let r = |n, d| Rat::new(n, d).unwrap();
        assert!(r(-3, 8) < r(-1, 5) && r(-1, 5) < r(-2, 17) && r(-2, 17) < r(0, 1) && r(1, 3) > r(1, 4));
    }

    #[test]
    fn hostile_inputs_are_no_value() {
        for s in
            ["x**100", "99999999999999999999999999999999999999999", "(x+1)**64*(y+1)**64", "sqrt(2)", "1/0", "2**-0"]
        {
            let _ = parse(s);
        }
        assert!(parse("x**100").is_none());
        assert!(parse("1/0").is_none());
        assert!(parse("1/x").is_none());
        assert!(parse(&"(".repeat(200)).is_none());
    }

    #[test]
    fn substitution_and_derivatives_are_exact() {
        assert_eq!(p("3*x + 2").substitute('x', Rat::int(3)).unwrap(), p("11"));
        assert_eq!(p("-4*j*n**2 - 3601*j*n - 42094*j").derivative('n', 1).unwrap(), p("-8*j*n - 3601*j"));
        assert_eq!(p("x**3").derivative('x', 2).unwrap().to_string(), "6*x");
        assert_eq!(p("-x**2/2 + 3").to_string(), "-1/2*x**2 + 3");
    }
}
