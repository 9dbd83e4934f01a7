/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of the cluster readers (core/cluster.h): Kubernetes node
 * lists with GPU Feature Discovery labels (NVIDIA/k8s-device-plugin
 * docs/gpu-feature-discovery: label names, MIG single and mixed), Slurm
 * `scontrol show node` output (gres.conf(5): gpu:TYPE:N with sockets),
 * dcgm-exporter's Prometheus text (its README's series and labels), the
 * GRES site map, driver releases to CUDA versions (CUDA release notes
 * Table 3, the GA drivers), and hostile documents of each, with the exact
 * error code. Expected values are written out by hand from those sources. */
#include <string.h>

#include "cluster.h"
#include "json_read.h"
#include "testutil.h"

#define MAX_NODES 16
static struct kimg_cluster_node got[MAX_NODES];
static int n_got;
static struct kimg_error err;
static unsigned char *arena;

static int keep(void *ctx, const struct kimg_cluster_node *n)
{
	(void)ctx;
	if (n_got < MAX_NODES)
		got[n_got] = *n;
	n_got++;
	return 0;
}

static int k8s(const char *doc)
{
	n_got = 0;
	memset(&err, 0, sizeof err);
	if (!arena)
		arena = malloc(KIMG_K8S_NODE_ARENA);
	return kimg_k8s_nodes_parse(str_span(doc), arena, KIMG_K8S_NODE_ARENA, keep, NULL, &err);
}

static int slurm(const char *text, const struct kimg_gres_map *map)
{
	n_got = 0;
	memset(&err, 0, sizeof err);
	return kimg_slurm_nodes_parse(str_span(text), map, keep, NULL, &err);
}

static int dcgm(const char *text)
{
	n_got = 0;
	memset(&err, 0, sizeof err);
	return kimg_dcgm_parse(str_span(text), keep, NULL, &err);
}

#define GFD_H100 \
	"\"nvidia.com/gpu.compute.major\":\"9\",\"nvidia.com/gpu.compute.minor\":\"0\"," \
	"\"nvidia.com/gpu.product\":\"NVIDIA-H100-80GB-HBM3\",\"nvidia.com/gpu.count\":\"8\"," \
	"\"nvidia.com/cuda.runtime.major\":\"12\",\"nvidia.com/cuda.runtime.minor\":\"4\"," \
	"\"nvidia.com/cuda.driver.major\":\"550\",\"nvidia.com/cuda.driver.minor\":\"54\",\"nvidia.com/cuda.driver.rev\":\"15\""

START_TEST(k8s_list_with_gfd_labels)
{
	int rc = k8s("{\"apiVersion\":\"v1\",\"items\":["
		     "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"gpu-h1\",\"labels\":{" GFD_H100 "}}},"
		     "{\"kind\":\"Node\",\"metadata\":{\"name\":\"cpu-1\",\"labels\":{\"kubernetes.io/os\":\"linux\"}}}"
		     "],\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"\"}}");
	ck_assert_int_eq(rc, 2);
	ck_assert_str_eq(got[0].name, "gpu-h1");
	ck_assert_uint_eq(got[0].n_gpus, 1);
	const struct kimg_cluster_gpu *g = &got[0].gpus[0];
	ck_assert_uint_eq(g->sm, 90);
	ck_assert(!g->tegra);
	ck_assert_int_eq(g->driver_version, 12040);
	ck_assert_str_eq(g->release, "550.54.15");
	ck_assert_str_eq(g->product, "NVIDIA-H100-80GB-HBM3");
	ck_assert_str_eq(g->model, "H100");
	ck_assert_uint_eq(g->count, 8);
	ck_assert_str_eq(g->mig, "");
	ck_assert_str_eq(got[1].name, "cpu-1");
	ck_assert_uint_eq(got[1].n_gpus, 0);
	ck_assert_str_eq(got[1].why, "no GPU labels");
}
END_TEST

START_TEST(k8s_nodelist_without_item_kinds_and_one_node)
{
	/* GET /api/v1/nodes: kind NodeList, items without kind */
	ck_assert_int_eq(k8s("{\"kind\":\"NodeList\",\"items\":[{\"metadata\":{\"name\":\"a\",\"labels\":{" GFD_H100 "}}}]}"), 1);
	ck_assert_uint_eq(got[0].gpus[0].sm, 90);
	/* kubectl get node NAME -o json: one Node */
	ck_assert_int_eq(k8s("{\"kind\":\"Node\",\"metadata\":{\"name\":\"solo\",\"labels\":{" GFD_H100 "}}}"), 1);
	ck_assert_str_eq(got[0].name, "solo");
	ck_assert_int_eq(got[0].gpus[0].driver_version, 12040);
	/* an empty list is read (the front end says "no nodes") */
	ck_assert_int_eq(k8s("{\"kind\":\"List\",\"items\":[]}"), 0);
}
END_TEST

