"""Thrift types, clients and processors built from a Thrift IDL file when it is loaded, not generated.

``load(path)`` parses the IDL (and what it includes) and returns its constants, enums, structs,
unions, exceptions and services as Python classes with the same names, attributes and behaviour as
the Apache Thrift compiler's ``--gen py`` output: ``ttypes.Table(tableName=...)``,
``Service.get_table_args``, ``Service.Client(protocol)``, ``Service.Processor(handler)``. Each struct
carries the ``thrift_spec`` that the thrift runtime's protocols read and write generically (and that
its C codec, fastbinary, reads and writes in C), so no code is generated for any of it.

The parser takes the IDL's whole grammar as the Hive Metastore's uses it: include, namespace, const,
typedef, enum, struct, union, exception and service (extends, oneway, throws), field ids,
requiredness, defaults, annotations, and ``//``, ``#`` and ``/* */`` comments.
"""

from __future__ import annotations

import copy
import functools
import keyword
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from thrift.protocol.TBase import TBase, TExceptionBase
from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.transport import TTransport

log = logging.getLogger("gluecat.hms")

BASE_TYPES = {
    "bool": TType.BOOL,
    "byte": TType.BYTE,
    "i8": TType.BYTE,
    "i16": TType.I16,
    "i32": TType.I32,
    "i64": TType.I64,
    "double": TType.DOUBLE,
    "string": TType.STRING,
    "binary": TType.STRING,
}

