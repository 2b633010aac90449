// SPDX-License-Identifier: MIT
/*
 * nvml: the guest's NVML library (xen-frontend/nvml) against the fake
 * driver, loaded as nvidia-smi and pynvml load it (dlopen).
 *
 *   nvml LIB check QUOTA_MB ALLOC_MB
 *	this process allocates ALLOC_MB through libcuda, then NVML must
 *	show: one device, the driver's name, UUID and PCI address, memory
 *	total = the quota, used = ALLOC_MB, utilisation within [0, 100],
 *	this process (and no NVML channel) among the processes,
 *	NOT_SUPPORTED for temperature and power, UNINITIALIZED before
 *	nvmlInit and after the last nvmlShutdown, the names nvidia-smi,
 *	PyTorch, pynvml and nvtop look up, and nvidia-smi 580's private
 *	table (slot 0 size, 81 handles, 213 processes, others empty)
 *   nvml LIB util
 *	another process of this user keeps the GPU busy (spin): within 5 s
 *	the utilisation must be above 0, and that process must be listed
 *   nvml LIB nobackend
 *	no backend at XGPU_SOCKET: nvmlInit answers DRIVER_NOT_LOADED
 *
 * Prints "nvml: ..." lines, then "PASS" or "FAIL what" lines; exits 1 on
 * a failure.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int nvmlReturn_t;
typedef void *nvmlDevice_t;

typedef struct {
	char busIdLegacy[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
} pci_t;

typedef struct {
	unsigned int version;
	unsigned long long total, reserved, free, used;
} mem2_t;

typedef struct {
	unsigned long long total, free, used;
} mem1_t;

typedef struct {
	unsigned int gpu, memory;
} util_t;

typedef struct {
	unsigned int pid;
	unsigned long long used;
	unsigned int gi, ci;
} proc_t;

#define MEM_V2 ((unsigned int)(sizeof(mem2_t) | 2u << 24))

static void *lib;
static int failures;

static void fail(const char *fmt, const char *a, long v)
{
	printf("FAIL ");
	printf(fmt, a, v);
	printf("\n");
	failures++;
}

static void *sym(const char *name)
{
	void *p = dlsym(lib, name);

	if (!p)
		fail("%s is not exported%ld", name, 0);
	return p;
}

#define EXPECT(what, got, want)                                              \
	do {                                                                 \
		long g_ = (long)(got), w_ = (long)(want);                    \
		if (g_ != w_) {                                              \
			printf("FAIL %s: %ld, expected %ld\n", what, g_, w_); \
			failures++;                                          \
		}                                                            \
	} while (0)

/* every name these callers look up (shared/research/nvml-and-metrics.md) */
static const char *const needed[] = {
	/* nvidia-smi 580 */
	"nvmlInitWithFlags", "nvmlInit_v2", "nvmlShutdown", "nvmlErrorString",
	"nvmlInternalGetExportTable", "nvmlSystemGetDriverVersion",
	"nvmlSystemGetCudaDriverVersion_v2", "nvmlDeviceGetCount_v2",
	"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetName",
	"nvmlDeviceGetUUID", "nvmlDeviceGetPciInfo_v3",
	"nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetUtilizationRates",
	"nvmlDeviceGetPersistenceMode", "nvmlDeviceGetDisplayActive",
	"nvmlDeviceGetDisplayMode", "nvmlDeviceGetEccMode",
	"nvmlDeviceGetTotalEccErrors", "nvmlDeviceGetDetailedEccErrors",
	"nvmlDeviceGetMemoryErrorCounter", "nvmlDeviceGetFanSpeed",
	"nvmlDeviceGetFanSpeed_v2", "nvmlDeviceGetNumFans",
	"nvmlDeviceGetTemperature", "nvmlDeviceGetTemperatureV",
	"nvmlDeviceGetPerformanceState", "nvmlDeviceGetPowerUsage",
	"nvmlDeviceGetPowerManagementLimit", "nvmlDeviceGetEnforcedPowerLimit",
	"nvmlDeviceGetComputeMode", "nvmlDeviceGetMigMode",
	"nvmlDeviceGetMaxMigDeviceCount", "nvmlDeviceIsMigDeviceHandle",
	"nvmlDeviceGetVirtualizationMode", "nvmlSystemGetProcessName",
	/* PyTorch: torch.cuda (ctypes) and c10's DriverAPI asserts */
	"nvmlInit", "nvmlDeviceGetHandleByPciBusId_v2",
	"nvmlDeviceGetNvLinkRemoteDeviceType",
	"nvmlDeviceGetNvLinkRemotePciInfo_v2",
	"nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGpuFabricInfoV",
	/* pynvml, gpustat, nvtop */
	"nvmlDeviceGetComputeRunningProcesses_v3",
	"nvmlDeviceGetGraphicsRunningProcesses_v3",
	"nvmlDeviceGetGraphicsRunningProcesses_v2",
	"nvmlDeviceGetGraphicsRunningProcesses", "nvmlDeviceGetMemoryInfo",
	"nvmlDeviceGetPciInfo", "nvmlDeviceGetIndex",
	"nvmlDeviceGetMaxPcieLinkGeneration", "nvmlDeviceGetMaxPcieLinkWidth",
	"nvmlDeviceGetCurrPcieLinkGeneration", "nvmlDeviceGetCurrPcieLinkWidth",
	"nvmlDeviceGetPcieThroughput", "nvmlDeviceGetTemperatureThreshold",
	"nvmlDeviceGetClockInfo", "nvmlDeviceGetMaxClockInfo",
	"nvmlDeviceGetEncoderUtilization", "nvmlDeviceGetDecoderUtilization",
	"nvmlDeviceGetCudaComputeCapability", "nvmlDeviceGetHandleByUUID",
	"nvmlDeviceGetP2PStatus", "nvmlDeviceGetProcessUtilization",
	"nvmlDeviceGetProcessesUtilizationInfo", "nvmlSystemGetNVMLVersion",
	"nvmlDeviceGetCount", "nvmlDeviceGetHandleByIndex",
};