/* GFD's labels come as pairs (k8s-device-plugin docs/gpu-feature-discovery):
 * cuda.runtime.major with .minor gives the CUDA version, whatever the
 * compute labels; half a pair gives none (no driver release either: 0). */
START_TEST(k8s_cuda_runtime_labels_are_a_pair)
{
	ck_assert_int_eq(k8s("{\"items\":["
			     "{\"metadata\":{\"name\":\"named\",\"labels\":{\"nvidia.com/gpu.product\":\"NVIDIA-H100-80GB-HBM3\","
			     "\"nvidia.com/cuda.runtime.major\":\"13\",\"nvidia.com/cuda.runtime.minor\":\"0\"}}},"
			     "{\"metadata\":{\"name\":\"half\",\"labels\":{\"nvidia.com/gpu.compute.major\":\"9\","
			     "\"nvidia.com/gpu.compute.minor\":\"0\",\"nvidia.com/cuda.runtime.minor\":\"8\"}}}],"
			     "\"kind\":\"List\"}"),
			 2);
	ck_assert_uint_eq(got[0].gpus[0].sm, 90); /* from the product's name */
	ck_assert_int_eq(got[0].gpus[0].driver_version, 13000);
	ck_assert_str_eq(got[0].why, "");
	ck_assert_uint_eq(got[1].gpus[0].sm, 90);
	ck_assert_int_eq(got[1].gpus[0].driver_version, 0);
	ck_assert_str_eq(got[1].why, "");
}
END_TEST

START_TEST(k8s_mig_single_and_mixed)
{
	/* single: product "<GPU>-MIG-<profile>", gpu.count the MIG devices */
	ck_assert_int_eq(k8s("{\"items\":[{\"metadata\":{\"name\":\"m1\",\"labels\":{"
			     "\"nvidia.com/mig.strategy\":\"single\",\"nvidia.com/gpu.product\":\"A100-SXM4-40GB-MIG-1g.5gb\","
			     "\"nvidia.com/gpu.count\":\"56\",\"nvidia.com/gpu.compute.major\":\"8\",\"nvidia.com/gpu.compute.minor\":\"0\"}}},"
			     "{\"metadata\":{\"name\":\"m2\",\"labels\":{"
			     "\"nvidia.com/mig.strategy\":\"mixed\",\"nvidia.com/gpu.product\":\"NVIDIA-A100-SXM4-80GB\","
			     "\"nvidia.com/gpu.count\":\"8\",\"nvidia.com/mig-1g.10gb.count\":\"14\",\"nvidia.com/mig-3g.40gb.count\":\"2\"}}}],"
			     "\"kind\":\"List\"}"), 2);
	ck_assert_uint_eq(got[0].gpus[0].sm, 80);
	ck_assert_str_eq(got[0].gpus[0].mig, "1g.5gb");
	ck_assert_str_eq(got[0].gpus[0].model, "A100");
	ck_assert_uint_eq(got[0].gpus[0].count, 56);
	/* mixed, no compute labels: the product through the name table */
	ck_assert_uint_eq(got[1].gpus[0].sm, 80);
	ck_assert_str_eq(got[1].gpus[0].mig, "mixed");
	ck_assert_uint_eq(got[1].gpus[0].count, 8);
	ck_assert_int_eq(got[1].gpus[0].driver_version, 0); /* no cuda.runtime labels: not known */
}
END_TEST

/* No cuda.runtime labels, only the driver release: its CUDA version from
 * NVIDIA's table (CUDA Toolkit release notes, Table 3: 12.4 GA needs
 * >= 550.54.14, 13.0 GA >= 580.65.06); a release older than every row
 * stays unknown, and runtime labels, when present, win. */
