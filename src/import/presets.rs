//! The layouts lucid imports by name: where each tool keeps a memory's question, plan, answer,
//! label, id and order, what its label values mean, and where its labels come from (the sources
//! are cited in `tests/fixtures/import/SOURCES.md`, beside a fixture in each tool's own layout).

use serde::{Deserialize, Serialize};

/// Where the labels of a bank came from: what an audit of them measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LabelSource {
    /// The agent graded its own episode without the reference: the audit measures the
    /// self-grade's inflation.
    SelfGraded,
    /// An LLM judge that read the reference answer: the audit measures that judge, not a
    /// label-free self-grade.
    JudgeWithGold,
    /// An LLM judge that did not read the reference (ReasoningBank's autoeval): the audit
    /// measures that judge's inflation, as it does a self-grade's.
    Judge,
    /// The environment's reward.
    EnvironmentReward,
    /// No label at all: every memory is stored trusted (r = 1), as retrieval treats it.
    Unlabelled,
}

impl LabelSource {
    /// What an audit of labels from this source measures, in a sentence.
    pub fn meaning(self) -> &'static str {
        match self {
            LabelSource::SelfGraded => {
                "self-graded without the reference: the audit measures the self-grade's inflation"
            }
            LabelSource::JudgeWithGold => {
                "assigned by an LLM judge that read the reference answer: the audit measures that judge, not a label-free self-grade"
            }
            LabelSource::Judge => {
                "assigned by an LLM judge that did not read the reference: the audit measures that judge's inflation"
            }
            LabelSource::EnvironmentReward => {
                "the environment's reward: the audit measures the reward against the truth given"
            }
            LabelSource::Unlabelled => "no label: every memory is stored trusted (r = 1), as retrieval treats it",
        }
    }

    /// Its name as written in `label_source`.
    pub fn name(self) -> &'static str {
        match self {
            LabelSource::SelfGraded => "self-graded",
            LabelSource::JudgeWithGold => "judge-with-gold",
            LabelSource::Judge => "judge",
            LabelSource::EnvironmentReward => "environment-reward",
            LabelSource::Unlabelled => "unlabelled",
        }
    }
}

/// Where each part of a memory is: dotted paths into a record (`value.content.observation`).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Fields {
    /// The question (or the memory's text, for banks of facts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    /// The plan or trajectory: one field, or several joined by new lines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plan: Vec<String>,
    /// The answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// The label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The order (a number or a timestamp); absent: the file's order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<String>,
}

impl Fields {
    /// These fields with `over`'s set ones in their place.
    pub fn merged(&self, over: &Fields) -> Fields {
        Fields {
            question: over.question.clone().or_else(|| self.question.clone()),
            plan: if over.plan.is_empty() { self.plan.clone() } else { over.plan.clone() },
            answer: over.answer.clone().or_else(|| self.answer.clone()),
            label: over.label.clone().or_else(|| self.label.clone()),
            id: over.id.clone().or_else(|| self.id.clone()),
            order: over.order.clone().or_else(|| self.order.clone()),
        }
    }
}

/// A named layout.
pub struct Preset {
    /// Its name (`preset:`).
    pub name: &'static str,
    /// The tool and file it reads.
    pub doc: &'static str,
    /// Where a memory's parts are.
    pub fields: Fields,
    /// Label values and r.
    pub labels: &'static [(&'static str, u8)],
    /// Where its labels come from.
    pub label_source: LabelSource,
    /// Its gold files' answer field, and what separates the aliases written into it.
    pub gold_answer: (&'static str, Option<&'static str>),
    /// The call whose quoted argument is the answer, in the answer field's text (ReasoningBank:
    /// the last `send_msg_to_user('...')` of its actions); a memory that makes no such call has
    /// no answer.
    pub answer_call: Option<&'static str>,
}

fn f(
    question: &str,
    plan: &[&str],
    answer: Option<&str>,
    label: Option<&str>,
    id: Option<&str>,
    order: Option<&str>,
) -> Fields {
    let s = |x: Option<&str>| x.map(str::to_string);
    Fields {
        question: Some(question.into()),
        plan: plan.iter().map(|p| p.to_string()).collect(),
        answer: s(answer),
        label: s(label),
        id: s(id),
        order: s(order),
    }
}

