//! Sandboxed execution of untrusted SQL, the canonical result form, and the answer-free checks
//! that read an execution (never a reference answer).

pub mod checks;
pub mod connections;
pub mod lexer;
pub mod outcome;
pub mod sandbox;
pub mod value;

pub use outcome::{Execution, Outcome, ResultSet, Status};
pub use sandbox::{Limits, OpenOptions, Sandbox};
