#!/usr/bin/env python3
"""Reference oracle for the tool-calling (BFCL) domain.

Runs the Berkeley Function Calling Leaderboard's *own* evaluation code
(``bfcl_eval`` from an unpacked wheel, e.g. bfcl_eval-2026.3.23) over
recorded predictions, so that a reimplementation (the Rust port) can be
compared verdict-for-verdict against the original.

Only the Python standard library is needed.  BFCL's dependency list (torch,
vllm, openai, ...) is not installed; the modules that cannot be imported are
replaced in ``sys.modules`` by small stubs (see ``load_bfcl``).  Everything on
the evaluation path is BFCL's real code:

* ``eval_checker/eval_runner.py``: ``_evaluate_single_ast_entry`` (decode,
  format check, ``ast_checker``) and ``_evaluate_single_relevance_entry``
  (the irrelevance rule),
* ``eval_checker/ast_eval/ast_checker.py``: ``ast_checker`` and helpers,
* ``model_handler/utils.py``: ``default_decode_ast_prompting`` / ``ast_parse``
  (what every prompting handler's ``decode_ast`` calls),
* ``utils.py``: ``load_dataset_entry``, ``load_ground_truth_entry``,
  ``is_empty_output``, ``is_function_calling_format_output``.

Usage::

    python3 check.py --package /tmp/bfcl/w generate --out preds.jsonl
    python3 check.py --package /tmp/bfcl/w verdict --predictions preds.jsonl --out verdicts.jsonl
    python3 check.py --package /tmp/bfcl/w prompt --id simple_python_0
    python3 check.py --package /tmp/bfcl/w prompts --out prompts.jsonl

Prediction records (JSON lines)::

    {"id", "category", "variant", "output": [{"func": {"param": value}}]}
    {"id", "category", "variant", "raw": "<model text>"}

A Python tuple is written as {"__tuple__": [items]} and decoded back before
checking.  Verdict records: {"id", "category", "variant", "valid",
"error_type"} in input order; a raw text that BFCL cannot decode gets
error_type "decode" (BFCL's own name: "ast_decoder:decoder_failed").
"""

import argparse
import atexit
import copy
import decimal
import itertools
import json
import os
import shutil
import sys
import tempfile
import time
import types
import unicodedata
from collections import Counter, OrderedDict, defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reader_classes  # noqa: E402  (beside this file: the reply classes of issue #69)

AST_CATEGORIES = [
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
]
IRRELEVANCE_CATEGORIES = ["irrelevance", "live_irrelevance"]
ALL_CATEGORIES = AST_CATEGORIES + IRRELEVANCE_CATEGORIES

# Any name works: the stubbed MODEL_CONFIG_MAPPING answers underscore_to_dot=False
# for every model, which is what BFCL's prompting (non-FC) configs use.
MODEL_NAME = "bfcl-check-prompting"

TUPLE_KEY = "__tuple__"


# --------------------------------------------------------------------------
# Loading BFCL
# --------------------------------------------------------------------------


class _NoLock:
    """filelock.FileLock stand-in: BFCL only locks its own result files."""

    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    acquire = release = lambda self, *a, **k: None


class _ModelConfig:
    underscore_to_dot = False
    is_fc_model = False

    def __init__(self, name):
        self.model_name = name


class _ModelConfigMapping(dict):
    def __missing__(self, key):
        return _ModelConfig(key)


def _identity_decorator(*args, **kwargs):
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda func: func


class _Condition:
    def __init__(self, *args, **kwargs):
        pass

    def __or__(self, other):
        return self

    __ror__ = __or__


def _missing(name):
    def fail(*args, **kwargs):
        raise RuntimeError(f"{name} is stubbed by check.py and is not available")

    return fail


STUBBED = []  # (module, why) for the report


def _stub(name, why, **attrs):
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    module.__check_py_stub__ = True
    sys.modules[name] = module
    STUBBED.append((name, why))
    return module


def _stub_if_missing(name, why, **attrs):
    try:
        __import__(name)
    except Exception:
        _stub(name, why, **attrs)


def load_bfcl(package_dir):
    """Import BFCL's evaluation code from an unpacked wheel directory."""
    package_dir = os.path.abspath(package_dir)
    if not os.path.isfile(os.path.join(package_dir, "bfcl_eval", "__init__.py")):
        sys.exit(f"check.py: no bfcl_eval package under {package_dir}")

    # constants/eval_config.py creates result/, score/ and .file_locks/ under
    # BFCL_PROJECT_ROOT at import time: point it at a throw-away directory.
    project_root = tempfile.mkdtemp(prefix="bfcl_check_root_")
    atexit.register(shutil.rmtree, project_root, True)
    os.environ["BFCL_PROJECT_ROOT"] = project_root
    sys.path.insert(0, package_dir)

    # 1. The model registry imports every model handler (openai, anthropic,
    #    vllm, ...).  The AST checker only reads
    #    MODEL_CONFIG_MAPPING[name].underscore_to_dot (False for prompting models).
    _stub(
        "bfcl_eval.constants.model_config",
        "imports every model handler (openai, anthropic, torch, vllm, ...); the checker only "
        "reads MODEL_CONFIG_MAPPING[model].underscore_to_dot, stubbed as False for any name",
        MODEL_CONFIG_MAPPING=_ModelConfigMapping(),
    )
    # 2. Third-party packages that BFCL imports at module level but that are
    #    not used on the single-turn evaluation path.
    _stub_if_missing(
        "filelock",
        "bfcl_eval/utils.py locks its data/result files; no-op lock",
        FileLock=_NoLock,
    )
    _stub_if_missing(
        "tenacity",
        "model_handler/utils.py: API retry decorators only",
        retry=_identity_decorator,
        retry_if_exception_message=_Condition,
        retry_if_exception_type=_Condition,
        wait_random_exponential=_Condition,
    )
    _stub_if_missing(
        "overrides",
        "model_handler/base_handler.py: @final decorator only",
        final=_identity_decorator,
        override=_identity_decorator,
    )
    _stub_if_missing(
        "dotenv", "eval_runner.py main(): load_dotenv only", load_dotenv=lambda *a, **k: False
    )
    _stub_if_missing("tqdm", "eval_runner.py runner(): progress bar only", tqdm=lambda it=None, *a, **k: it)
    _stub_if_missing("numpy", "eval_runner_helper.py: score tables only")
    _stub_if_missing("pandas", "eval_runner_helper.py: score tables only")
    # 3. The Java / JavaScript parsers need tree_sitter grammars at import
    #    time; they are only used for the Java/JS return formats.
    for mod, func in (
        ("java_parser", "parse_java_function_call"),
        ("js_parser", "parse_javascript_function_call"),
    ):
        full = f"bfcl_eval.model_handler.parser.{mod}"
        try:
            __import__(full)
        except Exception:
            sys.modules.pop(full, None)
            _stub(
                full,
                "needs tree_sitter + grammar packages at import; only used for Java/JS output",
                **{func: _missing(func)},
            )

    from bfcl_eval import utils as bfcl_utils
    from bfcl_eval.constants import default_prompts
    from bfcl_eval.constants.enums import Language, ReturnFormat
    from bfcl_eval.eval_checker import eval_runner
    from bfcl_eval.eval_checker.ast_eval import ast_checker
    from bfcl_eval.model_handler import utils as handler_utils

    return types.SimpleNamespace(
        package_dir=package_dir,
        utils=bfcl_utils,
        prompts=default_prompts,
        Language=Language,
        ReturnFormat=ReturnFormat,
        eval_runner=eval_runner,
        ast=ast_checker,
        handler_utils=handler_utils,
    )


