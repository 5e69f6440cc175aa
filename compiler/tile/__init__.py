"""Array tiles, cuTile style: ``import compiler.tile as ct`` in place of
``import cuda.tile as ct`` (docs/language.md, "Array tiles, cuTile style").

Kernels take arrays (NumPy, CuPy, PyTorch, wgpu buffers; any strides) and move whole
tiles by tile-granular index: ``ct.load(a, index=(i, j), shape=(tm, tn))``. Like
``compiler.language`` this package only names things for the frontend and imports no
xDSL; ``ct.kernel``, ``ct.launch`` and ``ct.cdiv`` also work on the host.

The package mirrors ``cuda.tile``: ``compiler.tile.tune`` (``exhaustive_search``) and
the host helpers cuTile's samples import from its private modules
(``compiler.tile._cext.get_compute_capability``, ...). cuTile names that tilec does not
implement yet are here too, so that ported code imports; a kernel that uses one fails to
compile with a ``CompileError`` naming what is missing.
"""

from compiler.language import (  # noqa: F401 - tilec's builtins under cuTile's names too
    abs,
    erf,
    fma,
    sigmoid,
    where,
)
from compiler.tile import compilation, tune  # noqa: F401 - cuda.tile's modules
from compiler.tile._alias import install_as_cutile, uninstall_as_cutile  # noqa: F401
from compiler.tile._annotations import (  # noqa: F401
    Array,
    ArrayAnnotation,
    Constant,
    ConstantAnnotation,
    ConstantBool,
    ConstantInt,
    IndexedWithInt64,
    ListAnnotation,
    Scalar,
    ScalarInt64,
    Tile,
    TiledView,
)
from compiler.tile._datatype import (  # noqa: F401
    DType,
    bfloat16,
    bool_,
    float4_e2m1fn,
    float8_e4m3fn,
    float8_e5m2,
    float8_e5m3fnu,
    float8_e8m0fnu,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    tfloat32,
    uint8,
    uint16,
    uint32,
    uint64,
)
from compiler.tile._enums import MemoryOrder, MemoryScope, PaddingMode, RoundingMode  # noqa: F401
from compiler.tile._exception import *
from compiler.tile._execution import (  # noqa: F401
    ByTarget,
    compiler_timeout,
    function,
    kernel,
    launch,
)
from compiler.tile._math import *
from compiler.tile._stub import *
from compiler.tile._stub import cdiv  # noqa: F401
