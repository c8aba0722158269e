//! The page's files, shipped in the binary: plain HTML, CSS and JavaScript, no build step.

/// The page.
pub const INDEX: &str = include_str!("assets/index.html");
/// Its script: the table, filters, episodes, memories, comparison, SQL box, keys.
pub const APP: &str = include_str!("assets/app.js");
/// Its style.
pub const STYLE: &str = include_str!("assets/style.css");
