//! Forced choice over HTTP: score each of a request's `choices` from an OpenAI-compatible
//! server's log-probabilities, with the chat template applied by the server as it applies it.
//!
//! The choices' common prefix, less its trailing whitespace (`VERDICT:` of `VERDICT: CORRECT` /
//! `VERDICT: INCORRECT`), is sent as the start of the assistant's turn (`continue_final_message:
//! true`, `add_generation_prompt: false`: vLLM's and SGLang's chat extension; llama.cpp's
//! `llama-server` continues a final assistant message by default, its `prefill_assistant`), which
//! the server continues with its own chat template. Servers that do neither (OpenAI's API, Ollama)
//! close the prefix as a finished turn, so choices with a common prefix need one of those;
//! choices that differ from their first character send no prefix and work with any server that
//! returns logprobs. One token is asked for with `logprobs: true, top_logprobs: 20`. A
//! choice's score is the log-probability of the likeliest top token its remaining text starts
//! with; a choice with no such token scores -inf. Choice sets this cannot tell apart are refused:
//! a choice that is all prefix (`Yes` / `Yes, but`), a top token that starts two choices' rest
//! (`1` / `10`), or two best choices with equal scores. The answer is the best choice, in the local
//! backend's format (`CHOICE\n(forced choice by log-likelihood: A = -0.105; B = -2.303)`), so
//! the margin between the two is kept in the calls table and the response cache. A server that
//! returns no log-probabilities, or none that starts any choice, is refused with an error that
//! says so (the call is recorded as failed, never guessed).

use crate::error::Fault;
use serde_json::{Value, json};

/// How many alternatives per position the request asks for (OpenAI's maximum).
pub const TOP_LOGPROBS: u32 = 20;

/// The longest common prefix of `choices`, cut at a character boundary.
pub fn common_prefix(choices: &[String]) -> &str {
    let Some(first) = choices.first() else { return "" };
    let mut end = first.len();
    for c in &choices[1..] {
        end = end.min(first.bytes().zip(c.bytes()).take_while(|(a, b)| a == b).count());
    }
    while !first.is_char_boundary(end) {
        end -= 1;
    }
    &first[..end]
}

/// The part of the common prefix sent as the assistant's start: without its trailing whitespace,
/// which tokenizers join to the next word (` CORRECT`). Sent as `VERDICT: `, the model sees a
/// lone space token and llama.cpp's server puts digits first; sent as `VERDICT:`, ` COR` / ` IN`.
pub fn sent_prefix(choices: &[String]) -> &str {
    common_prefix(choices).trim_end()
}

/// `body` (a chat request) turned into the forced-choice request for `choices`.
pub fn request(mut body: Value, choices: &[String]) -> Value {
    let prefix = sent_prefix(choices);
    if !prefix.is_empty() {
        if let Some(m) = body["messages"].as_array_mut() {
            m.push(json!({"role": "assistant", "content": prefix}));
        }
        body["continue_final_message"] = json!(true);
        body["add_generation_prompt"] = json!(false);
    }
    body["max_tokens"] = json!(1);
    body["temperature"] = json!(0.0);
    body["logprobs"] = json!(true);
    body["top_logprobs"] = json!(TOP_LOGPROBS);
    if let Some(o) = body.as_object_mut() {
        o.remove("stop");
        o.remove("top_p");
    }
    body
}

/// The choice a response picks, in the local backend's text format, with every score; or why
/// the response cannot decide.
pub fn answer(response: &Value, choices: &[String]) -> std::result::Result<String, Fault> {
    let top = response["choices"][0]["logprobs"]["content"][0]["top_logprobs"].as_array().ok_or_else(|| {
        Fault::new(
            "the server returned no log-probabilities (choices[0].logprobs.content[0].top_logprobs): forced choice \
         over HTTP needs a server that returns logprobs (vLLM, SGLang); generate instead (drop `choices`)",
        )
    })?;
    let prefix = sent_prefix(choices).len();
    let rests: Vec<&str> = choices.iter().map(|c| &c[prefix..]).collect();
    if let Some(c) = choices.iter().zip(&rests).find(|(_, r)| r.trim().is_empty()) {
        return Err(Fault::new(format!("choice '{}' is all common prefix: nothing to score it by", c.0)));
    }
    let tokens: Vec<(&str, f64)> =
        top.iter().filter_map(|t| Some((t["token"].as_str()?, t["logprob"].as_f64()?))).collect();
    // Leading whitespace is the tokenizer's business: ` COR` and `COR` both start ` CORRECT`.
    let starts = |rest: &str, tok: &str| {
        let (rest, tok) = (rest.trim_start(), tok.trim_start());
        !tok.is_empty() && rest.starts_with(tok)
    };
    if let Some((tok, _)) = tokens.iter().find(|(tok, _)| rests.iter().filter(|r| starts(r, tok)).count() > 1) {
        return Err(Fault::new(format!(
            "token '{tok}' starts more than one choice: these choices cannot be told apart by one token"
        )));
    }
    let scores: Vec<f64> = rests
        .iter()
        .map(|rest| tokens.iter().filter(|(tok, _)| starts(rest, tok)).map(|t| t.1).fold(f64::NEG_INFINITY, f64::max))
        .collect();
    if scores.iter().all(|s| s.is_infinite()) {
        let seen: Vec<&str> = top.iter().filter_map(|t| t["token"].as_str()).collect();
        return Err(Fault::new(format!(
            "none of the server's top {} tokens after '{}' starts a choice (tokens: {seen:?})",
            top.len(),
            &choices[0][..prefix]
        )));
    }
    let best = first_best(&scores);
    if (0..choices.len()).any(|i| i != best && scores[i] == scores[best]) {
        return Err(Fault::new(format!("two choices score {:.3}: a tie is not decided by list order", scores[best])));
    }
    Ok(answer_text(choices, &scores, best))
}

