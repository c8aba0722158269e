//! `kind: memory_loop` — the Memento-style agent of one arm and seed (`episodes`, `calls`), in
//! the domain its config names ([`crate::seam`]). Per task in the seed's order: the top-k
//! earlier episodes of this arm and seed by similarity alone (from the seed's `retrieval` table;
//! their stored labels are shown, never used to rank) -> planner (when the prompts have one) ->
//! executor -> the domain observes the artifact (text-to-SQL: the sandbox, twice) -> self-grade
//! -> the domain's answer-free channels -> stored label by the arm's rule -> stored in the bank. Only a stage configured with `read_gold: true` (and `gold` in its
//! inputs) may run the oracle arm, and it may run nothing else.
//!
//! Scheduling: episode t depends only on the k episodes it retrieves (their plan, artifact and
//! stored label are all of the bank its prompts see), so the stream is a DAG. An episode starts as soon
//! as the episodes it retrieves are stored, up to `concurrency` at once, lowest step first
//! ([`crate::memory_loop::scheduler`]); every prompt is the one the sequential loop would send, and with
//! `concurrency: 1` the order is the sequential one. The no-memory arm retrieves nothing, so all
//! its episodes are ready at once. Finished episodes are written as parts of consecutive steps
//! every `chunk_size` episodes (and every 10 s); a killed run loads whatever set is on disk and
//! runs the rest, losing and duplicating nothing. The instance's manifest entry notes its
//! critical path (the longest retrieval chain: the rounds of model latency it needs at unbounded
//! concurrency) and the peak number of episodes ready or in flight; `lucid status` shows done /
//! in flight / ready and an ETA while it runs.

pub mod arms;
pub mod bank;
pub mod episode;
pub mod kinds;
pub mod order;
pub mod parse;
pub mod prompts;
pub mod retrieval;
mod run;
pub mod scheduler;
mod stage;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::agent::program::AgentProgram;
use crate::error::{Error, Result};
use crate::llm::ModelConfig;
use crate::memory_loop::arms::{ArmSpec, Mode, arm_spec};
use crate::memory_loop::episode::Roles;
use crate::memory_loop::retrieval::Retrieval;
use crate::pipeline::stage::StageContext;

/// Config of the memory-loop stage (its unknown keys are refused when the pipeline is planned:
/// see `top_level`).
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct MemoryLoopStage {
    /// The model for every role (default: local SmolLM2).
    #[serde(default)]
    pub model: ModelConfig,
    /// Folder of prompt templates (default: the domain's, its `PROMPTS`). Never serialized as
    /// given: the key holds the folder the loop reads, default or not.
    #[serde(default, skip_serializing)]
    pub prompts: Option<String>,
    /// Memories shown to the planner (at most the retrieve stage's k).
    #[serde(default = "default_k")]
    pub k: usize,
    /// Decoding per role.
    #[serde(default)]
    pub roles: Roles,
    /// How an episode's memories are picked among the most similar earlier ones (default:
    /// similarity only, Memento's; softmax and hybrid rank by stored label too: see
    /// [`crate::memory_loop::retrieval`]). An arm may set its own under `arms:`.
    #[serde(default, skip_serializing_if = "Retrieval::is_similarity")]
    pub retrieval: Retrieval,
    /// The domain and its options (default: text-to-SQL, `{kind: sql}`; `lucid domains` lists
    /// the kinds and their options).
    #[serde(default)]
    pub domain: DomainBlock,
    /// Every other key at the top of the config: a domain's options written there, as pipelines
    /// written before domains did (the domain that takes options there names them: text-to-SQL's
    /// schema and sandbox options), checked against the domain when the pipeline is planned; any
    /// other key is refused then. Never serialized: the cache key holds the domain with them
    /// folded in, so both spellings of one config share a key.
    #[serde(flatten, skip_serializing)]
    pub top_level: serde_json::Map<String, serde_json::Value>,
    /// Arm name -> behaviour (the names no-memory, memento, lucid, oracle need no entry).
    #[serde(default)]
    pub arms: BTreeMap<String, ArmSpec>,
    /// This stage runs the oracle arm and reads `gold` (a ceiling, not a method).
    #[serde(default)]
    pub read_gold: bool,
    /// An agent program in place of lucid's planner and executor (`{command: [python3,
    /// agent.py], files: [agent.py], grade: lucid | agent, timeout_secs}`; protocol in
    /// [`crate::agent::program`]); its model calls go through lucid's loopback endpoint to
    /// `model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentProgram>,
    // Operational: how fast, not what. `skip_serializing` keeps them out of the cache key (the
    // key is this struct serialized), so changing one reuses the stored output and resumes exactly.
    /// Finished episodes per durable write (operational).
    #[serde(default = "default_chunk", skip_serializing)]
    pub chunk_size: usize,
    /// Episodes in flight at once, each as soon as the episodes it retrieves are stored
    /// (operational; the endpoint's `max_concurrency` still bounds its calls).
    #[serde(default = "default_concurrency", skip_serializing)]
    pub concurrency: usize,
    /// Use the response cache, `<cache>/responses.sqlite` (operational).
    #[serde(default = "default_true", skip_serializing)]
    pub response_cache: bool,
    /// The domain kinds it may run in, handed to it when the pipeline is read (not config).
    #[serde(skip)]
    pub kinds: kinds::KindsHandle,
}

