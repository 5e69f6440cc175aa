"""``triton._C``: of Triton's compiled extension, only what programs call from the host
(``libtriton.nvidia.cublas``); its compiler internals are not here."""
