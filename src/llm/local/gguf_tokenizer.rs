//! The tokenizer and chat template of a GGUF chat model, built from its metadata alone (SmolLM2's
//! GGUF ships no tokenizer.json): byte-level BPE from `tokenizer.ggml.tokens` and
//! `tokenizer.ggml.merges`, control tokens registered whole, no prefix space (candle's own
//! `from_gguf` adds one for SmolLM2's `smollm` pre-tokenizer, which changes the ids), and the
//! Jinja `tokenizer.chat_template` rendered with minijinja.

use std::collections::HashMap;

use candle_core::quantized::gguf_file::Value;
use tokenizers::SplitDelimiterBehavior;
use tokenizers::models::bpe::BPE;
use tokenizers::normalizers::unicode::NFC;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::{AddedToken, Tokenizer};

use crate::error::Fault;
use crate::llm::Message;

/// GGUF token types registered whole: control (`<|im_start|>` ...) and user-defined
/// (`<tool_call>` ...).
const CONTROL: i32 = 3;
const USER_DEFINED: i32 = 4;

/// Qwen2's pre-tokenizer split (as in its tokenizer.json and llama.cpp).
const QWEN2_SPLIT: &str =
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// What a GGUF says about turning chat messages into token ids and back.
pub struct GgufChat {
    /// The tokenizer.
    pub tokenizer: Tokenizer,
    /// Jinja chat template (ChatML when the GGUF has none).
    pub template: String,
    /// Ids that end generation.
    pub stop_ids: Vec<u32>,
    /// Prepend this id to every prompt (`tokenizer.ggml.add_bos_token`).
    pub bos: Option<u32>,
}

/// ChatML, for models that carry no template.
pub const CHATML: &str = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

fn get<'a>(md: &'a HashMap<String, Value>, key: &str) -> Result<&'a Value, Fault> {
    md.get(key).ok_or_else(|| Fault::new(format!("GGUF metadata has no {key}")))
}

fn strings(v: &Value, key: &str) -> Result<Vec<String>, Fault> {
    v.to_vec()
        .map_err(|e| Fault::from(key, e))?
        .iter()
        .map(|x| x.to_string().cloned().map_err(|e| Fault::from(key, e)))
        .collect()
}

impl GgufChat {
    /// Build from GGUF metadata.
    pub fn from_metadata(md: &HashMap<String, Value>) -> Result<GgufChat, Fault> {
        let model = get(md, "tokenizer.ggml.model")?.to_string().map_err(|e| Fault::from("GGUF metadata", e))?;
        if model != "gpt2" {
            return Err(Fault::new(format!(
                "tokenizer model '{model}' is not supported (lucid reads byte-level BPE, 'gpt2')"
            )));
        }
        let tokens = strings(get(md, "tokenizer.ggml.tokens")?, "tokens")?;
        let merges: Vec<(String, String)> = strings(get(md, "tokenizer.ggml.merges")?, "merges")?
            .into_iter()
            .map(|m| {
                m.split_once(' ')
                    .map(|(a, b)| (a.to_string(), b.to_string()))
                    .ok_or_else(|| Fault::new(format!("bad merge '{m}'")))
            })
            .collect::<Result<_, Fault>>()?;
        let vocab: tokenizers::models::bpe::Vocab =
            tokens.iter().enumerate().map(|(i, t)| (t.clone(), i as u32)).collect();
        let bpe = BPE::builder().vocab_and_merges(vocab, merges).build().map_err(|e| Fault::from("BPE", e))?;
        let mut tokenizer = Tokenizer::new(bpe);
        let pre = md.get("tokenizer.ggml.pre").and_then(|v| v.to_string().ok()).map(String::as_str);
        match pre {
            // Qwen2's pre-tokenizer (llama.cpp LLAMA_VOCAB_PRE_TYPE_QWEN2, the model's
            // tokenizer.json): digits one by one, letters with an optional leading non-letter,
            // then byte-level without the GPT-2 split; NFC first.
            Some("qwen2") => {
                let split =
                    Split::new(SplitPattern::Regex(QWEN2_SPLIT.into()), SplitDelimiterBehavior::Isolated, false)
                        .map_err(|e| Fault::from("qwen2 pre-tokenizer", e))?;
                tokenizer.with_normalizer(Some(NFC)).map_err(|e| Fault::from("qwen2 normalizer", e))?;
                tokenizer.with_pre_tokenizer(Some(Sequence::new(vec![
                    split.into(),
                    ByteLevel::new(false, true, false).into(),
                ])));
            }
            _ => {
                tokenizer.with_pre_tokenizer(Some(ByteLevel::new(false, true, true)));
            }
        }
        tokenizer.with_decoder(Some(ByteLevel::default()));
        if let Some(types) = md.get("tokenizer.ggml.token_type") {
            let types = types.to_vec().map_err(|e| Fault::from("GGUF metadata", e))?;
            let specials: Vec<AddedToken> = types
                .iter()
                .enumerate()
                .filter(|(_, t)| t.to_i32().is_ok_and(|t| t == CONTROL || t == USER_DEFINED))
                .filter_map(|(i, _)| tokens.get(i))
                .map(|t| AddedToken::from(t.clone(), true))
                .collect();
            tokenizer.add_special_tokens(specials).map_err(|e| Fault::from("special tokens", e))?;
        }
        let id = |k: &str| md.get(k).and_then(|v| v.to_u32().ok());
        let mut stop_ids: Vec<u32> = id("tokenizer.ggml.eos_token_id").into_iter().collect();
        for t in ["<|im_end|>", "<|endoftext|>", "<|eot_id|>"] {
            if let Some(i) = tokenizer.token_to_id(t).filter(|i| !stop_ids.contains(i)) {
                stop_ids.push(i);
            }
        }
        let add_bos = md.get("tokenizer.ggml.add_bos_token").and_then(|v| v.to_bool().ok()).unwrap_or(false);
        let template = match md.get("tokenizer.chat_template") {
            Some(v) => v.to_string().map_err(|e| Fault::from("GGUF metadata", e))?.clone(),
            None => CHATML.to_string(),
        };
        Ok(GgufChat {
            tokenizer,
            template,
            stop_ids,
            bos: if add_bos { id("tokenizer.ggml.bos_token_id") } else { None },
        })
    }

    /// The prompt text for `messages`, ending with the assistant's turn opener.
    pub fn render(&self, messages: &[Message]) -> Result<String, Fault> {
        let env = minijinja::Environment::new();
        let msgs: Vec<serde_json::Value> =
            messages.iter().map(|m| serde_json::json!({"role": m.role.as_str(), "content": m.content})).collect();
        env.render_str(&self.template, minijinja::context! { messages => msgs, add_generation_prompt => true })
            .map_err(|e| Fault::from("chat template", e))
    }

    /// Token ids of `text` (control tokens in the text are matched whole).
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, Fault> {
        let mut ids = self.tokenizer.encode(text, false).map_err(|e| Fault::from("tokenize", e))?.get_ids().to_vec();
        if let Some(b) = self.bos {
            ids.insert(0, b);
        }
        Ok(ids)
    }

    /// Text of `ids` without special tokens.
    pub fn decode(&self, ids: &[u32]) -> Result<String, Fault> {
        self.tokenizer.decode(ids, true).map_err(|e| Fault::from("detokenize", e))
    }
}
