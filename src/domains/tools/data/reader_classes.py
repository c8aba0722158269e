"""Replies written class by class where a reader of model text can part from Python's (issue #69).

``check.py generate`` calls ``reader_variants(gen)`` for every single-turn task: each variant is a
raw reply built from the task's right calls, changed in one way that Python's tokenizer, parser or
evaluator (and so BFCL's ``default_decode_ast_prompting``) reads in its own way: characters at the
edges and between tokens, identifiers (NFKC, keywords, homoglyphs), number spellings, operators
BFCL evaluates with ``eval``, unary operators BFCL resolves as ``-operand.value``, positional
arguments BFCL drops unread, string spellings, and the shapes of the list of calls. Nothing here
says what the verdict is: ``check.py verdict`` asks BFCL, and the test compares lucid with it.
"""

# Characters at a reply's edge or between its tokens: Python's `str.strip()` removes the white
# space (with U+001C..U+001F), its tokenizer takes only space, tab and form feed between tokens.
EDGES = {
    "cr": "\r",
    "crlf": "\r\n",
    "vt": "\x0b",
    "ff": "\x0c",
    "fs": "\x1c",
    "us": "\x1f",
    "nbsp": "\xa0",
    "nel": "\x85",
    "line_separator": "\u2028",
    "ideographic_space": "\u3000",
    "tab": "\t",
    "zero_width_space": "\u200b",
    "bom": "\ufeff",
}
BETWEEN = {
    "nbsp": "\xa0",
    "ff": "\x0c",
    "tab": "\t",
    "vt": "\x0b",
    "newline": "\n",
    "crlf": "\r\n",
    "backslash_newline": "\\\n",
    "ideographic_space": "\u3000",
    "comment": "  # a comment\n",
}


def fullwidth(text):
    """ASCII letters and digits as their fullwidth forms (NFKC maps them back)."""
    return "".join(chr(ord(c) - 0x21 + 0xFF01) if c.isascii() and c.isalnum() else c for c in text)


