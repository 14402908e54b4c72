// SPDX-License-Identifier: BSD-3-Clause
// TORU_SIMD_CLONES: a function built twice, for x86-64-v3 (AVX2 and FMA, where std::fma is one
// instruction and loops vectorise wide) and for the baseline, picked at load time (an ifunc).
// Left out under the sanitizers, whose runtimes start after ifunc resolvers run.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__) && \
    !defined(__SANITIZE_ADDRESS__)
#define TORU_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define TORU_SIMD_CLONES
#endif
