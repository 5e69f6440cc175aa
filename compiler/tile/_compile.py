"""``_get_max_supported_bytecode_version``, which cuTile's block-scaled matmul sample asks
before it runs: tilec compiles every operation that sample needs itself, so the answer is
the newest version cuTile names."""

from __future__ import annotations

from compiler.tile._bytecode.version import BytecodeVersion


def _get_max_supported_bytecode_version(temp_dir: str | None = None,
                                        allow_dev: bool = False) -> BytecodeVersion:
    del temp_dir, allow_dev
    return max(BytecodeVersion)
