//! The `units` channel: a unit conversion's answer, converted back, returns to the question's
//! quantity exactly (and is positive, as every quantity asked is). The units are the generator's
//! (length, mass, volume, time down to the second, and years to millennia with months): a
//! conversion between units of different dimensions is never asked. Quantities are read as
//! decimals (`7382.54`), fractions (`3/8 of a`) or number words (`seventeen quarters of a`).

use super::exact::{self, Rat};

/// Each unit: its names (plural, singular, symbol) and its size in its dimension's base unit,
/// as a fraction; and its dimension.
const UNITS: &[(&[&str], i128, i128, u8)] = &[
    (&["meters", "meter", "m"], 1, 1, 0),
    (&["kilometers", "kilometer", "km"], 1000, 1, 0),
    (&["centimeters", "centimeter", "cm"], 1, 100, 0),
    (&["millimeters", "millimeter", "mm"], 1, 1000, 0),
    (&["micrometers", "micrometer", "um"], 1, 1_000_000, 0),
    (&["nanometers", "nanometer", "nm"], 1, 1_000_000_000, 0),
    (&["seconds", "second", "s"], 1, 1, 1),
    (&["minutes", "minute"], 60, 1, 1),
    (&["hours", "hour"], 3600, 1, 1),
    (&["days", "day"], 86400, 1, 1),
    (&["weeks", "week"], 604_800, 1, 1),
    (&["milliseconds", "millisecond", "ms"], 1, 1000, 1),
    (&["microseconds", "microsecond", "us"], 1, 1_000_000, 1),
    (&["nanoseconds", "nanosecond", "ns"], 1, 1_000_000_000, 1),
    (&["years", "year"], 12, 1, 2),
    (&["decades", "decade"], 120, 1, 2),
    (&["centuries", "century"], 1200, 1, 2),
    (&["millennia", "millennium"], 12000, 1, 2),
    (&["months", "month"], 1, 1, 2),
    (&["kilograms", "kilogram", "kg"], 1_000_000_000_000, 1, 3),
    (&["tonnes", "tonne", "t"], 1_000_000_000_000_000, 1, 3),
    (&["grams", "gram", "g"], 1_000_000_000, 1, 3),
    (&["milligrams", "milligram", "mg"], 1_000_000, 1, 3),
    (&["micrograms", "microgram", "ug"], 1000, 1, 3),
    (&["nanograms", "nanogram", "ng"], 1, 1, 3),
    (&["litres", "litre", "l"], 1000, 1, 4),
    (&["millilitres", "millilitre", "ml"], 1, 1, 4),
];

/// A unit: its size in its dimension's base unit, and its dimension.
type Unit = (Rat, u8);

/// A unit's size and dimension by any of its names.
fn unit(name: &str) -> Option<Unit> {
    UNITS.iter().find(|(names, ..)| names.contains(&name)).and_then(|(_, n, d, dim)| Some((Rat::new(*n, *d)?, *dim)))
}

/// The question's quantity in the target unit: (value, from, to).
fn read(q: &str) -> Option<(Rat, Unit, Unit)> {
    let q = q.trim();
    let (quantity, target) = if let Some(rest) = q.strip_prefix("How many ") {
        let (target, quantity) = rest.strip_suffix('?')?.split_once(" are there in ")?;
        (quantity, target)
    } else if let Some(rest) = q.strip_prefix("What is ") {
        rest.strip_suffix('?')?.rsplit_once(" in ")?
    } else if let Some(rest) = q.strip_prefix("Convert ") {
        rest.strip_suffix('.')?.rsplit_once(" to ")?
    } else {
        return None;
    };
    let (value, from) = amount(quantity)?;
    let (from, to) = (unit(from)?, unit(target.trim())?);
    (from.1 == to.1).then_some((value, from, to))
}

/// `7382.54 years`, `429.625mm`, `3/8 of a milligram`, `seventeen quarters of a kilogram`.
fn amount(s: &str) -> Option<(Rat, &str)> {
    if let Some((value, name)) = s.split_once(" of a ") {
        let value = exact::parse(value).and_then(|p| p.as_constant()).or_else(|| words(value))?;
        return Some((value, name.trim()));
    }
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let value = exact::decimal(&s[..split])?;
    Some((value, s[split..].trim()))
}

const ONES: [&str; 20] = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteeen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];
const TENS: [&str; 10] = ["", "", "twenty", "thirty", "fourty", "fifty", "sixty", "seventy", "eighty", "ninety"];
const DENOMINATORS: [(&str, &str); 19] = [
    ("half", "halves"),
    ("third", "thirds"),
    ("quarter", "quarters"),
    ("fifth", "fifths"),
    ("sixth", "sixths"),
    ("seventh", "sevenths"),
    ("eighth", "eighths"),
    ("ninth", "ninths"),
    ("tenth", "tenths"),
    ("eleventh", "elevenths"),
    ("twelth", "twelths"),
    ("thirteenth", "thirteenths"),
    ("fourteenth", "fourteenths"),
    ("fifteenth", "fifteenths"),
    ("sixteenth", "sixteenths"),
    ("seventeenth", "seventeenths"),
    ("eighteenth", "eighteenths"),
    ("nineteenth", "nineteenths"),
    ("twentieth", "twentieths"),
];

/// `seven halves`, `fourty-three quarters`, `a third` as a number.
fn words(s: &str) -> Option<Rat> {
    let (numer, denom) = s.trim().rsplit_once(' ')?;
    let d = DENOMINATORS.iter().position(|(one, many)| *one == denom || *many == denom)? as i128 + 2;
    let n = match numer {
        "a" | "an" => 1,
        _ => numer.split('-').try_fold(0i128, |acc, w| {
            ONES.iter()
                .position(|x| *x == w)
                .or_else(|| TENS.iter().position(|x| !x.is_empty() && *x == w).map(|t| t * 10))
                .map(|v| acc + v as i128)
        })?,
    };
    Rat::new(n, d)
}

/// Whether the answer, converted back, is the question's quantity (None: not a conversion this
/// reads, so the channel is silent).
pub fn check(question: &str, answer: &str) -> Option<bool> {
    let (value, (from, _), (to, _)) = read(question)?;
    let a = exact::parse(answer.trim().trim_end_matches('.')).and_then(|p| p.as_constant());
    Some(a.is_some_and(|a| a.numer() >= 0 && a.times(to).and_then(|x| x.over(from)).is_some_and(|back| back == value)))
}

/// Whether [`check`] can speak to `question`.
pub fn speaks(question: &str) -> bool {
    read(question).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_return_to_the_question() {
        assert_eq!(check("How many micrograms are there in 3/8 of a milligram?", "375"), Some(true));
        assert_eq!(check("How many micrograms are there in 3/8 of a milligram?", "3750"), Some(false));
        assert_eq!(check("Convert 7382.54 years to months.", "88590.48"), Some(true));
        assert_eq!(check("What is fourty-three quarters of a millennium in decades?", "1075"), Some(true));
        assert_eq!(check("What is 429.625mm in meters?", "0.429625"), Some(true));
        assert_eq!(check("What is 0.0855557l in millilitres?", "85.5557"), Some(true));
        assert_eq!(check("What is 0.0855557l in millilitres?", "-85.5557"), Some(false));
        assert_eq!(check("What is 6.348861 weeks in nanoseconds?", "3839791132800000"), Some(true));
        assert_eq!(check("What is 1 + 1?", "2"), None);
    }
}
