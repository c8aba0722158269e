//! Arms: how an episode's stored label Q is written. An arm name maps to a mode (the four
//! standard names map to themselves) and optionally to its own detector channels.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// How an arm uses memory and writes Q.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// No retrieval: identical prompts with no memories (order-invariant).
    NoMemory,
    /// Memento: Q = r, the self-grade.
    Memento,
    /// LUCID: Q = 0 when the detector flags the episode, else r (demotion only).
    Lucid,
    /// Ceiling, not a method: Q = U, the episode's execution accuracy against gold, read after
    /// the episode. Only a stage allowed to read `gold` may run it.
    Oracle,
}

/// One arm's behaviour.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArmSpec {
    /// The mode.
    pub mode: Mode,
    /// Channel names whose firing flags an episode for this arm (default: the domain's detector's).
    #[serde(default)]
    pub channels: Option<Vec<String>>,
    /// Its retrieval policy (default: the stage's `retrieval:`), so one stage can compare
    /// policies as arms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retrieval: Option<super::retrieval::Retrieval>,
}

/// The mode of arm `name`: from `arms` when listed, else the standard name.
pub fn arm_spec(arms: &BTreeMap<String, ArmSpec>, name: &str) -> Option<ArmSpec> {
    arms.get(name).cloned().or_else(|| {
        let mode = match name {
            "no-memory" => Mode::NoMemory,
            "memento" => Mode::Memento,
            "lucid" => Mode::Lucid,
            "oracle" => Mode::Oracle,
            _ => return None,
        };
        Some(ArmSpec { mode, channels: None, retrieval: None })
    })
}

/// The stored label Q of an episode: the only thing an arm changes. An unparseable or failed
/// self-grade (`r = None`) is stored as untrusted (0).
pub fn stored_q(mode: Mode, r: Option<u8>, flagged: bool, u: Option<u8>) -> u8 {
    match mode {
        Mode::NoMemory | Mode::Memento => r.unwrap_or(0),
        Mode::Lucid => {
            if flagged {
                0
            } else {
                r.unwrap_or(0)
            }
        }
        Mode::Oracle => u.unwrap_or(0),
    }
}
