/* The ground rules clingo hands over, kept in C until Python reads them in bulk.
 *
 * clingo calls an observer's `rule` once per ground rule. Through cffi each call takes
 * the interpreter's lock, converts five arguments and runs a Python function: on a large
 * program that is most of the grounding time. `rule_callback` here is the C function
 * clingo calls instead. A plain rule (one head, not a choice) is copied into a buffer of
 * 32-bit integers without touching Python. Python runs only
 *   - every `next_look` plain rules: the buffered rules are appended to the Python list
 *     `rules` as (head, body literals) tuples, then `look()` runs, which answers the count
 *     at which to call it next (0: stop grounding; `look` has set clingo's error);
 *   - for every other rule (a choice, or not one head): the buffered rules are appended
 *     first, then `other(choice, head list, body list)` runs (True: go on);
 *   - at `flush()`, once grounding ends.
 * `look` and `other` catch their own exceptions (and set clingo's error); one raised anyway
 * (or running out of memory) stops grounding and is kept as `error`.
 * The Python side is `server/gdl/compiled/rule_observer.py`.
 * The module also offers FloorCount, the compile estimate's floor counted in C
 * (`_estimate_floor.c`, built into this module).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdbool.h>
#include <stdint.h>

/* Raised with RULE_BUFFER_VERSION in rule_observer.py whenever what this module offers
 * changes: an install built from an older file is then left unused, not misread. */
#define VERSION 2

typedef struct {
    PyObject_HEAD
    int32_t *data;       /* plain rules buffered: head, body size, body literals */
    size_t size;         /* integers used in data */
    size_t capacity;     /* integers allocated in data */
    Py_ssize_t buffered; /* plain rules in data */
    Py_ssize_t count;    /* plain rules seen: those in `rules` and those buffered */
    Py_ssize_t next_look;
    PyObject *rules;     /* list of (head, body tuple) */
    PyObject *look;      /* () -> int: the next count to look at, 0 to stop */
    PyObject *other;     /* (choice, head, body) -> bool: go on */
    PyObject *error;     /* the exception raised by Python inside a callback, if any */
} RuleBuffer;

/* Keep the Python error raised inside a callback (it cannot travel through clingo). */
static void keep_error(RuleBuffer *self) {
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    Py_XDECREF(type);
    Py_XDECREF(traceback);
    if (value == NULL) {
        Py_INCREF(Py_None);
        value = Py_None;
    }
    Py_XSETREF(self->error, value);
}

/* Append the buffered rules to `rules`; -1 with a Python error set on failure. */
static int drain(RuleBuffer *self) {
    const int32_t *at = self->data, *end = self->data + self->size;
    while (at < end) {
        PyObject *head = PyLong_FromLong(at[0]);
        Py_ssize_t n = at[1];
        PyObject *body = PyTuple_New(n);
        if (head == NULL || body == NULL) {
            Py_XDECREF(head);
            Py_XDECREF(body);
            return -1;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *literal = PyLong_FromLong(at[2 + i]);
            if (literal == NULL) {
                Py_DECREF(head);
                Py_DECREF(body);
                return -1;
            }
            PyTuple_SET_ITEM(body, i, literal);
        }
        PyObject *pair = PyTuple_Pack(2, head, body);
        Py_DECREF(head);
        Py_DECREF(body);
        if (pair == NULL)
            return -1;
        int appended = PyList_Append(self->rules, pair);
        Py_DECREF(pair);
        if (appended < 0)
            return -1;
        at += 2 + n;
    }
    self->size = 0;
    self->buffered = 0;
    return 0;
}

static PyObject *int_list(const int32_t *values, size_t n, bool is_unsigned) {
    PyObject *list = PyList_New((Py_ssize_t)n);
    if (list == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        PyObject *value = is_unsigned ? PyLong_FromUnsignedLong((uint32_t)values[i])
                                      : PyLong_FromLong(values[i]);
        if (value == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, value);
    }
    return list;
}

/* The rules buffered appended, then `look()`: 1 to go on, 0 to stop. */
static bool look_now(RuleBuffer *self) {
    if (drain(self) < 0)
        return false;
    PyObject *next = PyObject_CallNoArgs(self->look);
    if (next == NULL)
        return false;
    Py_ssize_t value = PyLong_AsSsize_t(next);
    Py_DECREF(next);
    if (value == -1 && PyErr_Occurred())
        return false;
    if (value <= 0)
        return false;
    self->next_look = value;
    return true;
}

static bool other_rule(RuleBuffer *self, bool choice, const uint32_t *head, size_t head_size,
                       const int32_t *body, size_t body_size) {
    if (drain(self) < 0)
        return false;
    PyObject *heads = int_list((const int32_t *)head, head_size, true);
    PyObject *literals = heads ? int_list(body, body_size, false) : NULL;
    PyObject *result = NULL;
    if (literals != NULL)
        result = PyObject_CallFunctionObjArgs(self->other, choice ? Py_True : Py_False, heads,
                                              literals, NULL);
    Py_XDECREF(heads);
    Py_XDECREF(literals);
    if (result == NULL)
        return false;
    int go_on = PyObject_IsTrue(result);
    Py_DECREF(result);
    return go_on == 1;
}

