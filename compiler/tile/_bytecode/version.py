"""``BytecodeVersion``: the versions of cuTile's TileIR bytecode, which ported samples
compare against to skip what an older ``tileiras`` lacks. tilec writes no bytecode."""

from __future__ import annotations

import enum


class BytecodeVersion(enum.IntEnum):
    """A bytecode version as ``major * 10000 + minor * 100``."""

    V_13_1 = 130100
    V_13_2 = 130200
    V_13_3 = 130300

    def major(self) -> int:
        return self.value // 10000

    def minor(self) -> int:
        return self.value // 100 % 100

    def as_string(self) -> str:
        return f"{self.major()}.{self.minor()}"
