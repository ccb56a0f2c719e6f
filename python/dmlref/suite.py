"""Run dmlref's generated conformance suite through any runtime, from Python.

``dmlref-check generate --out SUITE`` writes the suite: one directory per case, each a DxDispatch
model (``model.json``) with its input buffers (``.npy``), the expected output files and a
``case.json`` that says what the case is. This module reads such a suite and writes results in
the layout ``dmlref-check verify SUITE --results DIR`` grades, so a runtime other than DxDispatch
(CUDA, HIP, Vulkan, a simulator) can be checked against the golden model::

    import dmlref.suite

    suite = dmlref.suite.load("suite")           # checks the manifest first
    for case in suite.cases(ops=["join"]):
        if not case.valid:                       # a case DirectML must refuse
            code = dmlref.suite.EXIT_CREATE if case.stage == "create" else dmlref.suite.EXIT_BIND
            case.write_result("results", outputs=None, exit_code=code, stage=case.stage)
            continue
        buffers = [o.new_buffer() for o in case.outputs]     # filled with the sentinel
        my_runtime_join(case, buffers)   # reads t.view() of case.desc's input tensors, writes
                                         # through case.outputs[i].view(buffers[i])
        case.write_result("results", outputs=buffers, exit_code=0)

then ``dmlref-check verify suite --results results``. From the shell,
``python -m dmlref.suite run SUITE --results DIR`` runs every case through dmlref itself (a run
that verify passes 100%).

What a case holds
-----------------
``case.desc`` is the operator's DirectML description as a dict: scalar fields (``Axis``,
``InputCount``, ``InputDimensionCount``...) as ints, each tensor field as a :class:`Tensor` (a list
of them for ``InputTensors``/``OutputTensors``). ``case.inputs`` maps each input tensor field to
its :class:`Tensor`, whose ``buffer`` is the whole 1-D buffer bound to it (as DxDispatch creates
it: the ``.npy`` data, zero-filled up to the resource's ``sizeInBytes``); ``sizes`` and
``strides`` (in elements) say which elements of that buffer the tensor addresses, and
``tensor.view()`` is that numpy view (``numpy.lib.stride_tricks.as_strided``; zero strides
broadcast). ``case.outputs`` lists each output as an :class:`Output`: its tensor, the dtype,
``shape`` (the shape of the result file: the tensor's sizes when the tensor covers its whole buffer,
else the whole buffer, one dimension long) and ``sentinel``, the value the buffer holds before the
operator runs. A correct runtime writes exactly the elements the output tensor addresses and leaves
the sentinel everywhere else.

A suite is trusted only once intact: :func:`load` checks every file of ``suite.json``'s
``manifest`` (SHA-256, computed with :mod:`hashlib`) before reading any case, and refuses a suite
with a missing, extra-linked, modified or escaping file (:class:`SuiteError`, naming the file).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import stat
import sys
from typing import Dict, Iterator, List, Optional, Sequence, Union

import numpy as np

__all__ = [
    "EXIT_BIND",
    "EXIT_CREATE",
    "OPS",
    "STAGE_MARKERS",
    "Case",
    "Output",
    "Rejected",
    "Suite",
    "SuiteError",
    "Tensor",
    "load",
    "main",
    "run",
]

# DxDispatch's exit codes where DirectML refuses a case, as bash sees them (the low byte):
# CreateOperator's refusal ends in 0x8007023E; a rejected binding removes the device
# (DXGI_ERROR_DEVICE_REMOVED, 0x887A0005).
EXIT_CREATE = 62
EXIT_BIND = 5

# The lines verify recognises in log.txt, one per stage (DxDispatch's own messages).
STAGE_MARKERS = {
    "create": "ERROR creating dispatchable",
    "bind": "ERROR while binding resources",
}

OPS = ("join", "split", "scatter", "gather_nd1", "reverse_subsequences")

_DTYPES = {
    "FLOAT64": "<f8", "FLOAT32": "<f4", "FLOAT16": "<f2",
    "INT64": "<i8", "INT32": "<i4", "INT16": "<i2", "INT8": "i1",
    "UINT64": "<u8", "UINT32": "<u4", "UINT16": "<u2", "UINT8": "u1",
}

# Files a run writes beside the outputs; no output may take these names.
_RESERVED = ("exit_code", "log.txt")
_HASH_CHUNK = 1 << 20


class SuiteError(ValueError):
    """The suite is not intact (a file missing, modified, linked or outside it) or not in the
    suite's format; the message names the file. Also raised for a results directory that would
    overlap the suite."""


class Rejected(Exception):
    """Raised by :meth:`Case.run_reference` for an invalid case: the golden model refuses it.
    ``rule`` is the rule it breaks (e.g. ``"J5"``), ``stage`` where DirectML refuses it
    (``"create"`` or ``"bind"``), ``exit_code`` what DxDispatch exits with there."""

    def __init__(self, case: "Case"):
        self.rule = case.rule
        self.stage = case.stage
        self.exit_code = EXIT_CREATE if case.stage == "create" else EXIT_BIND
        super().__init__(f"{case.path}: {case.why}")


def _dtype_of(text: str) -> Optional[np.dtype]:
    """numpy's dtype for a DML_TENSOR_DATA_TYPE (None for UNKNOWN, as invalid cases write it)."""
    if not isinstance(text, str):
        raise SuiteError(f"DataType {text!r} is not a string")
    name = text[len("DML_TENSOR_DATA_TYPE_"):] if text.startswith("DML_TENSOR_DATA_TYPE_") else text
    if name == "UNKNOWN":
        return None
    if name not in _DTYPES:
        raise SuiteError(f"DataType {text!r} is not a DirectML data type")
    return np.dtype(_DTYPES[name])


