// cpp_templates.cu -- a kernel template with type, int and bool parameters (one defaulted), and
// device function templates called with deduced and explicit arguments.
//
// Analyse with: --kernel gather --arg T=float --arg BS=256 --arg n=16384 (CLAMP keeps its
// default). The explicit instantiation at the end is what nvcc compiles (and sector-validate
// launches).
//
// Hand derivation, grid 64 x block 256 = 512 warps, n = 16,384 (no lane is clamped):
//   in[2 * i] (through at<float, 2>): 32 floats 8 bytes apart = 256 bytes = 8 sectors:
//     512 requests / 4,096 sectors.
//   out[i]: 512 requests / 2,048 sectors.   logical: 16,384 x 4 x 2 = 131,072 bytes.
// scale_rows<double>, grid 32 x block 128 = 128 warps, rows of 128 doubles:
//   row[threadIdx.x] loads and stores 32 doubles = 256 bytes = 8 sectors:
//     128 / 1,024 each; logical 4,096 x 8 x 2 = 65,536 bytes.

template <typename T>
__device__ __forceinline__ T twice(T v)
{
    return v + v;
}

template <typename T, int STRIDE>
__device__ T at(const T *p, int i)
{
    return p[i * STRIDE];
}

template <typename T, int BS = 256, bool CLAMP = true>
__global__ void gather(const T *__restrict__ in, T *__restrict__ out, int n)
{
    int i = blockIdx.x * BS + threadIdx.x;
    if (CLAMP && i >= n) {
        return;
    }
    out[i] = twice(at<T, 2>(in, i));
}

template <typename T>
__device__ void scale_in_place(T &x, T by)
{
    x = x * by;
}

template <typename T>
__global__ void scale_rows(T *data, unsigned cols)
{
    T *row = data + blockIdx.x * cols;
    scale_in_place(row[threadIdx.x], T(3));
}

template __global__ void gather<float, 256, true>(const float *__restrict__, float *__restrict__, int);
template __global__ void scale_rows<double>(double *, unsigned);
