/*
 * A fake NVML library for gpumon's tests: the real nvidia-ml-py binding loads it in place
 * of libnvidia-ml.so.1 and calls it exactly as it would call the driver.
 *
 * Scripted through exported fake_* functions (see fakenvml/__init__.py for the Python side):
 * number of GPUs, per-GPU values, an error code for any function on any GPU ("not
 * supported"), a lost GPU, running processes, an error from nvmlInit.
 *
 * A GPU can be put in MIG mode with MIG devices (fake_set_mig_mode, fake_add_mig); on a MIG
 * device handle only identity, memory and instance ids are supported, as on real ones.
 *
 * A function can also be made slow, or to never return (a hung driver call).
 *
 * A program that loads it as libnvidia-ml.so.1 (LD_LIBRARY_PATH) without calling the
 * fake_* functions is scripted by environment variables, read when the library loads:
 *   FAKENVML_GPUS=N          the number of GPUs (default 1)
 *   FAKENVML_DELAY=func=ms   `func` sleeps ms milliseconds per call; -1: it never returns;
 *                            func `*`: every function
 *   FAKENVML_HANG_FILE=path  created when a delayed call starts: one that hangs (a test
 *                            knows it is stuck) or a slow one (it knows one is under way)
 *   FAKENVML_PROCS=gpu:pid:bytes,...  compute processes (tests/gpu/check.py --dry-run)
 *   FAKENVML_XIDS=gpu:code:ms,...      XID errors, each `ms` milliseconds after loading
 *   FAKENVML_VALUES=gpu:name=value,... values as fake_set_value sets them (power_mw, ...)
 *   FAKENVML_PROFILE=h200    what each call costs (see "cost profile" below; default none)
 *   FAKENVML_NAMES=name;name;...       the GPUs' names, from GPU 0 on ("NVIDIA H200;...")
 *
 * Health: clock event reasons, ECC mode and counts, remapped rows, retired pages, the PCIe
 * replay counter, the memory temperature (a field value), the energy counter (integrated from
 * the power over time) and XID events through an event set (nvmlEventSetWait_v2).
 *
 * GPM, NVLink, the topology, P2P and the affinities live in fakenvml_interconnect.c, included
 * at the end of this file (its top comment says what they answer; FAKENVML_SCENARIO=hgx is an
 * 8-GPU NVLink board).
 *
 * Built with -DFAKE_OLD_DRIVER it leaves out the newer entry points (memory info v2,
 * TemperatureV, the _v3 process lists, ClocksEventReasons, GPM), as an older driver does; the binding then raises
 * NVMLError_FunctionNotFound for them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>

#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include <nvml.h>

#define FAKE_EXPORT __attribute__((visibility("default")))
#define MAX_GPUS 64
#define MAX_PROCS 1024
#define MAX_ERRORS 256

enum {
    V_MEM_TOTAL, V_MEM_USED, V_MEM_RESERVED, V_UTIL_GPU, V_UTIL_MEM, V_TEMP, V_POWER_MW,
    V_LIMIT_MW, V_FAN, V_SM_CLOCK, V_MEM_CLOCK, V_PSTATE, V_PCIE_RX_KB, V_PCIE_TX_KB, V_ENC,
    V_DEC, V_PERSISTENCE, V_COMPUTE_MODE, V_CLOCK_EVENTS, V_ECC_MODE, V_ECC_SBE_VOL,
    V_ECC_DBE_VOL, V_ECC_SBE_AGG, V_ECC_DBE_AGG, V_REMAP_CORR, V_REMAP_UNC, V_REMAP_PENDING,
    V_REMAP_FAILURE, V_RETIRED_SBE, V_RETIRED_DBE, V_RETIRED_PENDING, V_PCIE_REPLAY,
    V_MEM_TEMP, V_DISPLAY_ACTIVE, V_COUNT
};
static const char *value_names[V_COUNT] = {
    "mem_total", "mem_used", "mem_reserved", "util_gpu", "util_mem", "temp", "power_mw",
    "limit_mw", "fan", "sm_clock", "mem_clock", "pstate", "pcie_rx_kb", "pcie_tx_kb", "enc",
    "dec", "persistence", "compute_mode", "clock_events", "ecc_mode", "ecc_sbe_vol",
    "ecc_dbe_vol", "ecc_sbe_agg", "ecc_dbe_agg", "remap_corr", "remap_unc", "remap_pending",
    "remap_failure", "retired_sbe", "retired_dbe", "retired_pending", "pcie_replay", "mem_temp",
    "display_active"
};

struct nvmlDevice_st {
    int index;  /* of the physical GPU (a MIG device: of its parent) */
    int mig;    /* -1: the GPU itself; else the MIG device's slot on its parent */
};

#define MAX_MIGS 7
typedef struct { int present; unsigned int gi, ci; unsigned long long total, used; char profile[32]; } fake_mig;
static struct nvmlDevice_st mig_devices[MAX_GPUS][MAX_MIGS];
static fake_mig migs[MAX_GPUS][MAX_MIGS];
static int mig_mode[MAX_GPUS];

typedef struct { int gpu; char func[96]; nvmlReturn_t code; } fake_error;
typedef struct { int gpu; int graphics; unsigned int pid; unsigned long long used; } fake_proc;

static struct nvmlDevice_st devices[MAX_GPUS];
static unsigned long long values[MAX_GPUS][V_COUNT];
static char names[MAX_GPUS][96];
static int lost[MAX_GPUS];
static long long calls[MAX_GPUS];
static fake_error errors[MAX_ERRORS];
static int n_errors;
static fake_proc procs[MAX_PROCS];
static int n_procs;
static int gpu_count, init_count;
static nvmlReturn_t init_error;
static char driver_version[80], nvml_version[80];
static int cuda_version;
static char delay_func[96];
static long delay_ms;
static char hang_file[512];

