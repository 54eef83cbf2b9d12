/* A fake libnvidia-ml for kloop's tests (built only for tests: test/CMakeLists.txt): kloop loads it
 * through KLOOP_NVML_LIBRARY (include/kloop/Measure/GpuMonitor.h) and sees one GPU whose compute
 * processes and utilization a script plays back. It implements only the entry points GpuMonitor.cpp
 * uses, with NVML's documented signatures and return codes (docs.nvidia.com/deploy/nvml-api).
 *
 * The script is the file $KLOOP_FAKE_NVML_SCRIPT, read again at every query (a missing file is an
 * idle GPU: no process, 0%). Lines; '#' starts a comment:
 *
 *   fail-init          nvmlInit_v2 fails with NVML_ERROR_DRIVER_NOT_LOADED (9)
 *   fail-processes     the process query fails with NVML_ERROR_UNKNOWN (999)
 *   bus ID             the device's PCI bus id (default 00000000:19:00.0); its UUID is GPU-fake-0
 *   AT_MS UTIL [PID:MIB[:+LINGER_MS]]...
 *       from AT_MS ms after the script's last modification on (until the next such line with a
 *       larger AT_MS applies), the GPU is UTIL percent busy and runs these processes:
 *       PID:MIB is listed as holding MIB MiB, unconditionally; PID:MIB:+LINGER_MS only while
 *       /proc/PID exists and for LINGER_MS ms after the first query that found it gone (a killed
 *       process stays listed while the driver tears its context down). Once a line has processes
 *       and none of them is listed any more, the utilization reads 0.
 *
 * A workload writes the script (to a temporary file, then renamed) to say that it holds the GPU.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NVML_SUCCESS 0
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_DRIVER_NOT_LOADED 9
#define NVML_ERROR_UNKNOWN 999

typedef struct {
  unsigned pid;
  unsigned long long usedGpuMemory;
  unsigned gpuInstanceId;
  unsigned computeInstanceId;
} nvmlProcessInfo_t;

typedef struct {
  unsigned gpu;
  unsigned memory;
} nvmlUtilization_t;

typedef struct nvmlDevice_st *nvmlDevice_t;

enum { MaxProcs = 64 };

struct Proc {
  unsigned Pid;
  unsigned long long Mib;
  long LingerMs; /* -1: listed unconditionally */
};

struct State {
  int FailInit, FailProcesses;
  char Bus[64];
  unsigned Util;
  struct Proc Procs[MaxProcs];
  int NProcs;
};

static int TheDevice;

/* When each pid tracked with a linger was first found gone, ms on CLOCK_REALTIME; 0 = not yet. */
static struct {
  unsigned Pid;
  double GoneMs;
} Gone[MaxProcs];
static int NGone;

static double nowMs(void) {
  struct timespec T;
  clock_gettime(CLOCK_REALTIME, &T);
  return T.tv_sec * 1e3 + T.tv_nsec / 1e6;
}

static int parseLine(const char *L, double *At, struct State *S) {
  char *End;
  *At = strtod(L, &End);
  if (End == L)
    return 0;
  S->Util = (unsigned)strtoul(End, &End, 10);
  S->NProcs = 0;
  while (S->NProcs < MaxProcs) {
    while (isspace((unsigned char)*End))
      ++End;
    if (!*End)
      break;
    struct Proc P = {0, 0, -1};
    P.Pid = (unsigned)strtoul(End, &End, 10);
    if (*End == ':')
      P.Mib = strtoull(End + 1, &End, 10);
    if (End[0] == ':' && End[1] == '+')
      P.LingerMs = strtol(End + 2, &End, 10);
    while (*End && !isspace((unsigned char)*End))
      ++End;
    S->Procs[S->NProcs++] = P;
  }
  return 1;
}

/* The state the script says applies now. */
static void readState(struct State *S) {
  memset(S, 0, sizeof(*S));
  strcpy(S->Bus, "00000000:19:00.0");
  const char *Path = getenv("KLOOP_FAKE_NVML_SCRIPT");
  struct stat St;
  FILE *F = Path ? fopen(Path, "r") : NULL;
  if (!F)
    return;
  if (fstat(fileno(F), &St) != 0) {
    fclose(F);
    return;
  }
  double Elapsed = nowMs() - (St.st_mtim.tv_sec * 1e3 + St.st_mtim.tv_nsec / 1e6);
  double Best = -1;
  char Line[4096];
  while (fgets(Line, sizeof(Line), F)) {
    char *Hash = strchr(Line, '#');
    if (Hash)
      *Hash = 0;
    char *L = Line;
    while (isspace((unsigned char)*L))
      ++L;
    if (!strncmp(L, "fail-init", 9))
      S->FailInit = 1;
    else if (!strncmp(L, "fail-processes", 14))
      S->FailProcesses = 1;
    else if (!strncmp(L, "bus ", 4))
      sscanf(L + 4, "%63s", S->Bus);
    else {
      struct State Cand = *S;
      double At;
      if (parseLine(L, &At, &Cand) && At <= Elapsed && At >= Best) {
        Best = At;
        S->Util = Cand.Util;
        memcpy(S->Procs, Cand.Procs, sizeof(S->Procs));
        S->NProcs = Cand.NProcs;
      }
    }
  }
  fclose(F);
}

