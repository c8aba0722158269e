//! The records of the memory loop: an episode (what the agent saw, wrote, how it was observed,
//! graded and labelled), the memories it was shown, the answer-free channels' results on it, and
//! one model call. Their tables are [`super::tables`]'s.

/// A retrieved memory as recorded.
#[derive(Clone, Debug, PartialEq)]
pub struct Retrieved {
    /// The memory's step.
    pub step: u64,
    /// Its question.
    pub question_id: i64,
    /// Cosine similarity.
    pub similarity: f32,
    /// The label the planner was shown (stored Q at retrieval time).
    pub shown_label: u8,
    /// Same group as the current task (SQL: database; factual: topic).
    pub same_db: bool,
}

/// One episode of a domain whose observations are `O`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Episode<O> {
    /// Position in the seed's order.
    pub step: u64,
    /// The task.
    pub question_id: i64,
    /// Its group (SQL: database; factual: topic).
    pub group: String,
    /// Memories shown to the planner.
    pub retrieved: Vec<Retrieved>,
    /// Planner output (None: the call failed).
    pub plan: Option<String>,
    /// The artifact read out of the executor's answer (None: failed call or none in the answer).
    pub artifact: Option<String>,
    /// What observing the artifact recorded (the domain's columns).
    pub obs: O,
    /// correct / incorrect / unparseable / failed (grader call failed) / skipped (nothing ran).
    pub grade: String,
    /// Self-grade r.
    pub r: Option<u8>,
    /// Every answer-free channel, by name.
    pub channels: Channels,
    /// Flagged by the arm's channels.
    pub flagged: bool,
    /// The label later tasks see.
    pub stored_q: u8,
    /// Prompt tokens over the episode's calls.
    pub tokens_in: u32,
    /// Generated tokens.
    pub tokens_out: u32,
    /// Model wall-clock time, milliseconds.
    pub latency_ms: f64,
    /// Calls made (32 bits: an agent program may make any number through its proxy).
    pub calls: u32,
    /// Calls answered by the response cache.
    pub cache_hits: u32,
    /// Calls that failed after their retries.
    pub failed_calls: u32,
}

/// One model call.
#[derive(Clone, Debug, PartialEq)]
pub struct CallRecord {
    /// Step of the episode.
    pub step: u64,
    /// Its task.
    pub question_id: i64,
    /// planner / executor / grader.
    pub role: &'static str,
    /// Request key (the response cache's and replay's).
    pub key: String,
    /// Backend.
    pub backend: String,
    /// Model.
    pub model: String,
    /// The server of an HTTP backend (normalised base URL).
    pub endpoint: Option<String>,
    /// Answer (None: failed).
    pub text: Option<String>,
    /// Failure message.
    pub error: Option<String>,
    /// Prompt tokens.
    pub tokens_in: u32,
    /// Generated tokens.
    pub tokens_out: u32,
    /// Milliseconds.
    pub latency_ms: f64,
    /// Attempts.
    pub attempts: u32,
    /// Served from the response cache.
    pub cache_hit: bool,
}

/// One answer-free channel's result on one episode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fired {
    /// The channel's name (`episodes.channels[].name`).
    pub name: &'static str,
    /// Whether it fired (says the episode is likely wrong).
    pub fired: bool,
    /// What made it fire, when the channel says (e.g. the ungrounded literals, as JSON).
    pub detail: Option<String>,
}

/// Every channel's result on one episode, in the domain's order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Channels(pub Vec<Fired>);

impl Channels {
    /// Whether channel `name` fired.
    pub fn fired(&self, name: &str) -> bool {
        self.0.iter().any(|c| c.name == name && c.fired)
    }

    /// The detail of channel `name`.
    pub fn detail(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|c| c.name == name).and_then(|c| c.detail.as_deref())
    }

    /// Whether any of `names` fired.
    pub fn any_of(&self, names: &[String]) -> bool {
        names.iter().any(|n| self.fired(n))
    }
}