/* Energy: mJ since load, integrated from the power each GPU draws (set at any time). */
static double energy_mj[MAX_GPUS];
static double energy_at[MAX_GPUS];  /* CLOCK_MONOTONIC seconds it was last brought up to date */

/* XID events, due at set times, delivered through the one event set. */
#define MAX_XIDS 256
typedef struct { int gpu; unsigned long long code; double due; int delivered; } fake_xid;
static fake_xid xids[MAX_XIDS];
static int n_xids;
static unsigned long long registered[MAX_GPUS];  /* event types registered per GPU */
static int event_set_alive;
struct nvmlEventSet_st { int unused; };
static struct nvmlEventSet_st the_event_set;
static pthread_mutex_t event_lock = PTHREAD_MUTEX_INITIALIZER;
/* Signalled on every change a waiting nvmlEventSetWait must see (an XID added, the set
 * freed, a GPU registered or the count changed): the wait sleeps until then, its timeout or
 * the next XID's due time, as the driver's wait sleeps until an event arrives (no polling:
 * a polling fake would charge every watcher's CPU figure with its own wakeups). */
static pthread_cond_t event_changed;

/* fakenvml_interconnect.c (included at the end) */
static void interconnect_reset(void);
static void interconnect_from_environment(void);
static int interconnect_field(nvmlDevice_t d, nvmlFieldValue_t *f);

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* --- cost profile: what each device call costs on a real driver ------------------------- */

/* A real driver's calls are not free: most spin in the caller's thread (CPU time), and
 * nvmlDeviceGetPcieThroughput sleeps while NVML samples the link. Profile "none" (the
 * default) costs nothing, for fast tests; "h200" holds the median of 20 calls each on an
 * NVIDIA H200 (driver 580.159.04, one GPU), where three calls are also not supported.
 * A spin burns the calling thread's CPU clock, so a CPU-time figure sees the cost even on a
 * busy machine (where the wall time is longer). The first row with the function's name
 * wins; the row with a NULL name prices every other device call. */
typedef struct { const char *func; long spin_us; long sleep_us; int not_supported; } fake_cost;
static const fake_cost h200_costs[] = {
    {"nvmlDeviceGetPcieThroughput", 0, 21100, 0},  /* NVML samples the link for 20 ms */
    {"nvmlDeviceGetTotalEnergyConsumption", 3280, 0, 0},  /* max 15.7 ms */
    {"nvmlDeviceGetProcessUtilization", 2780, 0, 0},  /* with NotFound (no sample) too */
    {"nvmlDeviceGetPowerManagementLimit", 180, 0, 1},
    {"nvmlDeviceGetPcieReplayCounter", 180, 0, 1},
    {"nvmlDeviceGetFanSpeed", 180, 0, 1},  /* an H200 has no fan of its own */
    {"nvmlDeviceGetMemoryInfo", 10, 0, 0},
    {"nvmlDeviceGetMemoryInfo_v2", 11, 0, 0},
    {"nvmlDeviceGetComputeRunningProcesses_v3", 12, 0, 0},
    {"nvmlDeviceGetComputeRunningProcesses_v2", 12, 0, 0},
    {"nvmlDeviceGetGraphicsRunningProcesses_v3", 12, 0, 0},
    {"nvmlDeviceGetGraphicsRunningProcesses_v2", 12, 0, 0},
    {NULL, 4, 0, 0},  /* UtilizationRates, Temperature, PowerUsage, ClockInfo, ...: 2-6 us */
};
static const fake_cost *profile;  /* NULL: "none" */

/* Choose the cost profile by name ("none" or "h200"); 0, or -1 for an unknown name. */
FAKE_EXPORT int fake_set_profile(const char *name)
{
    if (strcmp(name, "none") == 0 || name[0] == '\0') profile = NULL;
    else if (strcmp(name, "h200") == 0) profile = h200_costs;
    else return -1;
    return 0;
}

FAKE_EXPORT const char *fake_profile(void) { return profile == NULL ? "none" : "h200"; }

static void spin_us(long us)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    double until = (double)t.tv_sec + (double)t.tv_nsec / 1e9 + (double)us / 1e6;
    do clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    while ((double)t.tv_sec + (double)t.tv_nsec / 1e9 < until);
}

/* Pay what `func` costs in the profile; NVML_ERROR_NOT_SUPPORTED where that GPU lacks it. */
static nvmlReturn_t pay(const char *func)
{
    if (profile == NULL) return NVML_SUCCESS;
    const fake_cost *c = profile;
    while (c->func != NULL && strcmp(c->func, func) != 0) c++;
    if (c->spin_us > 0) spin_us(c->spin_us);
    if (c->sleep_us > 0) {
        struct timespec t = {c->sleep_us / 1000000, (c->sleep_us % 1000000) * 1000L};
        while (nanosleep(&t, &t) != 0) {}
    }
    return c->not_supported ? NVML_ERROR_NOT_SUPPORTED : NVML_SUCCESS;
}

/* --- scripting API ----------------------------------------------------------------------- */