/* Called by clingo; `data` is the RuleBuffer. */
static bool rule_callback(bool choice, const uint32_t *head, size_t head_size,
                          const int32_t *body, size_t body_size, void *data) {
    RuleBuffer *self = (RuleBuffer *)data;
    if (!choice && head_size == 1 && body_size < INT32_MAX) {
        size_t needed = self->size + 2 + body_size;
        if (needed > self->capacity) {
            size_t capacity = self->capacity ? self->capacity : 1 << 16;
            while (capacity < needed)
                capacity *= 2;
            int32_t *grown = realloc(self->data, capacity * sizeof(int32_t));
            if (grown == NULL) {
                PyGILState_STATE gil = PyGILState_Ensure();
                PyErr_NoMemory();
                keep_error(self);
                PyGILState_Release(gil);
                return false;
            }
            self->data = grown;
            self->capacity = capacity;
        }
        int32_t *at = self->data + self->size;
        at[0] = (int32_t)head[0];
        at[1] = (int32_t)body_size;
        for (size_t i = 0; i < body_size; i++)
            at[2 + i] = body[i];
        self->size = needed;
        self->buffered++;
        if (++self->count < self->next_look)
            return true;
        PyGILState_STATE gil = PyGILState_Ensure();
        bool go_on = look_now(self);
        if (!go_on && PyErr_Occurred())
            keep_error(self);
        PyGILState_Release(gil);
        return go_on;
    }
    PyGILState_STATE gil = PyGILState_Ensure();
    bool go_on = other_rule(self, choice, head, head_size, body, body_size);
    if (!go_on && PyErr_Occurred())
        keep_error(self);
    PyGILState_Release(gil);
    return go_on;
}

static int RuleBuffer_init(RuleBuffer *self, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"rules", "look", "other", "next_look", NULL};
    PyObject *rules, *look, *other;
    Py_ssize_t next_look;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OOn", names, &PyList_Type, &rules, &look,
                                     &other, &next_look))
        return -1;
    if (!PyCallable_Check(look) || !PyCallable_Check(other)) {
        PyErr_SetString(PyExc_TypeError, "look and other must be callable");
        return -1;
    }
    Py_INCREF(rules);
    Py_INCREF(look);
    Py_INCREF(other);
    Py_XSETREF(self->rules, rules);
    Py_XSETREF(self->look, look);
    Py_XSETREF(self->other, other);
    self->next_look = next_look;
    self->count = PyList_GET_SIZE(rules);
    return 0;
}

static void RuleBuffer_dealloc(RuleBuffer *self) {
    free(self->data);
    Py_XDECREF(self->rules);
    Py_XDECREF(self->look);
    Py_XDECREF(self->other);
    Py_XDECREF(self->error);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *RuleBuffer_flush(RuleBuffer *self, PyObject *Py_UNUSED(ignored)) {
    if (drain(self) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *RuleBuffer_address(RuleBuffer *self, void *Py_UNUSED(closure)) {
    return PyLong_FromVoidPtr(self);
}

static PyObject *RuleBuffer_buffered(RuleBuffer *self, void *Py_UNUSED(closure)) {
    return PyLong_FromSsize_t(self->buffered);
}

static PyObject *RuleBuffer_error(RuleBuffer *self, void *Py_UNUSED(closure)) {
    PyObject *error = self->error ? self->error : Py_None;
    Py_INCREF(error);
    return error;
}

static PyMethodDef RuleBuffer_methods[] = {
    {"flush", (PyCFunction)RuleBuffer_flush, METH_NOARGS,
     "Append the rules still buffered to `rules`."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef RuleBuffer_getset[] = {
    {"address", (getter)RuleBuffer_address, NULL,
     "The buffer's address: the `data` clingo passes to `rule_callback`.", NULL},
    {"buffered", (getter)RuleBuffer_buffered, NULL, "Plain rules not yet in `rules`.", NULL},
    {"error", (getter)RuleBuffer_error, NULL,
     "The exception raised inside a callback that stopped grounding, or None.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject RuleBufferType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "server.gdl.compiled._rule_buffer.RuleBuffer",
    .tp_doc = PyDoc_STR("RuleBuffer(rules, look, other, next_look): the ground rules clingo "
                        "hands over, kept in C until Python reads them."),
    .tp_basicsize = sizeof(RuleBuffer),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)RuleBuffer_init,
    .tp_dealloc = (destructor)RuleBuffer_dealloc,
    .tp_methods = RuleBuffer_methods,
    .tp_getset = RuleBuffer_getset,
};

extern PyTypeObject FloorCountType; /* _estimate_floor.c */

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "server.gdl.compiled._rule_buffer",
    .m_doc = "The ground rules clingo hands over, kept in C until Python reads them.",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__rule_buffer(void) {
    if (PyType_Ready(&RuleBufferType) < 0 || PyType_Ready(&FloorCountType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "RuleBuffer", (PyObject *)&RuleBufferType) < 0 ||
        PyModule_AddObjectRef(m, "FloorCount", (PyObject *)&FloorCountType) < 0 ||
        PyModule_AddObject(m, "RULE_CALLBACK", PyLong_FromVoidPtr((void *)rule_callback)) < 0 ||
        PyModule_AddIntConstant(m, "VERSION", VERSION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
