"""Host tensor descriptors in the frontend: the code generator of Triton-style kernels.

A descriptor parameter (``compiler.descriptors``) arrives as its base pointer, then one
integer scalar per shape entry and per stride (the last stride, 1, is not read); before
the body is generated they are bound, under the parameter's name, to the
``TensorDescriptor`` that ``tl.make_tensor_descriptor(base, shape, strides,
block_shape)`` would make of them, so ``desc.load``/``desc.store`` lower as theirs do.
"""

from __future__ import annotations

from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.triton.block_ptr import TensorDescriptor
from compiler.frontend.triton.table import TABLE
from compiler.kinfo import ArgSpec
from compiler.source import KernelSource


class TritonCodeGenerator(CodeGenerator):
    """The code generator of ``@tc.kernel`` kernels: descriptor parameters expand to
    their parts and are bound to a descriptor of them."""

    def __init__(self, src: KernelSource, specs: list[ArgSpec]):
        super().__init__(src, specs, TABLE)

    def runtime_params(self) -> list[ArgSpec]:
        params = []
        for s in super().runtime_params():
            if s.kind == "descriptor":
                params.append(ArgSpec(s.name, "ptr", s.dtype, s.divisible16))
                params += s.value.parts
            else:
                params.append(s)
        return params

    def bind_params(self) -> None:
        for s in self.specs:
            if s.kind == "descriptor":
                layout = s.value
                values = [self.scope.pop(p.name) for p in layout.parts]
                # the last stride is the int 1, as a kernel's own descriptor writes it
                parts = tuple(1 if p.one else v
                              for p, v in zip(layout.parts, values, strict=True))
                self.scope[s.name] = TensorDescriptor(
                    self.scope[s.name], parts[:layout.rank], parts[layout.rank:],
                    layout.block_shape, layout.padding)