static nvmlReturn_t (*Init)(void), (*Shutdown)(void), (*InitFlags)(unsigned);
static nvmlReturn_t (*Count)(unsigned *);
static nvmlReturn_t (*Handle)(unsigned, nvmlDevice_t *);
static nvmlReturn_t (*Util)(nvmlDevice_t, util_t *);
static nvmlReturn_t (*Procs)(nvmlDevice_t, unsigned *, proc_t *);
static nvmlReturn_t (*GetName)(nvmlDevice_t, char *, unsigned);

static int load(const char *path)
{
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		printf("FAIL dlopen %s: %s\n", path, dlerror());
		return -1;
	}
	for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++)
		sym(needed[i]);
	/* nothing but nvml* (the channel's code stays private) */
	if (dlsym(lib, "xgpulib_chan_open") || dlsym(lib, "cuInit"))
		fail("a private name is exported%s%ld", "", 0);
	*(void **)&Init = sym("nvmlInit_v2");
	*(void **)&InitFlags = sym("nvmlInitWithFlags");
	*(void **)&Shutdown = sym("nvmlShutdown");
	*(void **)&Count = sym("nvmlDeviceGetCount_v2");
	*(void **)&Handle = sym("nvmlDeviceGetHandleByIndex_v2");
	*(void **)&Util = sym("nvmlDeviceGetUtilizationRates");
	*(void **)&Procs = sym("nvmlDeviceGetComputeRunningProcesses_v3");
	*(void **)&GetName = sym("nvmlDeviceGetName");
	return failures ? -1 : 0;
}

static int find_pid(const proc_t *p, unsigned n, unsigned pid)
{
	for (unsigned i = 0; i < n; i++)
		if (p[i].pid == pid)
			return (int)i;
	return -1;
}

