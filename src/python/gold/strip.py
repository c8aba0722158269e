# Trusted, no candidate code: the test with every assert replaced by the calls of the candidate it
# makes (in order), so the expected values never reach the run that executes the candidate.
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


print(ast.unparse(ast.fix_missing_locations(Strip().visit(ast.parse(job["test"])))))
