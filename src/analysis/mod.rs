//! The analysis half of the study: shared statistics (Wilson intervals, least squares, rank
//! correlation, a seeded bootstrap), their clustered versions, the seeded random variates they
//! draw, the paper's closed-form theory, and all of them as DataFusion SQL functions so every
//! report is a `.sql` file.

pub mod clusters;
pub mod stats;
pub mod theory;
pub mod udf;
pub mod variates;
