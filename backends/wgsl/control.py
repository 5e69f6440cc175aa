"""WGSL of structured control flow: ``scf.for``, ``scf.while`` and ``scf.if``.

Loop-carried values and region results are one ``var`` per chunk, declared before the
statement; ``scf.yield`` assigns them (``WGSLEmitter.block``). Block arguments are
``let`` copies of those variables, so a yield may assign them in any order.
"""

from __future__ import annotations

from xdsl.dialects import scf

from backends.wgsl.core import WGSLEmitter, handles, ty


def _variables(em: WGSLEmitter, values, inits=None) -> list[list[str]]:
    """One ``var`` per chunk of each value (loop-carried values, ``scf.if`` results)."""
    out = []
    for i, v in enumerate(values):
        val = em.define(v)
        for c, w in enumerate(val.widths):
            init = f" = {em.vals[inits[i]].chunk(c)}" if inits else ""
            em.line(f"var {val.names[c]}: {ty(val.elem, w)}{init};")
        out.append(val.names)
    return out


def _copies(em: WGSLEmitter, args, variables: list[list[str]]) -> None:
    """Block arguments as copies of loop variables, so a yield may assign in any order."""
    for arg, names in zip(args, variables, strict=True):
        copy = em.define(arg)
        for c, name in enumerate(copy.names):
            em.line(f"let {name} = {names[c]};")


@handles(scf.ForOp)
def for_(em: WGSLEmitter, op: scf.ForOp) -> None:
    carried = _variables(em, op.res, list(op.iter_args))
    body = op.body.block
    iv = em.define(body.args[0])
    i, elem = iv.names[0], iv.elem
    lb, ub, step = (em.vals[v].chunk(0) for v in (op.lb, op.ub, op.step))
    if elem == "i64":  # compared and stepped by the int64 helpers
        less, add = (em.helper(k, elem, 1) for k in ("slt64", "add64"))
        em.line(f"for (var {i}: {ty(elem, 1)} = {lb}; {less}({i}, {ub}); "
                f"{i} = {add}({i}, {step})) {{")
    else:
        em.line(f"for (var {i}: {elem} = {lb}; {i} < {ub}; {i} = {i} + {step}) {{")
    em.depth += 1
    _copies(em, body.args[1:], carried)
    em.block(body, carried)
    em.depth -= 1
    em.line("}")


@handles(scf.WhileOp)
def while_(em: WGSLEmitter, op: scf.WhileOp) -> None:
    """A ``loop`` that runs the before region, leaves at ``scf.condition`` when it is
    false (results: its operands), then runs the after region."""
    before, after = op.before_region.block, op.after_region.block
    state = _variables(em, before.args, list(op.arguments))
    results = _variables(em, op.res)
    em.line("loop {")
    em.depth += 1
    _copies(em, before.args, state)
    em.exits.append(results)
    em.block(before)
    em.exits.pop()
    _copies(em, after.args, results)
    em.block(after, state)
    em.depth -= 1
    em.line("}")


@handles(scf.ConditionOp)
def condition(em: WGSLEmitter, op: scf.ConditionOp) -> None:
    em.assign(em.exits[-1], op.args)
    em.line(f"if (!{em.vals[op.condition].chunk(0)}) {{ break; }}")


@handles(scf.IfOp)
def if_(em: WGSLEmitter, op: scf.IfOp) -> None:
    results = _variables(em, op.output)
    em.line(f"if ({em.vals[op.cond].chunk(0)}) {{")
    for i, region in enumerate((op.true_region, op.false_region)):
        if region.blocks:
            if i:
                em.line("} else {")
            em.depth += 1
            em.block(region.block, results)
            em.depth -= 1
    em.line("}")