class PromptingHandler:
    """What BaseOSSHandler.decode_ast (and every prompting API handler) does."""

    def __init__(self, bfcl):
        self._decode = bfcl.handler_utils.default_decode_ast_prompting

    def decode_ast(self, result, language, has_tool_call_tag):
        return self._decode(result, language, has_tool_call_tag)


class DecodedHandler:
    """For records that already hold the decoded `[{func: {param: value}}]`."""

    def decode_ast(self, result, language, has_tool_call_tag):
        return result


# --------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------


def load_tasks(bfcl, categories):
    """{category: [(prompt_entry, ground_truth or None)]} exactly as eval_runner loads them."""
    tasks = OrderedDict()
    for category in categories:
        prompts = bfcl.utils.load_dataset_entry(
            category, include_prereq=False, include_language_specific_hint=False
        )
        if category in IRRELEVANCE_CATEGORIES:
            tasks[category] = [(p, None) for p in prompts]
        else:
            answers = bfcl.utils.load_ground_truth_entry(category)
            assert len(prompts) == len(answers), category
            tasks[category] = [(p, a["ground_truth"]) for p, a in zip(prompts, answers)]
    return tasks


def encode_value(value):
    if isinstance(value, tuple):
        return {TUPLE_KEY: [encode_value(v) for v in value]}
    if isinstance(value, list):
        return [encode_value(v) for v in value]
    if isinstance(value, dict):
        return {k: encode_value(v) for k, v in value.items()}
    return value


def decode_value(value):
    if isinstance(value, dict):
        if len(value) == 1 and TUPLE_KEY in value and isinstance(value[TUPLE_KEY], list):
            return tuple(decode_value(v) for v in value[TUPLE_KEY])
        return {k: decode_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode_value(v) for v in value]
    return value


# --------------------------------------------------------------------------
# Writing Python call text (for raw-text records)
# --------------------------------------------------------------------------


def py_float_sci(value):
    """Exact scientific-notation spelling of a float (e.g. 9.81 -> 9.81e+0)."""
    text = repr(value)
    if "e" in text or "inf" in text or "nan" in text:
        return text
    return "{:e}".format(decimal.Decimal(text))


def py_literal(value, quote="'", sci=False, plus=False):
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return ("+" + str(value)) if (plus and value > 0) else str(value)
    if isinstance(value, float):
        return py_float_sci(value) if sci else repr(value)
    if isinstance(value, str):
        if quote == '"':
            return json.dumps(value, ensure_ascii=False)
        return repr(value)
    rec = lambda v: py_literal(v, quote, sci, plus)
    if isinstance(value, list):
        return "[" + ", ".join(rec(v) for v in value) + "]"
    if isinstance(value, tuple):
        if len(value) == 1:
            return "(" + rec(value[0]) + ",)"
        return "(" + ", ".join(rec(v) for v in value) + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(rec(k) + ": " + rec(v) for k, v in value.items()) + "}"
    raise TypeError(type(value))


def py_call(call, quote="'", sci=False, plus=False, sep=", ", eq="="):
    (name, params), = call.items()
    args = sep.join(f"{k}{eq}{py_literal(v, quote, sci, plus)}" for k, v in params.items())
    return f"{name}({args})"


def py_calls(output, **kw):
    return "[" + ", ".join(py_call(c, **kw) for c in output) + "]"


# --------------------------------------------------------------------------
# Generation
# --------------------------------------------------------------------------


