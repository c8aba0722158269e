"""BFCL's own reply decoder, run in lucid's Python sandbox (src/domains/tools/bfcl_reader.rs).

stdin: {"source": the text of bfcl_eval/model_handler/utils.py from the fetched wheel,
        "texts": [reply, ...], "eval": whether `eval` may run, "mark": the output's mark}.
The decoding functions (`default_decode_ast_prompting`, `ast_parse`, `resolve_ast_call`,
`resolve_ast_by_type`) are taken from BFCL's source unchanged and defined beside the module's
standard-library imports; BFCL's `ReturnFormat` is defined with its values.

With "eval" false (a batch of replies in one process), no reply's text is run: BFCL's
`resolve_ast_by_type` calls `eval` for arithmetic (ast.BinOp) and lambdas, and here that call
answers "own run" instead, so the host decodes that reply alone, in a process of its own, where no
other reply's result is within its reach. Each result is one line: the mark, a space, then JSON
{"i": index, "ok": value} or {"i": index, "err": "Type: message"} or {"i": index, "own_run": true}.
A value is tagged so nothing is lost on the way: ["int", "123"], ["float", repr], ["str", s],
["bool", b], ["none"], ["list", [...]], ["tuple", [...]], ["dict", [[k, v], ...]],
["other", type name].
"""

import ast
import enum
import json
import sys

request = json.loads(sys.stdin.read())
WANTED = {"default_decode_ast_prompting", "ast_parse", "resolve_ast_call", "resolve_ast_by_type"}


class ReturnFormat(enum.Enum):
    PYTHON = "python"
    JAVA = "java"
    JAVASCRIPT = "javascript"


class OwnRun(Exception):
    pass


def batch_eval(*args, **kwargs):
    raise OwnRun()


def namespace(source, allow_eval):
    tree = ast.parse(source)
    ns = {"__name__": "bfcl_eval.model_handler.utils", "__builtins__": __builtins__}
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            try:
                exec(compile(ast.Module(body=[node], type_ignores=[]), "utils.py", "exec"), ns)
            except Exception:
                pass  # bfcl_eval's own modules and third-party packages are not in the sandbox
    ns["ReturnFormat"] = ReturnFormat
    if not allow_eval:
        ns["eval"] = batch_eval
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in WANTED]
    missing = WANTED - {f.name for f in functions}
    if missing:
        raise SystemExit(f"BFCL's utils.py has no {sorted(missing)}")
    exec(compile(ast.Module(body=functions, type_ignores=[]), "bfcl_eval/model_handler/utils.py", "exec"), ns)
    return ns


def tag(v):
    if v is None:
        return ["none"]
    if isinstance(v, bool):
        return ["bool", v]
    if isinstance(v, int):
        return ["int", str(v)]
    if isinstance(v, float):
        return ["float", repr(v)]
    if isinstance(v, str):
        return ["str", v]
    if isinstance(v, list):
        return ["list", [tag(x) for x in v]]
    if isinstance(v, tuple):
        return ["tuple", [tag(x) for x in v]]
    if isinstance(v, dict):
        return ["dict", [[tag(k), tag(x)] for k, x in v.items()]]
    return ["other", type(v).__name__]


def main():
    ns = namespace(request["source"], request["eval"])
    decode = ns["default_decode_ast_prompting"]
    mark = request["mark"]
    out = sys.stdout
    for i, text in enumerate(request["texts"]):
        try:
            record = {"i": i, "ok": tag(decode(text))}
        except OwnRun:
            record = {"i": i, "own_run": True}
        except RecursionError:
            record = {"i": i, "err": "RecursionError: maximum recursion depth exceeded"}
        except Exception as e:
            record = {"i": i, "err": f"{type(e).__name__}: {e}"[:500]}
        except BaseException as e:
            # SystemExit or KeyboardInterrupt raised by an evaluated reply: its own failure
            record = {"i": i, "err": f"{type(e).__name__}"}
        line = json.dumps(record, ensure_ascii=True)
        out.write(mark + " " + line + "\n")
        out.flush()


main()
