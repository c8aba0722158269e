# Trusted driver: the candidate's results on the calls of the prompt's doctest examples (their
# source lines only, never their shown outputs), each as the repr of a plain value or the name of
# the exception raised; one marked JSON line at the end, written with a saved os.write.
import sys, os, io, json

_w = os.write
job = json.loads(sys.stdin.read())
mark = job["mark"]
sys.set_int_max_str_digits(0)
sources = [e.source for e in entry_examples(job["prompt"], job["entry"])[2]]
out = []
ns = {"__name__": "__candidate__"}
sys.stdout = io.StringIO()
try:
    exec(compile(job["prompt"] + job["completion"], "<candidate>", "exec"), ns)
    loaded = True
except BaseException as e:
    loaded = False
for src in sources if loaded else []:
    try:
        v = eval(compile(src, "<example>", "eval"), ns)
        t = type(v)
        ok = t in (int, float, str, bool, type(None), bytes, complex, list, tuple, dict, set, frozenset)
        out.append("value " + repr(v) if ok else "unplain " + t.__name__)
    except BaseException as e:
        out.append("raised " + type(e).__name__)
_w(1, ("\n%s %s\n" % (mark, json.dumps({"loaded": loaded, "calls": len(sources), "results": out}))).encode())
os._exit(0)
