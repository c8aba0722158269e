# Trusted, no candidate code: the test with every assert replaced by the calls of the candidate it
# makes (in order), so the expected values never reach the run that executes the candidate. Also
# whether the candidate's results are out of the stripped test's reach ("bare": every use of the
# candidate is a call standing alone as a statement, with no call of it among its arguments), so
# that, when no call raised, the calls listed with placeholder results are the calls the test
# makes with the real ones and no second listing is needed.
import sys, json, ast

job = json.loads(sys.stdin.read())
names = {"candidate", job["entry"]}


class Strip(ast.NodeTransformer):
    def visit_Assert(self, node):
        calls = [n for n in ast.walk(node.test)
                 if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in names]
        inner = {id(c) for n in calls for c in ast.walk(n) if c is not n and isinstance(c, ast.Call)}
        calls = sorted((c for c in calls if id(c) not in inner), key=lambda c: (c.lineno, c.col_offset))
        return [ast.copy_location(ast.Expr(c), node) for c in calls] or ast.copy_location(ast.Pass(), node)


tree = ast.fix_missing_locations(Strip().visit(ast.parse(job["test"])))
uses = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in names]
alone = [s.value.func for s in ast.walk(tree)
         if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Name)
         and s.value.func.id in names
         and not any(isinstance(a, ast.Name) and a.id in names for a in ast.walk(s.value) if a is not s.value.func)]
check = next((f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "check"), None)
params = {id(a) for a in ast.walk(check.args)} if check else set()
bare = all(id(u) in {id(a) for a in alone} for u in uses if id(u) not in params)
print(json.dumps({"test": ast.unparse(tree), "bare": bare}))
