//! The factual domain's answer line and its three answer-free channels (one implementation each,
//! used live by the loop): `no_answer`, `unsupported`, `format`. The rules are in docs/domains.md.

use super::FactObs;
use crate::datasets::qa::FactTask;
use crate::datasets::qa::normalize::{hedges, normalize};
use crate::seam::{Channels, Fired};

/// The answer in an executor's text: its first non-empty line, without Markdown emphasis, a
/// lead-in label (`A:`, `Answer:`, `The answer to the question is:`, `The answer is`),
/// surrounding quotes or a final period. None when there is no line, or the first line starts
/// another `Question:` / `Q:` (the model went on with the examples instead of answering).
pub fn answer_line(text: &str) -> Option<String> {
    let deco: &[char] = &['*', '_', '`', '#', '>', ' '];
    let mut line = text.lines().map(|l| l.trim_matches(deco)).find(|l| !l.is_empty())?;
    let lower = line.to_ascii_lowercase();
    if lower.starts_with("question:") || lower.starts_with("q:") {
        return None;
    }
    // Lead-ins may stack ("A: The answer is Paris"): strip while one is there.
    loop {
        let lower = line.to_ascii_lowercase();
        let start = if lower.starts_with("a:") {
            2
        } else if let Some(i) = lower.find("answer") {
            let rest = &lower[i..];
            match (rest.find(':'), rest.find(" is ")) {
                (Some(c), _) => i + c + 1,
                (None, Some(j)) => i + j + 4,
                (None, None) => 0,
            }
        } else {
            0
        };
        if start == 0 {
            break;
        }
        line = line[start..].trim_matches(deco);
    }
    let a = line.trim_matches(['"', '\'', ' ']).trim_end_matches('.').trim();
    (!a.is_empty()).then(|| a.to_string())
}

/// Normalised phrases that mean the model gave no answer (a refusal or a hedge), matched at the
/// start of the normalised answer.
pub const NO_ANSWER: &[&str] = &[
    "i don t know",
    "i do not know",
    "i m not sure",
    "i am not sure",
    "not sure",
    "unknown",
    "unsure",
    "no answer",
    "n a",
    "none",
    "cannot",
    "can t",
    "i cannot",
    "i can t",
    "unable",
    "i m unable",
    "i am unable",
    "sorry",
    "it is not possible",
    "there is no",
];

/// Every channel on one episode: `no_answer` also fires on an answer that hedges between
/// candidates ("Paris or Lyon").
pub fn channels(task: &FactTask, answer: Option<&str>, obs: &FactObs) -> Channels {
    let norm = answer.map(normalize).unwrap_or_default();
    let hedge = NO_ANSWER
        .iter()
        .find(|p| norm == **p || norm.starts_with(&format!("{p} ")))
        .map(|h| h.to_string())
        .or_else(|| hedges(&norm).then(|| "several candidates ('or')".to_string()));
    let no_answer = norm.is_empty() || hedge.is_some();
    let unsupported = !no_answer && obs.in_evidence == Some(false);
    let format = !no_answer && answer.is_some_and(|a| !fits(&task.answer_type, a));
    Channels(vec![
        Fired { name: "no_answer", fired: no_answer, detail: hedge },
        Fired {
            name: "unsupported",
            fired: unsupported,
            detail: unsupported.then(|| serde_json::to_string(&obs.evidence_ids).expect("json")),
        },
        Fired { name: "format", fired: format, detail: format.then(|| format!("not a {}", task.answer_type)) },
    ])
}

/// Whether `answer` is of the type asked for: a number holds a digit; a year a 3- or 4-digit
/// number; a code a word of three capital letters; a symbol a word of one capital letter and up
/// to two small ones; a name a letter; text anything.
pub fn fits(answer_type: &str, answer: &str) -> bool {
    let words = || answer.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty());
    match answer_type {
        "number" => answer.chars().any(|c| c.is_ascii_digit()),
        "year" => words().any(|w| (3..=4).contains(&w.len()) && w.chars().all(|c| c.is_ascii_digit())),
        "code" => words().any(|w| w.len() == 3 && w.chars().all(|c| c.is_ascii_uppercase())),
        "symbol" => words().any(|w| {
            let mut c = w.chars();
            c.next().is_some_and(|f| f.is_ascii_uppercase()) && w.len() <= 3 && c.all(|x| x.is_ascii_lowercase())
        }),
        "name" => answer.chars().any(char::is_alphabetic),
        _ => true,
    }
}