FAKE_EXPORT void fake_reset(void)
{
    memset(errors, 0, sizeof errors);
    memset(lost, 0, sizeof lost);
    memset(calls, 0, sizeof calls);
    n_errors = n_procs = init_count = 0;
    delay_func[0] = '\0';
    delay_ms = 0;
    profile = NULL;
    init_error = NVML_SUCCESS;
    gpu_count = 1;
    cuda_version = 12040;
    snprintf(driver_version, sizeof driver_version, "550.54.15");
    snprintf(nvml_version, sizeof nvml_version, "12.550.54.15");
    memset(migs, 0, sizeof migs);
    memset(mig_mode, 0, sizeof mig_mode);
    pthread_mutex_lock(&event_lock);
    n_xids = 0;
    memset(registered, 0, sizeof registered);
    event_set_alive = 0;
    pthread_cond_broadcast(&event_changed);
    pthread_mutex_unlock(&event_lock);
    for (int i = 0; i < MAX_GPUS; i++) {
        unsigned long long gib = 1ULL << 30;
        unsigned long long *v = values[i];
        devices[i].index = i;
        devices[i].mig = -1;
        for (int m = 0; m < MAX_MIGS; m++) {
            mig_devices[i][m].index = i;
            mig_devices[i][m].mig = m;
        }
        snprintf(names[i], sizeof names[i], "Fake NVIDIA GPU %d", i);
        v[V_MEM_TOTAL] = 16 * gib;
        v[V_MEM_USED] = (unsigned long long)(i + 1) * gib;
        v[V_MEM_RESERVED] = 256ULL << 20;
        v[V_UTIL_GPU] = (unsigned long long)(10 + i) % 101;
        v[V_UTIL_MEM] = 5;
        v[V_TEMP] = 40 + (unsigned long long)i;
        v[V_POWER_MW] = 100000 + 1000 * (unsigned long long)i;
        v[V_LIMIT_MW] = 300000;
        v[V_FAN] = 30;
        v[V_SM_CLOCK] = 1500;
        v[V_MEM_CLOCK] = 5000;
        v[V_PSTATE] = 0;
        v[V_PCIE_RX_KB] = 1000;
        v[V_PCIE_TX_KB] = 2000;
        v[V_ENC] = 0;
        v[V_DEC] = 0;
        v[V_PERSISTENCE] = 1;
        v[V_COMPUTE_MODE] = NVML_COMPUTEMODE_DEFAULT;
        v[V_CLOCK_EVENTS] = 0;
        v[V_ECC_MODE] = 1;
        v[V_MEM_TEMP] = 50 + (unsigned long long)i;
        v[V_DISPLAY_ACTIVE] = 0;
        for (int k = V_ECC_SBE_VOL; k <= V_PCIE_REPLAY; k++) v[k] = 0;
        energy_mj[i] = 1e6 * (double)(i + 1);
        energy_at[i] = now_s();
    }
    interconnect_reset();
}

FAKE_EXPORT void fake_set_gpu_count(int n)
{
    pthread_mutex_lock(&event_lock);
    gpu_count = n < 0 ? 0 : (n > MAX_GPUS ? MAX_GPUS : n);
    pthread_cond_broadcast(&event_changed);
    pthread_mutex_unlock(&event_lock);
}
FAKE_EXPORT void fake_set_init_error(int code) { init_error = (nvmlReturn_t)code; }
FAKE_EXPORT void fake_set_lost(int gpu, int is_lost) { if (gpu >= 0 && gpu < MAX_GPUS) lost[gpu] = is_lost; }
FAKE_EXPORT long long fake_device_calls(int gpu) { return gpu >= 0 && gpu < MAX_GPUS ? calls[gpu] : -1; }
FAKE_EXPORT int fake_init_count(void) { return init_count; }
FAKE_EXPORT void fake_set_cuda_version(int v) { cuda_version = v; }

FAKE_EXPORT void fake_set_driver_version(const char *driver, const char *nvml)
{
    snprintf(driver_version, sizeof driver_version, "%s", driver);
    snprintf(nvml_version, sizeof nvml_version, "%s", nvml);
}

FAKE_EXPORT void fake_set_name(int gpu, const char *name)
{
    if (gpu >= 0 && gpu < MAX_GPUS) snprintf(names[gpu], sizeof names[gpu], "%s", name);
}

/* Bring a GPU's energy up to now at the power it has drawn since the last time. */
static void accrue_energy(int gpu)
{
    double t = now_s();
    energy_mj[gpu] += (double)values[gpu][V_POWER_MW] * (t - energy_at[gpu]);  /* mW * s */
    energy_at[gpu] = t;
}

/* Set a value by name (see value_names); returns 0, or -1 for an unknown name. */
FAKE_EXPORT int fake_set_value(int gpu, const char *key, unsigned long long value)
{
    for (int k = 0; k < V_COUNT; k++) {
        if (strcmp(key, value_names[k]) == 0 && gpu >= 0 && gpu < MAX_GPUS) {
            if (k == V_POWER_MW) accrue_energy(gpu);  /* the old power until now */
            values[gpu][k] = value;
            return 0;
        }
    }
    return -1;
}

/* Make `func` (its C name, e.g. "nvmlDeviceGetFanSpeed") return `code` on `gpu` (-1: all). */
FAKE_EXPORT int fake_set_error(int gpu, const char *func, int code)
{
    if (n_errors >= MAX_ERRORS) return -1;
    errors[n_errors].gpu = gpu;
    snprintf(errors[n_errors].func, sizeof errors[n_errors].func, "%s", func);
    errors[n_errors].code = (nvmlReturn_t)code;
    n_errors++;
    return 0;
}

