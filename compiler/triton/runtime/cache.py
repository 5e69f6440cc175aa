"""``triton.runtime.cache``: ``triton_key``, the string that names the compiler in cache
keys (programs that cache their own artifacts mix it in)."""

import compiler


def triton_key() -> str:
    """tilec's name and version: artifacts kept under it go stale when tilec changes."""
    return f"tilec-{compiler.__version__}"


__all__ = ["triton_key"]