START_TEST(k8s_driver_release_only)
{
	ck_assert_int_eq(k8s("{\"items\":[{\"metadata\":{\"name\":\"a\",\"labels\":{\"nvidia.com/gpu.compute.major\":\"9\","
			     "\"nvidia.com/gpu.compute.minor\":\"0\",\"nvidia.com/cuda.driver.major\":\"550\","
			     "\"nvidia.com/cuda.driver.minor\":\"54\",\"nvidia.com/cuda.driver.rev\":\"15\"}}},"
			     "{\"metadata\":{\"name\":\"b\",\"labels\":{\"nvidia.com/gpu.compute.major\":\"9\","
			     "\"nvidia.com/gpu.compute.minor\":\"0\",\"nvidia.com/cuda.driver.major\":\"580\","
			     "\"nvidia.com/cuda.driver.minor\":\"65\",\"nvidia.com/cuda.driver.rev\":\"06\"}}},"
			     "{\"metadata\":{\"name\":\"c\",\"labels\":{\"nvidia.com/gpu.compute.major\":\"9\","
			     "\"nvidia.com/gpu.compute.minor\":\"0\",\"nvidia.com/cuda.driver.major\":\"300\","
			     "\"nvidia.com/cuda.driver.minor\":\"1\"}}},"
			     "{\"metadata\":{\"name\":\"d\",\"labels\":{\"nvidia.com/gpu.compute.major\":\"9\","
			     "\"nvidia.com/gpu.compute.minor\":\"0\",\"nvidia.com/cuda.driver.major\":\"580\","
			     "\"nvidia.com/cuda.driver.minor\":\"65\",\"nvidia.com/cuda.runtime.major\":\"12\","
			     "\"nvidia.com/cuda.runtime.minor\":\"8\"}}}],\"kind\":\"List\"}"),
			 4);
	ck_assert_str_eq(got[0].gpus[0].release, "550.54.15");
	ck_assert_int_eq(got[0].gpus[0].driver_version, 12040);
	ck_assert_int_eq(got[1].gpus[0].driver_version, 13000);
	ck_assert_int_eq(got[2].gpus[0].driver_version, 0);
	ck_assert_int_eq(got[3].gpus[0].driver_version, 12080);
}
END_TEST

START_TEST(k8s_odd_label_values)
{
	/* read, but the node has no GPU facts, and says why */
	ck_assert_int_eq(k8s("{\"items\":[{\"metadata\":{\"name\":\"x\",\"labels\":{\"nvidia.com/gpu.compute.major\":\"x\","
			     "\"nvidia.com/gpu.compute.minor\":\"0\"}}}],\"kind\":\"List\"}"), 1);
	ck_assert_uint_eq(got[0].n_gpus, 0);
	ck_assert_str_eq(got[0].why, "label nvidia.com/gpu.compute.major is \"x\", not a number");
	ck_assert_int_eq(k8s("{\"items\":[{\"metadata\":{\"name\":\"n\",\"labels\":{\"nvidia.com/gpu.compute.major\":9,"
			     "\"nvidia.com/gpu.compute.minor\":\"0\"}}}],\"kind\":\"List\"}"), 1);
	ck_assert_str_eq(got[0].why, "label nvidia.com/gpu.compute.major is \"a JSON number\", not a number");
	/* a NUL inside a label value (\u0000) and inside the node name */
	ck_assert_int_eq(k8s("{\"items\":[{\"metadata\":{\"name\":\"a\\u0000b\",\"labels\":{\"nvidia.com/gpu.compute.major\":\"9\\u0000\","
			     "\"nvidia.com/gpu.compute.minor\":\"0\"}}}],\"kind\":\"List\"}"), 1);
	ck_assert_str_eq(got[0].name, "a?b");
	ck_assert_uint_eq(got[0].n_gpus, 0);
	ck_assert_str_eq(got[0].why, "label nvidia.com/gpu.compute.major is \"9?\", not a number");
	/* a capability no GPU has */
	ck_assert_int_eq(k8s("{\"items\":[{\"metadata\":{\"name\":\"z\",\"labels\":{\"nvidia.com/gpu.compute.major\":\"9\","
			     "\"nvidia.com/gpu.compute.minor\":\"9\"}}}],\"kind\":\"List\"}"), 1);
	ck_assert_str_eq(got[0].why, "labels nvidia.com/gpu.compute.major/minor say 9.9, which no NVIDIA GPU has");
	/* GPU labels but neither a capability nor a known product */
	ck_assert_int_eq(k8s("{\"items\":[{\"metadata\":{\"name\":\"q\",\"labels\":{\"nvidia.com/gpu.product\":\"Mystery-9000\"}}}],"
			     "\"kind\":\"List\"}"), 1);
	ck_assert_uint_eq(got[0].n_gpus, 0);
	ck_assert_ptr_nonnull(strstr(got[0].why, "\"Mystery-9000\" is not in kimg's GPU-name table"));
	/* half a capability is none: major 9 alone (minor missing) is not 9.x;
	 * the product name decides (H100: 9.0), or, unknown, the node says why */
	ck_assert_int_eq(k8s("{\"items\":[{\"metadata\":{\"name\":\"h\",\"labels\":{\"nvidia.com/gpu.compute.major\":\"9\","
			     "\"nvidia.com/gpu.product\":\"NVIDIA-H100-80GB-HBM3\"}}}],\"kind\":\"List\"}"), 1);
	ck_assert_uint_eq(got[0].n_gpus, 1);
	ck_assert_uint_eq(got[0].gpus[0].sm, 90);
	ck_assert_int_eq(k8s("{\"items\":[{\"metadata\":{\"name\":\"m\",\"labels\":{\"nvidia.com/gpu.compute.minor\":\"9\","
			     "\"nvidia.com/gpu.product\":\"NVIDIA-A100-SXM4-40GB\"}}}],\"kind\":\"List\"}"), 1);
	ck_assert_uint_eq(got[0].n_gpus, 1);
	ck_assert_uint_eq(got[0].gpus[0].sm, 80);
	ck_assert_int_eq(k8s("{\"items\":[{\"metadata\":{\"name\":\"j\",\"labels\":{\"nvidia.com/gpu.compute.major\":\"9\"}}}],"
			     "\"kind\":\"List\"}"), 1);
	ck_assert_uint_eq(got[0].n_gpus, 0);
	ck_assert_str_eq(got[0].why, "GPU labels without nvidia.com/gpu.compute.major/minor");
	/* labels that are no object */
	ck_assert_int_eq(k8s("{\"items\":[{\"metadata\":{\"name\":\"l\",\"labels\":[1,2]}}],\"kind\":\"List\"}"), 1);
	ck_assert_str_eq(got[0].why, "no GPU labels");
}
END_TEST

