"""The operator registry as torch's `_collect_all_valid_cia_ops` reads it, for the decomposition memo
(decomposition_cache.py, part 1, pinned with it as part "memo"): `registry_fingerprint()` is a value that changes
whenever what that function reads outside the aten namespace changes, and `Snapshot.unchanged()` says, more cheaply
than a new fingerprint, that it has not."""

from __future__ import annotations

from itertools import repeat
from operator import attrgetter, contains, is_


def registry_fingerprint():
    """What `_collect_all_valid_cia_ops` reads, outside the aten namespace (see decomposition_cache.py), and a
    `Snapshot` of the objects it was read from."""
    import torch

    cia = torch._C.DispatchKey.CompositeImplicitAutograd
    has_kernel = torch._C._dispatch_has_kernel
    namespace_type = torch._ops._OpNamespace
    snapshot = Snapshot()
    namespaces = []
    python_cia = []
    for namespace_name in torch.ops._dir:
        namespace = getattr(torch.ops, namespace_name)
        snapshot.namespaces.append(namespace)
        if namespace_name == "aten" or not isinstance(namespace, namespace_type):
            namespaces.append((namespace_name, id(namespace)))
            continue
        snapshot.add_namespace(namespace)
        packets = []
        for packet_name in namespace._dir:
            packet = getattr(namespace, packet_name)
            snapshot.add_packet(namespace, packet_name, packet)
            packets.append((id(packet), tuple(packet._overload_names)))
            for overload_name in packet._dir:
                overload = getattr(packet, overload_name)
                python_kernel = cia in overload.py_kernels
                answer = has_kernel(overload.name()) if python_kernel else None
                snapshot.add_overload(packet, overload_name, overload, python_kernel, answer)
                if python_kernel:
                    python_cia.append((id(overload), answer))
        namespaces.append((namespace_name, id(namespace), tuple(packets)))
    cpp_cia = torch._C._dispatch_get_registrations_for_dispatch_key("CompositeImplicitAutograd")
    snapshot.ops_dir, snapshot.cpp_cia = list(torch.ops._dir), cpp_cia
    return (tuple(cpp_cia), tuple(namespaces), tuple(python_cia)), snapshot


class Snapshot:
    """The objects a fingerprint was read from, held (so their identities are not reused) and kept in flat lists,
    so that `unchanged()` can check, with C-level passes and no new tuples, that reading them again would give
    the same fingerprint: the same names in the same `_dir` lists, the same objects under them, the same
    overload names, the same Python CIA kernels and C++ answers. That is cheaper than a new fingerprint, and it
    makes no new tuples for the garbage collector to walk. Any difference, even one the fingerprint would not
    show, sends the caller to the full fingerprint."""

    def __init__(self):
        self.namespaces = []  # every namespace in torch.ops._dir order
        self.op_namespaces, self.namespace_dirs = [], []  # the operator namespaces read, and their _dir
        self.packet_homes, self.packet_names, self.packets = [], [], []
        self.overload_names, self.packet_dirs = [], []
        self.overload_homes, self.overload_attributes, self.overloads, self.python_kernels = [], [], [], []
        self.python_cia = []  # (overload with a Python CIA kernel, whether it has any C++ kernel)
        self.ops_dir, self.cpp_cia = [], []  # torch.ops._dir and the C++ CIA registrations

    def add_namespace(self, namespace) -> None:
        self.op_namespaces.append(namespace)
        self.namespace_dirs.append(list(namespace._dir))

    def add_packet(self, namespace, name, packet) -> None:
        self.packet_homes.append(namespace)
        self.packet_names.append(name)
        self.packets.append(packet)
        self.overload_names.append(list(packet._overload_names))
        self.packet_dirs.append(list(packet._dir))

    def add_overload(self, packet, name, overload, python_kernel: bool, has_kernel) -> None:
        self.overload_homes.append(packet)
        self.overload_attributes.append(name)
        self.overloads.append(overload)
        self.python_kernels.append(python_kernel)
        if python_kernel:
            self.python_cia.append((overload, has_kernel))

    def unchanged(self) -> bool:
        import torch

        ops = torch.ops
        has_kernel = torch._C._dispatch_has_kernel
        cia = torch._C.DispatchKey.CompositeImplicitAutograd
        return (ops._dir == self.ops_dir
                and all(map(is_, map(getattr, repeat(ops), self.ops_dir), self.namespaces))
                and list(map(attrgetter("_dir"), self.op_namespaces)) == self.namespace_dirs
                and all(map(is_, map(getattr, self.packet_homes, self.packet_names), self.packets))
                and list(map(attrgetter("_overload_names"), self.packets)) == self.overload_names
                and list(map(attrgetter("_dir"), self.packets)) == self.packet_dirs
                and all(map(is_, map(getattr, self.overload_homes, self.overload_attributes), self.overloads))
                and list(map(contains, map(attrgetter("py_kernels"), self.overloads), repeat(cia)))
                == self.python_kernels
                and all(has_kernel(overload.name()) == answer for overload, answer in self.python_cia)
                and torch._C._dispatch_get_registrations_for_dispatch_key("CompositeImplicitAutograd")
                == self.cpp_cia)
