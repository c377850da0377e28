# sluice: cpython = true
# A dict of atomic keys and values stays out of the collector's lists until it holds a
# container (the rustpython-vm patch, as CPython does). Every way of putting a container into
# a dict must then track it, or a cycle through that dict is never collected.
import gc
import json
import sys
import weakref
from collections import Counter, OrderedDict, defaultdict


class Obj:
    pass


def collected(make):
    o = Obj()
    ref = weakref.ref(o)
    make(o)
    del o
    gc.collect()
    return ref() is None


def m_setitem(o): d = {"a": 1}; o.d = d; d["o"] = o
def m_replace_value(o): d = {"a": 1}; o.d = d; d["a"] = 2; d["a"] = o
def m_update_dict(o): d = {"a": 1}; o.d = d; d.update({"o": o})
def m_update_pairs(o): d = {"a": 1}; o.d = d; d.update([("o", o)])
def m_update_keywords(o): d = dict(a=1); o.d = d; d.update(o=o)
def m_update_mapping(o): d = {"a": 1}; o.d = d; d.update(OrderedDict(o=o))
def m_setdefault(o): d = {"a": 1}; o.d = d; d.setdefault("o", o)
def m_fromkeys(o): d = dict.fromkeys([1, 2], o); o.d = d
def m_fromkeys_iterator(o): d = dict.fromkeys(iter([1, 2]), o); o.d = d
def m_tuple_key(o): d = {}; o.d = d; d[(1, o)] = 1
def m_object_key(o): d = {}; o.d = d; d[o] = 1
def m_nested_dict(o): d = {"x": {}}; o.d = d; d["x"]["o"] = o
def m_in_place_or(o): d = {"a": 1}; o.d = d; d |= {"o": o}
def m_or(o): d = {"a": 1} | {"o": o}; o.d = d
def m_copy(o): e = {"a": 1}.copy(); o.e = e; e["o"] = o
def m_decoded(o): d = json.loads('{"a": 1, "b": "x"}'); o.d = d; d["o"] = o
def m_comprehension(o): d = {k: 1 for k in range(3)}; o.d = d; d[3] = o
def m_display(o): d = {"a": 1, "o": o}; o.d = d
def m_dict_call(o): d = dict(o=o); o.d = d
def m_instance_dict(o): o.me = o
def m_vars(o): vars(o)["me"] = o
def m_exec_globals(o): g = {}; exec("x = 1", g); g["o"] = o; o.g = g
def m_exec_locals(o): loc = {}; exec("y = o", {"o": o}, loc); o.loc = loc
def m_defaultdict(o): d = defaultdict(list); o.d = d; d["x"].append(o)
def m_list_value(o): d = {"a": 1}; o.d = d; d["l"] = [o]
def m_counter(o): c = Counter(); o.c = c; c.update([(1, o)])


def m_running_frame(o):
    # The frame is not tracked while its call runs; once it ends it holds `d` (a local),
    # which holds the frame.
    d = {}
    o.d = d
    d["frame"] = sys._getframe()


makers = {name: make for name, make in globals().items() if name.startswith("m_")}
print(len(makers), "ways; not collected:", [name for name, make in makers.items() if not collected(make)])
print(gc.is_tracked({}), gc.is_tracked({"a": 1, 2: 3.0, None: "x"}), gc.is_tracked(json.loads('{"a": 1}')))
print(gc.is_tracked({"a": []}), gc.is_tracked({"a": {}}), gc.is_tracked({"a": (1, [])}))
d = {"a": 1}
before = gc.is_tracked(d)
d["l"] = []
print(before, gc.is_tracked(d))

# Freeing: a dict of atomic values drops its entries where it is (the patch's third change),
# so a long chain of containers whose links are such dicts is freed without deep recursion,
# and what the dicts held is released with them.
chain = None
for i in range(100_000):
    chain = [{"i": i, "name": f"n{i}", "ok": True}, chain]
del chain
records = [{"id": i, "status": ("paid", "open")[i % 2], "blob": "x" * 1000} for i in range(2000)]
kept = records[7]
del records
print(kept["id"], kept["status"], len(kept["blob"]), gc.is_tracked(kept))
# An entry such a dict holds can own a finalizable object (a generic alias is never tracked,
# so the dict holding it stays untracked here): freeing the dict still finalizes it, at once.
freed = []


class Finalized:
    def __del__(self):
        freed.append("finalized")


alias_holder = {"alias": list[Finalized()], "n": 1}
del alias_holder
print(freed)