/* A process on `gpu`; `graphics` 0 = compute list, 1 = graphics list. */
FAKE_EXPORT int fake_add_process(int gpu, int graphics, unsigned int pid, unsigned long long used)
{
    if (n_procs >= MAX_PROCS) return -1;
    procs[n_procs++] = (fake_proc){gpu, graphics, pid, used};
    return 0;
}

FAKE_EXPORT void fake_clear_processes(void) { n_procs = 0; }

/* The energy counter of a GPU, in mJ (the power then accrues from here). */
FAKE_EXPORT void fake_set_energy(int gpu, double mj)
{
    if (gpu < 0 || gpu >= MAX_GPUS) return;
    energy_mj[gpu] = mj;
    energy_at[gpu] = now_s();
}

/* An XID error `code` on `gpu`, delivered `after_ms` from now to a waiting event set that
 * registered nvmlEventTypeXidCriticalError for that GPU (events due before that wait). */
FAKE_EXPORT int fake_add_xid(int gpu, unsigned long long code, long after_ms)
{
    pthread_mutex_lock(&event_lock);
    if (n_xids >= MAX_XIDS) {
        pthread_mutex_unlock(&event_lock);
        return -1;
    }
    xids[n_xids++] = (fake_xid){gpu, code, now_s() + (double)after_ms / 1000.0, 0};
    pthread_cond_broadcast(&event_changed);
    pthread_mutex_unlock(&event_lock);
    return 0;
}

/* XID events delivered so far (a test knows the reader has had them). */
FAKE_EXPORT int fake_xids_delivered(void)
{
    int n = 0;
    pthread_mutex_lock(&event_lock);
    for (int x = 0; x < n_xids; x++) n += xids[x].delivered;
    pthread_mutex_unlock(&event_lock);
    return n;
}

/* MIG mode of a GPU: 1 enabled, 0 disabled, -1 not supported (NVML_ERROR_NOT_SUPPORTED). */
FAKE_EXPORT void fake_set_mig_mode(int gpu, int mode) { if (gpu >= 0 && gpu < MAX_GPUS) mig_mode[gpu] = mode; }

/* A MIG device in slot `slot` of `gpu`: GPU/compute instance ids, profile, memory. */
FAKE_EXPORT int fake_add_mig(int gpu, int slot, unsigned int gi, unsigned int ci,
                             const char *profile, unsigned long long total, unsigned long long used)
{
    if (gpu < 0 || gpu >= MAX_GPUS || slot < 0 || slot >= MAX_MIGS) return -1;
    fake_mig *m = &migs[gpu][slot];
    m->present = 1;
    m->gi = gi;
    m->ci = ci;
    m->total = total;
    m->used = used;
    snprintf(m->profile, sizeof m->profile, "%s", profile);
    return 0;
}

/* Make `func` (`*`: every function) sleep `ms` milliseconds per call; ms < 0: the call does
 * not return until the delay is set again (fake_set_delay("", 0) lets a hung call return). */
FAKE_EXPORT void fake_set_delay(const char *func, long ms)
{
    snprintf(delay_func, sizeof delay_func, "%s", func);
    delay_ms = ms;
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0) {}
}

static int delayed(const char *func)
{
    return delay_func[0] != '\0' && (strcmp(delay_func, "*") == 0 || strcmp(func, delay_func) == 0);
}

static void maybe_delay(const char *func)
{
    if (!delayed(func)) return;
    if (hang_file[0] != '\0') {
        FILE *f = fopen(hang_file, "w");
        if (f != NULL) fclose(f);
    }
    if (delay_ms >= 0) {
        sleep_ms(delay_ms);
        return;
    }
    while (delay_ms < 0 && delayed(func)) sleep_ms(10);  /* until a test lets it return */
}

static void setup_from_environment(void)
{
    const char *gpus = getenv("FAKENVML_GPUS");
    const char *delay = getenv("FAKENVML_DELAY");
    const char *hang = getenv("FAKENVML_HANG_FILE");
    if (gpus != NULL) fake_set_gpu_count(atoi(gpus));
    if (delay != NULL) {
        const char *eq = strchr(delay, '=');
        if (eq != NULL && (size_t)(eq - delay) < sizeof delay_func) {
            char func[96];
            memcpy(func, delay, (size_t)(eq - delay));
            func[eq - delay] = '\0';
            fake_set_delay(func, atol(eq + 1));
        }
    }
    if (hang != NULL) snprintf(hang_file, sizeof hang_file, "%s", hang);
    const char *cost = getenv("FAKENVML_PROFILE");
    if (cost != NULL && fake_set_profile(cost) != 0)
        fprintf(stderr, "fakenvml: unknown FAKENVML_PROFILE %s (none, h200)\n", cost);
    const char *p = getenv("FAKENVML_PROCS");
    while (p != NULL && *p != '\0') {
        int gpu;
        unsigned int pid;
        unsigned long long used;
        int length = 0;
        if (sscanf(p, "%d:%u:%llu%n", &gpu, &pid, &used, &length) != 3) break;
        fake_add_process(gpu, 0, pid, used);
        p += length;
        if (*p == ',') p++;
    }
    p = getenv("FAKENVML_XIDS");
    while (p != NULL && *p != '\0') {
        int gpu, length = 0;
        unsigned long long code;
        long after;
        if (sscanf(p, "%d:%llu:%ld%n", &gpu, &code, &after, &length) != 3) break;
        fake_add_xid(gpu, code, after);
        p += length;
        if (*p == ',') p++;
    }
    p = getenv("FAKENVML_NAMES");  /* name;name;... from GPU 0 on */
    for (int gpu = 0; p != NULL && *p != '\0' && gpu < MAX_GPUS; gpu++) {
        size_t length = strcspn(p, ";");
        if (length > 0 && length < sizeof names[gpu])
            snprintf(names[gpu], sizeof names[gpu], "%.*s", (int)length, p);
        p += length;
        if (*p == ';') p++;
    }
    p = getenv("FAKENVML_VALUES");  /* gpu:name=value,... (names as fake_set_value's) */
    while (p != NULL && *p != '\0') {
        int gpu, length = 0;
        char key[32];
        unsigned long long value;
        if (sscanf(p, "%d:%31[a-z_]=%llu%n", &gpu, key, &value, &length) != 3) break;
        fake_set_value(gpu, key, value);
        p += length;
        if (*p == ',') p++;
    }
    interconnect_from_environment();
}

