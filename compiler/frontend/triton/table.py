"""The builtin table of the Triton-style language (``tl.*``).

The family modules of ``compiler.frontend.triton`` register their handlers here with
``@builtin("name")``; importing ``compiler.frontend.triton`` imports them all.
"""

from compiler.frontend.builtins import BuiltinTable

TABLE = BuiltinTable("tl", "compiler.language",
                     "the Triton-style language (compiler.language, @tc.kernel)")
builtin = TABLE.builtin
method = TABLE.method
tile_property = TABLE.property