def reader_variants(gen, py_call, py_calls, py_literal):
    right = gen.right
    if not right:
        return
    emit = gen.emit
    text = py_calls(right)
    inner = ", ".join(py_call(c) for c in right)

    # ---- edges ----------------------------------------------------------------------------
    for name, ch in EDGES.items():
        emit(f"reader_edge_after:{name}", raw=text + ch)
        emit(f"reader_edge_before:{name}", raw=ch + text)
        emit(f"reader_edge_inside_newlines:{name}", raw="\n" + ch + text + ch + "\n")
        emit(f"reader_edge_unbracketed:{name}", raw=inner + ch)
        emit(f"reader_edge_fenced:{name}", raw="```" + ch + "\n" + text + "\n```")
    emit("reader_edge_backticks_spaces", raw=" `` " + text + " `` ")
    emit("reader_edge_quotes_and_spaces", raw=" '" + text + "' ")

    # ---- between tokens -----------------------------------------------------------------
    for name, sep in BETWEEN.items():
        calls = [py_call(c, sep="," + sep, eq=sep + "=" + sep) for c in right]
        emit(f"reader_between:{name}", raw="[" + ("," + sep).join(calls) + "]")

    # ---- identifiers ----------------------------------------------------------------------
    (fname, args), = right[0].items()
    rest = [py_call(c) for c in right[1:]]

    def first_call_named(name, params=None):
        params = args if params is None else params
        call = py_call({name: params})
        return "[" + ", ".join([call] + rest) + "]"

    emit("reader_name_fullwidth", raw=first_call_named(fullwidth(fname)))
    emit("reader_name_fullwidth_first_letter", raw=first_call_named(fullwidth(fname[0]) + fname[1:]))
    if "fi" in fname:
        emit("reader_name_ligature", raw=first_call_named(fname.replace("fi", "\ufb01", 1)))
    if "a" in fname:
        emit("reader_name_cyrillic_a", raw=first_call_named(fname.replace("a", "\u0430", 1)))
    emit("reader_name_trailing_prime", raw=first_call_named(fname + "\u02b9"))
    if args:
        pname = next(iter(args))
        renamed = {(fullwidth(k) if k == pname else k): v for k, v in args.items()}
        emit("reader_keyword_fullwidth", raw=first_call_named(fname, renamed))
        for kw in ["from", "class", "lambda", "None", "True", "async", "await", "match", "type", "_", "print"]:
            swapped = {(kw if k == pname else k): v for k, v in args.items()}
            emit(f"reader_keyword_named:{kw}", raw=first_call_named(fname, swapped))
    emit("reader_name_keyword_function", raw=first_call_named("import"))
    emit("reader_name_dunder", raw=first_call_named("__" + fname + "__"))

    # ---- values written as expressions ------------------------------------------------------
    def with_text(p, expr):
        return py_calls(gen.with_value(p, "__EXPR__")).replace("'__EXPR__'", expr)

    def emit_all(prefix, p, exprs):
        """The right calls with parameter `p` written as each expression of `exprs`."""
        for name, expr in exprs.items():
            emit(f"{prefix}:{name}", raw=with_text(p, expr))

    p = gen.find(lambda p: p.normal("integer", int))
    if p:
        v = p.first
        exprs = {
            "or_zero": f"{v} | 0",
            "xor_zero": f"{v} ^ 0",
            "shift": f"({v} << 2) >> 2",
            "and_all": f"{v} & -1",
            "double_invert_in_sum": f"0 + ~~{v}",
            "double_invert": f"~~{v}",
            "invert": f"~{v}",
            "not": f"not {v}",
            "double_minus": f"--{v}",
            "minus_of_sum": f"-({v} + 0)",
            "floordiv": f"({v} * 3) // 3",
            "modulo": f"{v} % {abs(v) + 1}" if v >= 0 else f"{v} + 0",
            "power": f"{v} ** 1",
            "true_plus": f"True + {v - 1}",
            "abs_in_sum": f"abs({v}) + 0",
            "max_in_sum": f"max({v}, {v - 1}) + 0",
            "len_in_sum": f"len('{'x' * max(v, 0)}') + 0" if 0 <= v <= 64 else f"{v} + 0",
            "call_alone": f"abs({v})",
            "hex": hex(v) if v >= 0 else f"-{hex(-v)}",
            "hex_underscore": ("0x_" + format(v, "x")) if v >= 0 else f"{v}",
            "octal": oct(v) if v >= 0 else f"{v}",
            "binary": bin(v) if v >= 0 else f"{v}",
            "leading_zero": f"0{v}" if v > 0 else "00",
            "underscore": ("_".join(str(v))) if v >= 10 else f"{v}",
            "double_underscore": ("__".join(str(v))) if v >= 10 else f"1__{v}",
            "trailing_underscore": f"{v}_",
            "float_spelling": f"{v}.0",
            "exponent": f"{v}e0",
            "big_sum": f"10 ** 40 - 10 ** 40 + {v}",
            "big": "9" * 42,
            "comparison": f"{v} < {v + 1}",
            "bool_op": f"{v} and {v}",
            "conditional": f"{v} if True else 0",
            "walrus": f"(x := {v})",
            "set": f"{{{v}}}",
            "subscript": f"[{v}][0]",
            "subscript_in_sum": f"[{v}][0] + 0",
            "lambda": f"lambda: {v}",
            "comprehension": f"[i for i in [{v}]]",
            "starred_list": f"[*[{v}]]",
            "complex": f"{v}j",
        }
        emit_all("reader_int", p, exprs)

    p = gen.find(lambda p: p.normal("float", float))
    if p:
        x = p.first
        exprs = {
            "plus_zero": f"{x!r} + 0.0",
            "times_one": f"{x!r} * 1",
            "floordiv_float": f"{x!r} // 0.1",
            "modulo_float": f"{x!r} % 0.7",
            "negative_modulo": f"-{x!r} % 2",
            "power_half": f"({x!r} ** 2) ** 0.5",
            "divide": f"{x!r} / 1",
            "int_divide": f"{int(x * 4)} / 4",
            "exponent_upper": repr(x).upper() if "e" in repr(x) else f"{x!r}E0",
            "leading_dot": repr(x)[1:] if repr(x).startswith("0.") else repr(x),
            "trailing_dot": f"{int(x)}." if x == int(x) else repr(x),
            "underscore_fraction": repr(x).replace(".", "._", 1),
            "huge": "1e309",
            "minus_huge": "-1e309",
        }
        emit_all("reader_float", p, exprs)

    p = gen.find(lambda p: p.normal("string", str) and p.first)
    if p:
        s = p.first
        half = len(s) // 2
        lit = py_literal
        exprs = {
            "percent_s": f"'%s' % {lit(s)}",
            "percent_tuple": f"'%s%s' % ({lit(s[:half])}, {lit(s[half:])})",
            "percent_d": f"'%d' % 1",
            "concatenate": f"{lit(s[:half])} + {lit(s[half:])}",
            "implicit_concatenation": f"{lit(s[:half])} {lit(s[half:])}",
            "repeat": f"{lit(s)} * 1",
            "repeat_left": f"1 * {lit(s)}",
            "format_call": f"'{{}}'.format({lit(s)})",
            "str_call": f"str({lit(s)})",
            "fstring": f"f{lit(s)}",
            "raw_prefix": "r" + lit(s),
            "unicode_prefix": "u" + lit(s),
            "bytes_prefix": "b" + lit(s) if s.isascii() else lit(s),
            "triple_quoted": "'''" + s.replace("\\", "\\\\").replace("'", "\\'") + "'''",
            "named_escape": lit(s).replace("a", "\\N{LATIN SMALL LETTER A}", 1) if "a" in s else lit(s),
            "hex_escape": lit(s).replace("a", "\\x61", 1) if "a" in s else lit(s),
            "octal_escape": lit(s).replace("a", "\\141", 1) if "a" in s else lit(s),
            "slice_sum": f"{lit(s)}[:{half}] + {lit(s)}[{half}:]",
            "subscript": f"{lit(s)}[0]",
            "upper_call": f"{lit(s.lower())}.upper()",
            "name": "some_variable",
            "dotted_name": "a.b",
            "ellipsis": "...",
            "unary_minus": f"-{lit(s)}",
        }
        emit_all("reader_str", p, exprs)

    p = gen.find(lambda p: p.normal("array", list) and p.first)
    if p:
        items = p.first
        lit = py_literal
        exprs = {
            "list_plus": f"{lit(items[:1])} + {lit(items[1:])}",
            "list_times": f"{lit(items)} * 1",
            "tuple_spelling": lit(tuple(items)),
            "trailing_comma": lit(items)[:-1] + ",]",
            "starred": "[*" + lit(items) + "]",
            "list_call": f"list({lit(tuple(items))})",
        }
        emit_all("reader_list", p, exprs)

    p = gen.find(lambda p: p.normal("boolean", bool))
    if p:
        b = p.first
        exprs = {
            "or": f"{b} | False",
            "and": f"{b} & True",
            "xor": f"{b} ^ False",
            "not": f"not {not b}",
            "int": str(int(b)),
            "bool_op": f"{b} or False",
        }
        emit_all("reader_bool", p, exprs)

    # ---- positional arguments BFCL drops unread ---------------------------------------------
    params = ", ".join(f"{k}={py_literal(v)}" for k, v in args.items())
    positionals = {
        "lambda": "lambda x, y=2: x",
        "comprehension": "[i for i in range(3) if i]",
        "starred": "*args",
        "fstring": "f'{x}!'",
        "big_int": "9" * 42,
        "set": "{1, 2}",
        "walrus": "(y := 1)",
        "bytes": "b'x'",
        "complex": "1j",
        "conditional": "1 if x else 2",
        "await": "await x",
    }
    for name, pos in positionals.items():
        call = f"{fname}({pos}, {params})" if params else f"{fname}({pos})"
        emit(f"reader_positional:{name}", raw="[" + ", ".join([call] + rest) + "]")
    emit("reader_positional_after_keyword", raw="[" + ", ".join([f"{fname}({params}, 1)" if params else f"{fname}(1)"] + rest) + "]")
    emit("reader_double_star", raw="[" + ", ".join([f"{fname}({params}, **kw)" if params else f"{fname}(**kw)"] + rest) + "]")
    emit("reader_star_after", raw="[" + ", ".join([f"{fname}({params}, *more)" if params else f"{fname}(*more)"] + rest) + "]")
    emit("reader_generator_alone", raw="[" + ", ".join([f"{fname}(x for x in y)"] + rest) + "]")

    # ---- the shape of the list of calls ---------------------------------------------------
    emit("reader_shape_tuple", raw="(" + inner + ("," if len(right) == 1 else "") + ")")
    emit("reader_shape_nested_list", raw="[" + text + "]")
    emit("reader_shape_extra_item", raw="[" + inner + ", 1]")
    emit("reader_shape_parenthesised_call", raw="[(" + py_call(right[0]) + ")" + "".join(", " + r for r in rest) + "]")
    emit("reader_shape_subscript_callee", raw="[" + ", ".join([f"fs[0]({params})"] + rest) + "]")
    emit("reader_shape_called_call", raw="[" + ", ".join([f"{fname}()({params})"] + rest) + "]")
    emit("reader_shape_semicolon", raw="; ".join(py_call(c) for c in right))
    emit("reader_shape_two_lines_bracketed", raw="[" + ",\n".join(py_call(c) for c in right) + "]")
    emit("reader_shape_statement", raw="x = " + text)


def blank_variants(gen):
    """Blank replies: BFCL reads an empty or blank reply as no call."""
    for name, text in {
        "space": " ",
        "newline": "\n",
        "spaces_newlines": " \n \n ",
        "fence": "```",
        "fence_spaced": "``` ```",
        "tab": "\t",
        "crlf": "\r\n",
        "nbsp": "\xa0",
        "quotes": "''",
        "brackets_spaced": "[ ]",
        "parentheses": "()",
    }.items():
        gen.emit(f"reader_blank:{name}", raw=text)
