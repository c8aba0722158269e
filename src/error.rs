//! The library's one error type. Every variant a user can cause names the file (and where it
//! applies the entry, line or field) and says what is wrong.

use std::path::PathBuf;

/// The underlying error an [`Error`] keeps as its source.
pub type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A variant's message followed by its cause, as one line: `message: source`, `message` or `source`.
fn line(message: &str, source: &Option<Cause>) -> String {
    match source {
        Some(s) if message.is_empty() => s.to_string(),
        Some(s) => format!("{message}: {s}"),
        None => message.to_string(),
    }
}

/// A failure inside a model (tokenizer, chat template, tensor arithmetic, an API's answer): what
/// failed and, when there is one, the error that caused it. Its text is what a failed call
/// records (`calls.error`); as an [`Error`] it becomes [`Error::Model`] with itself as the source.
#[derive(Debug, thiserror::Error)]
#[error("{}", line(.message, .source))]
pub struct Fault {
    /// What failed.
    pub message: String,
    /// The underlying error.
    #[source]
    pub source: Option<Cause>,
}

impl Fault {
    /// A fault with a message only.
    pub fn new(message: impl Into<String>) -> Fault {
        Fault { message: message.into(), source: None }
    }

    /// A fault: `message`, caused by `source`.
    pub fn from(message: impl Into<String>, source: impl Into<Cause>) -> Fault {
        Fault { message: message.into(), source: Some(source.into()) }
    }
}

impl From<Fault> for Error {
    fn from(f: Fault) -> Error {
        Error::Model { message: String::new(), source: Some(Box::new(f)) }
    }
}

/// A value that breaks a rule, with the rule in words (a configuration field out of range, an
/// answer with no artifact in it, a key path that does not parse). The caller says where the
/// value came from: a file, a stage, a row.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

impl From<String> for Invalid {
    fn from(s: String) -> Invalid {
        Invalid(s)
    }
}

/// Its message (an `Invalid` has no cause to lose).
impl From<Invalid> for String {
    fn from(i: Invalid) -> String {
        i.0
    }
}

impl From<&str> for Invalid {
    fn from(s: &str) -> Invalid {
        Invalid(s.to_string())
    }
}

/// Result with the library error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in lucid.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Malformed or inconsistent input: the message says which entry, line or field.
    #[error("{path}: {}", line(.message, .source))]
    Input {
        /// The offending file or folder.
        path: PathBuf,
        /// What is wrong and where inside it.
        message: String,
        /// The parser's or reader's error, when there is one.
        #[source]
        source: Option<Cause>,
    },
    /// A file that could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A file that could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// An SQLite failure outside model-written SQL (opening a database, the cache).
    #[error("sqlite {path}: {source}")]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// The cause.
        source: rusqlite::Error,
    },
    /// A Parquet table that could not be written or read.
    #[error("parquet {path}: {source}")]
    Parquet {
        /// The table file.
        path: PathBuf,
        /// The cause.
        source: parquet::errors::ParquetError,
    },
    /// An Arrow error building or reading a table.
    #[error("arrow: {0}")]
    Arrow(#[from] arrow::error::ArrowError),
    /// A stage that cannot run as configured, or whose inputs do not fit together.
    #[error("stage '{stage}': {}", line(.message, .source))]
    Stage {
        /// The stage id in the pipeline.
        stage: String,
        /// What is wrong.
        message: String,
        /// The underlying error, when there is one.
        #[source]
        source: Option<Cause>,
    },
    /// An object of the shared run store that could not be read or written.
    #[error("store {url}: {key}: {source}")]
    Store {
        /// The store's URL (never holds credentials: they come from the environment).
        url: String,
        /// The object's key under the store's prefix.
        key: String,
        /// What the object store said.
        #[source]
        source: object_store::Error,
    },
    /// A model that could not be loaded, reached or run (HTTP client, tokenizer, encoder).
    #[error("model: {}", line(.message, .source))]
    Model {
        /// What failed.
        message: String,
        /// The underlying error, when there is one (candle, tokenizers, reqwest, ...).
        #[source]
        source: Option<Cause>,
    },
    /// An SQL query over run tables (DataFusion) that failed to plan or run.
    #[error("query: {}", line(.message, .source))]
    Query {
        /// Which query, over what.
        message: String,
        /// The underlying error (DataFusion's, or a reader's), when there is one.
        #[source]
        source: Option<Cause>,
    },
    /// A setting outside any file: an environment variable, a missing tool.
    #[error("{}", line(.message, .source))]
    Environment {
        /// What is missing or wrong.
        message: String,
        /// The underlying error, when there is one.
        #[source]
        source: Option<Cause>,
    },
    /// A command-line usage error.
    #[error("{}", line(.message, .source))]
    Usage {
        /// What is wrong with the command line.
        message: String,
        /// The underlying error, when there is one (a parse error).
        #[source]
        source: Option<Cause>,
    },
}

