/*
 * The fake NVML's GPM (GPU Performance Monitoring), NVLink, topology, P2P and affinity calls.
 * fakenvml.c includes this file at its end (one translation unit: the build is unchanged and
 * these functions share its device table, check() and scripted errors).
 *
 * GPM, as the driver answers it (nvml.h; what a real H200 with driver 580.159.04 showed):
 *   - nvmlGpmQueryDeviceSupport: isSupportedDevice 1 where fake_set_gpm() said so, else 0
 *     (a GPU older than Hopper). Off by default: existing scenarios keep their call counts.
 *   - nvmlGpmSampleAlloc/Free: real heap buffers; fake_gpm_samples_alive() counts the ones not
 *     freed. nvmlGpmSampleGet (nvmlGpmMigSampleGet for a GPU instance) stamps a sample.
 *   - nvmlGpmMetricsGet: each metric has its own nvmlReturn and value; the metricInfo names are
 *     the shortNames nvidia-smi dmon --gpm-metrics prints (longName and unit are this fake's);
 *     DMMA (id 8) has no names; ids the H200 did not know (249, 255, ...) return
 *     NVML_ERROR_INVALID_ARGUMENT for that metric alone; with two samples under 100 ms apart
 *     DRAM is NaN (the H200 at 50 ms).
 * NVLink: per GPU, links with a state, a remote (another GPU or an NVSwitch, by PCI bus id)
 * and data counters in KiB (field values 138/139, scope = link or UINT_MAX for all links)
 * that grow at a scripted rate; a GPU without NVLink says NOT_SUPPORTED (as the H200 did for
 * NvLinkState on links 0-17 and for field 91). GPM's NVLink rates follow the same link rates.
 * Topology: GPUs are split into two NUMA nodes (the first half and the rest) unless scripted:
 * NODE within a node, SYS across; P2P OK within a node, chipset-not-supported across; CPU
 * affinity node n = CPUs 16n-16n+15; the GPU's own NUMA id is NOT_SUPPORTED (not a coherent
 * system).
 * Scenario "hgx" (fake_use_scenario / FAKENVML_SCENARIO=hgx): an 8-GPU HGX H200 board, every
 * GPU with GPM and 18 NVLinks to four NVSwitches (nvidia-smi topo -m: NV18 between every pair),
 * two sockets. Scenario "gpm": GPM on every GPU, nothing else changed.
 */
#include <math.h>

#define FAKE_MAX_LINKS 18
#define GPM_SAMPLE_MAGIC 0x67706d31u
#define MIB_PER_KIB (1.0 / 1024.0)

struct nvmlGpmSample_st { unsigned int magic; int gpu; int gi; int taken; double at; };

typedef struct { int id; const char *short_name, *long_name, *unit; } gpm_info;
/* shortNames as the H200's driver gave them (the list); the rest is the fake's. */
static const gpm_info gpm_infos[] = {
    {NVML_GPM_METRIC_GRAPHICS_UTIL, "gract", "Graphics Activity", "%"},
    {NVML_GPM_METRIC_SM_UTIL, "smutil", "SM Activity", "%"},
    {NVML_GPM_METRIC_SM_OCCUPANCY, "smocc", "SM Occupancy", "%"},
    {NVML_GPM_METRIC_INTEGER_UTIL, "intutil", "Integer Activity", "%"},
    {NVML_GPM_METRIC_ANY_TENSOR_UTIL, "mmaact", "Tensor Activity", "%"},
    {NVML_GPM_METRIC_DFMA_TENSOR_UTIL, "dfmat", "DFMA Tensor Activity", "%"},
    {NVML_GPM_METRIC_HMMA_TENSOR_UTIL, "hmmat", "HMMA Tensor Activity", "%"},
    {NVML_GPM_METRIC_DMMA_TENSOR_UTIL, NULL, NULL, NULL},  /* the H200 gave no names */
    {NVML_GPM_METRIC_IMMA_TENSOR_UTIL, "immat", "IMMA Tensor Activity", "%"},
    {NVML_GPM_METRIC_DRAM_BW_UTIL, "dram", "DRAM Activity", "%"},
    {NVML_GPM_METRIC_FP64_UTIL, "fp64", "FP64 Activity", "%"},
    {NVML_GPM_METRIC_FP32_UTIL, "fp32", "FP32 Activity", "%"},
    {NVML_GPM_METRIC_FP16_UTIL, "fp16", "FP16 Activity", "%"},
    {NVML_GPM_METRIC_PCIE_TX_PER_SEC, "pcitx", "PCIe TX", "MiB/s"},
    {NVML_GPM_METRIC_PCIE_RX_PER_SEC, "pcirx", "PCIe RX", "MiB/s"},
    {NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC, "nvlrx", "NVLink RX", "MiB/s"},
    {NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC, "nvltx", "NVLink TX", "MiB/s"},
    {NVML_GPM_METRIC_NVDEC_0_UTIL, "nvdec0", "NVDEC 0 Activity", "%"},
    {NVML_GPM_METRIC_NVJPG_0_UTIL, "nvjpg0", "NVJPG 0 Activity", "%"},
    {NVML_GPM_METRIC_NVOFA_0_UTIL, "nvofa0", "NVOFA 0 Activity", "%"},
    {NVML_GPM_METRIC_NVENC_0_UTIL, "nvenc0", "NVENC 0 Activity", "%"},
};
#define N_GPM_INFOS ((int)(sizeof gpm_infos / sizeof gpm_infos[0]))

