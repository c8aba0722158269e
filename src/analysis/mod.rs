//! The analysis half of the study: shared statistics (Wilson intervals, least squares, rank
//! correlation, a seeded bootstrap), the paper's closed-form theory, and both as DataFusion SQL
//! functions so every report is a `.sql` file.

pub mod stats;
pub mod theory;
pub mod udf;