START_TEST(k8s_malformed_documents)
{
	ck_assert_int_eq(k8s("{\"items\":[{\"metadata\":{\"name\":\"a\"}},"), -KIMG_ETRUNC);
	ck_assert_int_eq(k8s("{\"items\":[{\"metadata\":{\"name\":\"a\"}}],\"kind\":\"List\"} trailing"), -KIMG_EFORMAT);
	ck_assert_str_eq(err.what, "bytes after the JSON document");
	ck_assert_int_eq(k8s("[1,2]"), -KIMG_EFORMAT);
	ck_assert_int_eq(k8s("{}"), -KIMG_EFORMAT);
	ck_assert_int_eq(k8s("{\"kind\":\"PodList\",\"items\":[]}"), -KIMG_EFORMAT);
	ck_assert_str_eq(err.what, "not a Kubernetes node list: kind PodList, not List or NodeList");
	ck_assert_int_eq(k8s("{\"kind\":\"List\",\"items\":[{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"}}]}"), -KIMG_EFORMAT);
	ck_assert_str_eq(err.what, "item 1 is a Pod, not a Node");
	ck_assert_int_eq(k8s("{\"kind\":\"List\",\"items\":[3]}"), -KIMG_EFORMAT);
	ck_assert_int_eq(k8s("{\"kind\":\"List\"}"), -KIMG_EFORMAT);
	ck_assert_int_eq(k8s("{\"items\":[],\"items\":[]}"), -KIMG_EFORMAT);
	ck_assert_int_eq(k8s("{\"items\":[{\"metadata\":{\"name\":\"a\" \"b\"}}]}"), -KIMG_EFORMAT);
	ck_assert_int_eq(k8s(""), -KIMG_ETRUNC);
	/* a raw NUL byte is no JSON */
	static const char nul[] = "{\"items\":[{\"metadata\":{\"name\":\"a\0b\"}}]}";
	n_got = 0;
	ck_assert_int_eq(kimg_k8s_nodes_parse(kimg_span_make(nul, sizeof nul - 1), arena, KIMG_K8S_NODE_ARENA, keep, NULL, &err),
			 -KIMG_EFORMAT);
	/* every prefix of a valid document is truncated, never read as a list */
	static const char doc[] = "{\"items\":[{\"metadata\":{\"name\":\"a\",\"labels\":{" GFD_H100 "}}}],\"kind\":\"List\"}";
	for (size_t i = 0; i + 1 < sizeof doc - 1; i++) {
		n_got = 0;
		int rc = kimg_k8s_nodes_parse(kimg_span_make(doc, i), arena, KIMG_K8S_NODE_ARENA, keep, NULL, &err);
		ck_assert_msg(rc == -KIMG_ETRUNC, "prefix %zu: %d", i, rc);
	}
}
END_TEST