/* --- helpers ------------------------------------------------------------------------------ */

static int is_mig(nvmlDevice_t d)
{
    return d != NULL && d >= &mig_devices[0][0] && d < &mig_devices[0][0] + MAX_GPUS * MAX_MIGS;
}

static int valid(nvmlDevice_t d)
{
    if (d == NULL) return 0;
    if (is_mig(d)) return d->index < gpu_count && migs[d->index][d->mig].present;
    return d >= devices && d < devices + gpu_count;
}

static nvmlReturn_t check(nvmlDevice_t d, const char *func)
{
    maybe_delay(func);
    nvmlReturn_t priced = pay(func);
    if (init_count == 0) return NVML_ERROR_UNINITIALIZED;
    if (!valid(d)) return NVML_ERROR_INVALID_ARGUMENT;
    int i = d->index;
    calls[i]++;
    if (lost[i]) return NVML_ERROR_GPU_IS_LOST;
    for (int e = n_errors - 1; e >= 0; e--)  /* the latest entry wins */
        if ((errors[e].gpu == -1 || errors[e].gpu == i) && strcmp(errors[e].func, func) == 0)
            return errors[e].code;
    return priced;
}

#define CHECK(d) do { nvmlReturn_t r_ = check((d), __func__); if (r_ != NVML_SUCCESS) return r_; } while (0)
/* A device function that a MIG device handle does not support. */
#define CHECK_GPU(d) do { CHECK(d); if (is_mig(d)) return NVML_ERROR_NOT_SUPPORTED; } while (0)
#define MIG(d) (&migs[(d)->index][(d)->mig])
#define V(d, k) (values[(d)->index][(k)])

