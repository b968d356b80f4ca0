/* The lower bound of the compile estimate counted in C: `EstimateFloor.add` and `.note`
 * of `estimate.py`, the same counts, without a Python object per rule.
 *
 * Python keeps a set of the heads derived so far and a set of the (head, literals) keys of
 * the bodies counted; on a failed compile attempt of 50,000 ground rules or more these
 * sets, and the key tuples built only to look them up, were a third of the attempt
 * (chess_200). Here the derived literals sit in an open-addressing table of 64-bit
 * integers and each key is kept as a 64-bit hash of its integers. Two keys that share a
 * hash count once: the count can only come out lower, so it stays a lower bound (and on
 * the corpus it comes out the same as Python's, which the tests check).
 *
 * FloorCount() offers
 *   - note(rules): take the heads of a batch of (head, body literals) tuples;
 *   - add(rules, choices): note them, then count their bodies as `EstimateFloor.add` does,
 *     with `choices` the set of open inputs; answers (bodies, literals) counted.
 * Built into `_rule_buffer` (see `_rule_buffer.c`).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* An open-addressing set of non-zero 64-bit integers (0 marks an empty slot). */
typedef struct {
    uint64_t *slots;
    size_t mask; /* slots - 1, a power of two minus one; 0 before the first insert */
    size_t used;
} IntSet;

static inline uint64_t mix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

static bool set_has(const IntSet *set, uint64_t key) {
    if (set->slots == NULL)
        return false;
    for (size_t at = mix(key) & set->mask;; at = (at + 1) & set->mask) {
        uint64_t slot = set->slots[at];
        if (slot == key)
            return true;
        if (slot == 0)
            return false;
    }
}

/* Put `key` in the slots (known to have room), without growing: whether it was new. */
static bool place(uint64_t *slots, size_t mask, uint64_t key) {
    for (size_t at = mix(key) & mask;; at = (at + 1) & mask) {
        if (slots[at] == key)
            return false;
        if (slots[at] == 0) {
            slots[at] = key;
            return true;
        }
    }
}

/* Add `key`: 1 when new, 0 when already there, -1 (MemoryError set) when out of memory. */
static int set_add(IntSet *set, uint64_t key) {
    if (2 * (set->used + 1) > set->mask + 1) { /* keep the table at most half full */
        size_t size = set->slots == NULL ? 1024 : 2 * (set->mask + 1);
        uint64_t *slots = calloc(size, sizeof(uint64_t));
        if (slots == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        if (set->slots != NULL)
            for (size_t i = 0; i <= set->mask; i++)
                if (set->slots[i] != 0)
                    place(slots, size - 1, set->slots[i]);
        free(set->slots);
        set->slots = slots;
        set->mask = size - 1;
    }
    if (!place(set->slots, set->mask, key))
        return 0;
    set->used++;
    return 1;
}

/* A literal as a key of the derived set (literals are never 0). */
static inline uint64_t literal_key(long literal) { return (uint64_t)(int64_t)literal; }

/* The hash of the key (head, literals...): a sequence of integers, its length mixed in. */
static uint64_t key_hash(long head, const long *literals, size_t n) {
    uint64_t h = mix(0x9e3779b97f4a7c15ULL + n);
    h = mix(h ^ (uint64_t)(int64_t)head);
    for (size_t i = 0; i < n; i++)
        h = mix(h + 0x9e3779b97f4a7c15ULL + (uint64_t)(int64_t)literals[i]);
    return h == 0 ? 1 : h;
}

typedef struct {
    PyObject_HEAD
    IntSet derived; /* the heads of the rules noted so far, each as both its literals */
    IntSet seen;    /* the hashes of the keys of the bodies counted so far */
    long *scratch;  /* room for a body's literals, three times over */
    size_t room;    /* literals each third of `scratch` holds */
} FloorCount;

/* Room for bodies of `n` literals in `scratch`; false (MemoryError set) when out of memory. */
static bool make_room(FloorCount *self, size_t n) {
    if (n <= self->room)
        return true;
    size_t room = self->room ? self->room : 16;
    while (room < n)
        room *= 2;
    long *scratch = realloc(self->scratch, 3 * room * sizeof(long));
    if (scratch == NULL) {
        PyErr_NoMemory();
        return false;
    }
    self->scratch = scratch;
    self->room = room;
    return true;
}

/* An exact int as a C long (-1 with an error set otherwise): an int subclass or an object
 * with __index__ could run Python code that changes the rules being read. */
static long as_literal(PyObject *value) {
    if (!PyLong_CheckExact(value)) {
        PyErr_Format(PyExc_TypeError, "a literal is an int, not %.100s", Py_TYPE(value)->tp_name);
        return -1;
    }
    return PyLong_AsLong(value);
}

/* The head and body of a rule as the collector keeps them, or false (error set). */
static bool unpack_rule(PyObject *rule, long *head, PyObject **body) {
    if (!PyTuple_Check(rule) || PyTuple_GET_SIZE(rule) != 2 ||
        !PyTuple_Check(PyTuple_GET_ITEM(rule, 1))) {
        PyErr_SetString(PyExc_TypeError, "a rule is a (head, body literals tuple) pair");
        return false;
    }
    *head = as_literal(PyTuple_GET_ITEM(rule, 0));
    if (*head == -1 && PyErr_Occurred())
        return false;
    *body = PyTuple_GET_ITEM(rule, 1);
    return true;
}

static bool note_heads(FloorCount *self, PyObject *rules) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(rules);
    PyObject **items = PySequence_Fast_ITEMS(rules);
    for (Py_ssize_t i = 0; i < n; i++) {
        long head;
        PyObject *body;
        if (!unpack_rule(items[i], &head, &body))
            return false;
        if (set_add(&self->derived, literal_key(head)) < 0 ||
            set_add(&self->derived, literal_key(-head)) < 0)
            return false;
    }
    return true;
}

