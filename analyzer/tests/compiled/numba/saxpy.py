"""A Numba kernel; `python3 saxpy.py` writes saxpy.ptx without a GPU, and
`ptxas -arch=sm_90 -lineinfo saxpy.ptx -o saxpy.cubin` the cubin (CUDA 13.0 from the Python index)."""
from numba import cuda, float32, int32


def saxpy(a, x, y, out, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = a * x[i] + y[i]


if __name__ == "__main__":
    ptx, _ = cuda.compile_ptx(saxpy, (float32, float32[:], float32[:], float32[:], int32), cc=(9, 0), lineinfo=True)
    open("saxpy.ptx", "w").write(ptx)
