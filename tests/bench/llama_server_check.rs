//! lucid's OpenAI-compatible backend against a real llama.cpp `llama-server` (`just
//! llama-server`, tests/bench/llama_server.sh, which builds and starts it on SmolLM2's GGUF):
//! plain chat, stop sequences, seeds, `max_tokens`, the server's errors, calls at the stage's
//! `max_concurrency`, and forced choice two ways (the `llama-server` backend's exact score, and
//! the `openai` backend's first token through the server's assistant prefill and `top_logprobs`)
//! — the choice and margin of each against lucid's local forced choice on the same GGUF, over
//! the grader requests a demo run recorded in its response cache (`responses.sqlite`: each
//! request with the local model's answer). Writes a Markdown result file.
//!
//! usage: cargo run --example llama_server_check -- BASE_URL OUT.md RESPONSES.sqlite [PROMPTS]

use std::path::PathBuf;
use std::time::Instant;

use lucid::llm::config::ModelConfig;
use lucid::llm::{ChatRequest, Decoding, Message, Role};

fn request(system: &str, user: &str, decoding: Decoding) -> ChatRequest {
    ChatRequest {
        messages: vec![
            Message { role: Role::System, content: system.into() },
            Message { role: Role::User, content: user.into() },
        ],
        decoding,
        sample_index: 0,
        scope: None,
    }
}

fn decoding(max_tokens: u32) -> Decoding {
    Decoding { max_tokens, temperature: 0.0, ..Decoding::default() }
}

use lucid::llm::forced_choice::margin;