/// `Error::$plain(message)` and `Error::$from(message, source)` for a variant holding a message
/// and an optional source.
macro_rules! message_constructors {
    ($($variant:ident: $plain:ident, $from:ident, $what:literal;)*) => {
        impl Error {
            $(
                #[doc = concat!("A ", $what, " error with a message only.")]
                pub fn $plain(message: impl Into<String>) -> Error {
                    Error::$variant { message: message.into(), source: None }
                }

                #[doc = concat!("A ", $what, " error: `message` (may be empty), caused by `source`.")]
                pub fn $from(message: impl Into<String>, source: impl Into<Cause>) -> Error {
                    Error::$variant { message: message.into(), source: Some(source.into()) }
                }
            )*
        }
    };
}

message_constructors! {
    Model: model, model_from, "model";
    Query: query, query_from, "query";
    Environment: environment, environment_from, "environment";
    Usage: usage, usage_from, "usage";
}

impl Error {
    /// An input error for `path` with a message.
    pub fn input(path: impl Into<PathBuf>, message: impl Into<String>) -> Error {
        Error::Input { path: path.into(), message: message.into(), source: None }
    }

    /// An input error for `path`: `message` (may be empty), caused by `source`.
    pub fn input_from(path: impl Into<PathBuf>, message: impl Into<String>, source: impl Into<Cause>) -> Error {
        Error::Input { path: path.into(), message: message.into(), source: Some(source.into()) }
    }

    /// A stage error for stage `stage` with a message.
    pub fn stage(stage: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Stage { stage: stage.into(), message: message.into(), source: None }
    }

    /// A stage error for stage `stage`: `message` (may be empty), caused by `source`.
    pub fn stage_from(stage: impl Into<String>, message: impl Into<String>, source: impl Into<Cause>) -> Error {
        Error::Stage { stage: stage.into(), message: message.into(), source: Some(source.into()) }
    }

    /// The process exit code for this error: 2 for command-line usage, 3 for input that is
    /// malformed (a pipeline file, a data file, a stage's configuration) or a missing setting, 1
    /// for everything that failed while working (files, models, queries).
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage { .. } => 2,
            Error::Input { .. } | Error::Stage { .. } | Error::Environment { .. } => 3,
            _ => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn variants_keep_their_source_and_read_as_one_line() {
        let io = || std::io::Error::other("disk on fire");
        let e = Error::query_from("report table ex", io());
        assert_eq!(e.to_string(), "query: report table ex: disk on fire");
        assert_eq!(e.source().map(|s| s.to_string()), Some("disk on fire".into()));
        assert_eq!(Error::usage_from("", io()).to_string(), "disk on fire");
        assert_eq!(Error::input_from("a.json", "row 3", io()).to_string(), "a.json: row 3: disk on fire");
        assert!(Error::model("no weights").source().is_none());
        // A fault reads as the message a failed call records, and as an Error it is the model's.
        let f = Fault::from("candle", io());
        assert_eq!(f.to_string(), "candle: disk on fire");
        let e: Error = f.into();
        assert_eq!(e.to_string(), "model: candle: disk on fire");
        assert_eq!(e.source().and_then(|s| s.source()).map(|s| s.to_string()), Some("disk on fire".into()));
        assert_eq!(Error::usage(Invalid::from("k must be >= 1")).exit_code(), 2);
    }
}
