//! Sentence embeddings (candle BERT: MiniLM with mean pooling, SimCSE with its pooler) and exact
//! top-k retrieval over a contiguous matrix of L2-normalised vectors.

pub mod bert;
pub mod index;
pub mod table;

pub use bert::{Embedder, Pooling};
pub use index::VectorIndex;