static nvmlReturn_t copy_string(char *dst, unsigned int length, const char *src)
{
    if (dst == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(src) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(dst, src, strlen(src) + 1);
    return NVML_SUCCESS;
}

static nvmlReturn_t list_processes(nvmlDevice_t d, int graphics, unsigned int *count,
                                   nvmlProcessInfo_t *infos)
{
    unsigned int n = 0;
    for (int p = 0; p < n_procs; p++)
        if (procs[p].gpu == d->index && procs[p].graphics == graphics) n++;
    if (*count < n || (n > 0 && infos == NULL)) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    unsigned int k = 0;
    for (int p = 0; p < n_procs; p++) {
        if (procs[p].gpu != d->index || procs[p].graphics != graphics) continue;
        infos[k].pid = procs[p].pid;
        infos[k].usedGpuMemory = procs[p].used;
        infos[k].gpuInstanceId = 0xFFFFFFFF;
        infos[k].computeInstanceId = 0xFFFFFFFF;
        k++;
    }
    *count = n;
    return NVML_SUCCESS;
}

/* --- NVML --------------------------------------------------------------------------------- */

nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
    (void)flags;
    maybe_delay("nvmlInit");
    if (init_error != NVML_SUCCESS) return init_error;
    init_count++;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit_v2(void) { return nvmlInitWithFlags(0); }

nvmlReturn_t nvmlShutdown(void)
{
    if (init_count == 0) return NVML_ERROR_UNINITIALIZED;
    init_count--;
    return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t result)
{
    static char text[64];
    snprintf(text, sizeof text, "Fake NVML error %d", (int)result);
    return text;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    if (init_count == 0) return NVML_ERROR_UNINITIALIZED;
    return copy_string(version, length, driver_version);
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
    return copy_string(version, length, nvml_version);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *version)
{
    *version = cuda_version;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
    if (init_count == 0) return NVML_ERROR_UNINITIALIZED;
    *count = (unsigned int)gpu_count;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    if (index >= (unsigned int)gpu_count) return NVML_ERROR_INVALID_ARGUMENT;
    CHECK(&devices[index]);
    *device = &devices[index];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t d, unsigned int *index)
{
    CHECK_GPU(d);
    *index = (unsigned int)d->index;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int length)
{
    char text[160];
    CHECK(d);
    if (!is_mig(d)) return copy_string(name, length, names[d->index]);
    snprintf(text, sizeof text, "%s MIG %s", names[d->index], MIG(d)->profile);
    return copy_string(name, length, text);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int length)
{
    char text[96];
    CHECK(d);
    if (is_mig(d))
        snprintf(text, sizeof text, "MIG-fa4e0000-0000-4000-8%03d-%012d", d->mig, d->index);
    else
        snprintf(text, sizeof text, "GPU-fa4e0000-0000-4000-8000-%012d", d->index);
    return copy_string(uuid, length, text);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *pci)
{
    CHECK_GPU(d);
    memset(pci, 0, sizeof *pci);
    pci->bus = 0x10 + (unsigned int)d->index;
    pci->pciDeviceId = 0x233010DE;
    snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", pci->bus);
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02X:00.0", pci->bus);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
    CHECK(d);
    if (is_mig(d)) {
        m->total = MIG(d)->total;
        m->used = MIG(d)->used;
        m->free = m->total - m->used;
        return NVML_SUCCESS;
    }
    m->total = V(d, V_MEM_TOTAL);
    m->used = V(d, V_MEM_USED) + V(d, V_MEM_RESERVED);  /* v1 counts reserved as used */
    m->free = m->total - m->used;
    return NVML_SUCCESS;
}

#ifndef FAKE_OLD_DRIVER
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m)
{
    CHECK(d);
    if (m->version != nvmlMemory_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (is_mig(d)) {
        m->total = MIG(d)->total;
        m->reserved = 0;
        m->used = MIG(d)->used;
        m->free = m->total - m->used;
        return NVML_SUCCESS;
    }
    m->total = V(d, V_MEM_TOTAL);
    m->reserved = V(d, V_MEM_RESERVED);
    m->used = V(d, V_MEM_USED);
    m->free = m->total - m->reserved - m->used;
    return NVML_SUCCESS;
}
#endif

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
    CHECK_GPU(d);
    u->gpu = (unsigned int)V(d, V_UTIL_GPU);
    u->memory = (unsigned int)V(d, V_UTIL_MEM);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, nvmlTemperatureSensors_t sensor,
                                      unsigned int *temp)
{
    CHECK_GPU(d);
    if (sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
    *temp = (unsigned int)V(d, V_TEMP);
    return NVML_SUCCESS;
}

#if !defined(FAKE_OLD_DRIVER) && defined(nvmlTemperature_v1)
nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t d, nvmlTemperature_t *t)
{
    CHECK_GPU(d);
    if (t->version != nvmlTemperature_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (t->sensorType != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
    t->temperature = (int)V(d, V_TEMP);
    return NVML_SUCCESS;
}
#endif

#define UINT_GETTER(fn, key)                                  \
    nvmlReturn_t fn(nvmlDevice_t d, unsigned int *out)        \
    {                                                         \
        CHECK_GPU(d);                                         \
        *out = (unsigned int)V(d, key);                       \
        return NVML_SUCCESS;                                  \
    }

UINT_GETTER(nvmlDeviceGetPowerUsage, V_POWER_MW)
UINT_GETTER(nvmlDeviceGetEnforcedPowerLimit, V_LIMIT_MW)
UINT_GETTER(nvmlDeviceGetPowerManagementLimit, V_LIMIT_MW)
UINT_GETTER(nvmlDeviceGetFanSpeed, V_FAN)

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, nvmlClockType_t type, unsigned int *clock)
{
    CHECK_GPU(d);
    if (type == NVML_CLOCK_SM || type == NVML_CLOCK_GRAPHICS) *clock = (unsigned int)V(d, V_SM_CLOCK);
    else if (type == NVML_CLOCK_MEM) *clock = (unsigned int)V(d, V_MEM_CLOCK);
    else return NVML_ERROR_NOT_SUPPORTED;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t d, nvmlPstates_t *p)
{
    CHECK_GPU(d);
    *p = (nvmlPstates_t)V(d, V_PSTATE);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, nvmlPcieUtilCounter_t counter,
                                         unsigned int *value)
{
    CHECK_GPU(d);
    if (counter == NVML_PCIE_UTIL_RX_BYTES) *value = (unsigned int)V(d, V_PCIE_RX_KB);
    else if (counter == NVML_PCIE_UTIL_TX_BYTES) *value = (unsigned int)V(d, V_PCIE_TX_KB);
    else return NVML_ERROR_INVALID_ARGUMENT;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t d, unsigned int *u, unsigned int *period)
{
    CHECK_GPU(d);
    *u = (unsigned int)V(d, V_ENC);
    *period = 1000000;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t d, unsigned int *u, unsigned int *period)
{
    CHECK_GPU(d);
    *u = (unsigned int)V(d, V_DEC);
    *period = 1000000;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, nvmlEnableState_t *mode)
{
    CHECK_GPU(d);
    *mode = V(d, V_PERSISTENCE) ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetDisplayActive(nvmlDevice_t d, nvmlEnableState_t *active)
{
    CHECK_GPU(d);
    *active = V(d, V_DISPLAY_ACTIVE) ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t d, nvmlComputeMode_t *mode)
{
    CHECK_GPU(d);
    *mode = (nvmlComputeMode_t)V(d, V_COMPUTE_MODE);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned int *count,
                                                     nvmlProcessInfo_v2_t *infos)
{
    CHECK_GPU(d);
    return list_processes(d, 0, count, infos);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t d, unsigned int *count,
                                                      nvmlProcessInfo_v2_t *infos)
{
    CHECK_GPU(d);
    return list_processes(d, 1, count, infos);
}

#ifndef FAKE_OLD_DRIVER
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *count,
                                                     nvmlProcessInfo_t *infos)
{
    CHECK_GPU(d);
    return list_processes(d, 0, count, infos);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned int *count,
                                                      nvmlProcessInfo_t *infos)
{
    CHECK_GPU(d);
    return list_processes(d, 1, count, infos);
}
#endif

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int *current, unsigned int *pending)
{
    CHECK_GPU(d);
    if (mig_mode[d->index] < 0) return NVML_ERROR_NOT_SUPPORTED;
    *current = *pending = (unsigned int)mig_mode[d->index];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned int *count)
{
    CHECK_GPU(d);
    if (mig_mode[d->index] < 0) return NVML_ERROR_NOT_SUPPORTED;
    *count = MAX_MIGS;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned int index,
                                                 nvmlDevice_t *mig)
{
    CHECK_GPU(d);
    if (mig_mode[d->index] != 1) return NVML_ERROR_INVALID_ARGUMENT;
    if (index >= MAX_MIGS) return NVML_ERROR_INVALID_ARGUMENT;
    if (!migs[d->index][index].present) return NVML_ERROR_NOT_FOUND;
    *mig = &mig_devices[d->index][index];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t d, unsigned int *id)
{
    CHECK(d);
    if (!is_mig(d)) return NVML_ERROR_INVALID_ARGUMENT;
    *id = MIG(d)->gi;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t d, unsigned int *id)
{
    CHECK(d);
    if (!is_mig(d)) return NVML_ERROR_INVALID_ARGUMENT;
    *id = MIG(d)->ci;
    return NVML_SUCCESS;
}

