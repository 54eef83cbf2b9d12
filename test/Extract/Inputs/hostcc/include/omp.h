// A stand-in for the omp.h a host compiler ships (kloop's tests only).
#pragma once
#ifdef __cplusplus
extern "C" {
#endif
int omp_get_max_threads(void);
int omp_get_thread_num(void);
#ifdef __cplusplus
}
#endif