fn default_k() -> usize {
    4
}
fn default_chunk() -> usize {
    8
}
fn default_concurrency() -> usize {
    4
}
fn default_true() -> bool {
    true
}

/// The memory loop's `domain:` block: `kind` (absent: the registry's default, text-to-SQL) and
/// the domain's options beside it, as written (the registry fills in their defaults for the key).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DomainBlock {
    /// The domain's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Its options (the block without `kind`).
    #[serde(flatten)]
    pub options: serde_json::Map<String, serde_json::Value>,
}

impl<'de> Deserialize<'de> for DomainBlock {
    fn deserialize<De: serde::Deserializer<'de>>(d: De) -> std::result::Result<Self, De::Error> {
        use serde::de::Error as _;
        let mut options = serde_json::Map::<String, serde_json::Value>::deserialize(d)?;
        let kind = match options.remove("kind") {
            None => None,
            Some(serde_json::Value::String(k)) => Some(k),
            Some(other) => return Err(De::Error::custom(format!("domain.kind must be a name, not {other}"))),
        };
        Ok(DomainBlock { kind, options })
    }
}

impl MemoryLoopStage {
    /// The arm of the running instance (its `arm` matrix value), as the stage configures it.
    pub fn arm(&self, ctx: &StageContext) -> Result<ArmSpec> {
        let name = ctx.arm().ok_or_else(|| {
            Error::stage(&ctx.stage_id, "a memory_loop stage must expand over arms: add `matrix: [seed, arm]`")
        })?;
        let spec = arm_spec(&self.arms, name).ok_or_else(|| {
            Error::stage(
                &ctx.stage_id,
                format!(
                    "unknown arm '{name}': use no-memory, memento, lucid or oracle, or map it under `arms:` to a mode"
                ),
            )
        })?;
        match self.gold_refusal(name, &spec) {
            Some(why) => Err(Error::stage(&ctx.stage_id, why)),
            None => Ok(spec),
        }
    }

    /// Why arm `name` may not run in this stage, if it may not: an oracle needs a stage that
    /// reads gold, and such a stage runs nothing else.
    pub fn gold_refusal(&self, name: &str, spec: &ArmSpec) -> Option<String> {
        match (spec.mode == Mode::Oracle, self.read_gold) {
            (true, false) => Some(format!(
                "arm '{name}' is an oracle (it reads gold): run it in its own stage with `read_gold: true`, \
                 `gold` in its inputs and `arms: [{name}]`"
            )),
            (false, true) => Some(format!("reads gold, so it may run only oracle arms, not '{name}'")),
            _ => None,
        }
    }

    /// The prompt folder: the config's, else `default` (the domain's).
    pub fn prompts_dir<'a>(&'a self, default: &'a str) -> &'a str {
        self.prompts.as_deref().unwrap_or(default)
    }

    /// The retrieval policy of `arm`: its own, else the stage's.
    pub fn policy(&self, arm: &ArmSpec) -> Retrieval {
        arm.retrieval.unwrap_or(self.retrieval)
    }

    /// Whether any arm of the stage ranks by score (then it writes the `draws` table).
    pub fn writes_draws(&self) -> bool {
        !self.retrieval.is_similarity() || self.arms.values().any(|a| a.retrieval.is_some_and(|r| !r.is_similarity()))
    }
}

impl MemoryLoopStage {
    /// The YAML `kind:` of this stage.
    pub const KIND: &'static str = "memory_loop";
}
