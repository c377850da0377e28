"""The cells the guest's native compile declines (`src/cell.rs`): module-level
`asyncio.run(x)` rewritten to `await x`, and sources that do not parse; and every cell's
source, kept for tracebacks."""

import ast
import collections
import linecache

# Cells whose source stays in linecache for tracebacks of functions they defined.
MAX_CACHED_CELLS = 256


class _RunRewriter(ast.NodeTransformer):
    """`asyncio.run(x)` at module level becomes `await x`, so no native frame waits."""

    def _skip(self, node):
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = _skip
    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _skip

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "run"
            and isinstance(func.value, ast.Name)
            and func.value.id == "asyncio"
            and len(node.args) == 1
            and not node.keywords
        ):
            return ast.copy_location(ast.Await(value=node.args[0]), node)
        return node


def compile_declined(source, filename, may_run):
    """A cell the guest's native compile declined (`src/cell.rs`): one that may call
    `asyncio.run`, compiled through a Python AST with the call rewritten to an `await`, or one
    that does not parse, which the standard compiler reports with CPython's `SyntaxError`.
    `(body code, trailing-expression code or None)`, as the native compile gives."""
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    if may_run:
        return _compile_rewritten(source, filename, flags)
    return compile(source, filename, "exec", flags=flags, dont_inherit=True), None


def _compile_rewritten(source, filename, flags):
    """The slower path through a Python AST, for cells that may call `asyncio.run`."""
    tree = ast.fix_missing_locations(_RunRewriter().visit(ast.parse(source, filename, "exec")))
    expr = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        expr = ast.Expression(tree.body.pop().value)
    body = compile(tree, filename, "exec", flags=flags, dont_inherit=True)
    if expr is not None:
        expr = compile(expr, filename, "eval", flags=flags, dont_inherit=True)
    return body, expr


_cell_names = collections.deque()


def remember_source(filename, source):
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    _cell_names.append(filename)
    if len(_cell_names) > MAX_CACHED_CELLS:  # one name comes in per cell, so one goes
        linecache.cache.pop(_cell_names.popleft(), None)


def forget_sources():
    """Drops every remembered cell source (the warm-up's, before the image is taken)."""
    for name in _cell_names:
        linecache.cache.pop(name, None)
    _cell_names.clear()
