//! Sentence embeddings (candle BERT: MiniLM with mean pooling, SimCSE with its pooler) and exact
//! top-k retrieval over a contiguous matrix of L2-normalised vectors.

pub mod bert;
pub mod encoder;
pub mod index;
pub mod matmul;
pub mod table;

pub use bert::{Embedder, Pooling};
pub use index::VectorIndex;
