//! A program in a model's text, as the domains that run model-written Python read it: the first
//! fenced block ([`fenced`]) and its common indentation removed ([`dedent`]).

/// The first fenced block's inside (```` ```python ````, ```` ``` ````: the rest of the fence line
/// is its language tag; an unclosed fence runs to the end). None: no fence.
pub fn fenced(text: &str) -> Option<&str> {
    let open = text.find("```")?;
    let after = &text[open + 3..];
    let start = after.find('\n').map_or(after.len(), |i| i + 1);
    let body = &after[start..];
    Some(match body.find("```") {
        Some(close) => &body[..close],
        None => body,
    })
}

/// `text` without the indentation its non-blank lines share.
pub fn dedent(text: &str) -> String {
    let indent =
        text.lines().filter(|l| !l.trim().is_empty()).map(|l| l.len() - l.trim_start().len()).min().unwrap_or(0);
    text.lines().map(|l| l.get(indent..).unwrap_or("").to_string()).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_fence_is_the_program_and_an_unclosed_one_runs_to_the_end() {
        assert_eq!(fenced("Here:\n```python\nprint(1)\n```\nmore ```x```"), Some("print(1)\n"));
        assert_eq!(fenced("```\nprint(2)"), Some("print(2)"));
        assert_eq!(fenced("print(3)"), None);
        assert_eq!(dedent("    a = 1\n\n      b = 2"), "a = 1\n\n  b = 2");
    }
}