/// The forced-choice requests of the local SmolLM2 (as the demo runs it) in a response cache,
/// with the local answers, in the cache's order (at most `n`).
fn recorded_grades(cache: &std::path::Path, n: usize) -> Vec<(ChatRequest, String)> {
    let db = rusqlite::Connection::open_with_flags(cache, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap_or_else(|e| panic!("{}: {e}", cache.display()));
    let mut q = db
        .prepare(
            "SELECT request, text FROM responses WHERE backend = 'local' AND model LIKE 'SmolLM2-135M-Instruct.Q4_1.gguf@%' \
             AND model NOT LIKE '%q8_0%' AND request LIKE '%\"choices\"%' ORDER BY rowid",
        )
        .unwrap();
    let rows = q
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .unwrap()
        .map(|r| r.unwrap())
        .map(|(req, text)| (serde_json::from_str::<ChatRequest>(&req).unwrap(), text))
        .take(n)
        .collect::<Vec<_>>();
    assert!(
        !rows.is_empty(),
        "{}: no forced-choice answers of the local SmolLM2 (run the demo with this cache)",
        cache.display()
    );
    rows
}

/// Pearson's correlation of the pairs.
fn correlation(pairs: &[(f64, f64)]) -> f64 {
    let n = pairs.len() as f64;
    let (mx, my) = (pairs.iter().map(|p| p.0).sum::<f64>() / n, pairs.iter().map(|p| p.1).sum::<f64>() / n);
    let cov: f64 = pairs.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let (vx, vy): (f64, f64) =
        (pairs.iter().map(|p| (p.0 - mx).powi(2)).sum(), pairs.iter().map(|p| (p.1 - my).powi(2)).sum());
    cov / (vx * vy).sqrt()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (base_url, out, cache) = (&args[0], PathBuf::from(&args[1]), PathBuf::from(&args[2]));
    let n_prompts: usize = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(usize::MAX);
    let models = lucid::model_files::models_dir(&lucid::cache_dir::cache_dir());
    let server_cfg: ModelConfig = serde_norway::from_str(&format!(
        "{{backend: openai, model: smollm2, base_url: '{base_url}', max_concurrency: 2, timeout_secs: 300}}"
    ))
    .unwrap();
    let server = server_cfg.build(&models).expect("the server backend");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let system = std::fs::read_to_string(root.join("pipelines/prompts-factual/system.txt")).unwrap();
    let system = system.split_once("-#}").map_or(system.as_str(), |(_, r)| r).trim().to_string();
    let mut lines = vec![
        "# lucid's OpenAI-compatible backend against llama.cpp's llama-server".to_string(),
        String::new(),
        format!(
            "{}, `just llama-server` (tests/bench/llama_server.sh, tests/bench/llama_server_check.rs): llama-server \
             from llama-cpp-python 0.3.36's vendored llama.cpp, SmolLM2-135M-Instruct Q4_1 GGUF (the file `lucid models \
             fetch` installs), `-np 2`, `--no-webui`.",
            std::process::Command::new("date")
                .arg("-u")
                .arg("+%Y-%m-%d")
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                .unwrap_or_default()
        ),
        String::new(),
        "| check | result |".into(),
        "|---|---|".into(),
    ];
    let mut row = |check: &str, result: String| {
        println!("{check}: {result}");
        lines.push(format!("| {check} | {} |", result.replace('|', "\\|").replace('\n', " ")));
    };

    // Plain chat.
    let hello = server.chat(&request(&system, "What is the capital of France? Answer in one word.", decoding(16)));
    row("chat", format!("{:?}", hello.as_ref().map(|c| (&c.text, c.tokens_in, c.tokens_out)).map_err(|f| &f.message)));
    // Stop sequences: the text ends before the stop string.
    let mut d = decoding(48);
    d.stop = vec!["3".into()];
    let stopped = server.chat(&request(&system, "Count from 1 to 10, separated by commas.", d));
    row(
        "stop [\"3\"]",
        format!("{:?}", stopped.as_ref().map(|c| (&c.text, !c.text.contains('3'))).map_err(|f| &f.message)),
    );
    // max_tokens: at most that many generated.
    let capped = server.chat(&request(&system, "Write a long story about a dragon.", decoding(5)));
    row(
        "max_tokens 5",
        format!("{:?}", capped.as_ref().map(|c| (c.tokens_out, c.tokens_out <= 5)).map_err(|f| &f.message)),
    );
    // Seeds: sampling at temperature 1 with one seed twice gives one text; another seed, another.
    let sampled = |seed: u64| {
        let mut d = decoding(24);
        d.temperature = 1.0;
        d.seed = seed;
        server.chat(&request(&system, "Name a random animal and say why.", d)).map(|c| c.text)
    };
    let (a, b, c) = (sampled(7), sampled(7), sampled(8));
    row(
        "seed (T = 1): 7, 7, 8",
        format!(
            "same seed same text: {}; another seed another text: {}",
            a.as_ref().ok() == b.as_ref().ok(),
            a.as_ref().ok() != c.as_ref().ok()
        ),
    );
    // Errors: a context overflow, and a model name the server does not serve.
    let long = "word ".repeat(20_000);
    let overflow = server.chat(&request(&system, &long, decoding(4)));
    row("context overflow", format!("{:?}", overflow.as_ref().map(|c| &c.text).map_err(|f| (&f.message, f.attempts))));
    let other: ModelConfig =
        serde_norway::from_str(&format!("{{backend: openai, model: no-such-model, base_url: '{base_url}'}}")).unwrap();
    let other = other.build(&models).unwrap().chat(&request(&system, "Say hi.", decoding(4)));
    row("unknown model name", format!("{:?}", other.as_ref().map(|c| &c.text).map_err(|f| &f.message)));
    // Calls at max_concurrency 2: eight at once, all answered.
    let t = Instant::now();
    let answered = std::thread::scope(|s| {
        let hs: Vec<_> = (0..8)
            .map(|i| {
                let server = server.clone();
                let system = system.clone();
                s.spawn(move || server.chat(&request(&system, &format!("What is {i} plus {i}?"), decoding(8))).is_ok())
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap_or(false)).filter(|&ok| ok).count()
    });
    row("8 calls at max_concurrency 2", format!("{answered} of 8 answered in {:.1} s", t.elapsed().as_secs_f64()));

    // Forced choice: the server against lucid's local forced choice, prompt by prompt, over the
    // grader requests a demo run recorded in its response cache with the local model's answers.
    let exact_cfg: ModelConfig = serde_norway::from_str(&format!(
        "{{backend: llama-server, model: smollm2, base_url: '{base_url}', max_concurrency: 2, timeout_secs: 300}}"
    ))
    .unwrap();
    let exact = exact_cfg.build(&models).expect("the llama-server backend");
    let recorded = recorded_grades(&cache, n_prompts);
    for (name, backend) in [
        ("exact (llama-server backend: /completion, token by token)", &exact),
        ("first token (openai backend: assistant prefill, top_logprobs)", &server),
    ] {
        let t = Instant::now();
        // Per prompt: (group, server margin, local margin), or None where the server failed.
        let mut scored: Vec<Option<(&str, f64, f64)>> = Vec::new();
        for (i, (req, local_text)) in recorded.iter().enumerate() {
            let group = if req.messages.iter().any(|m| m.content.contains("SQL")) {
                "text-to-SQL (the demo)"
            } else {
                "factual (leniency-server.yaml)"
            };
            match backend.chat(req) {
                Ok(s) => {
                    if i < 2 {
                        println!("server: {}\nlocal:  {local_text}", s.text);
                    }
                    scored.push(margin(&s.text).zip(margin(local_text)).map(|(ms, ml)| (group, ms, ml)));
                }
                Err(f) => {
                    scored.push(None);
                    eprintln!("prompt {i}: {}", f.message);
                }
            }
        }
        let secs = t.elapsed().as_secs_f64();
        // The server against itself: the first 20 requests again (its prompt cache now warm).
        let again = recorded
            .iter()
            .zip(&scored)
            .take(20)
            .filter_map(|((req, _), first)| {
                Some((backend.chat(req).ok().and_then(|c| margin(&c.text))? - first.as_ref()?.1).abs())
            })
            .fold(0.0, f64::max);
        for group in ["text-to-SQL (the demo)", "factual (leniency-server.yaml)", "all"] {
            let of_group: Vec<&Option<(&str, f64, f64)>> =
                scored.iter().filter(|s| group == "all" || s.is_none_or(|s| s.0 == group)).collect();
            let pairs: Vec<(f64, f64)> = of_group.iter().filter_map(|s| s.map(|s| (s.1, s.2))).collect();
            if pairs.is_empty() {
                continue;
            }
            let (n, failed) = (of_group.len(), of_group.iter().filter(|s| s.is_none()).count());
            let same = |p: &(f64, f64)| (p.0 > 0.0) == (p.1 > 0.0);
            // Agreement where the local margin is clear of the numerical noise between the engines.
            let clear = |t: f64| {
                let c: Vec<_> = pairs.iter().filter(|p| p.1.abs() >= t).collect();
                format!("|local| ≥ {t}: {} of {}", c.iter().filter(|p| same(p)).count(), c.len())
            };
            let agree = pairs.iter().filter(|p| same(p)).count();
            row(
                &format!("forced choice, {name}: {group}, {n} grader prompts"),
                format!(
                    "same choice {agree} of {} ({:.1} %); margins: correlation {:.3}, mean |server - local| {:.3} nats, largest {:.3}; \
                     same choice where the local margin is clear: {}, {}, {}; {failed} failed",
                    pairs.len(),
                    100.0 * agree as f64 / pairs.len() as f64,
                    correlation(&pairs),
                    pairs.iter().map(|p| (p.0 - p.1).abs()).sum::<f64>() / pairs.len() as f64,
                    pairs.iter().map(|p| (p.0 - p.1).abs()).fold(0.0, f64::max),
                    clear(0.05),
                    clear(0.1),
                    clear(0.25),
                ),
            );
        }
        row(
            &format!("forced choice, {name}: time and repeatability"),
            format!(
                "{secs:.0} s for {} prompts; the first 20 again: largest margin change {again:.4} nats",
                recorded.len()
            ),
        );
    }
    lines.push(String::new());
    lines.push(
        "Forced choice, two ways. The `llama-server` backend scores each choice exactly: the server's chat template \
         (`/apply-template`), its tokens (`/tokenize`), then for each token of each choice one `/completion` over \
         the prompt's and the choice's earlier token ids with that token forced (`logit_bias` +1000, `n_probs: 1`), \
         reading the forced token's log-probability from the raw logits; the sum over the choice's tokens is the \
         local backend's score. The `openai` backend sends the choices' common prefix without its trailing space \
         (`VERDICT:`) as a final assistant message (llama-server continues it: `prefill_assistant`, on by \
         default) with `max_tokens: 1, logprobs: true, top_logprobs: 20`, and scores each choice by its first \
         token where the choices part: an approximation of the margin. The local answers are the runs' own \
         (their response cache: `lucid run pipelines/demo.yaml` and `pipelines/leniency-server.yaml`), so the two sides \
         see the same requests. A choice counts as the same when both margins have one sign."
            .into(),
    );
    std::fs::write(&out, lines.join("\n") + "\n").unwrap();
}
