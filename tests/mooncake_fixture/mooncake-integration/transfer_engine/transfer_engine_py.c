/* The `mooncake.engine` extension module: loading it loads libtransfer_engine.so and, in an
 * ASCEND_DIRECT build, ascend_transport.so and the CANN libraries, like the real one. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "transfer_engine.h"

static PyObject *transfer_engine(PyObject *self, PyObject *args) {
    return PyUnicode_FromString(te_version());
}

static PyObject *installed_transports(PyObject *self, PyObject *args) {
    return PyUnicode_FromString(te_installed_transports());
}

static PyMethodDef methods[] = {
    {"TransferEngine", transfer_engine, METH_NOARGS, "A stand-in for mooncake.engine.TransferEngine."},
    {"installed_transports", installed_transports, METH_NOARGS, "Transports compiled in."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "engine", NULL, -1, methods};

PyMODINIT_FUNC PyInit_engine(void) {
    PyObject *m = PyModule_Create(&module);
    if (m != NULL) {
        PyModule_AddStringConstant(m, "__version__", te_version());
    }
    return m;
}