/// Memento's gold files (`data/*.jsonl`): `ground_truth`, aliases joined by `<|answer_split|>`.
const MEMENTO_GOLD: (&str, Option<&str>) = ("ground_truth", Some("<|answer_split|>"));

/// Every preset.
pub fn all() -> Vec<Preset> {
    vec![
        Preset {
            name: "memento",
            doc: "Memento's case bank memory/memory.jsonl ({case, plan, case_label}); with `log:`, its results log",
            fields: f("case", &["plan"], None, Some("case_label"), None, None),
            labels: &[("positive", 1), ("negative", 0)],
            label_source: LabelSource::JudgeWithGold,
            gold_answer: MEMENTO_GOLD,
            answer_call: None,
        },
        Preset {
            name: "memento-reward",
            doc: "Memento's non-parametric case bank ({question, plan, reward: 0|1})",
            fields: f("question", &["plan"], None, Some("reward"), None, None),
            labels: &[("1", 1), ("0", 0)],
            label_source: LabelSource::JudgeWithGold,
            gold_answer: MEMENTO_GOLD,
            answer_call: None,
        },
        Preset {
            name: "reasoningbank",
            doc: "ReasoningBank's memory records ({task_id, query, think_list, action_list, status, memory_items})",
            fields: f(
                "query",
                &["think_list", "action_list"],
                Some("action_list"),
                Some("status"),
                Some("task_id"),
                None,
            ),
            labels: &[("success", 1), ("fail", 0), ("failure", 0)],
            label_source: LabelSource::Judge,
            gold_answer: ("answer", None),
            answer_call: Some("send_msg_to_user"),
        },
        Preset {
            name: "mem0",
            doc: "mem0's get_all/search answer ({results: [{id, memory, hash, created_at, ...}]})",
            fields: f("memory", &[], None, None, Some("id"), Some("created_at")),
            labels: &[],
            label_source: LabelSource::Unlabelled,
            gold_answer: ("answer", None),
            answer_call: None,
        },
        Preset {
            name: "langmem",
            doc: "LangMem store items ({namespace, key, value: {kind, content: {observation, thoughts, action, result}}}; \
                  the result is a free-text self-assessment, kept in the plan, not a label)",
            fields: f(
                "value.content.observation|value.content.content|value.content",
                &["value.content.thoughts", "value.content.action", "value.content.result"],
                None,
                None,
                Some("key"),
                Some("created_at"),
            ),
            labels: &[],
            label_source: LabelSource::Unlabelled,
            gold_answer: ("answer", None),
            answer_call: None,
        },
        Preset {
            name: "amem",
            doc: "A-MEM memory notes ({id, content, keywords, links, retrieval_count, timestamp, context, tags})",
            fields: f("content", &["context"], None, None, Some("id"), Some("timestamp")),
            labels: &[],
            label_source: LabelSource::Unlabelled,
            gold_answer: ("answer", None),
            answer_call: None,
        },
        Preset {
            name: "letta",
            doc: "Letta archival memory passages ({id, text, embedding, created_at, metadata, tags})",
            fields: f("text", &[], None, None, Some("id"), Some("created_at")),
            labels: &[],
            label_source: LabelSource::Unlabelled,
            gold_answer: ("answer", None),
            answer_call: None,
        },
        Preset {
            name: "generic",
            doc: "any JSON Lines / JSON / CSV / Parquet: `fields:` and `labels:` say where and what",
            fields: Fields::default(),
            labels: &[
                ("positive", 1),
                ("negative", 0),
                ("success", 1),
                ("fail", 0),
                ("correct", 1),
                ("incorrect", 0),
                ("1", 1),
                ("0", 0),
                ("true", 1),
                ("false", 0),
            ],
            label_source: LabelSource::SelfGraded,
            gold_answer: ("answer", None),
            answer_call: None,
        },
    ]
}

/// The preset named `name`.
pub fn preset(name: &str) -> std::result::Result<&'static Preset, crate::error::Invalid> {
    static ALL: std::sync::LazyLock<Vec<Preset>> = std::sync::LazyLock::new(all);
    ALL.iter().find(|p| p.name == name).ok_or_else(|| {
        let names: Vec<&str> = ALL.iter().map(|p| p.name).collect();
        crate::error::Invalid(format!("unknown preset '{name}' (presets: {})", names.join(", ")))
    })
}
