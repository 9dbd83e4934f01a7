/* SPDX-License-Identifier: Apache-2.0 */
/* kimg-probe device: the GPUs the driver sees, as the rules see them. */
#include <string.h>
#include <unistd.h>

#include "driver_query.h"
#include "probe.h"
#include "readings.h"
#include "rules.h"

#define MAX_DEVICES 64

static const char device_help[] =
	"usage: kimg-probe device [--json]\n"
	"\n"
	"List every GPU the NVIDIA driver reports: index, name, compute capability,\n"
	"whether it is a Tegra (Jetson) part, the driver release (from NVML or\n"
	"/proc/driver/nvidia/version), the CUDA version of the driver\n"
	"(cuDriverGetVersion) and the newest PTX ISA its JIT compiler accepts.\n"
	"libcuda.so.1 is loaded at run time; kimg-probe does not link it.\n"
	"\n"
	"Each GPU's compute capability is read three ways: the driver's attributes\n"
	"(what the driver uses to pick an image), NVML (libnvidia-ml.so.1) and kimg's\n"
	"GPU-name table; disagreements are shown. GPUs are named by UUID; GPUs NVML\n"
	"lists that CUDA does not see (CUDA_VISIBLE_DEVICES, MIG) are listed as not\n"
	"visible. The JSON document (one line) carries the host name, so documents\n"
	"of many hosts, one per line, make a fleet file for 'check --sm @FILE'.\n"
	"\n"
	"  --json   one JSON document on stdout (docs/json-probe.md)\n"
	"\n"
	"Exit status: 0 on success; 2 when no driver can be loaded or no GPU is\n"
	"present (one line on stderr says which).\n";

int probe_cmd_device(int argc, char **argv)
{
	bool json = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(device_help, stdout);
			return PROBE_EXIT_OK;
		} else {
			fprintf(stderr, "kimg-probe device: unknown argument '%s' (see kimg-probe device --help)\n", argv[i]);
			return PROBE_EXIT_ERROR;
		}
	}
	struct kimg_device devs[MAX_DEVICES];
	struct kimg_driver_info info;
	struct kimg_error err = { 0, 0, "" };
	int n = kimg_driver_devices(&info, devs, MAX_DEVICES, &err);
	if (n < 0) {
		fprintf(stderr, "kimg-probe: %s\n", err.what);
		return PROBE_EXIT_ERROR;
	}
	char cuda[16], isa[16], cc[16], sm[24], host[256] = "";
	struct kimg_gpu_inventory inv;
	kimg_gpu_inventory_read(&inv);
	/* the release from the readings' NVML session: NVML started once */
	memcpy(info.release, inv.driver.release, sizeof info.release);
	if (gethostname(host, sizeof host - 1) != 0)
		host[0] = '\0';
	probe_format_cuda_version(info.cuda_version, cuda, sizeof cuda);
	kimg_report_format_isa(info.max_ptx_isa, isa, sizeof isa);
	if (json) {
		struct kimg_json j;
		kimg_json_init(&j, stdout);
		kimg_json_begin_document(&j);
		kimg_json_kv_string(&j, "host", host[0] ? host : NULL);
		kimg_json_key(&j, "driver");
		kimg_json_begin_object(&j);
		kimg_json_kv_string(&j, "release", info.release[0] ? info.release : NULL);
		kimg_json_kv_string(&j, "cuda_version", cuda[0] ? cuda : NULL);
		kimg_json_kv_string(&j, "max_ptx_isa", isa[0] ? isa : NULL);
		kimg_json_end_object(&j);
		kimg_json_key(&j, "devices");
		kimg_json_begin_array(&j);
		for (int i = 0; i < n; i++) {
			kimg_arch_format_cc(devs[i].cc, cc, sizeof cc);
			kimg_arch_format(devs[i].cc, false, sm, sizeof sm);
			kimg_json_begin_object(&j);
			kimg_json_kv_int(&j, "index", devs[i].ordinal);
			kimg_json_kv_string(&j, "name", devs[i].name);
			kimg_json_kv_string(&j, "cc", cc);
			kimg_json_kv_string(&j, "sm", sm);
			kimg_json_kv_bool(&j, "tegra", devs[i].tegra);
			kimg_json_kv_bool(&j, "integrated", i < 16 && info.integrated[i]);
			/* Repeated per device so each entry stands alone. */
			kimg_json_kv_string(&j, "driver", info.release[0] ? info.release : NULL);
			kimg_json_kv_string(&j, "cuda_driver", cuda[0] ? cuda : NULL);
			kimg_json_kv_string(&j, "max_ptx_isa", isa[0] ? isa : NULL);
			const struct kimg_gpu_reading *g = probe_device_reading(&inv, devs[i].ordinal);
			kimg_json_kv_string(&j, "uuid", g && g->uuid[0] ? g->uuid : NULL);
			probe_json_cc_readings(&j, g);
			kimg_json_end_object(&j);
		}
		kimg_json_end_array(&j);
		probe_json_not_visible(&j, &inv);
		kimg_json_end_object(&j);
		fputc('\n', stdout);
		return PROBE_EXIT_OK;
	}
	const char *unknown_isa = info.cuda_version > kimg_ptx_isa_table_newest_cuda()
					  ? "? (driver newer than kimg's table)"
					  : "? (driver older than CUDA 7.0, kimg's table starts there)";
	printf("driver %s, CUDA %s, PTX ISA up to %s\n", info.release[0] ? info.release : "(release unknown)",
	       cuda[0] ? cuda : "?", isa[0] ? isa : unknown_isa);
	for (int i = 0; i < n; i++) {
		kimg_arch_format_cc(devs[i].cc, cc, sizeof cc);
		kimg_arch_format(devs[i].cc, false, sm, sizeof sm);
		printf("GPU %d: %s, compute capability %s (%s)%s\n", devs[i].ordinal, devs[i].name, cc, sm,
		       devs[i].tegra ? ", Tegra" : (i < 16 && info.integrated[i] ? ", integrated" : ""));
		probe_text_reading(probe_device_reading(&inv, devs[i].ordinal));
	}
	probe_text_not_visible(&inv);
	if (info.device_count > n)
		printf("(%d more GPUs not shown)\n", info.device_count - n);
	return PROBE_EXIT_OK;
}
