/* SPDX-License-Identifier: Apache-2.0 */
// A CPython extension module with GPU code for sm_80 only, as a wheel's
// extension would carry it (tests/api/python.sh builds it with nvcc and
// packs it into a wheel): kimg.can_run_module finds its file.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

__global__ void kimgtest_kernel(int *out)
{
	*out = 42;
}

static PyModuleDef kimgtest_def = { PyModuleDef_HEAD_INIT, "kimgtest_ext", "sm_80 device code only", -1, NULL };

PyMODINIT_FUNC PyInit_kimgtest_ext(void)
{
	return PyModule_Create(&kimgtest_def);
}
