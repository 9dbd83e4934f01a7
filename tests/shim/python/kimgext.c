/* SPDX-License-Identifier: Apache-2.0 */
/* A C extension as PyTorch's bindings are: it releases the GIL around
 * its CUDA call. load(PATH, release) loads a module from PATH with
 * cuModuleLoadData through the (fake) driver, with the GIL released when
 * release is true, and returns the driver's code. Built by
 * tests/shim/python.sh against each interpreter's headers. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*init_t)(unsigned);
typedef int (*load_t)(void **, const void *);

static int driver_load(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = calloc(1, (size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	init_t init = h ? (init_t)dlsym(h, "cuInit") : NULL;
	load_t load = h ? (load_t)dlsym(h, "cuModuleLoadData") : NULL;
	void *mod = NULL;
	int r = init && load ? init(0) : -2;
	if (r == 0)
		r = load(&mod, buf);
	free(buf);
	return r;
}

static PyObject *load(PyObject *self, PyObject *args)
{
	const char *path;
	int release = 1, r;
	if (!PyArg_ParseTuple(args, "s|p", &path, &release))
		return NULL;
	if (release) {
		Py_BEGIN_ALLOW_THREADS
		r = driver_load(path);
		Py_END_ALLOW_THREADS
	} else {
		r = driver_load(path);
	}
	return PyLong_FromLong(r);
}

static PyMethodDef methods[] = {
	{ "load", load, METH_VARARGS, "cuModuleLoadData(PATH), the GIL released unless release=False" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = { PyModuleDef_HEAD_INIT, "kimgext", NULL, -1, methods, NULL, NULL, NULL, NULL };

PyMODINIT_FUNC PyInit_kimgext(void)
{
	return PyModule_Create(&module);
}