/* --- health ---------------------------------------------------------------------------- */

static nvmlReturn_t scripted(int gpu, const char *name)
{
    for (int e = n_errors - 1; e >= 0; e--)
        if ((errors[e].gpu == -1 || errors[e].gpu == gpu) && strcmp(errors[e].func, name) == 0)
            return errors[e].code;
    return NVML_SUCCESS;
}

static nvmlReturn_t clock_events(nvmlDevice_t d, unsigned long long *reasons)
{
    *reasons = V(d, V_CLOCK_EVENTS);
    return NVML_SUCCESS;
}

#ifndef FAKE_OLD_DRIVER
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *reasons)
{
    CHECK_GPU(d);
    return clock_events(d, reasons);
}
#endif

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long *reasons)
{
    CHECK_GPU(d);
    return clock_events(d, reasons);
}

nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t d, nvmlEnableState_t *current,
                                  nvmlEnableState_t *pending)
{
    CHECK_GPU(d);
    *current = *pending = V(d, V_ECC_MODE) ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, nvmlMemoryErrorType_t type,
                                         nvmlEccCounterType_t counter, unsigned long long *count)
{
    CHECK_GPU(d);
    int uncorrected = type == NVML_MEMORY_ERROR_TYPE_UNCORRECTED;
    if (counter == NVML_VOLATILE_ECC) *count = V(d, uncorrected ? V_ECC_DBE_VOL : V_ECC_SBE_VOL);
    else if (counter == NVML_AGGREGATE_ECC) *count = V(d, uncorrected ? V_ECC_DBE_AGG : V_ECC_SBE_AGG);
    else return NVML_ERROR_INVALID_ARGUMENT;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int *corr, unsigned int *unc,
                                       unsigned int *pending, unsigned int *failure)
{
    CHECK_GPU(d);
    *corr = (unsigned int)V(d, V_REMAP_CORR);
    *unc = (unsigned int)V(d, V_REMAP_UNC);
    *pending = (unsigned int)V(d, V_REMAP_PENDING);
    *failure = (unsigned int)V(d, V_REMAP_FAILURE);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t d, nvmlPageRetirementCause_t cause,
                                       unsigned int *count, unsigned long long *addresses)
{
    CHECK_GPU(d);
    unsigned long long n;
    if (cause == NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS) n = V(d, V_RETIRED_SBE);
    else if (cause == NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR) n = V(d, V_RETIRED_DBE);
    else return NVML_ERROR_INVALID_ARGUMENT;
    if (*count < n || (n > 0 && addresses == NULL)) {
        *count = (unsigned int)n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (unsigned long long k = 0; k < n; k++) addresses[k] = 0x1000ULL * (k + 1) + cause;
    *count = (unsigned int)n;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, nvmlEnableState_t *pending)
{
    CHECK_GPU(d);
    *pending = V(d, V_RETIRED_PENDING) ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t d, unsigned int *value)
{
    CHECK_GPU(d);
    *value = (unsigned int)V(d, V_PCIE_REPLAY);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long *energy)
{
    CHECK_GPU(d);
    accrue_energy(d->index);
    *energy = (unsigned long long)energy_mj[d->index];
    return NVML_SUCCESS;
}

/* Field values: NVML_FI_DEV_MEMORY_TEMP, and the NVLink ones (fakenvml_interconnect.c); fake_set_error(gpu,
 * "NVML_FI_DEV_MEMORY_TEMP", code) makes that one field fail (the call itself succeeds). */
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int count, nvmlFieldValue_t *values_out)
{
    CHECK_GPU(d);
    for (int k = 0; k < count; k++) {
        nvmlFieldValue_t *f = &values_out[k];
        f->timestamp = 0;
        f->latencyUsec = 0;
        if (interconnect_field(d, f)) continue;  /* NVLink fields 91, 138, 139 */
        if (f->fieldId != NVML_FI_DEV_MEMORY_TEMP) {
            f->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
            continue;
        }
        f->nvmlReturn = scripted(d->index, "NVML_FI_DEV_MEMORY_TEMP");
        f->valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
        f->value.uiVal = (unsigned int)V(d, V_MEM_TEMP);
    }
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
    if (init_count == 0) return NVML_ERROR_UNINITIALIZED;
    pthread_mutex_lock(&event_lock);
    event_set_alive = 1;
    memset(registered, 0, sizeof registered);
    pthread_cond_broadcast(&event_changed);
    pthread_mutex_unlock(&event_lock);
    *set = &the_event_set;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t d, unsigned long long *types)
{
    CHECK_GPU(d);
    *types = nvmlEventTypeXidCriticalError | nvmlEventTypeSingleBitEccError
             | nvmlEventTypeDoubleBitEccError;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types, nvmlEventSet_t set)
{
    CHECK_GPU(d);
    if (set != &the_event_set) return NVML_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&event_lock);
    registered[d->index] |= types;
    pthread_cond_broadcast(&event_changed);
    pthread_mutex_unlock(&event_lock);
    return NVML_SUCCESS;
}