class Param:
    """One ground-truth parameter of one ground-truth call."""

    def __init__(self, bfcl, call_index, func_name, func_doc, name, possible):
        self.call_index = call_index
        self.func_name = func_name
        self.name = name
        self.possible = possible
        props = func_doc["parameters"]["properties"] if func_doc else {}
        self.doc = props.get(name)
        self.required = bool(func_doc) and name in func_doc["parameters"].get("required", [])
        self.type = self.doc["type"] if self.doc else None
        self.item_type = (self.doc.get("items") or {}).get("type") if self.doc else None
        self.optional = "" in possible
        self.nonempty = [v for v in possible if v != ""]
        expected = bfcl.ast.PYTHON_TYPE_MAPPING.get(self.type)
        answer_type = bfcl.ast.get_possible_answer_type(possible)
        # BFCL treats a ground truth whose type differs from the documented
        # type as a variable name (exact comparison, no special handling).
        self.variable = answer_type is not None and answer_type != expected
        # What the "right" prediction gives: the first possible value; a
        # parameter whose first possible value is "" (optional) is left out,
        # unless the function doc requires it (BFCL checks `required` first),
        # then the first non-empty value is used, or "" itself when the ground
        # truth only holds "" (string_checker accepts "" == "").
        self.present, self.first = False, ""
        if not possible:
            pass  # no possible value at all: nothing can match
        elif self.doc is None:
            if not self.optional:
                self.present, self.first = True, possible[0]
        elif possible[0] != "":
            self.present, self.first = True, possible[0]
        elif self.required:
            if self.nonempty:
                self.present, self.first = True, self.nonempty[0]
            elif self.type in ("string", "any"):
                self.present, self.first = True, ""
            elif self.type in ("array", "tuple"):
                # list_checker turns the "" marker into [] before comparing
                self.present, self.first = True, []

    def normal(self, ptype, value_type=None):
        ok = self.doc is not None and self.present and not self.variable and self.type == ptype
        if ok and value_type is not None:
            ok = type(self.first) is value_type
        return ok


def ground_truth_quirks(functions, ground_truth):
    """Why no prediction can pass BFCL's checker for this task (empty when solvable)."""
    docs = {f["name"]: f for f in functions}
    quirks = []
    for call in ground_truth:
        (fname, pmap), = call.items()
        doc = docs.get(fname)
        if doc is None:
            quirks.append(f"ground-truth function {fname} is not in the function docs")
            continue
        props = doc["parameters"]["properties"]
        required = doc["parameters"].get("required", [])
        for pname, possible in pmap.items():
            if pname not in props and "" not in possible:
                quirks.append(f"{fname}: ground-truth parameter {pname!r} is not in the function doc (and not optional)")
            elif not possible:
                quirks.append(f"{fname}: parameter {pname!r} has an empty list of possible values")
            elif pname in props and not [v for v in possible if v != ""] and pname in required and props[pname]["type"] not in ("string", "any", "array", "tuple"):
                quirks.append(f"{fname}: required parameter {pname!r} has only \"\" as possible value")
        for pname in required:
            if pname not in pmap:
                quirks.append(f"{fname}: required parameter {pname!r} is missing from the ground truth")
    return quirks


def right_value(param_doc, value):
    """The first possible value, turning BFCL's nested possible-answer dicts into values."""
    ptype = param_doc["type"] if param_doc else None
    if ptype == "dict" and isinstance(value, dict):
        return right_dict(value)
    if ptype == "array" and isinstance(value, list):
        item_type = (param_doc.get("items") or {}).get("type")
        if item_type == "dict":
            return [right_dict(d) if isinstance(d, dict) else copy.deepcopy(d) for d in value]
    return copy.deepcopy(value)


def right_dict(possible_dict):
    out = {}
    for key, options in possible_dict.items():
        if isinstance(options, list):
            if options and options[0] != "":
                out[key] = copy.deepcopy(options[0])
        else:
            out[key] = copy.deepcopy(options)
    return out


