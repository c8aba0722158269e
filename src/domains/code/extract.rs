//! The code in an executor's text, as the completion of the prompt (the program run is the prompt
//! followed by it): the first fenced block (```` ```python ````, ```` ``` ````; an unclosed fence
//! runs to the end), else the whole text. Code whose first line that is not a comment is indented
//! is a body completing the prompt, kept as it is. Code that starts at column 0 and has a line at
//! column 0 that starts a definition or an import (`def`, `async def`, `class`, `import`, `from`,
//! a decorator) is whole definitions (a comment, a docstring or a constant may come first): it
//! gets a leading newline, so it follows the prompt's function (whose body is then its
//! docstring) and redefines it. Other code at column 0 is a body written without its
//! indentation: every line is indented by four spaces. None when nothing but blank lines remains.

/// The code in `text`, ready to follow the prompt.
pub fn code(text: &str) -> Option<String> {
    let block = crate::python::program::fenced(text).unwrap_or(text);
    let lines: Vec<&str> = block.lines().map(str::trim_end).skip_while(|l| l.trim().is_empty()).collect();
    let end = lines.iter().rposition(|l| !l.trim().is_empty())? + 1;
    let lines = &lines[..end];
    let first = lines.iter().find(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty()).unwrap_or(&lines[0]);
    let whole = ["def ", "async def ", "import ", "from ", "class ", "@"];
    let indented = first.starts_with([' ', '\t']);
    if !indented && lines.iter().any(|l| whole.iter().any(|w| l.starts_with(w))) {
        Some(format!("\n{}\n", lines.join("\n")))
    } else if !indented {
        let indented: Vec<String> =
            lines.iter().map(|l| if l.is_empty() { String::new() } else { format!("    {l}") }).collect();
        Some(format!("{}\n", indented.join("\n")))
    } else {
        Some(format!("{}\n", lines.join("\n")))
    }
}
