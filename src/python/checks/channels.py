# Trusted driver of the answer-free channels: the candidate (prompt + completion) compiled, run,
# and tried on the prompt's own doctest examples (`>>>` lines of the entry point's docstring:
# what the agent sees, never the hidden tests). The result is one marked JSON line written with
# a saved os.write at the end; a run that ends before it (an exit, a crash, a limit) is read by
# the host as a runtime failure.
import sys, os, io, json, ast, doctest, typing, types

_w = os.write
job = json.loads(sys.stdin.read())
mark = job["mark"]
res = {"syntax": None, "load": None, "examples": 0, "wrong": [], "raised": [], "ran": [], "typed": 0, "mistyped": []}


def done():
    _w(1, ("\n%s %s\n" % (mark, json.dumps(res))).encode())
    os._exit(0)


fn, doc, examples = entry_examples(job["prompt"], job["entry"])
# `f(x) == y` with no output line means the comparison holds.
for ex in examples:
    if not ex.want.strip():
        try:
            node = ast.parse(ex.source, mode="eval").body
            if isinstance(node, ast.Compare) and all(isinstance(o, ast.Eq) for o in node.ops):
                ex.want = "True\n"
        except SyntaxError:
            pass
res["examples"] = len(examples)
try:
    code = compile(job["prompt"] + job["completion"], "<candidate>", "exec")
except (SyntaxError, ValueError) as e:
    res["syntax"] = "%s: %s" % (type(e).__name__, e)
    done()
ns = {"__name__": "__candidate__"}
sys.stdout = io.StringIO()
try:
    exec(code, ns)
except BaseException as e:
    res["load"] = "%s: %s" % (type(e).__name__, e)
    done()


class Runner(doctest.DocTestRunner):
    def report_success(self, out, test, example, got):
        res["ran"].append([example.source.strip(), got.strip()[:300]])

    def report_failure(self, out, test, example, got):
        res["wrong"].append([example.source.strip(), example.want.strip(), got.strip()[:300]])
        res["ran"].append([example.source.strip(), got.strip()[:300]])

    def report_unexpected_exception(self, out, test, example, exc_info):
        exc = "%s: %s" % (exc_info[0].__name__, exc_info[1])
        res["raised"].append([example.source.strip(), exc])
        res["ran"].append([example.source.strip(), "raised " + exc[:300]])


def fits(v, ann):
    """Whether value `v` is of the annotated type: the outer type, and one level of the element
    types of list, set, tuple and dict (`float` takes an int, PEP 484's numeric tower); anything
    this cannot read fits."""
    if ann is None or ann is type(None):
        return v is None
    if ann is typing.Any:
        return True
    if ann is float:
        return isinstance(v, (int, float))
    origin, args = typing.get_origin(ann), typing.get_args(ann)
    if origin is typing.Union or origin is types.UnionType:
        return any(fits(v, a) for a in args)
    if origin is None:
        try:
            return isinstance(v, ann)
        except TypeError:
            return True
    try:
        if not isinstance(v, origin):
            return False
    except TypeError:
        return True
    if origin in (list, set, frozenset) and len(args) == 1:
        return all(fits(x, args[0]) for x in v)
    if origin is tuple and args and args[-1] is not Ellipsis:
        return len(v) == len(args) and all(fits(x, a) for x, a in zip(v, args))
    if origin is tuple and len(args) == 2:
        return all(fits(x, args[0]) for x in v)
    if origin is dict and len(args) == 2:
        return all(fits(k, args[0]) and fits(x, args[1]) for k, x in v.items())
    return True


class Checker(doctest.OutputChecker):
    """doctest's comparison, then equal Python literals (`'21'` shown as `"21"`)."""

    def check_output(self, want, got, flags):
        if super().check_output(want, got, flags):
            return True
        try:
            return ast.literal_eval(want.strip()) == ast.literal_eval(got.strip())
        except Exception:
            return False


if examples and job["entry"] in ns:
    test = doctest.DocTest(examples, ns, job["entry"], "<prompt>", 0, doc)
    runner = Runner(checker=Checker(), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test, out=lambda s: None, clear_globs=False)
    # `types`: the example calls' results against the prompt's return annotation.
    ann = None
    if fn is not None and fn.returns is not None:
        try:
            ann = eval(compile(ast.Expression(fn.returns), "<annotation>", "eval"), ns)
        except Exception:
            ann = None
    for ex in examples if ann is not None else []:
        try:
            call = ast.parse(ex.source, mode="eval").body
        except SyntaxError:
            continue
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == job["entry"]):
            continue
        try:
            v = eval(compile(ex.source, "<example>", "eval"), ns)
        except BaseException:
            continue
        res["typed"] += 1
        if not fits(v, ann):
            res["mistyped"].append([ex.source.strip(), type(v).__name__, ast.unparse(fn.returns)])
done()