static void check_table(nvmlDevice_t dev, unsigned long long alloc)
{
	static const unsigned char id[16] = {
		0xc4, 0xfe, 0x3e, 0x6c, 0xc9, 0x8f, 0x6c, 0x4e,
		0xa3, 0x27, 0xee, 0x69, 0x6e, 0x12, 0xf7, 0xc4,
	};
	unsigned char other[16] = { 1 };
	nvmlReturn_t (*get)(const void **, const void *) = NULL;
	nvmlReturn_t (*fn)(void *, void *, void *, void *);
	const uintptr_t *t = NULL;
	nvmlDevice_t h = NULL;
	unsigned char *arr;
	unsigned int n;
	int found = 0;

	*(void **)&get = sym("nvmlInternalGetExportTable");
	if (!get)
		return;
	EXPECT("export table of another id",
	       get((const void **)&t, other) != 0, 1);
	EXPECT("export table", get((const void **)&t, id), 0);
	if (!t)
		return;
	if (t[0] <= 0x288) {
		fail("export table size %s%ld", "", (long)t[0]);
		return;
	}
	*(void **)&fn = (void *)t[81];
	EXPECT("slot 81 (handle of index 0)",
	       fn((void *)0, &h, (void *)0x22, NULL), 0);
	EXPECT("slot 81's handle is the device's", h == dev, 1);
	arr = calloc(250, 4128);
	n = 250;
	*(void **)&fn = (void *)t[213];
	EXPECT("slot 213 (processes)", fn(dev, &n, arr, NULL), 0);
	for (unsigned int i = 0; i < n && i < 250; i++) {
		unsigned char *e = arr + (size_t)i * 4128;
		unsigned int pid;
		unsigned long long used;

		memcpy(&pid, e, 4);
		memcpy(&used, e + 8, 8);
		if (pid != (unsigned int)getpid())
			continue;
		found = 1;
		EXPECT("slot 213: this process's memory", used, alloc);
		if (!e[32])
			fail("slot 213: no name for this process%s%ld", "", 0);
		else
			printf("nvml: slot 213 names this process \"%s\"\n",
			       (char *)e + 32);
	}
	EXPECT("slot 213 lists this process", found, 1);
	n = 77;
	*(void **)&fn = (void *)t[100];
	EXPECT("slot 100 (not served)", fn(dev, &n, NULL, NULL), 0);
	EXPECT("slot 100 writes an empty count", n, 0);
	free(arr);
}