_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<comment>//[^\n]*|\#[^\n]*|/\*.*?\*/)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  | (?P<number>[+-]?(?:0x[0-9a-fA-F]+|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?))
  | (?P<name>[A-Za-z_][\w.]*)
  | (?P<symbol>[{}()<>,;:=\[\]])
    """,
    re.VERBOSE | re.DOTALL,
)


class IdlError(ValueError):
    """The IDL is not one this parser understands."""


# -- the parse tree ---------------------------------------------------------------------------------


@dataclass
class TypeRef:
    name: str  # a base type, "list", "set", "map", or a defined name
    args: tuple[TypeRef, ...] = ()


@dataclass
class Field:
    id: int
    name: str
    type: TypeRef
    default: Any = None


@dataclass
class StructDef:
    kind: str  # struct, union or exception
    name: str
    fields: list[Field]


@dataclass
class FunctionDef:
    name: str
    returns: TypeRef
    params: list[Field]
    throws: list[Field]
    oneway: bool


@dataclass
class ServiceDef:
    name: str
    extends: str | None
    functions: list[FunctionDef]


@dataclass
class Document:
    includes: dict[str, Document] = field(default_factory=dict)
    consts: dict[str, tuple[TypeRef, Any]] = field(default_factory=dict)
    typedefs: dict[str, TypeRef] = field(default_factory=dict)
    enums: dict[str, dict[str, int]] = field(default_factory=dict)
    structs: dict[str, StructDef] = field(default_factory=dict)
    services: dict[str, ServiceDef] = field(default_factory=dict)


class _Parser:
    def __init__(self, text: str, path: Path) -> None:
        self.path = path
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                line = text.count("\n", 0, pos) + 1
                raise IdlError(f"{path}:{line}: unexpected {text[pos : pos + 20]!r}")
            pos = m.end()
            kind = m.lastgroup or ""
            if kind not in ("space", "comment"):
                self.tokens.append((kind, m.group()))
        self.at = 0

    def peek(self, offset: int = 0) -> str:
        i = self.at + offset
        return self.tokens[i][1] if i < len(self.tokens) else ""

    def take(self, expected: str | None = None) -> str:
        if self.at >= len(self.tokens):
            raise IdlError(f"{self.path}: ends early")
        value = self.tokens[self.at][1]
        if expected is not None and value != expected:
            raise IdlError(f"{self.path}: expected {expected!r}, found {value!r} (token {self.at})")
        self.at += 1
        return value

    def skip_separator(self) -> None:
        if self.peek() in (",", ";"):
            self.at += 1

    def skip_annotations(self) -> None:
        if self.peek() == "(":
            depth = 0
            while True:
                t = self.take()
                depth += {"(": 1, ")": -1}.get(t, 0)
                if depth == 0:
                    return

    def document(self, load_include: Any) -> Document:
        doc = Document()
        while self.at < len(self.tokens):
            word = self.take()
            if word == "include":
                name = _unquote(self.take())
                doc.includes[Path(name).stem] = load_include(self.path.parent / name)
            elif word == "namespace":
                self.take()
                self.take()
            elif word == "const":
                type_ = self.type()
                name = self.take()
                self.take("=")
                doc.consts[name] = (type_, self.value())
                self.skip_separator()
            elif word == "typedef":
                type_ = self.type()
                doc.typedefs[self.take()] = type_
                self.skip_annotations()
                self.skip_separator()
            elif word == "enum":
                name = self.take()
                doc.enums[name] = self.enum_body()
            elif word in ("struct", "union", "exception"):
                name = self.take()
                doc.structs[name] = StructDef(word, name, self.fields("{", "}"))
                self.skip_annotations()
            elif word == "service":
                name = self.take()
                extends = None
                if self.peek() == "extends":
                    self.take()
                    extends = self.take()
                doc.services[name] = ServiceDef(name, extends, self.functions())
                self.skip_annotations()
            else:
                raise IdlError(f"{self.path}: unexpected {word!r} at the top level")
        return doc

    def enum_body(self) -> dict[str, int]:
        self.take("{")
        values: dict[str, int] = {}
        following = 0
        while self.peek() != "}":
            name = self.take()
            if self.peek() == "=":
                self.take()
                following = int(self.take(), 0)
            values[name] = following
            following += 1
            self.skip_annotations()
            self.skip_separator()
        self.take("}")
        self.skip_annotations()
        return values

    def type(self) -> TypeRef:
        name = self.take()
        if name in ("list", "set"):
            self.take("<")
            element = self.type()
            self.take(">")
            type_ = TypeRef(name, (element,))
        elif name == "map":
            self.take("<")
            key = self.type()
            self.take(",")
            value = self.type()
            self.take(">")
            type_ = TypeRef(name, (key, value))
        else:
            type_ = TypeRef(name)
        self.skip_annotations()
        return type_

    def fields(self, opening: str, closing: str) -> list[Field]:
        self.take(opening)
        out: list[Field] = []
        implicit = 0
        while self.peek() != closing:
            if self.peek(1) == ":":
                fid = int(self.take(), 0)
                self.take(":")
            else:
                implicit -= 1  # as the Thrift compiler numbers fields without an id
                fid = implicit
            if self.peek() in ("required", "optional"):
                self.take()
            type_ = self.type()
            name = self.take()
            default = None
            if self.peek() == "=":
                self.take()
                default = self.value()
            self.skip_annotations()
            self.skip_separator()
            out.append(Field(fid, name, type_, default))
        self.take(closing)
        return out

    def functions(self) -> list[FunctionDef]:
        self.take("{")
        out = []
        while self.peek() != "}":
            oneway = self.peek() == "oneway"
            if oneway:
                self.take()
            returns = TypeRef("void") if self.peek() == "void" and self.take() else self.type()
            name = self.take()
            params = self.fields("(", ")")
            throws = self.fields("(", ")") if self.peek() == "throws" and self.take() else []
            self.skip_annotations()
            self.skip_separator()
            out.append(FunctionDef(name, returns, params, throws, oneway))
        self.take("}")
        return out

    def value(self) -> Any:
        token = self.take()
        if token == "[":
            items = []
            while self.peek() != "]":
                items.append(self.value())
                self.skip_separator()
            self.take("]")
            return items
        if token == "{":
            pairs = {}
            while self.peek() != "}":
                key = self.value()
                self.take(":")
                pairs[key] = self.value()
                self.skip_separator()
            self.take("}")
            return pairs
        if token[0] in "\"'":
            return _unquote(token)
        try:
            return int(token, 0)
        except ValueError:
            pass
        try:
            return float(token)
        except ValueError:
            pass
        return _Name(token)  # an enum value or a constant, resolved when the classes are built


@dataclass(frozen=True)
class _Name:
    name: str


def _unquote(token: str) -> str:
    return token[1:-1].encode().decode("unicode_escape") if "\\" in token else token[1:-1]


def parse(path: Path) -> Document:
    """The IDL at ``path`` and, recursively, the files it includes (each parsed once)."""
    seen: dict[Path, Document] = {}

    def load_file(p: Path) -> Document:
        p = p.resolve()
        if p not in seen:
            seen[p] = _Parser(p.read_text(), p).document(load_file)
        return seen[p]

    return load_file(path)


# -- the classes --------------------------------------------------------------------------------------


class Struct(TBase):
    """The base of every struct built from an IDL; fields are instance attributes."""

    thrift_spec: tuple[Any, ...] = ()
    _fields: tuple[Field, ...] = ()

    _defaults: dict[str, Any] = {}  # noqa: RUF012  # per class, set when it is built
    _names: tuple[str, ...] = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Dictionary updates rather than a loop of setattr: the C codec calls this for every struct
        # it decodes (a thousand partitions are eight thousand structs).
        fields = self.__dict__
        fields.update(self._defaults)
        if args:
            if len(args) > len(self._names):
                raise TypeError(
                    f"{type(self).__name__} takes at most {len(self._names)} positional arguments"
                )
            fields.update(zip(self._names, args, strict=False))
        if kwargs:
            unknown = kwargs.keys() - self._defaults.keys()
            if unknown:
                raise TypeError(f"{type(self).__name__} has no field {sorted(unknown)[0]!r}")
            fields.update(kwargs)

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({fields})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, type(self)) and vars(self) == vars(other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]  # mutable, as the generated structs are

    def validate(self) -> None:
        return None


class StructException(Struct, TExceptionBase):
    """The base of every exception built from an IDL."""

    def __str__(self) -> str:
        return repr(self)

    __hash__ = object.__hash__  # type: ignore[assignment]  # raised exceptions must hash (tracebacks)


class Module(SimpleNamespace):
    """A namespace of built classes (as the generated module would be); any name is typed Any."""

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(name)


def _set_fields(cls: type[Struct], fields: list[Field]) -> None:
    cls._fields = tuple(fields)
    cls._names = tuple(f.name for f in fields)
    cls._defaults = {f.name: f.default for f in fields}
    if all(n.isidentifier() and not keyword.iskeyword(n) for n in cls._names):
        cls.__init__ = _specialised_init(fields)  # type: ignore[method-assign]


def _specialised_init(fields: list[Field]) -> Any:
    """An ``__init__`` with one keyword parameter per field, as the Thrift compiler writes it (and as
    dataclasses make theirs): binding arguments to parameters is several times faster than a generic
    ``**kwargs`` loop, and the C codec calls it for every struct it decodes."""
    params = "".join(f", {f.name}=_default{i}" for i, f in enumerate(fields))
    lines = [
        f"    self.{f.name} = copy.deepcopy({f.name}) if {f.name} is _default{i} else {f.name}"
        if isinstance(f.default, (list, dict, set))
        else f"    self.{f.name} = {f.name}"
        for i, f in enumerate(fields)
    ]
    source = f"def __init__(self{params}):\n" + ("\n".join(lines) or "    pass") + "\n"
    namespace: dict[str, Any] = {f"_default{i}": f.default for i, f in enumerate(fields)}
    namespace["copy"] = copy
    exec(source, namespace)
    return namespace["__init__"]


class _Builder:
    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.classes: dict[str, type[Struct]] = {}
        self.enums: dict[str, type] = {}

    def resolve(self, type_: TypeRef, doc: Document | None = None) -> tuple[TypeRef, Document]:
        """A type with typedefs followed, and the document it is defined in."""
        doc = doc or self.doc
        while type_.name not in BASE_TYPES and type_.name not in ("list", "set", "map", "void"):
            if "." in type_.name:
                prefix, rest = type_.name.split(".", 1)
                doc = doc.includes[prefix]
                type_ = TypeRef(rest, type_.args)
            elif type_.name in doc.typedefs:
                type_ = doc.typedefs[type_.name]
            else:
                break
        return type_, doc

    def ttype(self, type_: TypeRef, doc: Document | None = None) -> int:
        type_, doc = self.resolve(type_, doc)
        if type_.name in BASE_TYPES:
            return BASE_TYPES[type_.name]
        if type_.name in ("list", "set", "map"):
            return {"list": TType.LIST, "set": TType.SET, "map": TType.MAP}[type_.name]
        if type_.name in doc.enums:
            return TType.I32
        if type_.name in doc.structs:
            return TType.STRUCT
        raise IdlError(f"unknown type {type_.name!r}")

    def spec_args(self, type_: TypeRef, doc: Document | None = None) -> Any:
        """The fourth element of a thrift_spec entry: how to read and write a value of ``type_``."""
        type_, doc = self.resolve(type_, doc)
        if type_.name == "string":
            return "UTF8"
        if type_.name == "binary":
            return "BINARY"
        if type_.name in ("list", "set"):
            element = type_.args[0]
            return (self.ttype(element, doc), self.spec_args(element, doc), False)
        if type_.name == "map":
            k, v = type_.args
            return (
                self.ttype(k, doc),
                self.spec_args(k, doc),
                self.ttype(v, doc),
                self.spec_args(v, doc),
                False,
            )
        if type_.name in doc.structs:
            return [self.struct_class(type_.name, doc), None]  # the spec is filled in once all are built
        return None

    def constant(self, value: Any, doc: Document | None = None) -> Any:
        doc = doc or self.doc
        if isinstance(value, list):
            return [self.constant(v, doc) for v in value]
        if isinstance(value, dict):
            return {self.constant(k, doc): self.constant(v, doc) for k, v in value.items()}
        if isinstance(value, _Name):
            name = value.name
            if name in ("true", "false"):
                return name == "true"
            if name in doc.consts:
                return self.constant(doc.consts[name][1], doc)
            enum, _, member = name.rpartition(".")
            if enum in doc.enums and member in doc.enums[enum]:
                return doc.enums[enum][member]
            raise IdlError(f"unknown constant {name!r}")
        return value

    def struct_class(self, name: str, doc: Document | None = None) -> type[Struct]:
        doc = doc or self.doc
        key = f"{id(doc)}:{name}"
        if key not in self.classes:
            definition = doc.structs[name]
            base = StructException if definition.kind == "exception" else Struct
            cls = cast("type[Struct]", type(name, (base,), {"__module__": __name__}))
            self.classes[key] = cls
            _set_fields(
                cls, [Field(f.id, f.name, f.type, self.constant(f.default, doc)) for f in definition.fields]
            )
            cls.thrift_spec = self.spec(definition.fields, doc)
        return self.classes[key]

    def spec(self, fields: list[Field], doc: Document) -> tuple[Any, ...]:
        # Indexed by field id, as the runtime looks fields up; fields without a positive id are
        # not in it (the runtime's protocols would index from the end), as the compiler's output.
        size = max([f.id for f in fields if f.id >= 0], default=-1) + 1
        entries: list[Any] = [None] * size
        for f in fields:
            if f.id >= 0:
                entries[f.id] = (
                    f.id,
                    self.ttype(f.type, doc),
                    f.name,
                    self.spec_args(f.type, doc),
                    self.constant(f.default, doc),
                )
        return tuple(entries)

    def message_class(self, name: str, fields: list[Field], doc: Document) -> type[Struct]:
        cls = cast("type[Struct]", type(name, (Struct,), {"__module__": __name__}))
        _set_fields(cls, [Field(f.id, f.name, f.type, self.constant(f.default, doc)) for f in fields])
        cls.thrift_spec = self.spec(fields, doc)
        self.classes[f"{id(doc)}:{name}"] = cls
        return cls

    def fill_specs(self) -> None:
        def fill(args: Any) -> None:
            if isinstance(args, list):  # [class, None] of a struct
                args[1] = args[0].thrift_spec
            elif isinstance(args, tuple):
                for a in args:
                    fill(a)

        for cls in self.classes.values():
            for entry in cls.thrift_spec:
                if entry is not None:
                    fill(entry[3])

    def enum_class(self, name: str, values: dict[str, int]) -> type:
        attrs: dict[str, Any] = dict(values)
        attrs["_VALUES_TO_NAMES"] = {v: k for k, v in values.items()}
        attrs["_NAMES_TO_VALUES"] = dict(values)
        return type(name, (), attrs)

    def service(self, name: str, doc: Document) -> Module:
        definition = doc.services[name]
        functions: dict[str, FunctionDef] = {}
        if definition.extends:
            parent, parent_doc = self.resolve(TypeRef(definition.extends), doc)
            parent_service = self.service(parent.name, parent_doc)
            functions.update(parent_service.functions)
        module = Module(functions=functions)
        for f in definition.functions:
            functions[f.name] = f
            args = self.message_class(f"{f.name}_args", f.params, doc)
            result_fields = ([] if f.returns.name == "void" else [Field(0, "success", f.returns)]) + f.throws
            result = self.message_class(f"{f.name}_result", result_fields, doc)
            setattr(module, args.__name__, args)
            setattr(module, result.__name__, result)
        if definition.extends:
            for key, value in vars(parent_service).items():
                if key.endswith(("_args", "_result")) and not hasattr(module, key):
                    setattr(module, key, value)
        module.Client = _client_class(name, module, functions)
        module.Processor = _processor_class(name, module, functions)
        module.Iface = type("Iface", (), {})
        return module


def _client_class(service: str, module: Module, functions: dict[str, FunctionDef]) -> type:
    def call(self: Any, *args: Any, _function: FunctionDef, **kwargs: Any) -> Any:
        f = _function
        self._seqid += 1
        oprot = self._oprot
        oprot.writeMessageBegin(f.name, TMessageType.ONEWAY if f.oneway else TMessageType.CALL, self._seqid)
        getattr(module, f"{f.name}_args")(*args, **kwargs).write(oprot)
        oprot.writeMessageEnd()
        oprot.trans.flush()
        if f.oneway:
            return None
        iprot = self._iprot
        _, kind, _ = iprot.readMessageBegin()
        if kind == TMessageType.EXCEPTION:
            error = TApplicationException()
            error.read(iprot)
            iprot.readMessageEnd()
            raise error
        result = getattr(module, f"{f.name}_result")()
        result.read(iprot)
        iprot.readMessageEnd()
        if getattr(result, "success", None) is not None:
            return result.success
        for thrown in f.throws:
            if getattr(result, thrown.name) is not None:
                raise getattr(result, thrown.name)
        if f.returns.name == "void":
            return None
        raise TApplicationException(TApplicationException.MISSING_RESULT, f"{f.name} failed: unknown result")

    def __init__(self: Any, iprot: Any, oprot: Any = None) -> None:
        self._iprot = self._oprot = iprot
        if oprot is not None:
            self._oprot = oprot
        self._seqid = 0

    attrs: dict[str, Any] = {"__init__": __init__}
    for name, f in functions.items():
        method = functools.partialmethod(call, _function=f)
        attrs[name] = method
    return type("Client", (), attrs)


def _processor_class(service: str, module: Module, functions: dict[str, FunctionDef]) -> type:
    def process_call(self: Any, seqid: int, iprot: Any, oprot: Any, *, _function: FunctionDef) -> None:
        f = _function
        args = getattr(module, f"{f.name}_args")()
        args.read(iprot)
        iprot.readMessageEnd()
        result: Any = getattr(module, f"{f.name}_result")()
        kind = TMessageType.REPLY
        try:
            value = getattr(self._handler, f.name)(*(getattr(args, p.name) for p in f.params))
            if f.returns.name != "void":
                result.success = value
        except TTransport.TTransportException:
            raise
        except TApplicationException as e:
            log.exception("TApplication exception in handler")
            kind, result = TMessageType.EXCEPTION, e
        except Exception as e:
            declared = next((t for t in f.throws if isinstance(e, result.thrift_spec[t.id][3][0])), None)
            if declared is None:
                log.exception("Unexpected exception in handler")
                kind = TMessageType.EXCEPTION
                result = TApplicationException(TApplicationException.INTERNAL_ERROR, "Internal error")
            else:
                setattr(result, declared.name, e)
        if f.oneway:
            return
        oprot.writeMessageBegin(f.name, kind, seqid)
        result.write(oprot)
        oprot.writeMessageEnd()
        oprot.trans.flush()

    def __init__(self: Any, handler: Any) -> None:
        self._handler = handler
        self._processMap = {
            name: functools.partial(process_call, _function=f) for name, f in functions.items()
        }

    def process(self: Any, iprot: Any, oprot: Any) -> bool | None:
        name, _, seqid = iprot.readMessageBegin()
        if name not in self._processMap:
            iprot.skip(TType.STRUCT)
            iprot.readMessageEnd()
            error = TApplicationException(TApplicationException.UNKNOWN_METHOD, f"Unknown function {name}")
            oprot.writeMessageBegin(name, TMessageType.EXCEPTION, seqid)
            error.write(oprot)
            oprot.writeMessageEnd()
            oprot.trans.flush()
            return None
        self._processMap[name](self, seqid, iprot, oprot)
        return True

    return type("Processor", (), {"__init__": __init__, "process": process})


@dataclass
class Loaded:
    """What an IDL file defines: ``ttypes`` (enums, structs, exceptions), ``constants``, and services."""

    ttypes: Module
    constants: Module
    services: dict[str, Module]


def load(path: Path) -> Loaded:
    doc = parse(path)
    builder = _Builder(doc)
    ttypes = Module()
    for name, values in doc.enums.items():
        setattr(ttypes, name, builder.enum_class(name, values))
    for name in doc.structs:
        setattr(ttypes, name, builder.struct_class(name))
    constants = Module(**{name: builder.constant(value) for name, (_, value) in doc.consts.items()})
    services = {name: builder.service(name, doc) for name in doc.services}
    builder.fill_specs()
    return Loaded(ttypes, constants, services)
