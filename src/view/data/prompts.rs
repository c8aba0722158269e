//! Each call's prompt, for the episode page: the `calls` table keeps a call's reply and its key
//! (the BLAKE3 of the request), and the response cache keeps the request itself under that key —
//! so the viewer reads the messages a call sent from this machine's response cache
//! (`<cache>/responses.sqlite`, opened read-only, never created), when it holds them. A run viewed
//! on a machine whose cache never saw it shows its replies only, and says so.
//!
//! Bounded and redacted: a prompt is cut at [`MAX_PROMPT`] bytes (the cut said), and the value of
//! every environment variable that holds a key (`*_API_KEY`, `*_TOKEN`, `*_SECRET`) is replaced
//! by `[redacted]`, as traces redact a backend's key (a request never carries one; this is a
//! second fence).

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use serde_json::Value;

/// The most bytes of one prompt shown.
pub const MAX_PROMPT: usize = 64 << 10;

/// The response cache, read-only (or nothing, where this machine has none).
pub struct CachedPrompts {
    conn: Option<Mutex<Connection>>,
    secrets: Vec<String>,
}

impl CachedPrompts {
    /// The response cache at `path`, if it exists and opens.
    pub fn open(path: &Path) -> CachedPrompts {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = path.is_file().then(|| Connection::open_with_flags(path, flags).ok()).flatten().map(Mutex::new);
        let secrets = std::env::vars()
            .filter(|(k, v)| ["_API_KEY", "_TOKEN", "_SECRET"].iter().any(|s| k.ends_with(s)) && v.trim().len() >= 4)
            .map(|(_, v)| v.trim().to_string())
            .collect();
        CachedPrompts { conn, secrets }
    }

    /// The prompt the call with cache key `key` sent: each message as `role:` and its text,
    /// bounded and redacted; None when the cache does not hold the key.
    pub fn prompt(&self, key: &str) -> Option<String> {
        let conn = self.conn.as_ref()?.lock().ok()?;
        let request: String = conn
            .query_row("SELECT request FROM responses WHERE key = ?1", params![key], |r| r.get(0))
            .optional()
            .ok()??;
        let v: Value = serde_json::from_str(&request).ok()?;
        let mut text = String::new();
        for m in v["messages"].as_array()? {
            let role = m["role"].as_str().unwrap_or("?");
            text.push_str(&format!("{role}:\n{}\n\n", m["content"].as_str().unwrap_or_default()));
        }
        for s in &self.secrets {
            text = text.replace(s.as_str(), "[redacted]");
        }
        if text.len() > MAX_PROMPT {
            let mut cut = MAX_PROMPT;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text = format!("{}\n[… cut at {MAX_PROMPT} of {} bytes]", &text[..cut], text.len());
        }
        Some(text.trim_end().to_string())
    }

    /// Fill `call["prompt"]` from the cache where the run holds none (and say where it came from).
    pub fn fill(&self, call: &mut Value) {
        if call.get("prompt").is_some_and(|p| !p.is_null()) {
            return;
        }
        if let Some(p) = call["key"].as_str().and_then(|k| self.prompt(k)) {
            call["prompt"] = Value::String(p);
            call["prompt_from"] = Value::String("this machine's response cache".into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache_with(request: &str) -> (tempfile::TempDir, CachedPrompts) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("responses.sqlite");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE responses (key TEXT PRIMARY KEY, request TEXT NOT NULL)").unwrap();
        conn.execute("INSERT INTO responses VALUES ('k', ?1)", params![request]).unwrap();
        drop(conn);
        let mut p = CachedPrompts::open(&path);
        p.secrets = vec!["sk-very-secret".into()];
        (dir, p)
    }

    #[test]
    fn a_prompt_is_read_by_key_redacted_and_cut() {
        let request = serde_json::json!({"messages": [
            {"role": "system", "content": "Grade it."},
            {"role": "user", "content": format!("key sk-very-secret then {}", "x".repeat(MAX_PROMPT))}
        ]});
        let (_dir, p) = cache_with(&request.to_string());
        let text = p.prompt("k").unwrap();
        assert!(text.starts_with("system:\nGrade it.\n\nuser:\nkey [redacted] then x"), "{}", &text[..80]);
        assert!(!text.contains("sk-very-secret"));
        assert!(text.len() < MAX_PROMPT + 100 && text.contains(&format!("[… cut at {MAX_PROMPT} of ")));
        assert_eq!(p.prompt("other"), None);
        let mut call = serde_json::json!({"key": "k", "prompt": null});
        p.fill(&mut call);
        assert_eq!(call["prompt_from"], "this machine's response cache");
        assert!(CachedPrompts::open(Path::new("/nonexistent/responses.sqlite")).prompt("k").is_none());
    }
}