START_TEST(k8s_node_larger_than_the_arena)
{
	unsigned char small[4096];
	char doc[8192];
	int len = snprintf(doc, sizeof doc, "{\"kind\":\"List\",\"items\":[{\"metadata\":{\"name\":\"big\",\"x\":\"");
	memset(doc + len, 'a', 6000);
	snprintf(doc + len + 6000, sizeof doc - (size_t)len - 6000, "\"}}]}");
	n_got = 0;
	ck_assert_int_eq(kimg_k8s_nodes_parse(str_span(doc), small, sizeof small, keep, NULL, &err), -KIMG_ELIMIT);
	ck_assert_ptr_nonnull(strstr(err.what, "node 1 (at byte 24) is larger than"));
}
END_TEST

START_TEST(json_parse_at_reads_one_value)
{
	unsigned char a[1024];
	struct kimg_jdoc d;
	uint64_t end;
	kimg_jdoc_init(&d, a, sizeof a);
	ck_assert_int_eq(kimg_jdoc_parse_at(&d, str_span("[1, {\"a\":2} , 3]"), 4, &end, &err), 0);
	ck_assert_int_eq(d.root->type, KIMG_JOBJECT);
	ck_assert_uint_eq(end, 12); /* past the value and the space after it: at the , */
	ck_assert_int_eq(kimg_jdoc_parse_at(&d, str_span("[1, {\"a\":2"), 4, &end, &err), -KIMG_ETRUNC);
}
END_TEST

START_TEST(slurm_oneliner_and_multiline)
{
	static const char text[] =
		"NodeName=gpu-h1 Arch=x86_64 AvailableFeatures=h100,ib Gres=gpu:h100:8(S:0-1) State=IDLE "
		"Reason=drained Gres=gpu:a100:1 [root@2026-01-01T00:00:00]\n"
		"NodeName=gpu-m1 Gres=gpu:nvidia_a100-sxm4-80gb:4(S:0,1),gpu:tesla_v100:2(S:1),shard:h100:32 State=MIXED\n"
		"\n"
		"NodeName=gpu-u1 Arch=x86_64\n"
		"   AvailableFeatures=sm_90,ib\n"
		"   Gres=gpu:4\n"
		"   Reason=no type [root@now]\n"
		"NodeName=cpu-1 Gres=(null)\n"
		"NodeName=gpu-x1 Gres=gpu:mi300:8\n";
	ck_assert_int_eq(slurm(text, NULL), 5);
	ck_assert_str_eq(got[0].name, "gpu-h1");
	ck_assert_uint_eq(got[0].n_gpus, 1); /* the Gres= inside Reason is not read */
	ck_assert_uint_eq(got[0].gpus[0].sm, 90);
	ck_assert_uint_eq(got[0].gpus[0].count, 8);
	ck_assert_str_eq(got[0].gpus[0].product, "h100");
	ck_assert_str_eq(got[0].gpus[0].model, "H100");
	ck_assert_int_eq(got[0].gpus[0].driver_version, 0);
	/* a mixed node: two kinds, shard skipped, socket lists with commas */
	ck_assert_uint_eq(got[1].n_gpus, 2);
	ck_assert_uint_eq(got[1].gpus[0].sm, 80);
	ck_assert_uint_eq(got[1].gpus[0].count, 4);
	ck_assert_uint_eq(got[1].gpus[1].sm, 70);
	ck_assert_uint_eq(got[1].gpus[1].count, 2);
	/* untyped gpu:4 with a feature sm_90 */
	ck_assert_uint_eq(got[2].n_gpus, 1);
	ck_assert_uint_eq(got[2].gpus[0].sm, 90);
	ck_assert_uint_eq(got[2].gpus[0].count, 4);
	ck_assert_uint_eq(got[3].n_gpus, 0);
	ck_assert_str_eq(got[3].why, "no GPU GRES");
	ck_assert_uint_eq(got[4].n_gpus, 1);
	ck_assert_uint_eq(got[4].gpus[0].sm, 0);
	ck_assert_str_eq(got[4].gpus[0].unknown, "GRES type 'mi300' is not in kimg's GPU-name table");
}
END_TEST

