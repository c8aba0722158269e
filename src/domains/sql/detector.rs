//! The answer-free detector: three channels computed from the question (and its evidence), the
//! produced SQL and how it executed — never a reference query or result. Every channel is always
//! computed and stored; `channels` picks which of them make an episode `flagged`.

use serde::{Deserialize, Serialize};

use crate::seam::{Channels, Fired};
use crate::sql::Execution;
use crate::sql::checks::{MIN_LITERAL_CHARS, ungrounded_literals_min};

/// A detector channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Channel {
    /// The query errored, timed out, or disagreed with itself on two runs (or no SQL was produced).
    Execution,
    /// It ran but returned no rows, or only NULLs.
    Degeneracy,
    /// It filters on an entity-like literal that the question and evidence do not contain.
    Literal,
}

impl Channel {
    /// Its name (`episodes.channels[].name`, the YAML word).
    pub fn name(self) -> &'static str {
        match self {
            Channel::Execution => "execution",
            Channel::Degeneracy => "degeneracy",
            Channel::Literal => "literal",
        }
    }
}

/// Detector configuration (the `detector:` block of `memory_loop` and `flag`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DetectorConfig {
    /// Channels whose firing flags an episode (default: all three).
    #[serde(default = "all_channels")]
    pub channels: Vec<Channel>,
    /// Degeneracy: an empty result counts.
    #[serde(default = "yes")]
    pub empty_rows: bool,
    /// Degeneracy: a result of only NULLs counts.
    #[serde(default = "yes")]
    pub all_null: bool,
    /// Literal grounding: shortest literal considered (characters, after trimming wildcards).
    #[serde(default = "min_chars")]
    pub min_literal_chars: usize,
}

fn all_channels() -> Vec<Channel> {
    vec![Channel::Execution, Channel::Degeneracy, Channel::Literal]
}
fn yes() -> bool {
    true
}
fn min_chars() -> usize {
    MIN_LITERAL_CHARS
}

impl Default for DetectorConfig {
    fn default() -> Self {
        DetectorConfig { channels: all_channels(), empty_rows: true, all_null: true, min_literal_chars: min_chars() }
    }
}

/// What the detector sees of an execution (available live and from the `episodes` table).
#[derive(Clone, Copy, Debug)]
pub struct Observed<'a> {
    /// The SQL, if the executor produced one.
    pub sql: Option<&'a str>,
    /// ok / error / timeout / nondeterministic.
    pub status: &'a str,
    /// Rows returned (when it ran).
    pub n_rows: Option<u64>,
    /// At least one row and every value NULL.
    pub all_null: bool,
}

impl<'a> Observed<'a> {
    /// What the detector sees of `exec`, the execution of `sql`: the loop's live view and
    /// `lucid exec`'s, so both apply one implementation of each channel's rule.
    pub fn of(sql: &'a str, exec: &Execution) -> Observed<'a> {
        let rows = exec.outcome.rows();
        Observed {
            sql: Some(sql),
            status: exec.outcome.status().as_str(),
            n_rows: rows.map(|r| r.n_rows),
            all_null: rows.is_some_and(|r| r.all_null),
        }
    }
}

/// Per-channel results.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    /// Execution channel fired.
    pub exec: bool,
    /// Degeneracy channel fired.
    pub degenerate: bool,
    /// Literal channel fired.
    pub literal: bool,
    /// The ungrounded literals.
    pub literals: Vec<String>,
}

impl Flags {
    /// The channels by name, in order (the literal channel's detail: the ungrounded literals).
    pub fn channels(&self) -> Channels {
        let fired = |c: Channel, fired: bool, detail: Option<String>| Fired { name: c.name(), fired, detail };
        Channels(vec![
            fired(Channel::Execution, self.exec, None),
            fired(Channel::Degeneracy, self.degenerate, None),
            fired(Channel::Literal, self.literal, self.literals_json()),
        ])
    }

    /// The ungrounded literals as a JSON list (None when there are none), as tables store them.
    pub fn literals_json(&self) -> Option<String> {
        (!self.literals.is_empty()).then(|| serde_json::to_string(&self.literals).expect("strings serialize"))
    }

    /// Whether any of `channels` fired.
    pub fn flagged(&self, channels: &[Channel]) -> bool {
        channels.iter().any(|c| match c {
            Channel::Execution => self.exec,
            Channel::Degeneracy => self.degenerate,
            Channel::Literal => self.literal,
        })
    }
}

impl DetectorConfig {
    /// Run every channel on one episode.
    pub fn detect(&self, question: &str, evidence: &str, o: &Observed<'_>) -> Flags {
        let exec = o.sql.is_none() || o.status != "ok";
        let degenerate = o.status == "ok"
            && ((self.empty_rows && o.n_rows == Some(0)) || (self.all_null && o.all_null && o.n_rows != Some(0)));
        let literals =
            o.sql.map(|s| ungrounded_literals_min(question, evidence, s, self.min_literal_chars)).unwrap_or_default();
        Flags { exec, degenerate, literal: !literals.is_empty(), literals }
    }
}