def _plain_name(name: object, what: str) -> str:
    """A file name inside a case's directory: no separator, not empty, '.' or '..'."""
    if (not isinstance(name, str) or not name or name in (".", "..") or "/" in name
            or "\\" in name or "\0" in name):
        raise SuiteError(f"{what} {name!r} is not a plain file name inside the case's directory")
    return name


def _packed_strides(sizes: Sequence[int]) -> List[int]:
    strides, running = [0] * len(sizes), 1
    for d in range(len(sizes) - 1, -1, -1):
        strides[d] = running
        running *= sizes[d]
    return strides


def _uint_list(value: object, what: str) -> List[int]:
    if not isinstance(value, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**32 for v in value):
        raise SuiteError(f"{what} must be a list of 32-bit unsigned integers")
    return list(value)


# ---- the manifest ------------------------------------------------------------------------------

def _safe_relative(path: str) -> bool:
    if not isinstance(path, str) or not path or path.startswith("/") or "\\" in path or "\0" in path:
        return False
    parts = path.split("/")
    return all(p not in ("", ".", "..") for p in parts)


def _sha256_of(full: str) -> str:
    # O_NOFOLLOW and O_NONBLOCK: a link swapped in after the check, or a FIFO, cannot be read
    # through or block; fstat confirms it is still a regular file.
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(full, flags)
    except OSError as e:
        raise SuiteError(f"{full}: cannot be read ({e.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise SuiteError(f"{full}: not a regular file")
        h = hashlib.sha256()
        for chunk in iter(lambda: f.read(_HASH_CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def _check_manifest(root: str, info: dict) -> Dict[str, str]:
    manifest = info.get("manifest")
    if not isinstance(manifest, dict):
        raise SuiteError(f"{root}/suite.json has no manifest: not a suite written by "
                         "dmlref-check generate (or one from before manifests); generate it again")
    if manifest.get("algorithm") != "sha256":
        raise SuiteError(f"{root}/suite.json: manifest algorithm is {manifest.get('algorithm')!r}, "
                         "expected 'sha256'")
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        raise SuiteError(f"{root}/suite.json: manifest has no files")
    real_root = os.path.realpath(root)
    for rel, digest in files.items():
        if not _safe_relative(rel):
            raise SuiteError(f"{root}/suite.json: manifest lists {rel!r}, a path that is absolute, "
                             "contains '..' or leaves the suite (tampered)")
        if not isinstance(digest, str) or not re.fullmatch(r"[0-9a-f]{64}", digest):
            raise SuiteError(f"{root}/suite.json: manifest hash of {rel!r} is not 64 lowercase hex")
        full = os.path.join(root, *rel.split("/"))
        # Every component must be a plain directory or file of the suite: no link anywhere.
        if os.path.realpath(full) != os.path.join(real_root, *rel.split("/")):
            raise SuiteError(f"{full}: a link or a path that leaves the suite (tampered)")
        try:
            st = os.lstat(full)
        except OSError:
            raise SuiteError(f"{full}: listed in the manifest but missing") from None
        if not stat.S_ISREG(st.st_mode):
            raise SuiteError(f"{full}: listed in the manifest but not a regular file")
        if _sha256_of(full) != digest:
            raise SuiteError(f"{full}: modified since the suite was generated (its SHA-256 differs "
                             "from the manifest's)")
    return files


# ---- tensors, outputs, cases -------------------------------------------------------------------

class Tensor:
    """One tensor of a case's description.

    ``field``: the desc field (``"InputTensors[1]"``); ``dtype``: numpy's dtype (None where an
    invalid case's DataType is UNKNOWN); ``data_type``: DirectML's name (``"FLOAT32"``);
    ``sizes``, ``strides`` (in elements; packed when the desc has none), ``flags``,
    ``total_bytes`` (``TotalTensorSizeInBytes`` when the desc gives it, else None), ``alignment``
    (``GuaranteedBaseOffsetAlignment`` or None), ``resource``: the name of the model's buffer bound
    to it. For an input, ``buffer`` is that whole buffer (1-D, read-only).
    """

    def __init__(self, field: str, desc: dict, resource: str):
        if not isinstance(desc, dict):
            raise SuiteError(f"{field} is not a tensor description")
        self.field = field
        self.resource = resource
        self.data_type = desc.get("DataType", "")
        if isinstance(self.data_type, str) and self.data_type.startswith("DML_TENSOR_DATA_TYPE_"):
            self.data_type = self.data_type[len("DML_TENSOR_DATA_TYPE_"):]
        self.dtype = _dtype_of(desc.get("DataType"))
        self.sizes = _uint_list(desc.get("Sizes"), f"{field}.Sizes")
        given = desc.get("Strides")
        self.packed = given is None
        self.strides = (_packed_strides(self.sizes) if given is None
                        else _uint_list(given, f"{field}.Strides"))
        self.flags = desc.get("Flags", "DML_TENSOR_FLAG_NONE")
        self.total_bytes = desc.get("TotalTensorSizeInBytes")
        self.alignment = desc.get("GuaranteedBaseOffsetAlignment")
        self._buffer: Optional[np.ndarray] = None
        self._load = None  # set by Case for an input: reads its buffer on first use

    @property
    def buffer(self) -> Optional[np.ndarray]:
        """An input's whole buffer (read on first use); None for an output."""
        if self._buffer is None and self._load is not None:
            self._buffer = self._load()
        return self._buffer

    def __repr__(self) -> str:
        return (f"<dmlref.suite.Tensor {self.field} {self.data_type} sizes={self.sizes} "
                f"strides={self.strides}>")

    def view(self, buffer: Optional[np.ndarray] = None) -> np.ndarray:
        """The tensor as a numpy view of ``buffer`` (default: its own input buffer): shape
        ``sizes``, strides ``strides`` times the item size. Raises ValueError where the tensor does
        not fit the buffer (an invalid case) instead of viewing memory outside it."""
        if buffer is None:
            buffer = self.buffer
        if buffer is None:
            raise ValueError(f"{self.field} has no buffer of its own; pass the output buffer")
        if self.dtype is None or buffer.dtype != self.dtype:
            raise ValueError(f"{self.field} is {self.data_type}; the buffer is {buffer.dtype}")
        if len(self.sizes) != len(self.strides) or not self.sizes:
            raise ValueError(f"{self.field}: Sizes and Strides disagree")
        if not buffer.flags.c_contiguous:
            raise ValueError(f"{self.field}: the buffer must be one C-contiguous array")
        flat = buffer.reshape(-1)  # a view of the same memory
        if 0 in self.sizes:
            raise ValueError(f"{self.field} has a size of 0")
        last = sum((n - 1) * s for n, s in zip(self.sizes, self.strides))
        if last >= flat.size:
            raise ValueError(f"{self.field} addresses element {last} of a buffer of {flat.size}")
        item = flat.dtype.itemsize
        return np.lib.stride_tricks.as_strided(
            flat, shape=tuple(self.sizes), strides=tuple(s * item for s in self.strides),
            writeable=flat.flags.writeable)


class Output:
    """One output of a case: ``tensor`` (its :class:`Tensor`), ``dtype``, ``shape`` (the result
    file's shape, the ``writeFile`` command's dimensions), ``size`` (elements in the whole buffer),
    ``sentinel`` (what the buffer holds before the operator runs), ``result`` (the file name a run
    writes, e.g. ``output_0.npy``), ``expected`` (the expected file's path) and ``collisions``
    (SCATTER: ``{buffer element: [accepted bit patterns]}`` where updates collide; any one of them
    is correct)."""

    def __init__(self, tensor: Tensor, resource: dict, shape: List[int], result: str,
                 expected: str, collisions: Dict[int, List[int]]):
        self.tensor = tensor
        self.dtype = _dtype_of(resource.get("initialValuesDataType"))
        if self.dtype is None:
            raise SuiteError(f"{tensor.field}: an output buffer of type UNKNOWN")
        init = resource.get("initialValues")
        if not isinstance(init, dict) or "value" not in init or "valueCount" not in init:
            raise SuiteError(f"{tensor.field}: its buffer is not a sentinel fill")
        value = init["value"]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise SuiteError(f"{tensor.field}: sentinel {value!r} is not a number")
        try:
            with np.errstate(all="raise"):
                self.sentinel = np.array(value, dtype=self.dtype)[()]
        except (OverflowError, ValueError, FloatingPointError):
            self.sentinel = None
        if self.sentinel is None or self.sentinel != value:
            raise SuiteError(f"{tensor.field}: sentinel {value!r} is not a {self.dtype} value")
        size_in_bytes = resource.get("sizeInBytes")
        if not isinstance(size_in_bytes, int) or size_in_bytes % self.dtype.itemsize:
            raise SuiteError(f"{tensor.field}: sizeInBytes {size_in_bytes!r} is not a whole number "
                             "of elements")
        self.size = size_in_bytes // self.dtype.itemsize
        if init["valueCount"] != self.size:
            raise SuiteError(f"{tensor.field}: valueCount {init['valueCount']} differs from the "
                             f"buffer's {self.size} elements")
        self.shape = tuple(_uint_list(shape, f"{tensor.field}'s writeFile dimensions"))
        if int(np.prod(self.shape, dtype=object)) != self.size:
            raise SuiteError(f"{tensor.field}: writeFile dimensions {list(self.shape)} do not hold "
                             f"the buffer's {self.size} elements")
        # The expected file holds the whole buffer: a buffer larger than it is not the generated
        # one (and would cost memory out of proportion to the suite).
        if self.size * self.dtype.itemsize > os.lstat(expected).st_size:
            raise SuiteError(f"{tensor.field}: a buffer of {self.size} elements is larger than "
                             f"its expected file {expected}")
        self.result = result
        self.expected = expected
        self.collisions = collisions

    def __repr__(self) -> str:
        return (f"<dmlref.suite.Output {self.tensor.field} {self.dtype} shape={self.shape} "
                f"-> {self.result}>")

    def new_buffer(self) -> np.ndarray:
        """A fresh output buffer: ``shape``, filled with the sentinel, as the device's starts."""
        return np.full(self.shape, self.sentinel, dtype=self.dtype)

    def view(self, buffer: np.ndarray) -> np.ndarray:
        """The output tensor as a writable numpy view of ``buffer`` (one from new_buffer())."""
        return self.tensor.view(buffer)

    def load_expected(self) -> np.ndarray:
        """The expected result file (the whole buffer, ``shape``), as a correct device writes it."""
        return np.load(self.expected, allow_pickle=False)


def _tensor_fields(desc: dict) -> Iterator[tuple]:
    """(field, group, index, tensor desc) for every tensor of a desc, in its order."""
    for key, value in desc.items():
        if isinstance(value, dict):
            yield key, key, None, value
        elif isinstance(value, list):
            for i, t in enumerate(value):
                yield f"{key}[{i}]", key, i, t


class Case:
    """One case of the suite (see the module's documentation).

    ``name`` (the case's directory, ``"003_float32_r4_axis2_..."``), ``op`` (``"join"``...),
    ``path`` (``"join/003_..."``), ``dir`` (its directory), ``valid``, ``rule`` (the rule an
    invalid case breaks, else None), ``stage`` (where DirectML refuses an invalid case:
    ``"create"`` or ``"bind"``), ``undocumented`` and ``note`` (an invalid case whose DirectML
    behaviour is not documented), ``why``, ``feature_level`` (``"5_0"``), ``desc``, ``inputs``
    (field -> :class:`Tensor`, each buffer read on first use), ``outputs`` (list of :class:`Output`).
    """

    def __init__(self, suite: "Suite", path: str):
        self.suite = suite
        self.path = path
        self.op, self.name = path.split("/")
        self.dir = os.path.join(suite.path, self.op, self.name)
        info = suite._read_json(f"{path}/case.json")
        model = suite._read_json(f"{path}/model.json")
        if not isinstance(info, dict) or not isinstance(model, dict):
            raise SuiteError(f"{self.dir}: case.json and model.json must be JSON objects")
        if info.get("op") != self.op:
            raise SuiteError(f"{self.dir}/case.json: op is {info.get('op')!r}, the directory "
                             f"says {self.op!r}")
        self.valid = info.get("valid")
        if not isinstance(self.valid, bool):
            raise SuiteError(f"{self.dir}/case.json: valid must be true or false")
        self.why = str(info.get("why", ""))
        self.feature_level = info.get("feature_level", suite.feature_level)
        self.rule = info.get("rule") if not self.valid else None
        self.stage = info.get("stage") if not self.valid else None
        self.undocumented = bool(info.get("undocumented", False))
        self.note = info.get("note")
        if not self.valid and self.stage not in STAGE_MARKERS:
            raise SuiteError(f"{self.dir}/case.json: an invalid case needs \"stage\": \"create\" "
                             f"or \"bind\", not {self.stage!r}")

        try:
            resources = model["resources"]
            (op_entry,) = model["dispatchables"].values()
            self.op_type = op_entry["type"]
            desc = op_entry["desc"]
            commands = model["commands"]
            (dispatch,) = [c for c in commands if c.get("type") == "dispatch"]
            bindings = dispatch["bindings"]
            writes = {c["resource"]: c for c in commands if c.get("type") == "writeFile"}
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise SuiteError(f"{self.dir}/model.json: not a suite model ({e!r})") from None
        self._resources = resources

        tensors: Dict[str, Tensor] = {}
        self.desc: Dict[str, object] = {}
        for key, value in desc.items():
            if isinstance(value, (dict, list)):
                self.desc[key] = [] if isinstance(value, list) else None
            elif isinstance(value, int) and not isinstance(value, bool):
                self.desc[key] = value
            else:
                raise SuiteError(f"{self.dir}/model.json: desc field {key} is {value!r}")
        for field, group, index, t in _tensor_fields(desc):
            bound = bindings.get(group)
            resource = bound[index] if index is not None and isinstance(bound, list) else bound
            if not isinstance(resource, str) or resource not in resources:
                raise SuiteError(f"{self.dir}/model.json: {field} is bound to no resource")
            tensor = Tensor(field, t, resource)
            tensors[field] = tensor
            if index is None:
                self.desc[group] = tensor
            else:
                self.desc[group].append(tensor)

        raw_outputs = info.get("outputs", [])
        if not isinstance(raw_outputs, list):
            raise SuiteError(f"{self.dir}/case.json: outputs must be a list")
        if self.valid and not raw_outputs:
            raise SuiteError(f"{self.dir}/case.json: a valid case with no outputs")
        self.outputs: List[Output] = []
        output_fields = set()
        for k, o in enumerate(raw_outputs):
            if not isinstance(o, dict) or o.get("tensor") not in tensors:
                raise SuiteError(f"{self.dir}/case.json: outputs[{k}] names no tensor of the desc")
            tensor = tensors[o["tensor"]]
            result = _plain_name(o.get("result"), f"{self.dir}/case.json: outputs[{k}].result")
            expected = _plain_name(o.get("expected"),
                                   f"{self.dir}/case.json: outputs[{k}].expected")
            if result in _RESERVED:
                raise SuiteError(f"{self.dir}/case.json: outputs[{k}].result may not be {result!r}")
            if f"{path}/{expected}" not in suite.manifest:
                raise SuiteError(f"{self.dir}/case.json: {expected} is not in the manifest")
            write = writes.get(tensor.resource)
            if write is None or write.get("targetPath") != result:
                raise SuiteError(f"{self.dir}/model.json: no writeFile of {tensor.field} to {result}")
            collisions: Dict[int, List[int]] = {}
            for c in o.get("collisions", []):
                try:
                    collisions[int(c["element"])] = [int(b, 16) for b in c["accept"]]
                except (KeyError, TypeError, ValueError):
                    raise SuiteError(f"{self.dir}/case.json: a bad collision entry {c!r}") from None
            self.outputs.append(Output(tensor, resources[tensor.resource], write.get("dimensions"),
                                       result, os.path.join(self.dir, expected), collisions))
            output_fields.add(tensor.field)
        if len({o.result for o in self.outputs}) != len(self.outputs):
            raise SuiteError(f"{self.dir}/case.json: two outputs share a result file name")
        # DirectML's names say which tensors are outputs (OutputTensor, OutputTensors[i]); an
        # invalid case lists no outputs, and may bind an output to an input's buffer (T13).
        self.inputs: Dict[str, Tensor] = {
            f: t for f, t in tensors.items()
            if f not in output_fields and not f.startswith("Output")}
        for tensor in self.inputs.values():
            tensor._load = lambda r=tensor.resource: self._buffer_of(r)
        self._buffers: Dict[str, np.ndarray] = {}

    def __repr__(self) -> str:
        kind = "valid" if self.valid else f"invalid {self.rule} ({self.stage})"
        return f"<dmlref.suite.Case {self.path} {kind}>"

    def load_inputs(self) -> Dict[str, Tensor]:
        """Reads every input buffer now (each is otherwise read on first use); returns
        ``inputs``."""
        for tensor in self.inputs.values():
            tensor.buffer  # noqa: B018 (reads it)
        return self.inputs

    def _buffer_of(self, resource: str) -> np.ndarray:
        if resource not in self._buffers:
            self._buffers[resource] = self._load_resource(resource)
        return self._buffers[resource]

    def _load_resource(self, name: str) -> np.ndarray:
        r = self._resources[name]
        init = r.get("initialValues") if isinstance(r, dict) else None
        if not isinstance(init, dict) or "sourcePath" not in init:
            raise SuiteError(f"{self.dir}/model.json: input resource {name} has no sourcePath")
        source = _plain_name(init["sourcePath"], f"{self.dir}/model.json: {name}'s sourcePath")
        if f"{self.path}/{source}" not in self.suite.manifest:
            raise SuiteError(f"{self.dir}/model.json: {source} is not in the manifest")
        data = np.load(os.path.join(self.dir, source), allow_pickle=False).reshape(-1)
        declared = _dtype_of(r.get("initialValuesDataType", ""))
        if declared is not None and data.dtype != declared:
            raise SuiteError(f"{self.dir}/{source}: holds {data.dtype}, the model declares "
                             f"{declared}")
        size_in_bytes = r.get("sizeInBytes", -(-data.nbytes // 4) * 4)
        if (not isinstance(size_in_bytes, int) or size_in_bytes < data.nbytes
                or size_in_bytes > data.nbytes + 64):
            raise SuiteError(f"{self.dir}/model.json: {name}'s sizeInBytes {size_in_bytes!r} does "
                             f"not fit its {data.nbytes} bytes of data")
        # DxDispatch's buffer: the data at offset 0, zeros up to sizeInBytes.
        buffer = np.zeros(size_in_bytes // data.dtype.itemsize, dtype=data.dtype)
        buffer[:data.size] = data
        buffer.flags.writeable = False
        return buffer

    # ---- the golden model's run ----------------------------------------------------------------

    def run_reference(self) -> List[np.ndarray]:
        """The output buffers a correct device writes for this case, computed by dmlref: one
        array per output, ``shape`` and ``dtype`` of its :class:`Output`, the sentinel wherever
        the tensor does not address the buffer. Raises :class:`Rejected` for an invalid case (the
        golden model refuses it: generate checked that it breaks exactly ``rule``)."""
        import dmlref

        if not self.valid:
            raise Rejected(self)
        self.load_inputs()
        buffers = [o.new_buffer() for o in self.outputs]
        views = [o.view(b) for o, b in zip(self.outputs, buffers)]
        d, level = self.desc, self.feature_level
        ins = {f: t.view() for f, t in self.inputs.items()}
        if self.op == "join":
            dmlref.join([ins[t.field] for t in d["InputTensors"]], axis=d["Axis"],
                        feature_level=level, out=views[0])
        elif self.op == "split":
            x = ins["InputTensor"]
            axis = d["Axis"]
            pieces = dmlref.split(x, [t.sizes[axis] for t in d["OutputTensors"]], axis=axis,
                                  feature_level=level)
            for view, piece in zip(views, pieces):
                view[...] = piece
        elif self.op == "scatter":
            dmlref.scatter(ins["InputTensor"], ins["IndicesTensor"], ins["UpdatesTensor"],
                           axis=d["Axis"], feature_level=level, out=views[0])
        elif self.op == "gather_nd1":
            # DirectML's tensors share one rank with leading 1s; numpy's are the meaningful dims.
            x, idx = ins["InputTensor"], ins["IndicesTensor"]
            r, q = d["InputDimensionCount"], d["IndicesDimensionCount"]
            x = x.reshape(x.shape[x.ndim - r:]) if x.ndim > r else x
            idx = idx.reshape(idx.shape[idx.ndim - q:]) if idx.ndim > q else idx
            dmlref.gather_nd1(x, idx, batch_dims=d["BatchDimensionCount"], feature_level=level,
                              out=views[0])
        elif self.op == "reverse_subsequences":
            dmlref.reverse_subsequences(ins["InputTensor"], ins["SequenceLengthsTensor"],
                                        axis=d["Axis"], feature_level=level, out=views[0])
        else:
            raise SuiteError(f"{self.path}: unknown operator {self.op!r}")
        return buffers

    # ---- results -------------------------------------------------------------------------------

    def result_dir(self, results_dir: Union[str, os.PathLike]) -> str:
        """Where this case's results go: RESULTS/<op>/<case>."""
        return os.path.join(os.fspath(results_dir), self.op, self.name)

    def write_result(self, results_dir: Union[str, os.PathLike],
                     outputs: Optional[Sequence[np.ndarray]], exit_code: int = 0,
                     stage: Optional[str] = None, log: str = "") -> str:
        """Writes exactly what ``dmlref-check verify`` reads for this case, in
        ``RESULTS/<op>/<case>/``: one ``.npy`` per output (``outputs``: the whole buffers, in
        ``case.outputs`` order, each of its dtype and ``size`` elements; None when the runtime
        wrote none), ``log.txt`` (``log``, plus DxDispatch's marker line of ``stage`` when the
        runtime refused the case: ``"create"``, or ``"bind"``) and ``exit_code``. A refusal needs
        a non-zero ``exit_code`` (:data:`EXIT_CREATE`, :data:`EXIT_BIND`).

        Each file is written beside its target and renamed over it, ``exit_code`` last and the
        previous one removed first, so an interrupted run reads as "not run", never as a
        half-written result; a link in the way is replaced, never written through. Only the files
        named here are touched. Returns the case's results directory."""
        if isinstance(exit_code, bool) or not isinstance(exit_code, (int, np.integer)):
            raise TypeError(f"exit_code must be an int, not {type(exit_code).__name__}")
        if stage is not None:
            if stage not in STAGE_MARKERS:
                raise ValueError(f"stage is {stage!r}; it must be 'create', 'bind' or None")
            if exit_code == 0:
                raise ValueError(f"a runtime that refuses the case at stage {stage!r} exits "
                                 "non-zero (DxDispatch: EXIT_CREATE, EXIT_BIND)")
        images = []
        if outputs is not None:
            if len(outputs) != len(self.outputs):
                raise ValueError(f"{self.path} has {len(self.outputs)} output(s); got "
                                 f"{len(outputs)} buffer(s)")
            for o, buffer in zip(self.outputs, outputs):
                a = np.asarray(buffer)
                if a.dtype != o.dtype:
                    raise ValueError(f"{self.path}: {o.tensor.field}'s buffer must be {o.dtype}, "
                                     f"not {a.dtype}")
                if a.size != o.size:
                    raise ValueError(f"{self.path}: {o.tensor.field}'s buffer holds {o.size} "
                                     f"elements, not {a.size}")
                images.append((o.result, np.ascontiguousarray(a).reshape(o.shape)))
        out_dir = self.result_dir(results_dir)
        _check_apart(self.suite.path, out_dir)
        os.makedirs(out_dir, exist_ok=True)
        _check_apart(self.suite.path, out_dir)  # a link made on the way may point into the suite
        _remove_own(out_dir, "exit_code")
        written = {name for name, _ in images}
        for o in self.outputs:
            if o.result not in written:
                _remove_own(out_dir, o.result)  # a stale result of an earlier run
        for name, array in images:
            _replace(out_dir, name, lambda f, a=array: np.lib.format.write_array(
                f, a, allow_pickle=False))
        text = log
        if stage is not None:
            if text and not text.endswith("\n"):
                text += "\n"
            text += f"{STAGE_MARKERS[stage]} 'op': refused by the runtime\n"
        _replace(out_dir, "log.txt", lambda f: f.write(text.encode("utf-8", "replace")))
        _replace(out_dir, "exit_code", lambda f: f.write(f"{int(exit_code)}\n".encode()))
        return out_dir


def _remove_own(directory: str, name: str) -> None:
    path = os.path.join(directory, name)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        raise SuiteError(f"{path} is a directory; refusing to remove it")
    os.unlink(path)  # a file or a link (the link, never its target)


def _replace(directory: str, name: str, write) -> None:
    target = os.path.join(directory, name)
    tmp = os.path.join(directory, f".{name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "xb") as f:
            write(f)
        if os.path.isdir(target) and not os.path.islink(target):
            raise SuiteError(f"{target} is a directory; refusing to replace it")
        os.replace(tmp, target)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _check_apart(suite_path: str, results: str) -> None:
    """Refuses a results directory that is the suite, lies inside it or contains it."""
    suite_real = os.path.realpath(suite_path)
    results_real = os.path.realpath(results)
    if _inside(results_real, suite_real) or _inside(suite_real, results_real):
        raise SuiteError(f"the results directory {results} ({results_real}) overlaps the suite "
                         f"{suite_path} ({suite_real}); write results outside the suite")


# ---- the suite ---------------------------------------------------------------------------------

def _read_json_file(full: str):
    with open(full, "rb") as f:
        data = f.read()
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise SuiteError(f"{full}: not JSON ({e})") from None


class Suite:
    """A loaded suite: ``path``, ``generator``, ``seed``, ``feature_level``, ``manifest``
    (relative path -> SHA-256) and ``case_paths`` (``"<op>/<case>"`` in suite.json's order).
    Iterating it yields every :class:`Case`; len() is the number of cases."""

    def __init__(self, path: str, info: dict, manifest: Dict[str, str]):
        self.path = path
        self.generator = info.get("generator")
        self.seed = info.get("seed")
        self.feature_level = info.get("feature_level")
        self.manifest = manifest
        cases = info.get("cases")
        if not isinstance(cases, list):
            raise SuiteError(f"{path}/suite.json: cases must be a list")
        for c in cases:
            if (not _safe_relative(c) or c.count("/") != 1 or c.split("/")[0] not in OPS):
                raise SuiteError(f"{path}/suite.json: case {c!r} is not <op>/<case>")
            for f in ("case.json", "model.json"):
                if f"{c}/{f}" not in manifest:
                    raise SuiteError(f"{path}/suite.json: {c}/{f} is not in the manifest")
        if len(set(cases)) != len(cases):
            raise SuiteError(f"{path}/suite.json: a case is listed twice")
        self.case_paths: List[str] = list(cases)

    def __repr__(self) -> str:
        return f"<dmlref.suite.Suite {self.path}: {len(self)} cases>"

    def __len__(self) -> int:
        return len(self.case_paths)

    def check_results_dir(self, results_dir: Union[str, os.PathLike]) -> None:
        """Raises :class:`SuiteError` when ``results_dir`` is the suite, lies inside it or
        contains it (links followed). write_result() checks each case's directory too; a runner
        calls this once before its first case."""
        _check_apart(self.path, os.fspath(results_dir))

    def __iter__(self) -> Iterator[Case]:
        return self.cases()

    def _read_json(self, rel: str):
        if rel not in self.manifest:
            raise SuiteError(f"{self.path}/{rel} is not in the manifest")
        return _read_json_file(os.path.join(self.path, *rel.split("/")))

    def cases(self, ops: Optional[Sequence[str]] = None,
              filter: Optional[str] = None) -> Iterator[Case]:  # noqa: A002 (the documented name)
        """The cases in suite.json's order; ``ops``: only these operators; ``filter``: only the
        cases whose ``"<op>/<case>"`` a regular expression matches (re.search), as verify's
        ``--filter``."""
        if ops is not None:
            ops = list(ops)
            unknown = [o for o in ops if o not in OPS]
            if unknown:
                raise ValueError(f"unknown operator(s) {unknown}; the suite's are {list(OPS)}")
        pattern = re.compile(filter) if filter is not None else None
        for path in self.case_paths:
            if ops is not None and path.split("/")[0] not in ops:
                continue
            if pattern is not None and not pattern.search(path):
                continue
            yield Case(self, path)


def load(path: Union[str, os.PathLike]) -> Suite:
    """Loads the suite in directory ``path`` after checking its manifest: every listed file must
    exist in the suite as a regular file (no links), with its SHA-256. Raises :class:`SuiteError`
    naming the first file that is not as generated."""
    path = os.fspath(path)
    info_path = os.path.join(path, "suite.json")
    try:
        st = os.lstat(info_path)
    except OSError:
        raise SuiteError(f"{path} is not a suite (no suite.json)") from None
    if not stat.S_ISREG(st.st_mode):
        raise SuiteError(f"{info_path} is not a regular file")
    if st.st_size > 64 << 20:
        raise SuiteError(f"{info_path} is {st.st_size} bytes; not a suite's")
    info = _read_json_file(info_path)
    if not isinstance(info, dict):
        raise SuiteError(f"{info_path}: not a JSON object")
    manifest = _check_manifest(path, info)
    return Suite(path, info, manifest)


# ---- python -m dmlref.suite --------------------------------------------------------------------

def _printable(text: str) -> str:
    """Control characters as \\xNN, so a case name cannot drive the terminal."""
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256
                   else f"\\u{ord(c):04x}" for c in text)


def run(suite: Suite, results_dir: str, ops: Optional[Sequence[str]] = None,
        filter: Optional[str] = None, out=sys.stdout) -> int:  # noqa: A002
    """Runs the selected cases through dmlref (valid: run_reference(); invalid: refused at their
    stage) and writes their results under ``results_dir``. Returns the number of cases run."""
    suite.check_results_dir(results_dir)
    count = 0
    for case in suite.cases(ops=ops, filter=filter):
        try:
            buffers = case.run_reference()
        except Rejected as r:
            case.write_result(results_dir, None, exit_code=r.exit_code, stage=r.stage,
                              log=f"dmlref refuses the case: {case.why}\n")
        except Exception as e:  # noqa: BLE001 (recorded as the case's failure, as a crash is)
            case.write_result(results_dir, None, exit_code=1,
                              log=f"dmlref failed: {type(e).__name__}: {e}\n")
        else:
            case.write_result(results_dir, buffers, exit_code=0)
        count += 1
    print(f"ran {count} cases into {results_dir}; check them with:\n"
          f"  dmlref-check verify {suite.path} --results {results_dir}", file=out)
    return count


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m dmlref.suite run SUITE --results DIR [--ops OPS] [--filter REGEX]`` and
    ``python -m dmlref.suite list SUITE [--ops OPS] [--filter REGEX]``. Exit codes: 0 done,
    2 bad usage or a suite that is not intact."""
    parser = argparse.ArgumentParser(
        prog="python -m dmlref.suite",
        description="Run dmlref's conformance suite through dmlref itself, or list its cases.")
    sub = parser.add_subparsers(dest="command", required=True)
    run_p = sub.add_parser("run", help="run every case through dmlref; then dmlref-check verify")
    list_p = sub.add_parser("list", help="list the cases: path, valid/rule, stage")
    for p in (run_p, list_p):
        p.add_argument("suite", metavar="SUITE", help="the suite directory (from generate)")
        p.add_argument("--ops", help="comma-separated operators (default: all)")
        p.add_argument("--filter", metavar="REGEX",
                       help="only cases whose <op>/<case> the regular expression matches")
    run_p.add_argument("--results", metavar="DIR", required=True,
                       help="where results go: DIR/<op>/<case>/ (never inside the suite)")
    args = parser.parse_args(argv)
    ops = args.ops.split(",") if args.ops else None
    try:
        if args.filter is not None:
            re.compile(args.filter)
        suite = load(args.suite)
        if args.command == "run":
            run(suite, args.results, ops=ops, filter=args.filter)
        else:
            for case in suite.cases(ops=ops, filter=args.filter):
                kind = "valid" if case.valid else f"invalid {case.rule} {case.stage}"
                if case.undocumented:
                    kind += " undocumented"
                print(f"{_printable(case.path)}\t{kind}")
    except (SuiteError, ValueError, OSError, re.error) as e:
        print(f"python -m dmlref.suite: {_printable(str(e))}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