START_TEST(slurm_gres_map)
{
	struct kimg_gres_map map;
	ck_assert_int_eq(kimg_gres_map_parse(str_span("# site types\nmi300 = 9.0\n  H100NVL=H100 # nvl\n\n"), &map, &err), 2);
	ck_assert_str_eq(map.rows[1].type, "h100nvl");
	ck_assert_int_eq(slurm("NodeName=x Gres=gpu:MI300:8\nNodeName=y Gres=gpu:h100nvl:2\n", &map), 2);
	ck_assert_uint_eq(got[0].gpus[0].sm, 90);
	ck_assert_str_eq(got[0].gpus[0].model, "9.0");
	ck_assert_str_eq(got[1].gpus[0].model, "H100");
	ck_assert_int_eq(kimg_gres_map_parse(str_span("ok = 8.0\nbad line\n"), &map, &err), -KIMG_EFORMAT);
	ck_assert_str_eq(err.what, "line 2: not 'TYPE = GPU'");
	ck_assert_int_eq(kimg_gres_map_parse(str_span("t = Radeon 7900\n"), &map, &err), -KIMG_EFORMAT);
	ck_assert_int_eq(kimg_gres_map_parse(str_span("t = 86.0\n"), &map, &err), -KIMG_EFORMAT); /* no GPU has 86.0 */
}
END_TEST

START_TEST(slurm_hostile_text)
{
	static const char nul[] = "NodeName=a Gres=gpu:h100:1\0NodeName=b";
	n_got = 0;
	ck_assert_int_eq(kimg_slurm_nodes_parse(kimg_span_make(nul, sizeof nul - 1), NULL, keep, NULL, &err), -KIMG_EFORMAT);
	ck_assert_uint_eq(err.offset, 26);
	ck_assert_int_eq(slurm("{\"items\":[]}", NULL), -KIMG_EFORMAT);
	ck_assert_str_eq(err.what, "'{\"items\":[]}' before any NodeName=: not 'scontrol show node' output");
	ck_assert_int_eq(slurm("", NULL), 0);
	ck_assert_int_eq(slurm("NodeName= Gres=gpu:h100:x", NULL), 1); /* odd count: known GPU, count unknown */
	ck_assert_str_eq(got[0].name, "");
	ck_assert_uint_eq(got[0].gpus[0].sm, 90);
	ck_assert_uint_eq(got[0].gpus[0].count, 0);
	ck_assert_int_eq(slurm("NodeName=a Gres=gpu:a:1,gpu:b:1,gpu:c:1,gpu:d:1,gpu:e:1,gpu:f:1,gpu:g:1,gpu:h:1,gpu:i:1", NULL), 1);
	ck_assert_uint_eq(got[0].n_gpus, KIMG_CLUSTER_KINDS_MAX);
	ck_assert_str_eq(got[0].why, "more than 8 GPU types in Gres: the first 8 read");
	/* fuzz_cluster_slurm's finding: untyped GPUs on a node without
	 * AvailableFeatures (UBSan: an offset on the missing list) */
	ck_assert_int_eq(slurm("NodeName=a Gres=gpu:4", NULL), 1);
	ck_assert_uint_eq(got[0].gpus[0].sm, 0);
	ck_assert_uint_eq(got[0].gpus[0].count, 4);
	ck_assert_str_eq(got[0].gpus[0].unknown, "GRES gpu without a type (and no feature sm_NN)");
}
END_TEST

