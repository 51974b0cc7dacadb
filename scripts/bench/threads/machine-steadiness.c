// How steady this machine's cores are: each of T threads runs independent AVX2 FMAs (ten
// accumulators, no memory traffic) and prints how many rounds it finished in each 100 ms window,
// for 6 s. On a quiet dedicated core every window gives about the same count; on a VM whose
// vCPUs share host cores with other work the counts swing, and so does every timing taken
// there. `gcc -O2 -mavx2 -mfma scripts/bench/threads/machine-steadiness.c -o /tmp/steady
// -lpthread && /tmp/steady 1 && /tmp/steady 2` (docs/performance.md, Threads).
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { kWindows = 60, kWindowMs = 100, kAccumulators = 10 };

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static volatile float sink;

static void* count_rounds(void* arg) {
  __m256 acc[kAccumulators];
  for (int i = 0; i < kAccumulators; i++) acc[i] = _mm256_set1_ps((float)i);
  const __m256 m = _mm256_set1_ps(0.99999f), b = _mm256_set1_ps(1e-6f);
  long counts[kWindows];
  for (int w = 0; w < kWindows; w++) {
    const double start = now_ms();
    long rounds = 0;
    for (; now_ms() - start < kWindowMs; rounds++) {
      for (int r = 0; r < 100000; r++) {
        for (int k = 0; k < kAccumulators; k++) acc[k] = _mm256_fmadd_ps(acc[k], m, b);
      }
    }
    counts[w] = rounds;
  }
  float out[8];
  _mm256_storeu_ps(out, acc[kAccumulators - 1]);
  sink = out[0];
  long min = counts[0], max = counts[0];
  for (int w = 1; w < kWindows; w++) {
    if (counts[w] < min) min = counts[w];
    if (counts[w] > max) max = counts[w];
  }
  printf("thread %ld: rounds per window from %ld to %ld (%.2fx)\n", (long)arg, min, max,
         (double)max / min);
  return NULL;
}

int main(int argc, char** argv) {
  const int threads = argc > 1 ? atoi(argv[1]) : 1;
  if (threads < 1 || threads > 64) {
    fprintf(stderr, "usage: %s THREADS (1-64)\n", argv[0]);
    return 2;
  }
  pthread_t ids[64];
  for (long t = 0; t < threads; t++) pthread_create(&ids[t], NULL, count_rounds, (void*)t);
  for (int t = 0; t < threads; t++) pthread_join(ids[t], NULL);
  return 0;
}
