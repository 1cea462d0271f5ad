"""Builds add.cubin from add.py without a GPU (triton 3.9, CUDA 13.0 from the Python index).

    python3 build.py   # in this folder
"""
import sys

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

sys.path.insert(0, ".")
from add import add_kernel  # noqa: E402

signature = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n_elements": "i32", "BLOCK_SIZE": "constexpr"}
compiled = triton.compile(
    ASTSource(fn=add_kernel, signature=signature, constexprs={"BLOCK_SIZE": 1024}),
    target=GPUTarget("cuda", 90, 32),
)
open("add.cubin", "wb").write(compiled.asm["cubin"])
# The launch: Triton's grid is in programs (blocks), each of num_warps * 32 threads.
print(f"block = {compiled.metadata.num_warps * 32}, shared bytes = {compiled.metadata.shared}")