START_TEST(dcgm_series_hosts_interleaved_and_mig)
{
	static const char text[] =
		"# HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).\n"
		"# TYPE DCGM_FI_DEV_SM_CLOCK gauge\n"
		"DCGM_FI_DEV_SM_CLOCK{gpu=\"0\",UUID=\"GPU-a0\",device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node-a\",DCGM_FI_DRIVER_VERSION=\"550.54.15\"} 1980\n"
		"DCGM_FI_DEV_SM_CLOCK{gpu=\"0\",UUID=\"GPU-b0\",device=\"nvidia0\",modelName=\"NVIDIA A100-SXM4-40GB\",GPU_I_PROFILE=\"1g.5gb\",GPU_I_ID=\"8\",Hostname=\"node-b\",DCGM_FI_DRIVER_VERSION=\"535.104.05\"} 1410 1733011200000\n"
		"DCGM_FI_DEV_SM_CLOCK{gpu=\"1\",UUID=\"GPU-a1\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node-a\"} 1980\n"
		"go_gc_duration_seconds{quantile=\"0\"} 1.5e-05\n"
		"DCGM_FI_DEV_GPU_TEMP{UUID=\"GPU-x\",modelName=\"Radeon \\\"X\\\"\",Hostname=\"node-c\",} NaN\n";
	ck_assert_int_eq(dcgm(text), 4);
	ck_assert_str_eq(got[0].name, "node-a");
	ck_assert_uint_eq(got[0].gpus[0].sm, 90);
	ck_assert_str_eq(got[0].gpus[0].uuid, "GPU-a0");
	ck_assert_int_eq(got[0].gpus[0].driver_version, 12040);
	ck_assert_str_eq(got[1].name, "node-b");
	ck_assert_uint_eq(got[1].gpus[0].sm, 80);
	ck_assert_str_eq(got[1].gpus[0].mig, "1g.5gb");
	ck_assert_int_eq(got[1].gpus[0].driver_version, 12020);
	ck_assert_str_eq(got[2].name, "node-a");
	ck_assert_int_eq(got[2].gpus[0].driver_version, 0); /* an exporter without the driver label */
	ck_assert_uint_eq(got[3].gpus[0].sm, 0);
	ck_assert_str_eq(got[3].gpus[0].unknown, "model \"Radeon \"X\"\" is not in kimg's GPU-name table");
}
END_TEST

START_TEST(dcgm_malformed_lines)
{
	ck_assert_int_eq(dcgm("DCGM_FI_DEV_SM_CLOCK{gpu=\"0\" 5\n"), -KIMG_EFORMAT);
	ck_assert_int_eq(dcgm("DCGM_X{a=\"b} 5\n"), -KIMG_EFORMAT);
	ck_assert_str_eq(err.what, "line 1: a label value without its closing quote");
	ck_assert_int_eq(dcgm("# ok\nDCGM_X{a=\"b\"}\n"), -KIMG_EFORMAT);
	ck_assert_str_eq(err.what, "line 2: a sample without a number");
	ck_assert_int_eq(dcgm("{\"items\": []}\n"), -KIMG_EFORMAT);
	ck_assert_int_eq(dcgm("DCGM_X{a=b} 1\n"), -KIMG_EFORMAT);
	static const char nul[] = "DCGM_X{UUID=\"a\0\"} 1\n";
	n_got = 0;
	ck_assert_int_eq(kimg_dcgm_parse(kimg_span_make(nul, sizeof nul - 1), keep, NULL, &err), -KIMG_EFORMAT);
	ck_assert_int_eq(dcgm(""), 0);
	ck_assert_int_eq(dcgm("DCGM_X{a=\"b\\"), -KIMG_EFORMAT);
	ck_assert_str_eq(err.what, "line 1: a backslash at the end");
}
END_TEST

/* Prometheus labels come in any order: the GPU instance's profile label
 * (GPU_I_PROFILE) names the MIG slice before or after the model name,
 * even a model name that carries a MIG suffix of its own. */
START_TEST(dcgm_mig_profile_before_the_model)
{
	ck_assert_int_eq(dcgm("DCGM_X{GPU_I_PROFILE=\"2g.10gb\",modelName=\"NVIDIA A100-SXM4-40GB\",Hostname=\"n\"} 1\n"
			      "DCGM_X{GPU_I_PROFILE=\"2g.10gb\",modelName=\"NVIDIA A100-SXM4-40GB MIG 1g.5gb\",Hostname=\"n\"} 1\n"
			      "DCGM_X{modelName=\"NVIDIA A100-SXM4-40GB MIG 1g.5gb\",GPU_I_PROFILE=\"2g.10gb\",Hostname=\"n\"} 1\n"),
			 3);
	for (int i = 0; i < 3; i++) {
		ck_assert_str_eq(got[i].gpus[0].mig, "2g.10gb");
		ck_assert_uint_eq(got[i].gpus[0].sm, 80);
	}
}
END_TEST

/* The caller's callback stops the reading: its non-zero result is the
 * parse's, and no later series is handed over. */
static int stop_at_second(void *ctx, const struct kimg_cluster_node *n)
{
	(void)n;
	return ++*(int *)ctx == 2 ? -7 : 0;
}

