# Trusted driver of the answer-free channels: the candidate (prompt + completion) compiled, run,
# and tried on the prompt's own doctest examples (`>>>` lines of the entry point's docstring:
# what the agent sees, never the hidden tests). The result is one marked JSON line written with
# a saved os.write at the end; a run that ends before it (an exit, a crash, a limit) is read by
# the host as a runtime failure.
import sys, os, io, json, ast, doctest

_w = os.write
job = json.loads(sys.stdin.read())
mark = job["mark"]
res = {"syntax": None, "load": None, "examples": 0, "wrong": [], "raised": []}


def done():
    _w(1, ("\n%s %s\n" % (mark, json.dumps(res))).encode())
    os._exit(0)


doc = ""
try:
    tree = ast.parse(job["prompt"] + "    pass\n")
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == job["entry"])
    doc = ast.get_docstring(fn) or ""
except Exception:
    pass
try:
    examples = doctest.DocTestParser().get_examples(doc)
except ValueError:  # examples doctest cannot read (inconsistent indentation): none
    examples = []
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
    def report_failure(self, out, test, example, got):
        res["wrong"].append([example.source.strip(), example.want.strip(), got.strip()[:300]])

    def report_unexpected_exception(self, out, test, example, exc_info):
        res["raised"].append([example.source.strip(), "%s: %s" % (exc_info[0].__name__, exc_info[1])])


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
done()
