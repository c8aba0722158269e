//! lucid's OpenAI-compatible backend against a real llama.cpp `llama-server` (`just
//! llama-server`, tests/bench/llama_server.sh, which builds and starts it on SmolLM2's GGUF):
//! plain chat, stop sequences, seeds, `max_tokens`, the server's errors, calls at the stage's
//! `max_concurrency`, and forced choice through the server's assistant prefill and
//! `top_logprobs` — its choice and margin against lucid's local forced choice on the same GGUF
//! over grader prompts of the bundled factual set (a right and a wrong answer per question).
//! Writes a Markdown result file.
//!
//! usage: cargo run --release --example llama_server_check -- BASE_URL OUT.md [PROMPTS]

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
    }
}

fn decoding(max_tokens: u32) -> Decoding {
    Decoding { max_tokens, temperature: 0.0, ..Decoding::default() }
}

/// grader.txt of the factual prompts with `question` and `answer` (its comment header dropped).
fn grader_prompt(template: &str, question: &str, answer: &str) -> String {
    let body = template.split_once("-#}").map_or(template, |(_, rest)| rest).trim_start();
    body.replace("{{ question }}", question).replace("{{ answer }}", answer)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (base_url, out) = (&args[0], PathBuf::from(&args[1]));
    let n_prompts: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(200);
    let models = lucid::model_files::models_dir(&lucid::cache_dir::cache_dir());
    let server_cfg: ModelConfig = serde_norway::from_str(&format!(
        "{{backend: openai, model: smollm2, base_url: '{base_url}', max_concurrency: 2, timeout_secs: 300}}"
    ))
    .unwrap();
    let server = server_cfg.build(&models).expect("the server backend");
    let local: ModelConfig = serde_norway::from_str("{backend: local}").unwrap();
    let local = local.build(&models).expect("lucid models fetch: SmolLM2");
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

    // Forced choice: the server against lucid's local forced choice, prompt by prompt.
    let facts = lucid::model_files::model_path(&models, "facts");
    let bench = lucid::datasets::factual::bundled::build(&facts).expect("lucid models fetch: the facts packages");
    let template = std::fs::read_to_string(root.join("pipelines/prompts-factual/grader.txt")).unwrap();
    let choices = vec!["VERDICT: CORRECT".to_string(), "VERDICT: INCORRECT".to_string()];
    let gold: std::collections::HashMap<i64, &str> =
        bench.gold.iter().map(|g| (g.question_id, g.answer.as_str())).collect();
    let answers: Vec<&str> = bench.tasks.iter().map(|t| gold[&t.question_id]).collect();
    let mut prompts = Vec::new();
    for (i, task) in bench.tasks.iter().enumerate() {
        if prompts.len() >= n_prompts {
            break;
        }
        // The right answer, and another question's (wrong here, rarely right by chance).
        let (right, wrong) = (answers[i], answers[(i + 7) % answers.len()]);
        prompts.push(grader_prompt(&template, &task.question, right));
        prompts.push(grader_prompt(&template, &task.question, wrong));
    }
    prompts.truncate(n_prompts);
    let (mut agree, mut failed, mut pairs) = (0usize, 0usize, Vec::new());
    let t = Instant::now();
    for (i, p) in prompts.iter().enumerate() {
        let mut d = decoding(8);
        d.choices = choices.clone();
        let req = request(&system, p, d);
        let (s, l) = (server.chat(&req), local.chat(&req));
        match (s, l) {
            (Ok(s), Ok(l)) => {
                let pick = |t: &str| t.lines().next().unwrap_or("").to_string();
                agree += usize::from(pick(&s.text) == pick(&l.text));
                if let (Some(ms), Some(ml)) =
                    (lucid::llm::forced_choice::margin(&s.text), lucid::llm::forced_choice::margin(&l.text))
                {
                    pairs.push((ms, ml));
                }
                if i < 2 {
                    println!("server: {}\nlocal:  {}", s.text, l.text);
                }
            }
            (s, l) => {
                failed += 1;
                eprintln!("prompt {i}: server {:?} local {:?}", s.err().map(|f| f.message), l.err().map(|f| f.message));
            }
        }
    }
    let n = pairs.len() as f64;
    let (mx, my) = (pairs.iter().map(|p| p.0).sum::<f64>() / n, pairs.iter().map(|p| p.1).sum::<f64>() / n);
    let cov: f64 = pairs.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let (vx, vy): (f64, f64) =
        (pairs.iter().map(|p| (p.0 - mx).powi(2)).sum(), pairs.iter().map(|p| (p.1 - my).powi(2)).sum());
    let mad = pairs.iter().map(|p| (p.0 - p.1).abs()).sum::<f64>() / n;
    row(
        &format!("forced choice, {} grader prompts", prompts.len()),
        format!(
            "same choice {agree} of {} ({:.1} %); margins: correlation {:.3}, mean |server - local| {:.3} nats; {failed} failed; {:.0} s",
            prompts.len() - failed,
            100.0 * agree as f64 / (prompts.len() - failed).max(1) as f64,
            cov / (vx * vy).sqrt(),
            mad,
            t.elapsed().as_secs_f64()
        ),
    );
    lines.push(String::new());
    lines.push(
        "Forced choice through the server: lucid sends the choices' common prefix without its trailing space (`VERDICT:`) as a final \
         assistant message (llama-server continues it: `prefill_assistant`, on by default) with `max_tokens: 1, \
         logprobs: true, top_logprobs: 20`, and scores each choice by the log-probability of the likeliest top token \
         its rest starts with — the first token where the choices part; lucid's local forced choice sums the \
         log-probabilities of every token of each choice. The margin is the difference of the two scores."
            .into(),
    );
    std::fs::write(&out, lines.join("\n") + "\n").unwrap();
}