START_TEST(dcgm_callback_stops_the_reading)
{
	static const char text[] = "DCGM_X{UUID=\"GPU-a\",Hostname=\"a\"} 1\nDCGM_X{UUID=\"GPU-b\",Hostname=\"b\"} 1\n"
				   "DCGM_X{UUID=\"GPU-c\",Hostname=\"c\"} 1\n";
	int calls = 0;
	ck_assert_int_eq(kimg_dcgm_parse(str_span(text), stop_at_second, &calls, &err), -7);
	ck_assert_int_eq(calls, 2);
}
END_TEST

START_TEST(products_and_driver_releases)
{
	struct kimg_cluster_gpu g;
	memset(&g, 0, sizeof g);
	ck_assert(kimg_cluster_gpu_set_product(&g, "Tesla-T4-SHARED", 15));
	ck_assert_uint_eq(g.sm, 75);
	memset(&g, 0, sizeof g);
	ck_assert(kimg_cluster_gpu_set_product(&g, "NVIDIA-H100-80GB-HBM3-MIG-3g.40gb", 33));
	ck_assert_str_eq(g.mig, "3g.40gb");
	ck_assert_uint_eq(g.sm, 90);
	memset(&g, 0, sizeof g);
	ck_assert(!kimg_cluster_gpu_set_product(&g, "Mystery", 7));
	ck_assert_uint_eq(g.sm, 0);
	/* CUDA release notes Table 3: 12.2 GA 535.54.03, 12.4 550.54.14, 13.0 580.65.06 */
	ck_assert_int_eq(kimg_driver_release_cuda_version("535.104.05"), 12020);
	ck_assert_int_eq(kimg_driver_release_cuda_version("550.54.15"), 12040);
	ck_assert_int_eq(kimg_driver_release_cuda_version("550.54.14"), 12040);
	ck_assert_int_eq(kimg_driver_release_cuda_version("550.40.07"), 12030);
	ck_assert_int_eq(kimg_driver_release_cuda_version("580.65.06"), 13000);
	/* a 9 in any part is a digit like the others (CUDA 12.4 from 550.54.14,
	 * 12.2 from 535.54.03: the toolkit release notes' minimum drivers) */
	ck_assert_int_eq(kimg_driver_release_cuda_version("550.90.07"), 12040);
	ck_assert_int_eq(kimg_driver_release_cuda_version("535.129.03"), 12020);
	ck_assert_int_eq(kimg_driver_release_cuda_version("565.57.01"), 12060); /* 12.7 has no public GA driver */
	ck_assert_int_eq(kimg_driver_release_cuda_version("300.1"), 0);
	ck_assert_int_eq(kimg_driver_release_cuda_version("abc"), 0);
	ck_assert_int_eq(kimg_driver_release_cuda_version("550.54.15; rm"), 0);
}
END_TEST

static Suite *cluster_suite(void)
{
	Suite *s = suite_create("cluster");
	TCase *k = tcase_create("k8s");
	tcase_add_test(k, k8s_list_with_gfd_labels);
	tcase_add_test(k, k8s_nodelist_without_item_kinds_and_one_node);
	tcase_add_test(k, k8s_mig_single_and_mixed);
	tcase_add_test(k, k8s_cuda_runtime_labels_are_a_pair);
	tcase_add_test(k, k8s_driver_release_only);
	tcase_add_test(k, k8s_odd_label_values);
	tcase_add_test(k, k8s_malformed_documents);
	tcase_add_test(k, k8s_node_larger_than_the_arena);
	tcase_add_test(k, json_parse_at_reads_one_value);
	suite_add_tcase(s, k);
	TCase *sl = tcase_create("slurm");
	tcase_add_test(sl, slurm_oneliner_and_multiline);
	tcase_add_test(sl, slurm_gres_map);
	tcase_add_test(sl, slurm_hostile_text);
	suite_add_tcase(s, sl);
	TCase *d = tcase_create("dcgm");
	tcase_add_test(d, dcgm_series_hosts_interleaved_and_mig);
	tcase_add_test(d, dcgm_malformed_lines);
	tcase_add_test(d, dcgm_mig_profile_before_the_model);
	tcase_add_test(d, dcgm_callback_stops_the_reading);
	tcase_add_test(d, products_and_driver_releases);
	suite_add_tcase(s, d);
	return s;
}

int main(void) { return run_suite(cluster_suite()); }
