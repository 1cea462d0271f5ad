// windows.cu -- loops for the iteration windows (issue 26): the engine runs a long loop of a
// sampled block in windows and jumps over the rest where the loop's state moves by a constant
// step, and runs it whole where it does not.
//
// Launch each with one thread per row or column: grid n / 128, block 128.

// Steady, lanes 32 rows apart: every access 32 sectors, each sector reused by the next 7
// iterations (L1 hits 7 of 8 once the window starts on a sector).
__global__ void row_sums(const float *A, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int k = 0; k < n; ++k) {
        s += A[i * n + k];
    }
    out[i] = s;
}

// Steady, coalesced, each row read again by the next iteration (a vertical stencil): the
// iteration before a window brings the row its first iteration reads again.
__global__ void column_stencil(const float *A, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int k = 0; k + 1 < n; ++k) {
        s += A[k * n + i] * A[(k + 1) * n + i];
    }
    out[i] = s;
}

// A pointer that walks: the state is a pointer, its step 4 rows.
__global__ void pointer_walk(const float *A, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float *p = A + i;
    const float *end = A + n * n;
    float s = 0.0f;
    while (p < end) {
        s += *p;
        p += 4 * n;
    }
    out[i] = s;
}

// Not steady: the counter doubles. Runs whole.
__global__ void doubling(const float *A, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int k = 1; k < n * n; k *= 2) {
        s += A[(k + i) % (n * n)];
    }
    out[i] = s;
}

// Another exit than the test: runs whole.
__global__ void early_exit(const float *A, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int k = 0; k < n; ++k) {
        if (k == n - 3) {
            break;
        }
        s += A[k * n + i];
    }
    out[i] = s;
}
