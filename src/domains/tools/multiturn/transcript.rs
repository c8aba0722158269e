//! A multi-turn episode's artifact (its memory): the calls the model made, per turn and per step,
//! in BFCL's execution strings, why each turn ended, and why the episode stopped early if it did.
//! Stored as JSON in `episodes.tool_trajectory`; the results are not stored (a long-context
//! result reaches 31 KB) since the environments are deterministic: running the calls again from
//! the task's starting state gives them back, as observing and the gold do.

use serde::{Deserialize, Serialize};

use crate::error::Invalid;

/// Why a turn ended without the model's calls: its reply held none.
pub const NO_CALLS: &str = "no calls";
/// Why a turn ended: the reply did not decode as calls.
pub const UNDECODABLE: &str = "does not decode";
/// Why the episode stopped: a turn went past BFCL's step limit (BFCL's `force_quit`).
pub const STEP_LIMIT: &str = "step limit";

/// The episode's calls.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transcript {
    /// Per turn, the steps the model made, each the calls its reply decoded to.
    pub turns: Vec<Vec<Vec<String>>>,
    /// Per turn, why it ended ([`NO_CALLS`], [`UNDECODABLE`], or the episode's stop).
    pub ends: Vec<String>,
    /// Why the episode stopped early, in whatever turn ([`STEP_LIMIT`], the sandbox's limit that
    /// ended a step's run, `limit: fuel`, or a failed run of the environments), if it did.
    pub stopped: Option<String>,
}

impl Transcript {
    /// The transcript in an artifact.
    pub fn parse(artifact: &str) -> Result<Transcript, Invalid> {
        serde_json::from_str(artifact).map_err(|e| Invalid(format!("not a multi-turn transcript: {e}")))
    }

    /// As the artifact's JSON.
    pub fn to_artifact(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Every step, in order (what the environments replay).
    pub fn steps(&self) -> Vec<Vec<String>> {
        self.turns.iter().flatten().cloned().collect()
    }
}