static void sort_literals(long *values, size_t n) {
    for (size_t i = 1; i < n; i++) {
        long value = values[i];
        size_t j = i;
        for (; j > 0 && values[j - 1] > value; j--)
            values[j] = values[j - 1];
        values[j] = value;
    }
}

/* Count one rule as EstimateFloor.add does: 1 when counted, 0 when not, -1 on error. */
static int count_rule(FloorCount *self, long head, PyObject *body, PyObject *choices,
                      Py_ssize_t *literals_counted) {
    size_t size = (size_t)PyTuple_GET_SIZE(body);
    if (!make_room(self, size))
        return -1;
    long *literals = self->scratch, *rest = literals + self->room, *kept = rest + self->room;
    size_t n_rest = 0, n_kept = 0;
    const long *key = literals;
    size_t key_size = size;
    for (size_t i = 0; i < size; i++) {
        literals[i] = as_literal(PyTuple_GET_ITEM(body, i));
        if (literals[i] == -1 && PyErr_Occurred())
            return -1;
    }
    if (size > 1) {
        /* rest: the literals not on an open input; those nothing derived yet are left
         * out, and a positive one among them leaves the body out */
        bool all_derived = true;
        long most_missing = LONG_MIN;
        for (size_t i = 0; i < size; i++) {
            int choice = PySet_Contains(choices, PyTuple_GET_ITEM(body, i));
            if (choice < 0)
                return -1;
            if (choice) {
                kept[n_kept++] = literals[i];
                continue;
            }
            if (set_has(&self->derived, literal_key(literals[i]))) {
                rest[n_rest++] = literals[i];
                kept[n_kept++] = literals[i];
            } else {
                all_derived = false;
                if (literals[i] > most_missing)
                    most_missing = literals[i];
            }
        }
        if (!all_derived) {
            if (most_missing > 0)
                return 0;
            size = n_kept;
        }
        if (size > 1) {
            if (n_rest > 1)
                sort_literals(rest, n_rest);
            key = rest;
            key_size = n_rest;
        } else {
            key = kept;
            key_size = n_kept;
        }
    } else if (size == 1 && !set_has(&self->derived, literal_key(literals[0]))) {
        int choice = PySet_Contains(choices, PyTuple_GET_ITEM(body, 0));
        if (choice < 0)
            return -1;
        if (!choice) {
            if (literals[0] > 0)
                return 0;
            size = 0;
            key_size = 0;
        }
    }
    int added = set_add(&self->seen, key_hash(head, key, key_size));
    if (added > 0)
        *literals_counted += (Py_ssize_t)size;
    return added;
}

static PyObject *FloorCount_note(FloorCount *self, PyObject *rules) {
    PyObject *fast = PySequence_Fast(rules, "rules must be a sequence");
    if (fast == NULL)
        return NULL;
    bool done = note_heads(self, fast);
    Py_DECREF(fast);
    if (!done)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *FloorCount_add(FloorCount *self, PyObject *args) {
    PyObject *rules, *choices;
    if (!PyArg_ParseTuple(args, "OO!", &rules, &PySet_Type, &choices))
        return NULL;
    PyObject *fast = PySequence_Fast(rules, "rules must be a sequence");
    if (fast == NULL)
        return NULL;
    Py_ssize_t bodies = 0, literals = 0;
    bool done = note_heads(self, fast);
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    PyObject **items = PySequence_Fast_ITEMS(fast);
    for (Py_ssize_t i = 0; done && i < n; i++) {
        long head;
        PyObject *body;
        int counted = unpack_rule(items[i], &head, &body)
                          ? count_rule(self, head, body, choices, &literals)
                          : -1;
        if (counted < 0)
            done = false;
        bodies += counted > 0;
    }
    Py_DECREF(fast);
    if (!done)
        return NULL;
    return Py_BuildValue("(nn)", bodies, literals);
}

static void FloorCount_dealloc(FloorCount *self) {
    free(self->derived.slots);
    free(self->seen.slots);
    free(self->scratch);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *FloorCount_sizes(FloorCount *self, void *Py_UNUSED(closure)) {
    return Py_BuildValue("(nn)", (Py_ssize_t)self->derived.used, (Py_ssize_t)self->seen.used);
}

static PyMethodDef FloorCount_methods[] = {
    {"note", (PyCFunction)FloorCount_note, METH_O,
     "note(rules): take the heads of (head, body literals) rules."},
    {"add", (PyCFunction)FloorCount_add, METH_VARARGS,
     "add(rules, choices): note the rules, then count their bodies; (bodies, literals)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef FloorCount_getset[] = {
    {"sizes", (getter)FloorCount_sizes, NULL,
     "(derived literals, body keys counted): the sizes of the two tables.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject FloorCountType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "server.gdl.compiled._rule_buffer.FloorCount",
    .tp_doc = PyDoc_STR("FloorCount(): the lower bound of the compile estimate, counted in C "
                        "(EstimateFloor's derived heads and body keys)."),
    .tp_basicsize = sizeof(FloorCount),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)FloorCount_dealloc,
    .tp_methods = FloorCount_methods,
    .tp_getset = FloorCount_getset,
};