/// The index of the highest score, the first on a tie.
pub fn first_best(scores: &[f64]) -> usize {
    (0..scores.len()).fold(0, |b, i| if scores[i] > scores[b] { i } else { b })
}

/// A forced-choice answer as every backend writes it: the chosen choice, then a line with each
/// choice's score (`CHOICE\n(forced choice by log-likelihood: A = -0.105; B = -2.303)`), so the
/// margin is kept in the calls table and the response cache ([`margin`] reads it back).
pub fn answer_text(choices: &[String], scores: &[f64], best: usize) -> String {
    let listed: Vec<String> = choices.iter().zip(scores).map(|(c, s)| format!("{c} = {s:.3}")).collect();
    format!("{}\n(forced choice by log-likelihood: {})", choices[best], listed.join("; "))
}

/// The margin recorded in a forced-choice answer: the first choice's log-likelihood minus the
/// second's (None when `text` is not a forced-choice answer of two scored choices).
pub fn margin(text: &str) -> Option<f64> {
    let scores = text.split_once("(forced choice by log-likelihood: ")?.1.trim_end().strip_suffix(')')?;
    let v: Vec<f64> = scores
        .split("; ")
        .map(|s| s.rsplit_once(" = ").and_then(|(_, x)| x.trim().parse::<f64>().ok()))
        .collect::<Option<_>>()?;
    (v.len() == 2).then(|| v[0] - v[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choices() -> Vec<String> {
        vec!["VERDICT: CORRECT".into(), "VERDICT: INCORRECT".into()]
    }

    #[test]
    fn the_common_prefix_is_sent_as_the_assistants_start() {
        assert_eq!(common_prefix(&choices()), "VERDICT: ");
        let b = request(
            json!({"messages": [{"role": "user", "content": "q"}], "stop": ["\n"], "max_tokens": 9}),
            &choices(),
        );
        assert_eq!(b["messages"][1], json!({"role": "assistant", "content": "VERDICT:"}));
        assert_eq!((b["max_tokens"].as_u64(), b["logprobs"].as_bool(), b.get("stop")), (Some(1), Some(true), None));
    }

    #[test]
    fn first_tokens_decide_and_the_margin_is_kept() {
        let r = json!({"choices": [{"logprobs": {"content": [{"top_logprobs": [
            {"token": " IN", "logprob": -0.5}, {"token": "CORRECT", "logprob": -1.5}, {"token": "C", "logprob": -2.0}
        ]}]}}]});
        let text = answer(&r, &choices()).unwrap();
        assert!(text.starts_with("VERDICT: INCORRECT\n"), "{text}");
        assert!((margin(&text).unwrap() - (-1.0)).abs() < 1e-9, "{text}");
        let none = answer(&json!({"choices": [{"message": {"content": "VERDICT: CORRECT"}}]}), &choices()).unwrap_err();
        assert!(none.to_string().contains("no log-probabilities"), "{none}");
        let off =
            json!({"choices": [{"logprobs": {"content": [{"top_logprobs": [{"token": "Maybe", "logprob": -0.1}]}]}}]});
        assert!(answer(&off, &choices()).unwrap_err().to_string().contains("starts a choice"));
        // "1" / "10": after the common "1" one choice is empty; " A" starts both " A" and "A".
        let one =
            json!({"choices": [{"logprobs": {"content": [{"top_logprobs": [{"token": "1", "logprob": -0.1}]}]}}]});
        let numbers = vec!["1".to_string(), "10".to_string()];
        assert!(answer(&one, &numbers).unwrap_err().to_string().contains("all common prefix"));
        let spaced =
            json!({"choices": [{"logprobs": {"content": [{"top_logprobs": [{"token": " A", "logprob": -0.1}]}]}}]});
        let both = vec!["x A".to_string(), "xA".to_string()];
        assert!(answer(&spaced, &both).unwrap_err().to_string().contains("more than one choice"));
    }
}