static int gpm_supported[MAX_GPUS];
static double gpm_value[MAX_GPUS][NVML_GPM_METRIC_MAX];
static nvmlReturn_t gpm_ret[MAX_GPUS][NVML_GPM_METRIC_MAX];
static long long gpm_sample_gets[MAX_GPUS];
static int gpm_alive;

typedef struct {
    int active, remote_type;
    char remote_bus[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
    double rx_kib_s, tx_kib_s, rx_kib, tx_kib, at;
} fake_link;
static fake_link links[MAX_GPUS][FAKE_MAX_LINKS];
static int link_count[MAX_GPUS];  /* 0: no NVLink on this GPU (NOT_SUPPORTED) */

static int topo_scripted;
static int topo_level[MAX_GPUS][MAX_GPUS];
static int p2p_status[MAX_GPUS][MAX_GPUS];
static int numa_node[MAX_GPUS];  /* -1: by halves */
static unsigned long long cpu_mask[MAX_GPUS][4];  /* 256 CPUs; all zero: by the node */
static int gpu_numa_id[MAX_GPUS];  /* -1: NOT_SUPPORTED */

/* --- scripting ---------------------------------------------------------------------------- */

static int node_of(int gpu)
{
    if (numa_node[gpu] >= 0) return numa_node[gpu];
    return gpu < (gpu_count + 1) / 2 ? 0 : 1;
}

static int is_known_gpm(int id)
{
    if (id >= NVML_GPM_METRIC_NVDEC_0_UTIL && id <= NVML_GPM_METRIC_NVDEC_7_UTIL) return 1;
    if (id >= NVML_GPM_METRIC_NVJPG_0_UTIL && id <= NVML_GPM_METRIC_NVJPG_7_UTIL) return 1;
    if (id >= NVML_GPM_METRIC_NVOFA_0_UTIL && id <= NVML_GPM_METRIC_NVOFA_1_UTIL) return 1;
    if (id >= NVML_GPM_METRIC_NVENC_0_UTIL && id <= NVML_GPM_METRIC_NVENC_3_UTIL) return 1;
    if (id >= NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC && id <= NVML_GPM_METRIC_NVLINK_L17_TX_PER_SEC) return 1;
    for (int k = 0; k < N_GPM_INFOS; k++)
        if (gpm_infos[k].id == id) return 1;
    return 0;
}

/* GPM on (1) or off (0) for `gpu`: on, every known metric answers, idle as the H200 was
 * (activity 0, PCIe 0.70 MiB/s tx and 0.50 rx); NVDEC/NVJPG 7 and NVOFA 1 and NVENC 1-3
 * are engines this GPU lacks (NOT_SUPPORTED), as on an H100/H200. */
FAKE_EXPORT void fake_set_gpm(int gpu, int supported)
{
    if (gpu < 0 || gpu >= MAX_GPUS) return;
    gpm_supported[gpu] = supported;
    for (int id = 0; id < NVML_GPM_METRIC_MAX; id++) {
        gpm_value[gpu][id] = 0.0;
        gpm_ret[gpu][id] = is_known_gpm(id) ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
    }
    gpm_ret[gpu][NVML_GPM_METRIC_NVDEC_7_UTIL] = NVML_ERROR_NOT_SUPPORTED;
    gpm_ret[gpu][NVML_GPM_METRIC_NVJPG_7_UTIL] = NVML_ERROR_NOT_SUPPORTED;
    gpm_ret[gpu][NVML_GPM_METRIC_NVOFA_1_UTIL] = NVML_ERROR_NOT_SUPPORTED;
    for (int id = NVML_GPM_METRIC_NVENC_1_UTIL; id <= NVML_GPM_METRIC_NVENC_3_UTIL; id++)
        gpm_ret[gpu][id] = NVML_ERROR_NOT_SUPPORTED;
    gpm_value[gpu][NVML_GPM_METRIC_PCIE_TX_PER_SEC] = 0.70;
    gpm_value[gpu][NVML_GPM_METRIC_PCIE_RX_PER_SEC] = 0.50;
}

/* One metric of `gpu`: its value (NaN allowed) and its own nvmlReturn. */
FAKE_EXPORT int fake_set_gpm_metric(int gpu, int id, double value, int ret)
{
    if (gpu < 0 || gpu >= MAX_GPUS || id < 0 || id >= NVML_GPM_METRIC_MAX) return -1;
    gpm_value[gpu][id] = value;
    gpm_ret[gpu][id] = (nvmlReturn_t)ret;
    return 0;
}

FAKE_EXPORT int fake_gpm_samples_alive(void) { return gpm_alive; }
FAKE_EXPORT long long fake_gpm_sample_gets(int gpu) { return gpu >= 0 && gpu < MAX_GPUS ? gpm_sample_gets[gpu] : -1; }

static void accrue_link(fake_link *l)
{
    double t = now_s();
    l->rx_kib += l->rx_kib_s * (t - l->at);
    l->tx_kib += l->tx_kib_s * (t - l->at);
    l->at = t;
}

/* Link `link` of `gpu`: active or not, its remote (NVML_NVLINK_DEVICE_TYPE_*, PCI bus id) and
 * the KiB/s its data counters grow by from now on. */
FAKE_EXPORT int fake_set_nvlink(int gpu, int link, int active, int remote_type,
                                const char *remote_bus, double rx_kib_s, double tx_kib_s)
{
    if (gpu < 0 || gpu >= MAX_GPUS || link < 0 || link >= FAKE_MAX_LINKS) return -1;
    fake_link *l = &links[gpu][link];
    accrue_link(l);
    l->active = active;
    l->remote_type = remote_type;
    snprintf(l->remote_bus, sizeof l->remote_bus, "%s", remote_bus);
    l->rx_kib_s = rx_kib_s;
    l->tx_kib_s = tx_kib_s;
    if (link >= link_count[gpu]) link_count[gpu] = link + 1;
    return 0;
}

/* The PCIe path between two GPUs (NVML_TOPOLOGY_*) and their P2P read status
 * (NVML_P2P_STATUS_*), both ways; once scripted, unscripted pairs are SYSTEM / NOT_SUPPORTED. */
FAKE_EXPORT int fake_set_topology(int a, int b, int level, int p2p)
{
    if (a < 0 || a >= MAX_GPUS || b < 0 || b >= MAX_GPUS) return -1;
    if (!topo_scripted) {
        for (int i = 0; i < MAX_GPUS; i++)
            for (int j = 0; j < MAX_GPUS; j++) {
                topo_level[i][j] = NVML_TOPOLOGY_SYSTEM;
                p2p_status[i][j] = NVML_P2P_STATUS_NOT_SUPPORTED;
            }
        topo_scripted = 1;
    }
    topo_level[a][b] = topo_level[b][a] = level;
    p2p_status[a][b] = p2p_status[b][a] = p2p;
    return 0;
}

/* A GPU's NUMA node (its memory affinity), its CPUs as a range list of up to 256 CPUs
 * ("0-47,96-143"; NULL or "": the node's default CPUs) and its own NUMA id (-1: N/A). */
FAKE_EXPORT int fake_set_affinity(int gpu, int node, const char *cpus, int numa_id)
{
    if (gpu < 0 || gpu >= MAX_GPUS) return -1;
    numa_node[gpu] = node;
    gpu_numa_id[gpu] = numa_id;
    memset(cpu_mask[gpu], 0, sizeof cpu_mask[gpu]);
    for (const char *p = cpus; p != NULL && *p != '\0';) {
        int lo, hi, n = 0;
        if (sscanf(p, "%d-%d%n", &lo, &hi, &n) != 2) {
            n = 0;
            if (sscanf(p, "%d%n", &lo, &n) != 1) return -1;
            hi = lo;
        }
        for (int c = lo; c <= hi && c < 256; c++)
            if (c >= 0) cpu_mask[gpu][c / 64] |= 1ULL << (c % 64);
        p += n;
        if (*p == ',') p++;
    }
    return 0;
}

static void interconnect_reset(void)
{
    gpm_alive = 0;  /* buffers of an earlier test leak, as a test's own would; counts restart */
    topo_scripted = 0;
    memset(gpm_sample_gets, 0, sizeof gpm_sample_gets);
    memset(links, 0, sizeof links);
    memset(link_count, 0, sizeof link_count);
    memset(cpu_mask, 0, sizeof cpu_mask);
    for (int i = 0; i < MAX_GPUS; i++) {
        fake_set_gpm(i, 0);
        numa_node[i] = -1;
        gpu_numa_id[i] = -1;
    }
}

/* An 8-GPU HGX H200 board under a bf16 training load (GPU 0 with the H200's own matmul
 * figures), all GPUs on one NVSwitch fabric: 18 links each, spread over four switches. */
static void use_hgx(void)
{
    static const double load[8][5] = {  /* smutil, smocc, tensor, dram, pcie rx MiB/s */
        {96.4, 14.3, 93.6, 16.6, 12.8}, {91.0, 22.0, 80.5, 31.0, 40.0},
        {88.5, 19.5, 77.0, 28.5, 35.0}, {93.2, 16.0, 86.1, 20.2, 18.0},
        {52.0, 35.5, 21.0, 58.0, 220.0}, {0.0, 0.0, 0.0, 0.0, 0.5},
        {90.1, 18.2, 79.3, 27.7, 30.0}, {89.7, 20.8, 78.8, 29.9, 33.0},
    };
    fake_set_gpu_count(8);
    for (int i = 0; i < 8; i++) {
        char cpus[32];
        fake_set_name(i, "NVIDIA H200");
        values[i][V_MEM_TOTAL] = 143771ULL << 20;
        values[i][V_LIMIT_MW] = 700000;
        values[i][V_UTIL_GPU] = load[i][0] > 0 ? 100 : 0;
        fake_set_gpm(i, 1);
        fake_set_gpm_metric(i, NVML_GPM_METRIC_GRAPHICS_UTIL, load[i][0] > 0 ? 100.0 : 0.0, 0);
        fake_set_gpm_metric(i, NVML_GPM_METRIC_SM_UTIL, load[i][0], 0);
        fake_set_gpm_metric(i, NVML_GPM_METRIC_SM_OCCUPANCY, load[i][1], 0);
        fake_set_gpm_metric(i, NVML_GPM_METRIC_ANY_TENSOR_UTIL, load[i][2], 0);
        fake_set_gpm_metric(i, NVML_GPM_METRIC_HMMA_TENSOR_UTIL, load[i][2], 0);
        fake_set_gpm_metric(i, NVML_GPM_METRIC_DRAM_BW_UTIL, load[i][3], 0);
        fake_set_gpm_metric(i, NVML_GPM_METRIC_FP32_UTIL, load[i][0] > 0 ? 2.5 : 0.0, 0);
        fake_set_gpm_metric(i, NVML_GPM_METRIC_PCIE_TX_PER_SEC, load[i][0] > 0 ? 4.6 : 0.7, 0);
        fake_set_gpm_metric(i, NVML_GPM_METRIC_PCIE_RX_PER_SEC, load[i][4], 0);
        for (int l = 0; l < FAKE_MAX_LINKS; l++) {
            char bus[32];
            double kib_s = load[i][0] > 0 ? 2.0e6 : 0.0;  /* ~2 GiB/s per link each way */
            snprintf(bus, sizeof bus, "00000000:%02X:00.0", 0x05 + l % 4);
            fake_set_nvlink(i, l, 1, NVML_NVLINK_DEVICE_TYPE_SWITCH, bus, kib_s, kib_s);
        }
        snprintf(cpus, sizeof cpus, i < 4 ? "0-47,96-143" : "48-95,144-191");
        fake_set_affinity(i, i < 4 ? 0 : 1, cpus, -1);
    }
    for (int a = 0; a < 8; a++)
        for (int b = a + 1; b < 8; b++)
            fake_set_topology(a, b, (a < 4) == (b < 4) ? NVML_TOPOLOGY_NODE : NVML_TOPOLOGY_SYSTEM,
                              NVML_P2P_STATUS_OK);
}

/* "hgx" or "gpm" (see the top of this file); -1 for an unknown name. */
FAKE_EXPORT int fake_use_scenario(const char *name)
{
    if (strcmp(name, "hgx") == 0) {
        use_hgx();
        return 0;
    }
    if (strcmp(name, "gpm") == 0) {
        for (int i = 0; i < MAX_GPUS; i++) fake_set_gpm(i, 1);
        return 0;
    }
    return -1;
}

static void interconnect_from_environment(void)
{
    const char *scenario = getenv("FAKENVML_SCENARIO");
    if (scenario != NULL) fake_use_scenario(scenario);
}

/* --- NVLink and field values ----------------------------------------------------------------- */

/* Fields 91 (link count) and 138/139 (data KiB, scope = link or UINT_MAX); 0: not one of them. */
static int interconnect_field(nvmlDevice_t d, nvmlFieldValue_t *f)
{
    int i = d->index;
    unsigned int id = f->fieldId;
    if (id != NVML_FI_DEV_NVLINK_LINK_COUNT && id != NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX
        && id != NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX)
        return 0;
    f->valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
    f->value.ullVal = 0;
    if (link_count[i] == 0) {
        f->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        return 1;
    }
    f->nvmlReturn = NVML_SUCCESS;
    if (id == NVML_FI_DEV_NVLINK_LINK_COUNT) {
        f->valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
        f->value.uiVal = (unsigned int)link_count[i];
        return 1;
    }
    int tx = id == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX;
    double kib = 0.0;
    for (int l = 0; l < link_count[i]; l++) {
        if (f->scopeId != 0xFFFFFFFFu && (unsigned int)l != f->scopeId) continue;
        accrue_link(&links[i][l]);
        kib += tx ? links[i][l].tx_kib : links[i][l].rx_kib;
    }
    if (f->scopeId != 0xFFFFFFFFu && f->scopeId >= (unsigned int)link_count[i])
        f->nvmlReturn = NVML_ERROR_INVALID_ARGUMENT;
    f->value.ullVal = (unsigned long long)kib;
    return 1;
}

static nvmlReturn_t link_of(nvmlDevice_t d, unsigned int link, fake_link **out)
{
    if (link_count[d->index] == 0) return NVML_ERROR_NOT_SUPPORTED;
    if (link >= (unsigned int)link_count[d->index]) return NVML_ERROR_INVALID_ARGUMENT;
    *out = &links[d->index][link];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, nvmlEnableState_t *active)
{
    fake_link *l;
    CHECK_GPU(d);
    nvmlReturn_t r = link_of(d, link, &l);
    if (r == NVML_SUCCESS) *active = l->active ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return r;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned int link, nvmlPciInfo_t *pci)
{
    fake_link *l;
    CHECK_GPU(d);
    nvmlReturn_t r = link_of(d, link, &l);
    if (r != NVML_SUCCESS) return r;
    memset(pci, 0, sizeof *pci);
    snprintf(pci->busId, sizeof pci->busId, "%s", l->remote_bus);
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%s", l->remote_bus + 4);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t d, unsigned int link,
                                                 nvmlIntNvLinkDeviceType_t *type)
{
    fake_link *l;
    CHECK_GPU(d);
    nvmlReturn_t r = link_of(d, link, &l);
    if (r == NVML_SUCCESS) *type = (nvmlIntNvLinkDeviceType_t)l->remote_type;
    return r;
}

/* --- topology, P2P, affinity ------------------------------------------------------------------- */

nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b,
                                                 nvmlGpuTopologyLevel_t *level)
{
    CHECK_GPU(a);
    CHECK_GPU(b);
    if (topo_scripted) *level = (nvmlGpuTopologyLevel_t)topo_level[a->index][b->index];
    else *level = node_of(a->index) == node_of(b->index) ? NVML_TOPOLOGY_NODE : NVML_TOPOLOGY_SYSTEM;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t a, nvmlDevice_t b, nvmlGpuP2PCapsIndex_t index,
                                    nvmlGpuP2PStatus_t *status)
{
    CHECK_GPU(a);
    CHECK_GPU(b);
    if ((int)index < 0 || index >= NVML_P2P_CAPS_INDEX_UNKNOWN) return NVML_ERROR_INVALID_ARGUMENT;
    if (topo_scripted) *status = (nvmlGpuP2PStatus_t)p2p_status[a->index][b->index];
    else *status = node_of(a->index) == node_of(b->index) ? NVML_P2P_STATUS_OK
                                                          : NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED;
    return NVML_SUCCESS;
}

