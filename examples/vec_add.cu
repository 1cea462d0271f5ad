// vec_add.cu -- the seed lesson's vector add, c[i] = a[i] + b[i], one element per thread.
//
// Demonstrates: the coalesced baseline (12 sectors per full warp), a guard that cuts the last
// warp when n is not a multiple of 32, and misaligned base pointers (manifest `offsets`).
// The file also carries host code (a templated helper and a main with <<<...>>>), as real
// files do; NVRTC skips it through __CUDACC_RTC__.
//
// Hand derivation (4-byte floats, pointers 256-byte aligned unless offset):
//   A warp holds i = 32w .. 32w+31: 128 contiguous bytes starting at 128w, a multiple of 32,
//   so a[i], b[i] and c[i] each touch exactly 4 sectors: 12 sectors per warp.
//   vec_add_1m: n = 1,048,576, grid 4096 x block 256 = n threads = 32,768 warps.
//     loads 2 x 32,768 = 65,536 requests, 8 x 32,768 = 262,144 sectors;
//     stores 32,768 requests, 131,072 sectors; logical 12 x n = 12,582,912 bytes.
//   vec_add_ragged: n = 1,000,005, grid 3907 (= ceil(n/256)) x 256. 31,250 full warps plus one
//     warp with 5 active lanes (i = 1,000,000..1,000,004, bytes from 4,000,000 = 125,000 x 32,
//     20 bytes: 1 sector); the remaining 187 threads of the last block fail the guard and their
//     warps (5 of them) execute nothing. Warps with work: 31,251.
//     loads 62,502 requests, 2 x (31,250 x 4 + 1) = 250,002 sectors; stores 31,251 requests,
//     125,001 sectors; logical 12 x 1,000,005 = 12,000,060 bytes.
//   vec_add_offset4: a starts 4 bytes past a sector boundary: 128 bytes from 128w+4 cover the
//     sectors 4w .. 4w+4 = 5 sectors; b and c stay at 4. loads 32,768 x (5 + 4) = 294,912.
//   vec_add_offset12: all three pointers 12 bytes past: 5 sectors each, 15 per warp.
//     loads 32,768 x 10 = 327,680 sectors, stores 32,768 x 5 = 163,840 sectors.

__global__ void vec_add(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}

#ifndef __CUDACC_RTC__
#include <cstdio>
#include <vector>

template <typename T>
static T *to_device(const std::vector<T> &host)
{
    T *dev = nullptr;
    cudaMalloc(&dev, host.size() * sizeof(T));
    cudaMemcpy(dev, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
    return dev;
}

int main()
{
    const int n = 1 << 20;
    std::vector<float> ha(n, 1.0f), hb(n, 2.0f);
    float *a = to_device(ha);
    float *b = to_device(hb);
    float *c = nullptr;
    cudaMalloc(&c, n * sizeof(float));
    const int block = 256;
    const int grid = (n + block - 1) / block;
    vec_add<<<grid, block>>>(a, b, c, n);
    cudaDeviceSynchronize();
    float first = 0.0f;
    cudaMemcpy(&first, c, sizeof(float), cudaMemcpyDeviceToHost);
    std::printf("c[0] = %f\n", first);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    return 0;
}
#endif