static int mode_check(long quota_mb, long alloc_mb)
{
	unsigned long long quota = (unsigned long long)quota_mb << 20;
	unsigned long long alloc = (unsigned long long)alloc_mb << 20;
	nvmlReturn_t (*Uuid)(nvmlDevice_t, char *, unsigned);
	nvmlReturn_t (*Pci)(nvmlDevice_t, pci_t *);
	nvmlReturn_t (*Mem2)(nvmlDevice_t, mem2_t *);
	nvmlReturn_t (*Mem1)(nvmlDevice_t, mem1_t *);
	nvmlReturn_t (*Temp)(nvmlDevice_t, unsigned, unsigned *);
	nvmlReturn_t (*Power)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*ByUuid)(const char *, nvmlDevice_t *);
	nvmlReturn_t (*ByBus)(const char *, nvmlDevice_t *);
	nvmlReturn_t (*CudaVer)(int *);
	const char *(*ErrStr)(nvmlReturn_t);
	char name[96], cuname[256], uuid[96], want_uuid[64];
	nvmlDevice_t dev = NULL, d2 = NULL;
	CUdeviceptr dptr;
	unsigned int n = 0, v = 0;
	CUcontext ctx;
	CUdevice cud;
	CUuuid cuu;
	proc_t procs[16];
	util_t u;
	mem2_t m2;
	mem1_t m1;
	pci_t pci;
	int busnum = -1, drv = 0, cv = 0, i;

	*(void **)&Uuid = sym("nvmlDeviceGetUUID");
	*(void **)&Pci = sym("nvmlDeviceGetPciInfo_v3");
	*(void **)&Mem2 = sym("nvmlDeviceGetMemoryInfo_v2");
	*(void **)&Mem1 = sym("nvmlDeviceGetMemoryInfo");
	*(void **)&Temp = sym("nvmlDeviceGetTemperature");
	*(void **)&Power = sym("nvmlDeviceGetPowerUsage");
	*(void **)&ByUuid = sym("nvmlDeviceGetHandleByUUID");
	*(void **)&ByBus = sym("nvmlDeviceGetHandleByPciBusId_v2");
	*(void **)&CudaVer = sym("nvmlSystemGetCudaDriverVersion_v2");
	*(void **)&ErrStr = sym("nvmlErrorString");
	if (failures)
		return 1;

	/* before nvmlInit */
	EXPECT("count before nvmlInit", Count(&n), 1);
	EXPECT("temperature before nvmlInit", Temp(NULL, 0, &v), 1);
	EXPECT("shutdown before nvmlInit", Shutdown(), 1);

	/* what this guest holds, through libcuda */
	if (cuInit(0) || cuDeviceGet(&cud, 0) ||
	    cuDevicePrimaryCtxRetain(&ctx, cud) || cuCtxSetCurrent(ctx) ||
	    cuMemAlloc(&dptr, (size_t)alloc) ||
	    cuDeviceGetName(cuname, sizeof(cuname), cud) ||
	    cuDeviceGetUuid(&cuu, cud) ||
	    cuDeviceGetAttribute(&busnum, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, cud) ||
	    cuDriverGetVersion(&drv)) {
		fail("libcuda set-up failed%s%ld", "", 0);
		return 1;
	}
	snprintf(want_uuid, sizeof(want_uuid), "GPU-%02x%02x%02x%02x-%02x%02x-"
		 "%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 (unsigned char)cuu.bytes[0], (unsigned char)cuu.bytes[1],
		 (unsigned char)cuu.bytes[2], (unsigned char)cuu.bytes[3],
		 (unsigned char)cuu.bytes[4], (unsigned char)cuu.bytes[5],
		 (unsigned char)cuu.bytes[6], (unsigned char)cuu.bytes[7],
		 (unsigned char)cuu.bytes[8], (unsigned char)cuu.bytes[9],
		 (unsigned char)cuu.bytes[10], (unsigned char)cuu.bytes[11],
		 (unsigned char)cuu.bytes[12], (unsigned char)cuu.bytes[13],
		 (unsigned char)cuu.bytes[14], (unsigned char)cuu.bytes[15]);

	EXPECT("nvmlInitWithFlags(0)", InitFlags(0), 0);
	EXPECT("nvmlInit_v2 (a second reference)", Init(), 0);
	EXPECT("nvmlDeviceGetCount_v2", Count(&n), 0);
	EXPECT("device count", n, 1);
	EXPECT("handle of index 1", Handle(1, &d2), 2);
	EXPECT("handle of index 0", Handle(0, &dev), 0);
	EXPECT("a forged handle", GetName((nvmlDevice_t)&n, name, 96), 2);

	EXPECT("nvmlDeviceGetName", GetName(dev, name, sizeof(name)), 0);
	if (strcmp(name, cuname))
		fail("name \"%s\" is not the driver's%ld", name, 0);
	printf("nvml: name %s\n", name);
	EXPECT("name into 4 bytes", GetName(dev, name, 4), 7);
	EXPECT("nvmlDeviceGetUUID", Uuid(dev, uuid, sizeof(uuid)), 0);
	if (strcmp(uuid, want_uuid))
		fail("UUID %s is not the driver's%ld", uuid, 0);
	printf("nvml: uuid %s\n", uuid);
	EXPECT("handle by UUID", ByUuid(uuid, &d2), 0);
	EXPECT("handle by UUID is the device", d2 == dev, 1);
	EXPECT("handle by another UUID",
	       ByUuid("GPU-00000000-0000-0000-0000-000000000000", &d2), 6);

	EXPECT("nvmlDeviceGetPciInfo_v3", Pci(dev, &pci), 0);
	EXPECT("PCI bus", pci.bus, busnum);
	printf("nvml: bus id %s (legacy %s) device id %#x\n", pci.busId,
	       pci.busIdLegacy, pci.pciDeviceId);
	EXPECT("handle by PCI bus id", ByBus(pci.busId, &d2), 0);
	EXPECT("handle by PCI bus id is the device", d2 == dev, 1);
	EXPECT("handle by the legacy bus id", ByBus(pci.busIdLegacy, &d2), 0);

	memset(&m2, 0, sizeof(m2));
	EXPECT("memory v2 of version 0", Mem2(dev, &m2), 25);
	m2.version = MEM_V2;
	EXPECT("nvmlDeviceGetMemoryInfo_v2", Mem2(dev, &m2), 0);
	EXPECT("memory total (the quota, MiB)", m2.total >> 20, quota >> 20);
	EXPECT("memory used (this process's, MiB)", m2.used >> 20,
	       alloc >> 20);
	EXPECT("memory free (MiB)", m2.free >> 20, (quota - alloc) >> 20);
	printf("nvml: memory total %llu MiB used %llu MiB free %llu MiB\n",
	       m2.total >> 20, m2.used >> 20, m2.free >> 20);
	EXPECT("nvmlDeviceGetMemoryInfo", Mem1(dev, &m1), 0);
	EXPECT("memory v1 total", m1.total == m2.total, 1);
	EXPECT("memory v1 used", m1.used == m2.used, 1);

	EXPECT("nvmlDeviceGetUtilizationRates", Util(dev, &u), 0);
	EXPECT("utilisation within [0, 100]", u.gpu <= 100, 1);
	printf("nvml: utilisation %u%%\n", u.gpu);

	n = 0;
	EXPECT("processes into no room", Procs(dev, &n, NULL), 7);
	EXPECT("processes: this one only (no NVML channel)", n, 1);
	n = 16;
	EXPECT("nvmlDeviceGetComputeRunningProcesses_v3",
	       Procs(dev, &n, procs), 0);
	i = find_pid(procs, n, (unsigned)getpid());
	EXPECT("this process is listed", i >= 0, 1);
	if (i >= 0) {
		EXPECT("its memory", procs[i].used, alloc);
		EXPECT("no MIG instance", procs[i].gi, 0xFFFFFFFFu);
		printf("nvml: process %u holds %llu MiB\n", procs[i].pid,
		       procs[i].used >> 20);
	}

	{
		nvmlReturn_t (*Virt)(nvmlDevice_t, unsigned *);
		nvmlReturn_t (*Fields)(nvmlDevice_t, int, void *);
		unsigned char fv[2][40];
		int fr;

		*(void **)&Virt = sym("nvmlDeviceGetVirtualizationMode");
		*(void **)&Fields = sym("nvmlDeviceGetFieldValues");
		v = 7;
		EXPECT("virtualization mode", Virt ? Virt(dev, &v) : -1, 0);
		EXPECT("virtualization mode NONE", v, 0);
		memset(fv, 0, sizeof(fv));
		EXPECT("field values", Fields ? Fields(dev, 2, fv) : -1, 0);
		memcpy(&fr, fv[1] + 28, 4);
		EXPECT("a field's own answer", fr, 3);
	}
	EXPECT("temperature", Temp(dev, 0, &v), 3);
	EXPECT("power", Power(dev, &v), 3);
	EXPECT("CUDA driver version", CudaVer(&cv), 0);
	EXPECT("CUDA driver version is the driver's", cv, drv);
	if (strcmp(ErrStr(3), "Not Supported"))
		fail("nvmlErrorString(3) is \"%s\"%ld", ErrStr(3), 0);

	check_table(dev, alloc);

	EXPECT("nvmlShutdown (one reference left)", Shutdown(), 0);
	EXPECT("count with one reference", Count(&n), 0);
	EXPECT("nvmlShutdown (the last)", Shutdown(), 0);
	EXPECT("count after the last shutdown", Count(&n), 1);
	EXPECT("nvmlShutdown once more", Shutdown(), 1);
	/* again, on the same channel */
	EXPECT("nvmlInit after shutdown", Init(), 0);
	EXPECT("count after init again", Count(&n), 0);
	EXPECT("nvmlShutdown", Shutdown(), 0);
	cuMemFree(dptr);
	return failures != 0;
}

