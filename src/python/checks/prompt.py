# Shared by the check drivers (prepended to each): the entry point's definition in the prompt and
# its docstring's doctest examples — what the agent sees, never the hidden tests.
import ast, doctest


def entry_examples(prompt, entry):
    """(the entry point's ast node or None, its docstring, its doctest examples)."""
    try:
        tree = ast.parse(prompt + "    pass\n")
        fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == entry)
    except Exception:
        return None, "", []
    doc = ast.get_docstring(fn) or ""
    try:
        return fn, doc, doctest.DocTestParser().get_examples(doc)
    except ValueError:  # examples doctest cannot read (inconsistent indentation): none
        return fn, doc, []
