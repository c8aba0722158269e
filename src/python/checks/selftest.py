# Trusted driver of the `selftest` verifier: tests a model wrote for a candidate, run against it.
# The tests are compiled on their own first: tests that do not parse (after dropping a last line
# the token budget may have cut off) are no test. Then the candidate (prompt + completion) runs,
# then the tests in its namespace; the marked line after them says they reached their end.
import sys, os, json

_w = os.write
job = json.loads(sys.stdin.read())
mark = job["mark"]
src = job["tests"]
try:
    tests = compile(src, "<tests>", "exec")
except SyntaxError:
    try:
        tests = compile(src.rstrip().rsplit("\n", 1)[0], "<tests>", "exec")
    except SyntaxError:
        _w(1, ("\n%s unparsable\n" % mark).encode())
        os._exit(0)
ns = {"__name__": "__main__"}
exec(compile(job["prompt"] + job["completion"], "<candidate>", "exec"), ns)
exec(tests, ns)
_w(1, ("\n%s\n" % mark).encode())