/* The earliest due XID of a registered GPU; sleeps up to `timeout` ms for one (until the
 * timeout, the next XID's due time or a change, whichever comes first). */
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeout)
{
    if (set != &the_event_set || data == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    double until = now_s() + (double)timeout / 1000.0;
    pthread_mutex_lock(&event_lock);
    for (;;) {
        if (!event_set_alive) {
            pthread_mutex_unlock(&event_lock);
            return NVML_ERROR_UNINITIALIZED;
        }
        double t = now_s();
        double wake = until;
        int best = -1;
        for (int x = 0; x < n_xids; x++) {
            fake_xid *e = &xids[x];
            if (e->delivered) continue;
            if (e->due > t) {
                if (e->due < wake) wake = e->due;
                continue;
            }
            if (e->gpu < 0 || e->gpu >= gpu_count) continue;
            if (!(registered[e->gpu] & nvmlEventTypeXidCriticalError)) continue;
            if (best < 0 || e->due < xids[best].due) best = x;
        }
        if (best >= 0) {
            xids[best].delivered = 1;
            memset(data, 0, sizeof *data);
            data->device = &devices[xids[best].gpu];
            data->eventType = nvmlEventTypeXidCriticalError;
            data->eventData = xids[best].code;
            data->gpuInstanceId = data->computeInstanceId = 0xFFFFFFFF;
            pthread_mutex_unlock(&event_lock);
            return NVML_SUCCESS;
        }
        if (t >= until) {
            pthread_mutex_unlock(&event_lock);
            return NVML_ERROR_TIMEOUT;
        }
        struct timespec at;
        at.tv_sec = (time_t)wake;
        at.tv_nsec = (long)((wake - (double)at.tv_sec) * 1e9);
        if (at.tv_nsec >= 1000000000L) at.tv_nsec = 999999999L;
        pthread_cond_timedwait(&event_changed, &event_lock, &at);  /* CLOCK_MONOTONIC */
    }
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
    if (set != &the_event_set) return NVML_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&event_lock);
    event_set_alive = 0;
    memset(registered, 0, sizeof registered);
    pthread_cond_broadcast(&event_changed);
    pthread_mutex_unlock(&event_lock);
    return NVML_SUCCESS;
}

__attribute__((constructor)) static void fake_load(void)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);  /* now_s()'s clock */
    pthread_cond_init(&event_changed, &attr);
    pthread_condattr_destroy(&attr);
    fake_reset();
    setup_from_environment();
}

/* --- per-process utilization samples (nvmlDeviceGetProcessUtilization) -------------------- */

/* Samples the driver holds, each with its CPU timestamp in microseconds; a call returns the
 * ones newer than the caller's lastSeenTimeStamp, as the real driver does (NOT_FOUND: none). */
#define MAX_UTIL_SAMPLES 4096
typedef struct { int gpu; nvmlProcessUtilizationSample_t s; } fake_util;
static fake_util util_samples[MAX_UTIL_SAMPLES];
static int n_util_samples;
static unsigned long long util_last_seen[MAX_GPUS];  /* what the last call asked for, per GPU */
static long long util_calls[MAX_GPUS];

FAKE_EXPORT int fake_add_process_util(int gpu, unsigned int pid, unsigned long long timestamp_us,
                                      unsigned int sm, unsigned int mem, unsigned int enc,
                                      unsigned int dec)
{
    if (n_util_samples >= MAX_UTIL_SAMPLES || gpu < 0 || gpu >= MAX_GPUS) return -1;
    util_samples[n_util_samples++] = (fake_util){gpu, {pid, timestamp_us, sm, mem, enc, dec}};
    return 0;
}

FAKE_EXPORT void fake_clear_process_util(void)
{
    n_util_samples = 0;
    memset(util_last_seen, 0, sizeof util_last_seen);
    memset(util_calls, 0, sizeof util_calls);
}

FAKE_EXPORT unsigned long long fake_util_last_seen(int gpu)
{
    return gpu >= 0 && gpu < MAX_GPUS ? util_last_seen[gpu] : 0;
}

FAKE_EXPORT long long fake_util_calls(int gpu)
{
    return gpu >= 0 && gpu < MAX_GPUS ? util_calls[gpu] : -1;
}

nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t d,
                                             nvmlProcessUtilizationSample_t *utilization,
                                             unsigned int *count,
                                             unsigned long long lastSeenTimeStamp)
{
    CHECK_GPU(d);
    if (count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    int i = d->index;
    util_calls[i]++;
    util_last_seen[i] = lastSeenTimeStamp;
    unsigned int n = 0;
    for (int k = 0; k < n_util_samples; k++)
        if (util_samples[k].gpu == i && util_samples[k].s.timeStamp > lastSeenTimeStamp) n++;
    if (n == 0) return NVML_ERROR_NOT_FOUND;
    if (utilization == NULL || *count < n) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    unsigned int j = 0;
    for (int k = 0; k < n_util_samples; k++)
        if (util_samples[k].gpu == i && util_samples[k].s.timeStamp > lastSeenTimeStamp)
            utilization[j++] = util_samples[k].s;
    *count = n;
    return NVML_SUCCESS;
}

/* GPM, NVLink, topology, P2P and affinities: one translation unit with the rest. */
#include "fakenvml_interconnect.c"
