# Trusted, no candidate code: the stripped test (each assert replaced by the calls it makes) run
# against a stand-in that writes down each call's arguments. A call the candidate's run already
# answered (the same arguments, in the same place) gets that result or exception back, so the test
# takes the path it takes with the candidate; from the first call not yet answered on, every call
# gets None. The host reruns this until every call is answered (a test whose later arguments
# depend on earlier results needs more than one round).
import os
_job = json.loads(sys.stdin.read())
_known = _job["known"]
_calls = []
_state = {"answered": 0, "fresh": False}


def _stand_in(*a, **k):
    args = repr(_san((a, k)))
    i = len(_calls)
    if i >= 100000:
        raise RuntimeError("more than 100000 calls")
    _calls.append(args)
    if _state["fresh"] or i >= len(_known) or _known[i][0] != args:
        _state["fresh"] = True
        return None
    _state["answered"] = i + 1
    return _answer(_known[i][1], _known[i][2])


sys.stdout = _Sink()
# A prompt or test that does not load lists nothing: the run fails, and the check says so.
_tns = _test_ns(_job, _stand_in)
try:
    _run_check(_job, _tns, _stand_in)
except Exception:
    pass
finally:
    os.write(1, ("\nCALLS %s\n" % json.dumps({"calls": _calls, "answered": _state["answered"]})).encode())