class TaskGen:
    def __init__(self, bfcl, category, prompt, ground_truth):
        self.bfcl = bfcl
        self.category = category
        self.id = prompt["id"]
        self.functions = prompt["function"]
        self.docs = {f["name"]: f for f in self.functions}
        self.gt = ground_truth
        self.params = []
        for ci, call in enumerate(ground_truth):
            (fname, pmap), = call.items()
            doc = self.docs.get(fname)
            for pname, possible in pmap.items():
                self.params.append(Param(bfcl, ci, fname, doc, pname, possible))
        self.right = []
        for ci, call in enumerate(ground_truth):
            (fname, pmap), = call.items()
            args = {}
            for p in self.params:
                if p.call_index == ci and p.present:
                    args[p.name] = right_value(p.doc, p.first)
            self.right.append({fname: args})
        self.records = []

    # -- helpers ---------------------------------------------------------
    def std(self, s):
        return self.bfcl.ast.standardize_string(s)

    def emit(self, variant, output=None, raw=None):
        rec = OrderedDict(id=self.id, category=self.category, variant=variant)
        if raw is not None:
            rec["raw"] = raw
        else:
            rec["output"] = encode_value(output)
        self.records.append(rec)

    def find(self, pred):
        for p in self.params:
            if pred(p):
                return p
        return None

    def with_value(self, param, value, output=None):
        out = copy.deepcopy(self.right if output is None else output)
        (fname, args), = out[param.call_index].items()
        args[param.name] = value
        return out

    def without(self, param):
        out = copy.deepcopy(self.right)
        (fname, args), = out[param.call_index].items()
        args.pop(param.name, None)
        return out

    def standardized_variant(self, s):
        """A different spelling that standardize_string maps to the same string."""
        candidates = [
            s.upper().replace(" ", "-").replace("'", '"') + ".",
            s.upper() + ".",
            s + ".",
            s.upper(),
        ]
        for c in candidates:
            if c != s and self.std(c) == self.std(s):
                return c
        return None

    def alt_value(self, p):
        """(present, value) of an allowed alternative for parameter p."""
        if p.doc is None:
            return (p.present, right_value(p.doc, p.first)) if p.present else (False, None)
        if not p.present:
            if p.nonempty:
                return True, right_value(p.doc, p.nonempty[0])
            return False, None
        if len(p.nonempty) >= 2:
            return True, right_value(p.doc, p.nonempty[1])
        if p.optional and not p.required:
            return False, None
        if not p.variable:
            if p.type in ("string", "any") and isinstance(p.first, str):
                v = self.standardized_variant(p.first)
                if v is not None:
                    return True, v
            if p.type == "float" and type(p.first) is float and p.first.is_integer():
                return True, int(p.first)
            if p.type == "tuple" and isinstance(p.first, list):
                return True, tuple(p.first)
            if p.type == "array" and isinstance(p.first, list) and p.item_type == "string":
                alt = []
                for item in p.first:
                    v = self.standardized_variant(item) if isinstance(item, str) else None
                    alt.append(item if v is None else v)
                return True, alt
        return True, right_value(p.doc, p.first)

    def wrong_scalar(self, p, candidates):
        for c in candidates:
            if c not in p.possible:
                return c
        return None

    def list_allowed(self, value, p):
        """Does `value` equal (after BFCL's string standardization) one allowed list?"""
        std = lambda lst: [self.std(x) if type(x) == str else x for x in lst]
        return any(isinstance(a, list) and std(list(value)) == std(a) for a in p.possible)

    # -- the variants ----------------------------------------------------
    def generate_ast(self):
        right = self.right
        parallel = "parallel" in self.category
        self.emit("right", right)

        alt = []
        for call_index, call in enumerate(self.gt):
            (fname, pmap), = call.items()
            args = {}
            for p in self.params:
                if p.call_index != call_index:
                    continue
                present, value = self.alt_value(p)
                if present:
                    args[p.name] = value
            alt.append({fname: args})
        self.emit("right_alt", alt)

        # ---- call-level -------------------------------------------------
        if parallel and len(right) >= 2:
            self.parallel_orders(right, alt)
            self.emit("parallel_dropped", right[:-1])
            dup = copy.deepcopy(right)
            dup[-1] = copy.deepcopy(dup[0])
            if dup[-1] != right[-1]:
                # allowed only if the last ground-truth call also accepts the first
                # call's arguments (e.g. strings equal up to case: "AA" vs "aa")
                allowed = self.match_matrix(right)[-1][0]
                self.emit("parallel_duplicated_allowed" if allowed else "parallel_duplicated", dup)
        self.emit("extra_call", right + [copy.deepcopy(right[0])])
        self.emit("no_call", [])
        first_name = next(iter(right[0]))
        renamed = copy.deepcopy(right)
        renamed[0] = {first_name + "_wrong": renamed[0][first_name]}
        self.emit("wrong_func_name", renamed)
        if "." in first_name:
            renamed = copy.deepcopy(right)
            renamed[0] = {first_name.replace(".", "_"): renamed[0][first_name]}
            self.emit("wrong_func_dotted_as_underscore", renamed)
        others = [f["name"] for f in self.functions if f["name"] not in {next(iter(c)) for c in self.gt}]
        if others:
            renamed = copy.deepcopy(right)
            renamed[0] = {others[0]: renamed[0][first_name]}
            self.emit("wrong_func_other_listed", renamed)

        # ---- parameter presence -----------------------------------------
        p = self.find(lambda p: p.required and p.present)
        if p:
            self.emit("missing_required", self.without(p))
        p = self.find(lambda p: p.doc is not None and not p.required and p.present and not p.optional)
        if p:
            self.emit("missing_optional", self.without(p))
        p = self.find(lambda p: p.present and p.optional and not p.required)
        if p:
            self.emit("optional_omitted", self.without(p))
        p = self.find(lambda p: not p.present and p.nonempty and p.doc is not None)
        if p:
            self.emit("optional_included", self.with_value(p, right_value(p.doc, p.nonempty[0])))
        out = copy.deepcopy(right)
        next(iter(out[0].values()))["zz_unexpected_param"] = 1
        self.emit("unexpected_param", out)
        call0 = next(iter(self.gt[0].values()))
        doc0 = self.docs.get(first_name)
        if doc0:
            extra = [k for k in doc0["parameters"]["properties"] if k not in call0]
            if extra:
                out = copy.deepcopy(right)
                next(iter(out[0].values()))[extra[0]] = "x"
                self.emit("unexpected_param_not_in_ground_truth", out)

        # ---- types --------------------------------------------------------
        p = self.find(lambda p: p.normal("integer", int))
        if p:
            self.emit("int_as_str", self.with_value(p, str(p.first)))
            self.emit("int_as_float", self.with_value(p, float(p.first)))
            self.emit("int_as_bool", self.with_value(p, bool(p.first)))
        p = self.find(lambda p: p.normal("integer", int) and p.first in (0, 1))
        if p:
            self.emit("int_01_as_bool", self.with_value(p, bool(p.first)))
        p = self.find(lambda p: p.normal("float", float) and p.first.is_integer())
        if p:
            self.emit("float_as_int", self.with_value(p, int(p.first)))
        p = self.find(lambda p: p.normal("float", float))
        if p:
            self.emit("float_as_str", self.with_value(p, str(p.first)))
            self.emit("float_as_bool", self.with_value(p, True))
        p = self.find(lambda p: p.normal("float", float) and p.first == 0.0)
        if p:
            self.emit("float_negative_zero", self.with_value(p, -0.0))
        p = self.find(lambda p: p.normal("boolean", bool))
        if p:
            self.emit("bool_as_int", self.with_value(p, int(p.first)))
            self.emit("bool_as_str", self.with_value(p, str(p.first)))
        p = self.find(lambda p: p.normal("string", str))
        if p:
            self.emit("str_as_int", self.with_value(p, 1))
            self.emit("str_as_none", self.with_value(p, None))
            self.emit("str_as_list", self.with_value(p, [p.first]))
        p = self.find(lambda p: p.normal("array", list))
        if p:
            self.emit("list_as_tuple", self.with_value(p, tuple(right_value(p.doc, p.first))))
            self.emit("list_as_str", self.with_value(p, str(p.first)))
        p = self.find(lambda p: p.normal("tuple", list))
        if p:
            self.emit("tuple_as_tuple", self.with_value(p, tuple(p.first)))
            self.emit("tuple_as_str", self.with_value(p, str(p.first)))
        p = self.find(lambda p: p.normal("dict", dict))
        if p:
            self.emit("dict_as_str", self.with_value(p, json.dumps(right_value(p.doc, p.first))))
            self.emit("dict_as_list", self.with_value(p, [right_value(p.doc, p.first)]))
        p = self.find(
            lambda p: p.normal("array", list) and p.item_type == "string" and p.first
            and all(type(x) is str for x in p.first)
        )
        if p:
            self.emit("list_item_str_as_int", self.with_value(p, [7] + p.first[1:]))
        p = self.find(
            lambda p: p.normal("array", list) and p.item_type == "integer" and p.first
            and all(type(x) is int for x in p.first)
        )
        if p:
            self.emit("list_item_int_as_str", self.with_value(p, [str(p.first[0])] + p.first[1:]))
            name = "list_int_items_as_float" + ("_optional" if p.optional else "")
            self.emit(name, self.with_value(p, [float(x) for x in p.first]))
        p = self.find(
            lambda p: p.normal("array", list)
            and p.item_type == "float"
            and p.first
            and all(type(x) is float and x.is_integer() for x in p.first)
        )
        if p:
            name = "list_float_items_as_int" + ("_optional" if p.optional else "")
            self.emit(name, self.with_value(p, [int(x) for x in p.first]))
        p = self.find(
            lambda p: p.normal("array", list)
            and p.item_type == "array"
            and any(isinstance(x, list) and any(type(y) is int for y in x) for x in p.first)
        )
        if p:
            nested = [[float(y) if type(y) is int else y for y in x] if isinstance(x, list) else x for x in p.first]
            self.emit("nested_list_int_as_float", self.with_value(p, nested))

        # ---- ground truth that BFCL treats as a variable name ------------------
        # (its type differs from the documented type: exact `in` comparison,
        # no string standardization, no dict/list special handling)
        p = self.find(lambda p: p.doc is not None and p.present and p.variable and not isinstance(p.first, str))
        if p:
            self.emit("variable_given_as_string", self.with_value(p, str(p.first)))
        p = self.find(
            lambda p: p.doc is not None and p.present and p.variable
            and isinstance(p.first, str) and p.first.upper() != p.first
        )
        if p:
            self.emit("variable_case_changed", self.with_value(p, p.first.upper()))

        # ---- values -----------------------------------------------------------
        p = self.find(lambda p: p.normal("integer", int))
        if p:
            self.emit("wrong_int", self.with_value(p, self.wrong_scalar(p, [p.first + k for k in range(1, 50)])))
        p = self.find(lambda p: p.normal("float", float))
        if p:
            self.emit("wrong_float", self.with_value(p, self.wrong_scalar(p, [p.first + 0.5 * k for k in range(1, 50)])))
        p = self.find(lambda p: p.normal("boolean", bool))
        if p and (not p.first) not in p.possible:
            self.emit("wrong_bool", self.with_value(p, not p.first))
        p = self.find(lambda p: p.normal("string", str))
        if p:
            self.emit("wrong_string", self.with_value(p, p.first + " zz"))
            v = self.standardized_variant(p.first)
            if v is not None:
                self.emit("string_standardized", self.with_value(p, v))
        p = self.find(lambda p: p.normal("string", str) and any(ord(c) > 127 for c in p.first))
        if p:
            upper = p.first.upper()
            if upper != p.first and self.std(upper) == self.std(p.first):
                self.emit("string_unicode_upper", self.with_value(p, upper))
            nfd = unicodedata.normalize("NFD", p.first)
            if nfd != p.first:
                self.emit("string_unicode_nfd", self.with_value(p, nfd))
        p = self.find(lambda p: p.normal("string", str) and p.first != p.first.strip())
        if p:
            name = "string_stripped" if self.std(p.first.strip()) == self.std(p.first) else "string_stripped_wrong"
            self.emit(name, self.with_value(p, p.first.strip()))
        p = self.find(lambda p: p.normal("array", list) and p.item_type != "dict" and p.first)
        if p:
            value = right_value(p.doc, p.first)
            changed = copy.deepcopy(value)
            head = changed[0]
            if isinstance(head, bool):
                changed[0] = not head
            elif isinstance(head, (int, float)):
                changed[0] = head + 1
            elif isinstance(head, str):
                changed[0] = head + " zz"
            else:
                changed[0] = "zz"
            self.emit("wrong_list_element", self.with_value(p, changed))
            self.emit("list_extra_element", self.with_value(p, value + [copy.deepcopy(value[-1])]))
            if len(value) >= 2 or not p.optional:
                self.emit("list_missing_element", self.with_value(p, value[:-1]))
            rev = list(reversed(value))
            if rev != value:
                name = "list_reordered_allowed" if self.list_allowed(rev, p) else "wrong_list_order"
                self.emit(name, self.with_value(p, rev))
        p = self.find(lambda p: p.normal("array", list) and p.optional and p.first)
        if p:
            # list_checker standardizes the "" marker to [], so [] is accepted
            self.emit("list_empty_for_optional", self.with_value(p, []))
        p = self.find(lambda p: p.normal("array", list) and p.item_type == "string" and p.first)
        if p:
            v = self.standardized_variant(p.first[0])
            if v is not None:
                self.emit("list_string_standardized", self.with_value(p, [v] + p.first[1:]))
        p = self.find(lambda p: p.normal("dict", dict) and right_dict(p.first))
        if p:
            value = right_value(p.doc, p.first)
            key = next(iter(value))
            wrong = copy.deepcopy(value)
            v = wrong[key]
            wrong[key] = (v + " zz") if isinstance(v, str) else ("zz" if not isinstance(v, (int, float)) or isinstance(v, bool) else v + 1)
            self.emit("wrong_dict_value", self.with_value(p, wrong))
            extra = copy.deepcopy(value)
            extra["zz_extra_key"] = "x"
            self.emit("dict_extra_key", self.with_value(p, extra))
            must = [k for k, opts in p.first.items() if isinstance(opts, list) and "" not in opts and k in value]
            if must:
                missing = copy.deepcopy(value)
                del missing[must[0]]
                self.emit("dict_missing_key", self.with_value(p, missing))
            numeric = [k for k, v in value.items() if type(v) is int]
            if numeric:
                eq = copy.deepcopy(value)
                eq[numeric[0]] = float(eq[numeric[0]])
                self.emit("dict_value_int_as_float", self.with_value(p, eq))
            boolean = [k for k, v in value.items() if type(v) is bool]
            if boolean:
                eq = copy.deepcopy(value)
                eq[boolean[0]] = int(eq[boolean[0]])
                self.emit("dict_value_bool_as_int", self.with_value(p, eq))
        p = self.find(lambda p: p.normal("array", list) and p.item_type == "dict" and p.first)
        if p:
            value = right_value(p.doc, p.first)
            if value and isinstance(value[0], dict) and value[0]:
                wrong = copy.deepcopy(value)
                key = next(iter(wrong[0]))
                v = wrong[0][key]
                wrong[0][key] = (v + " zz") if isinstance(v, str) else "zz"
                self.emit("wrong_list_dict_value", self.with_value(p, wrong))
            self.emit("list_dict_missing_dict", self.with_value(p, value[:-1]))
            self.emit("list_dict_extra_dict", self.with_value(p, value + [copy.deepcopy(value[-1])]))
            if len(value) >= 2 and value[0] != value[-1]:
                self.emit("list_dict_reordered", self.with_value(p, list(reversed(value))))

        # ---- not in `[{func: {param: value}}]` form (is_function_calling_format_output)
        (fname, args), = right[0].items()
        self.emit("output_two_functions_in_one_item", [{fname: args, fname + "_2": args}] + right[1:])
        self.emit("output_args_not_dict", [{fname: list(args.items())}] + right[1:])

        # ---- raw text (prompting model output) -----------------------------------
        text = py_calls(right)
        self.emit("raw_right", raw=text)
        self.emit("raw_right_alt", raw=py_calls(alt))
        self.emit("raw_right_double_quotes", raw=py_calls(right, quote='"'))
        self.emit(
            "raw_whitespace",
            raw="\n  [ " + ",\n   ".join(py_call(c, sep=" ,\n\t", eq=" = ") for c in right) + " ]  \n",
        )
        self.emit("raw_no_brackets", raw=", ".join(py_call(c) for c in right))
        self.emit("raw_code_fence", raw="```\n" + text + "\n```")
        self.emit("raw_code_fence_python", raw="```python\n" + text + "\n```")
        self.emit("raw_trailing_prose", raw=text + "\nI have called the function for you.")
        self.emit("raw_leading_prose", raw="Sure, here is the call:\n" + text)
        self.emit("raw_json", raw=json.dumps(encode_value(right)))
        self.emit(
            "raw_json_bfcl_format",
            raw=json.dumps([{"function": next(iter(c)), "parameters": encode_value(next(iter(c.values())))} for c in right]),
        )
        self.emit("raw_toolcall_tag", raw="<TOOLCALL>" + text + "</TOOLCALL>")
        self.emit("raw_quoted", raw="'" + text + "'")
        self.emit("raw_crlf", raw=text + "\r\n")
        self.emit("raw_tab_indent", raw="\t" + text)
        self.emit("raw_trailing_commas", raw=text[:-1] + ",]")
        p = self.find(lambda p: p.call_index == 0 and p.normal("string", str))
        if p:
            # ast.parse keeps both keywords; the decoder's dict keeps the last
            (fname, args), = right[0].items()
            first_call = f"{fname}({p.name}='zz wrong', " + py_call(right[0])[len(fname) + 1 :]
            self.emit("raw_duplicate_keyword", raw="[" + ", ".join([first_call] + [py_call(c) for c in right[1:]]) + "]")
        self.emit("raw_empty", raw="")
        self.emit("raw_empty_list", raw="[]")
        if any(isinstance(v, float) for c in right for v in _leaves(c)):
            self.emit("raw_scientific", raw=py_calls(right, sci=True))
        if any(type(v) is int and v > 0 for c in right for v in _leaves(c)):
            self.emit("raw_unary_plus", raw=py_calls(right, plus=True))
        p = self.find(lambda p: p.normal("integer", int) and p.first > 1)
        if p:
            text_binop = py_calls(self.with_value(p, "__BINOP__"))
            self.emit("raw_binop", raw=text_binop.replace("'__BINOP__'", f"{p.first - 1} + 1"))
        p = self.find(lambda p: p.normal("boolean", bool))
        if p:
            self.emit("raw_lowercase_bool", raw=text.replace(f"{p.name}={p.first!r}", f"{p.name}={str(p.first).lower()}", 1))
        if self.find(lambda p: p.call_index == 0 and p.present and (p.required or not p.optional)):
            (fname, args), = right[0].items()
            positional = f"{fname}(" + ", ".join(py_literal(v) for v in args.values()) + ")"
            self.emit("raw_positional_args", raw="[" + ", ".join([positional] + [py_call(c) for c in right[1:]]) + "]")
        if len(right) >= 2:
            self.emit("raw_newline_separated", raw="\n".join(py_call(c) for c in right))
        reader_classes.reader_variants(self, py_call, py_calls, py_literal)
        reader_classes.blank_variants(self)

    # -- BFCL's parallel matcher is greedy --------------------------------
    def match_matrix(self, outputs):
        """m[i][j]: does output j satisfy ground-truth call i (BFCL's simple_function_checker)?"""
        ast = self.bfcl.ast
        m = []
        for call in self.gt:
            desc = ast.find_description(self.functions, next(iter(call)))
            row = []
            for out in outputs:
                try:
                    ok = desc is not None and ast.simple_function_checker(
                        desc, out, call, self.bfcl.Language.PYTHON, MODEL_NAME
                    )["valid"]
                except Exception:
                    ok = False
                row.append(bool(ok))
            m.append(row)
        return m

    @staticmethod
    def greedy_matches(m, order):
        """parallel_function_checker_no_order: each ground-truth call, in order, takes
        the first still-unmatched output (in output order) that satisfies it."""
        used = set()
        for row in m:
            j = next((j for j in order if j not in used and row[j]), None)
            if j is None:
                return False
            used.add(j)
        return True

    @staticmethod
    def perfect_matching(m):
        n = len(m)
        owner = [-1] * n

        def augment(i, seen):
            for j in range(n):
                if m[i][j] and j not in seen:
                    seen.add(j)
                    if owner[j] < 0 or augment(owner[j], seen):
                        owner[j] = i
                        return True
            return False

        return all(augment(i, set()) for i in range(n))

    def parallel_orders(self, right, alt):
        n = len(right)
        m = self.match_matrix(right)
        rev = list(range(n))[::-1]
        if self.greedy_matches(m, rev):
            self.emit("parallel_reordered", [right[j] for j in rev])
        if n <= 5:
            orders = list(itertools.permutations(range(n)))
        else:
            orders = [tuple(range(k, n)) + tuple(range(k)) for k in range(n)] + [tuple(rev)]
        for outputs in (right, alt):
            m = self.match_matrix(outputs)
            if not self.perfect_matching(m):
                continue
            for order in orders:
                if not self.greedy_matches(m, order):
                    # every output is correct for some ground-truth call, yet
                    # BFCL's first-match search gets stuck: rejected
                    self.emit("parallel_greedy_trap", [outputs[j] for j in order])
                    return

    def generate_irrelevance(self):
        self.emit("irr_empty", raw="")
        self.emit("irr_empty_list", raw="[]")
        self.emit("irr_prose", raw="I'm sorry, but none of the provided functions can answer this question.")
        self.emit("irr_single_word", raw="None")
        f = self.functions[0] if self.functions else {"name": "f", "parameters": {"properties": {}}}
        name = f["name"]
        self.emit("irr_function_name_only", raw=name)
        props = f["parameters"].get("properties", {})
        required = f["parameters"].get("required", [])
        args = {}
        for pname in required or list(props)[:1]:
            ptype = props.get(pname, {}).get("type", "string")
            args[pname] = {"integer": 1, "float": 1.0, "boolean": True, "array": [], "dict": {}, "tuple": []}.get(ptype, "x")
        call = {name: args}
        self.emit("irr_call", raw=py_calls([call]))
        self.emit("irr_call_no_args", raw=f"{name}()")
        self.emit("irr_call_unlisted_function", raw="[no_such_function(x=1)]")
        self.emit("irr_call_code_fence", raw="```\n" + py_calls([call]) + "\n```")
        self.emit("irr_call_code_fence_python", raw="```python\n" + py_calls([call]) + "\n```")
        self.emit("irr_call_with_prose", raw="I will call a function.\n" + py_calls([call]))
        self.emit("irr_decoded_empty", output=[])
        self.emit("irr_decoded_call", output=[call])
        # is_empty_output() counts anything not in function-call format as "no call"
        self.emit("irr_decoded_bad_format", output=[{name: "x=1"}])
        reader_classes.blank_variants(self)


