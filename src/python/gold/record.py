# Untrusted: the candidate runs under the stripped test; each of its calls is written out as data
# (arguments, the result copied into plain values, or the exception's name). Its own prints are
# discarded. Nothing here decides the verdict.
import os
_w = os.write
_job = json.loads(sys.stdin.read())
_tag = _job["tag"]


def _emit(kind, payload):
    _w(1, ("\n%s %s %s\n" % (_tag, kind, json.dumps(payload))).encode())


class _Sink:
    def write(self, s):
        return len(s)

    def flush(self):
        pass


sys.stdout = _Sink()
_ns = {"__name__": "__candidate__"}
exec(compile(_job["prompt"] + _job["completion"], "<candidate>", "exec"), _ns)
_cand = _ns[_job["entry"]]


def _rec(*a, **k):
    args = repr(_san((a, k)))
    state = random.getstate()
    try:
        res = _san(_cand(*copy.deepcopy(a), **copy.deepcopy(k)))
    except Exception as e:
        random.setstate(state)
        _emit("R", [args, None, type(e).__name__])
        raise
    random.setstate(state)
    _emit("R", [args, repr(res), None])
    return res


_tns = {"__name__": "__test__"}
exec(_job["prompt"], _tns)
_tns[_job["entry"]] = _rec
exec(_job["test"], _tns)
random.seed(1234)
try:
    _tns["check"](_rec)
finally:
    _emit("END", None)
