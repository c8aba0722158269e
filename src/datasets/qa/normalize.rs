//! The normalisation rule of factual answers, used by gold scoring and the evidence channel:
//! Unicode compatibility decomposition with combining marks dropped (São Tomé -> sao tome),
//! lower case, every character that is not a letter or digit a space, the articles a / an / the
//! dropped (unless nothing else is left: the answer "A" stays "a"), whitespace collapsed. A prediction matches an answer when the normalised answer
//! equals the normalised prediction or occurs in it as a run of whole words ("Ouagadougou is the
//! capital" matches "Ouagadougou"), unless the prediction hedges between candidates with the
//! word "or" that the answer itself does not hold ("Paris or Lyon" matches neither; the
//! `no_answer` channel flags such a hedge too).

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// `text` normalised (see the module).
pub fn normalize(text: &str) -> String {
    let folded: String = text
        .nfkd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect();
    let words: Vec<&str> = folded.split_whitespace().collect();
    let kept: Vec<&str> = words.iter().copied().filter(|w| !matches!(*w, "a" | "an" | "the")).collect();
    if kept.is_empty() { words.join(" ") } else { kept.join(" ") }
}

/// Whether normalised `needle` occurs in normalised `hay` as a run of whole words.
pub fn contains_words(hay: &str, needle: &str) -> bool {
    !needle.is_empty() && format!(" {hay} ").contains(&format!(" {needle} "))
}

/// Whether normalised `text` hedges between candidates: it holds the word "or".
pub fn hedges(text: &str) -> bool {
    contains_words(text, "or")
}

/// Whether `prediction` matches `answer` or one of `aliases` (see the module).
pub fn matches(prediction: &str, answer: &str, aliases: &[String]) -> bool {
    let p = normalize(prediction);
    std::iter::once(answer).chain(aliases.iter().map(String::as_str)).any(|a| {
        let a = normalize(a);
        contains_words(&p, &a) && (!hedges(&p) || hedges(&a))
    })
}