def _leaves(obj):
    if isinstance(obj, dict):
        for v in obj.values():
            yield from _leaves(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _leaves(v)
    else:
        yield obj


def cmd_generate(bfcl, args):
    tasks = load_tasks(bfcl, ALL_CATEGORIES)
    count = 0
    with open(args.out, "w", encoding="utf-8") as fh:
        for category, entries in tasks.items():
            for prompt, gt in entries:
                gen = TaskGen(bfcl, category, prompt, gt or [])
                if category in IRRELEVANCE_CATEGORIES:
                    gen.generate_irrelevance()
                else:
                    gen.generate_ast()
                for rec in gen.records:
                    fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
                    count += 1
    print(f"wrote {count} records to {args.out}", file=sys.stderr)


# --------------------------------------------------------------------------
# Verdicts
# --------------------------------------------------------------------------


def judge(bfcl, record, task, handlers):
    """(valid, error_type) for one record, via BFCL's own per-entry evaluators."""
    prompt, gt = task
    category = record["category"]
    if "raw" in record:
        handler, item = handlers["raw"], record["raw"]
    else:
        handler, item = handlers["decoded"], decode_value(record["output"])
    runner = bfcl.eval_runner
    if bfcl.utils.is_relevance_or_irrelevance(category):
        result = runner._evaluate_single_relevance_entry(
            handler, record["id"], item, prompt, MODEL_NAME, category
        )
    else:
        result = runner._evaluate_single_ast_entry(
            handler,
            record["id"],
            item,
            gt,
            prompt,
            MODEL_NAME,
            category,
            language=bfcl.Language.PYTHON,
            return_format=bfcl.ReturnFormat.PYTHON,
            has_tool_call_tag=False,
        )
    if result["valid"]:
        return True, None
    error_type = result.get("error_type")
    if error_type == "ast_decoder:decoder_failed":
        error_type = "decode"
    return False, error_type


# Expected validity per variant.  Only used to flag surprises in the summary;
# verdicts always come from BFCL.
EXPECTED_VALID = {
    "right", "right_alt", "parallel_reordered", "optional_omitted", "optional_included",
    "parallel_duplicated_allowed", "float_as_int", "float_negative_zero", "tuple_as_tuple", "nested_list_int_as_float",
    "list_int_items_as_float_optional", "list_float_items_as_int_optional",
    "list_empty_for_optional", "string_standardized", "string_unicode_upper",
    "string_stripped", "list_string_standardized", "list_reordered_allowed",
    "dict_value_int_as_float", "dict_value_bool_as_int",
    "raw_right", "raw_right_alt", "raw_right_double_quotes", "raw_whitespace",
    "raw_no_brackets", "raw_code_fence", "raw_scientific", "raw_binop",
    "irr_empty", "irr_empty_list", "irr_prose", "irr_single_word", "irr_function_name_only",
    "raw_trailing_commas", "raw_duplicate_keyword",
    "irr_call_code_fence_python", "irr_call_with_prose", "irr_decoded_empty", "irr_decoded_bad_format",
}


def cmd_verdict(bfcl, args):
    started = time.time()
    records = []
    with open(args.predictions, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                records.append(json.loads(line))
    tasks = {}
    for category, entries in load_tasks(bfcl, sorted({r["category"] for r in records})).items():
        for prompt, gt in entries:
            tasks[(category, prompt["id"])] = (prompt, gt)
    handlers = {"raw": PromptingHandler(bfcl), "decoded": DecodedHandler()}

    table = OrderedDict()
    errors = defaultdict(Counter)
    surprises = defaultdict(list)
    explained = OrderedDict()
    with open(args.out, "w", encoding="utf-8") as out:
        for rec in records:
            key = (rec["category"], rec["id"])
            if key not in tasks:
                sys.exit(f"check.py: unknown task {rec['category']}/{rec['id']}")
            try:
                valid, error_type = judge(bfcl, rec, tasks[key], handlers)
            except Exception as exc:  # BFCL itself would crash on this entry
                valid, error_type = False, f"checker_exception:{type(exc).__name__}"
            variant = rec.get("variant", "")
            out.write(
                json.dumps(
                    OrderedDict(
                        id=rec["id"], category=rec["category"], variant=variant,
                        valid=valid, error_type=error_type,
                    ),
                    ensure_ascii=False,
                )
                + "\n"
            )
            row = table.setdefault(variant, [0, 0])
            row[0 if valid else 1] += 1
            errors[variant][error_type or "-"] += 1
            expected = variant in EXPECTED_VALID
            if valid != expected:
                prompt, gt = tasks[key]
                quirks = ground_truth_quirks(prompt["function"], gt) if expected and gt else []
                if quirks:
                    explained.setdefault(rec["id"], (quirks, []))[1].append(variant)
                else:
                    surprises[variant].append(f"{rec['id']}:{error_type}")

    print_summary(table, errors, surprises, explained, len(records), time.time() - started)


def print_summary(table, errors, surprises, explained, total, seconds):
    err = sys.stderr
    width = max([len(v) for v in table] + [7])
    print(f"{'variant':<{width}} {'valid':>6} {'invalid':>7}  expect  surprises  error types", file=err)
    for variant, (ok, bad) in table.items():
        expect = "valid" if variant in EXPECTED_VALID else "invalid"
        types_ = ", ".join(f"{k}={v}" for k, v in errors[variant].most_common() if k != "-")
        print(f"{variant:<{width}} {ok:>6} {bad:>7}  {expect:<7} {len(surprises[variant]):>9}  {types_}", file=err)
    all_types = Counter()
    for c in errors.values():
        all_types.update(c)
    print("\nerror types seen:", file=err)
    for k, v in sorted(all_types.items()):
        if k != "-":
            print(f"  {k}: {v}", file=err)
    if explained:
        print("\nunsolvable tasks (ground-truth quirks; no prediction can pass):", file=err)
        for task_id, (quirks, variants) in explained.items():
            print(f"  {task_id}: {'; '.join(quirks)}  [{len(variants)} expected-valid variants invalid]", file=err)
    if any(surprises.values()):
        print("\nsurprises (verdict differs from the variant's expectation):", file=err)
        for variant, items in surprises.items():
            if items:
                shown = ", ".join(items[:12]) + (" ..." if len(items) > 12 else "")
                print(f"  {variant} ({len(items)}): {shown}", file=err)
    if STUBBED:
        print("\nstubbed modules: " + ", ".join(name for name, _ in STUBBED), file=err)
    print(f"\n{total} records in {seconds:.1f}s", file=err)


# --------------------------------------------------------------------------
# Prompts (what BFCL sends to a prompting model)
# --------------------------------------------------------------------------


def build_messages(bfcl, entry):
    """BFCL's prompting input for a single-turn entry (as loaded for generation)."""
    messages = copy.deepcopy(entry["question"][0])
    return bfcl.handler_utils.system_prompt_pre_processing_chat_model(
        messages, entry["function"], entry["id"]
    )


def cmd_prompt(bfcl, args):
    category = bfcl.utils.extract_test_category_from_id(args.id)
    for entry in bfcl.utils.load_dataset_entry(category, include_prereq=False):
        if entry["id"] == args.id:
            for m in build_messages(bfcl, entry):
                print(f"===== {m['role']} =====")
                print(m["content"])
            return
    sys.exit(f"check.py: no entry {args.id}")


def cmd_prompts(bfcl, args):
    count = 0
    with open(args.out, "w", encoding="utf-8") as fh:
        for category in ALL_CATEGORIES:
            for entry in bfcl.utils.load_dataset_entry(category, include_prereq=False):
                rec = OrderedDict(id=entry["id"], category=category, messages=build_messages(bfcl, entry))
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
                count += 1
    print(f"wrote {count} prompts to {args.out}", file=sys.stderr)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--package", required=True, help="directory holding the unpacked bfcl_eval package")
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="write recorded predictions (JSON lines)")
    g.add_argument("--out", required=True)
    v = sub.add_parser("verdict", help="judge predictions with BFCL's checker")
    v.add_argument("--predictions", required=True)
    v.add_argument("--out", required=True)
    p = sub.add_parser("prompt", help="print BFCL's prompting-model messages for one entry")
    p.add_argument("--id", required=True)
    ps = sub.add_parser("prompts", help="write BFCL's prompting-model messages for every entry")
    ps.add_argument("--out", required=True)
    args = parser.parse_args(argv)

    bfcl = load_bfcl(args.package)
    {"generate": cmd_generate, "verdict": cmd_verdict, "prompt": cmd_prompt, "prompts": cmd_prompts}[
        args.command
    ](bfcl, args)


if __name__ == "__main__":
    main()