static void cpus_of(int gpu, unsigned long long mask[4])
{
    memcpy(mask, cpu_mask[gpu], sizeof cpu_mask[gpu]);
    if (mask[0] | mask[1] | mask[2] | mask[3]) return;
    int node = node_of(gpu);
    for (int c = 16 * node; c < 16 * node + 16; c++) mask[c / 64] |= 1ULL << (c % 64);
}

nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t d, unsigned int size, unsigned long *set)
{
    unsigned long long mask[4];
    CHECK_GPU(d);
    if (set == NULL || size == 0) return NVML_ERROR_INVALID_ARGUMENT;
    cpus_of(d->index, mask);
    for (unsigned int w = 0; w < size; w++) set[w] = w < 4 ? (unsigned long)mask[w] : 0UL;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryAffinity(nvmlDevice_t d, unsigned int size, unsigned long *set,
                                         nvmlAffinityScope_t scope)
{
    CHECK_GPU(d);
    if (set == NULL || size == 0 || scope > NVML_AFFINITY_SCOPE_SOCKET) return NVML_ERROR_INVALID_ARGUMENT;
    memset(set, 0, size * sizeof *set);
    set[0] = 1UL << node_of(d->index);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t d, unsigned int *node)
{
    CHECK_GPU(d);
    if (gpu_numa_id[d->index] < 0) return NVML_ERROR_NOT_SUPPORTED;
    *node = (unsigned int)gpu_numa_id[d->index];
    return NVML_SUCCESS;
}

/* --- GPM ----------------------------------------------------------------------------------- */

#ifndef FAKE_OLD_DRIVER
nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t d, nvmlGpmSupport_t *support)
{
    CHECK_GPU(d);
    if (support == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (support->version != NVML_GPM_SUPPORT_VERSION) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    support->isSupportedDevice = (unsigned int)gpm_supported[d->index];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *sample)
{
    maybe_delay("nvmlGpmSampleAlloc");
    if (init_count == 0) return NVML_ERROR_UNINITIALIZED;
    if (sample == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    struct nvmlGpmSample_st *s = calloc(1, sizeof *s);
    if (s == NULL) return NVML_ERROR_MEMORY;
    s->magic = GPM_SAMPLE_MAGIC;
    s->gpu = -1;
    gpm_alive++;
    *sample = s;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t sample)
{
    maybe_delay("nvmlGpmSampleFree");
    if (sample == NULL || sample->magic != GPM_SAMPLE_MAGIC) return NVML_ERROR_INVALID_ARGUMENT;
    sample->magic = 0;
    free(sample);
    gpm_alive--;
    return NVML_SUCCESS;
}

static nvmlReturn_t stamp(nvmlDevice_t d, int gi, nvmlGpmSample_t sample)
{
    if (sample == NULL || sample->magic != GPM_SAMPLE_MAGIC) return NVML_ERROR_INVALID_ARGUMENT;
    if (!gpm_supported[d->index]) return NVML_ERROR_NOT_SUPPORTED;
    gpm_sample_gets[d->index]++;
    sample->gpu = d->index;
    sample->gi = gi;
    sample->taken = 1;
    sample->at = now_s();
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t d, nvmlGpmSample_t sample)
{
    CHECK_GPU(d);
    if (mig_mode[d->index] == 1) return NVML_ERROR_NOT_SUPPORTED;  /* per GPU instance only */
    return stamp(d, -1, sample);
}

nvmlReturn_t nvmlGpmMigSampleGet(nvmlDevice_t d, unsigned int gi, nvmlGpmSample_t sample)
{
    CHECK_GPU(d);
    if (mig_mode[d->index] != 1) return NVML_ERROR_INVALID_ARGUMENT;
    for (int m = 0; m < MAX_MIGS; m++)
        if (migs[d->index][m].present && migs[d->index][m].gi == gi) return stamp(d, (int)gi, sample);
    return NVML_ERROR_NOT_FOUND;
}

static const gpm_info *info_of(unsigned int id)
{
    for (int k = 0; k < N_GPM_INFOS; k++)
        if ((unsigned int)gpm_infos[k].id == id) return &gpm_infos[k];
    return NULL;
}

/* GPM's NVLink rate `id` (a total or one link's) of a GPU: its links' scripted data rates in
 * MiB/s; 0 where the GPU has no NVLink or no such link. */
static int nvlink_rate(int gpu, unsigned int id, double *mib_s)
{
    int rx = (id - NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC) % 2 == 0;
    int link = id < NVML_GPM_METRIC_NVLINK_L0_RX_PER_SEC  /* -1: the totals */
               ? -1 : (int)(id - NVML_GPM_METRIC_NVLINK_L0_RX_PER_SEC) / 2;
    double kib_s = 0.0;
    for (int l = 0; l < link_count[gpu]; l++)
        if (link < 0 || l == link) kib_s += rx ? links[gpu][l].rx_kib_s : links[gpu][l].tx_kib_s;
    *mib_s = kib_s * MIB_PER_KIB;
    return link_count[gpu] > 0 && link < link_count[gpu];
}

nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *get)
{
    if (get == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (get->version != NVML_GPM_METRICS_GET_VERSION) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    nvmlGpmSample_t a = get->sample1, b = get->sample2;
    if (a == NULL || b == NULL || a->magic != GPM_SAMPLE_MAGIC || b->magic != GPM_SAMPLE_MAGIC
        || !a->taken || !b->taken || a->gpu != b->gpu || a->gi != b->gi
        || get->numMetrics > NVML_GPM_METRIC_MAX)
        return NVML_ERROR_INVALID_ARGUMENT;
    CHECK(&devices[a->gpu]);  /* scripted errors, a lost GPU and delays, as for a device call */
    double interval = fabs(b->at - a->at);
    for (unsigned int k = 0; k < get->numMetrics; k++) {
        nvmlGpmMetric_t *m = &get->metrics[k];
        const gpm_info *info = info_of(m->metricId);
        m->metricInfo.shortName = info ? (char *)info->short_name : NULL;
        m->metricInfo.longName = info ? (char *)info->long_name : NULL;
        m->metricInfo.unit = info ? (char *)info->unit : NULL;
        m->value = 0.0;
        if (m->metricId >= NVML_GPM_METRIC_MAX) {
            m->nvmlReturn = NVML_ERROR_INVALID_ARGUMENT;
            continue;
        }
        m->nvmlReturn = gpm_ret[a->gpu][m->metricId];
        m->value = gpm_value[a->gpu][m->metricId];
        double mib_s;
        if (m->metricId >= NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC
            && m->metricId <= NVML_GPM_METRIC_NVLINK_L17_TX_PER_SEC) {
            if (!nvlink_rate(a->gpu, m->metricId, &mib_s)) m->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
            else if (m->nvmlReturn == NVML_SUCCESS && m->value == 0.0) m->value = mib_s;
        }
        if (m->metricId == NVML_GPM_METRIC_DRAM_BW_UTIL && interval < 0.1) m->value = NAN;
    }
    return NVML_SUCCESS;
}
#endif