/* Whether process P of the script is listed now. */
static int listed(const struct Proc *P) {
  if (P->LingerMs < 0)
    return 1;
  char Proc[64];
  snprintf(Proc, sizeof(Proc), "/proc/%u", P->Pid);
  int I;
  for (I = 0; I < NGone && Gone[I].Pid != P->Pid; ++I)
    ;
  if (access(Proc, F_OK) == 0) {
    if (I < NGone)
      Gone[I].GoneMs = 0; /* a new process under a reused pid */
    return 1;
  }
  if (I == NGone) {
    if (NGone == MaxProcs)
      return 0;
    Gone[NGone].Pid = P->Pid;
    Gone[NGone++].GoneMs = 0;
  }
  if (Gone[I].GoneMs == 0)
    Gone[I].GoneMs = nowMs();
  return nowMs() - Gone[I].GoneMs < P->LingerMs;
}

static int sameBus(const char *A, const char *B) {
  unsigned D1, B1, S1, F1, D2, B2, S2, F2;
  if (sscanf(A, "%x:%x:%x.%x", &D1, &B1, &S1, &F1) != 4 || sscanf(B, "%x:%x:%x.%x", &D2, &B2, &S2, &F2) != 4)
    return 0;
  return D1 == D2 && B1 == B2 && S1 == S2 && F1 == F2;
}

int nvmlInit_v2(void) {
  struct State S;
  readState(&S);
  return S.FailInit ? NVML_ERROR_DRIVER_NOT_LOADED : NVML_SUCCESS;
}

int nvmlShutdown(void) { return NVML_SUCCESS; }

const char *nvmlErrorString(int R) {
  switch (R) {
  case NVML_SUCCESS:
    return "Success";
  case NVML_ERROR_DRIVER_NOT_LOADED:
    return "Driver Not Loaded";
  case NVML_ERROR_NOT_FOUND:
    return "Not Found";
  case NVML_ERROR_INSUFFICIENT_SIZE:
    return "Insufficient Size";
  default:
    return "Unknown Error";
  }
}

int nvmlDeviceGetCount_v2(unsigned *N) {
  *N = 1;
  return NVML_SUCCESS;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned I, nvmlDevice_t *D) {
  if (I != 0)
    return NVML_ERROR_INVALID_ARGUMENT;
  *D = (nvmlDevice_t)&TheDevice;
  return NVML_SUCCESS;
}

int nvmlDeviceGetHandleByPciBusId_v2(const char *Bus, nvmlDevice_t *D) {
  struct State S;
  readState(&S);
  if (!sameBus(Bus, S.Bus))
    return NVML_ERROR_NOT_FOUND;
  *D = (nvmlDevice_t)&TheDevice;
  return NVML_SUCCESS;
}

int nvmlDeviceGetHandleByUUID(const char *Uuid, nvmlDevice_t *D) {
  if (strcmp(Uuid, "GPU-fake-0") != 0)
    return NVML_ERROR_NOT_FOUND;
  *D = (nvmlDevice_t)&TheDevice;
  return NVML_SUCCESS;
}

/* The processes listed now; returns their number and sets *AnyInScript. */
static int current(struct State *S, nvmlProcessInfo_t *Out, int *AnyInScript) {
  readState(S);
  *AnyInScript = S->NProcs > 0;
  int N = 0;
  for (int I = 0; I < S->NProcs; ++I)
    if (listed(&S->Procs[I])) {
      Out[N].pid = S->Procs[I].Pid;
      Out[N].usedGpuMemory = S->Procs[I].Mib << 20;
      Out[N].gpuInstanceId = Out[N].computeInstanceId = 0xFFFFFFFFu;
      ++N;
    }
  return N;
}

int nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t D, unsigned *Count, nvmlProcessInfo_t *Infos) {
  (void)D;
  struct State S;
  nvmlProcessInfo_t All[MaxProcs];
  int Any;
  int N = current(&S, All, &Any);
  if (S.FailProcesses)
    return NVML_ERROR_UNKNOWN;
  if ((unsigned)N > *Count) {
    *Count = (unsigned)N;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  if (N > 0)
    memcpy(Infos, All, sizeof(All[0]) * (size_t)N);
  *Count = (unsigned)N;
  return NVML_SUCCESS;
}

int nvmlDeviceGetUtilizationRates(nvmlDevice_t D, nvmlUtilization_t *U) {
  (void)D;
  struct State S;
  nvmlProcessInfo_t All[MaxProcs];
  int Any;
  int N = current(&S, All, &Any);
  U->gpu = Any && N == 0 ? 0 : S.Util;
  U->memory = 0;
  return NVML_SUCCESS;
}