static int mode_util(void)
{
	nvmlDevice_t dev = NULL;
	proc_t procs[16];
	unsigned int n;
	util_t u = { 0, 0 };
	char pname[64];
	nvmlReturn_t (*PName)(unsigned, char *, unsigned);

	*(void **)&PName = sym("nvmlSystemGetProcessName");
	if (failures)
		return 1;
	EXPECT("nvmlInit", Init(), 0);
	EXPECT("handle", Handle(0, &dev), 0);
	for (int i = 0; i < 50 && !u.gpu; i++) {
		EXPECT("utilisation", Util(dev, &u), 0);
		if (!u.gpu)
			usleep(100000);
	}
	printf("nvml: utilisation %u%% while spin runs\n", u.gpu);
	if (!u.gpu || u.gpu > 100)
		fail("utilisation %s%ld%% while another process spins", "",
		     (long)u.gpu);
	n = 16;
	EXPECT("processes", Procs(dev, &n, procs), 0);
	EXPECT("one process (spin)", n, 1);
	if (n >= 1) {
		EXPECT("its name", PName(procs[0].pid, pname, sizeof(pname)),
		       0);
		printf("nvml: process %u is %s\n", procs[0].pid, pname);
		if (!strstr(pname, "spin"))
			fail("process name %s%ld", pname, 0);
	}
	Shutdown();
	return failures != 0;
}

static int mode_nobackend(void)
{
	unsigned int n;

	EXPECT("nvmlInit without a backend", Init(), 9);
	EXPECT("count after a failed nvmlInit", Count(&n), 1);
	return failures != 0;
}

int main(int argc, char **argv)
{
	int rc;

	if (argc < 3) {
		fprintf(stderr, "usage: nvml LIB check QUOTA_MB ALLOC_MB | "
			"util | nobackend\n");
		return 2;
	}
	if (load(argv[1]))
		return 1;
	if (!strcmp(argv[2], "check") && argc == 5)
		rc = mode_check(atol(argv[3]), atol(argv[4]));
	else if (!strcmp(argv[2], "util"))
		rc = mode_util();
	else if (!strcmp(argv[2], "nobackend"))
		rc = mode_nobackend();
	else
		return 2;
	printf("%s\n", rc ? "FAIL" : "PASS");
	return rc;
}
