# Untrusted: the candidate's code, called with each call's arguments (data listed by calls.py in a
# run without the candidate) and nothing else: no test, no expected value and no frame of the test
# exists in this process. Each call's result, copied into plain values, or its exception's name
# goes to stdout as one write that starts with the run's tag, which the host keeps apart from
# anything else the candidate writes (its prints are discarded). Nothing here decides the verdict: a record is only a claim "f(args) = value", which
# the real asserts then judge in replay.py.
import os
_w = os.write
_job = json.loads(sys.stdin.read())
_calls = _job["calls"]
_tag = _job["tag"]


sys.stdout = _Sink()
_ns = {"__name__": "__candidate__"}
exec(compile(_job["prompt"] + _job["completion"], "<candidate>", "exec"), _ns)
_cand = _ns[_job["entry"]]
del _job, _ns
random.seed(1234)
for _i, _args in enumerate(_calls):
    _a, _k = ast.literal_eval(_args)
    try:
        _r = [repr(_san(_cand(*_a, **_k))), None]
    except Exception as e:
        _name = type(e).__name__
        # A size wasm32 cannot address (a 10 GiB bytearray) is the memory limit, as on a 64-bit
        # interpreter, where it is a MemoryError.
        if isinstance(e, OverflowError) and "index-sized" in str(e):
            _name = "MemoryError"
        _r = [None, _name]
    _w(1, ("%s R %d %s\n" % (_tag, _i, json.dumps(_r))).encode())
_w(1, ("%s END\n" % _tag).encode())
