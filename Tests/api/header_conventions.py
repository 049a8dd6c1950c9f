"""The conventions written at the top of include/outlive.h, as checks over the
header's text: `violations(text)` lists every place a header breaks one. The
test runs it on the real header (no violation) and on small bad headers (each
caught), so that a check that cannot fail is noticed."""
import re

# Library-wide basics that name no noun (sqlite3_free, git_libgit2_version).
BASICS = {"outlive_free", "outlive_version", "outlive_version_number", "outlive_last_error"}
# Functions that call their callback only before they return: nothing is kept, nothing to release.
CALLS_DURING_THE_CALL = {"outlive_kv_update"}
CONSTRUCTOR_SUFFIXES = ("_new", "_copy", "_open", "_deserialize")
# Scalars a non-const pointer parameter points to when it is an output.
SCALARS = {"size_t", "bool", "double", "int32_t", "int64_t", "uint32_t", "uint64_t", "int"}


class Function:
    def __init__(self, name, returns, parameters, line, is_callback):
        self.name, self.returns, self.parameters, self.line, self.is_callback = name, returns, parameters, line, is_callback


class Parameter:
    def __init__(self, text):
        self.text = text
        clean = re.sub(r"/\*.*?\*/", "", text).strip()
        pointer = re.search(r"\(\s*\*\s*(\w+)\s*\)", clean)
        array = re.search(r"(\w+)\s*\[([^\]]*)\]\s*$", clean)
        if pointer:
            self.name, self.type, self.array = pointer.group(1), clean, None
        elif array:
            self.name, self.type, self.array = array.group(1), clean[:array.start()].strip(), array.group(2).strip()
        else:
            found = re.search(r"(\w+)\s*$", clean)
            self.name = found.group(1) if found and clean not in ("void",) else ""
            self.type = clean[:found.start()].strip() if found else clean
            self.array = None
        self.is_function = bool(pointer)

    @property
    def is_output(self):
        """A parameter the function writes: a non-const T**, a non-const pointer to a
        scalar or an enum, a non-const char buffer."""
        if self.is_function or not self.name:
            return False
        kind = self.type
        if self.array is not None:
            return not kind.startswith("const")
        if kind.count("*") >= 2:
            return not re.match(r"^const\b.*\*\s*const\s*\*", kind) and not kind.startswith("const char *const")
        if kind.endswith("*") and not kind.startswith("const"):
            base = kind.rstrip("*").strip()
            return base in SCALARS or base == "char" or base.endswith(("_kind", "_state", "_result"))
        return False


def _split_top_level(text):
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return [part.strip() for part in parts if part.strip()]


def _without_preprocessor(text):
    """Blanks #-lines (and their continuations), keeping line numbers."""
    lines, continued = text.split("\n"), False
    for index, line in enumerate(lines):
        if continued or line.lstrip().startswith("#"):
            continued = line.rstrip().endswith("\\")
            lines[index] = ""
    return "\n".join(lines)


def functions(text):
    code = _without_preprocessor(text)
    found = []
    for match in re.finditer(r"OUTLIVE_API\s+([^;{(]*?)\b(outlive_\w+)\s*\(((?:[^()]|\([^()]*\))*)\)\s*;", code):
        parameters = [Parameter(p) for p in _split_top_level(match.group(3))]
        found.append(Function(match.group(2), match.group(1).strip(), parameters,
                              code.count("\n", 0, match.start()) + 1, False))
    for match in re.finditer(r"typedef\s+([^;{()]*?)\(\s*\*\s*(outlive_\w+)\s*\)\s*\(((?:[^()]|\([^()]*\))*)\)\s*;", code):
        parameters = [Parameter(p) for p in _split_top_level(match.group(3))]
        found.append(Function(match.group(2), match.group(1).strip(), parameters,
                              code.count("\n", 0, match.start()) + 1, True))
    return found


def type_names(text):
    return set(re.findall(r"\}\s*(outlive_\w+)\s*;", text)) | set(re.findall(r"typedef\s+struct\s+\w+\s+(outlive_\w+)\s*;", text)) \
        | set(re.findall(r"typedef\s+[^;]*?\(\s*\*\s*(outlive_\w+)\s*\)", text))


def _nouns(text):
    nouns = set()
    for name in type_names(text):
        words = name[len("outlive_"):].split("_")
        for length in range(1, len(words) + 1):
            noun = "_".join(words[:length])
            nouns.update({noun, noun + "s"})
    return nouns


def _check_names(text, function, problems):
    if function.is_callback or function.name in BASICS:
        return
    if "_with_" in function.name:
        problems.append(f"line {function.line}: {function.name}: no `_with_...` variants (a nullable parameter instead)")
    rest = function.name[len("outlive_"):]
    nouns = _nouns(text)
    words = rest.split("_")
    if not any("_".join(words[:n]) in nouns and n < len(words) for n in range(1, len(words))):
        problems.append(f"line {function.line}: {function.name} is not outlive_<noun>_<verb> (no type names its noun)")


def _check_outputs(function, problems):
    seen_output = False
    for parameter in function.parameters:
        if parameter.is_output:
            seen_output = True
            if not parameter.name.startswith("out"):
                problems.append(f"line {function.line}: {function.name}: output parameter `{parameter.name}` is not named out...")
            if parameter.array is not None and re.fullmatch(r"\d+", parameter.array):
                problems.append(f"line {function.line}: {function.name}: `{parameter.name}[{parameter.array}]` has a literal size")
            if parameter.array is not None and re.fullmatch(r"out(_\w+)?_id", parameter.name) \
                    and parameter.name != "out_choice_id" and parameter.array != "OUTLIVE_ID_SIZE":
                problems.append(f"line {function.line}: {function.name}: id buffer `{parameter.name}` is not [OUTLIVE_ID_SIZE]")
        elif seen_output and not function.is_callback and parameter.name != "context":
            problems.append(f"line {function.line}: {function.name}: `{parameter.name}` comes after an output (outputs come last)")


def _check_context(function, problems):
    names = [p.name for p in function.parameters]
    if function.is_callback or "context" not in names or function.name in CALLS_DURING_THE_CALL:
        return
    index = names.index("context")
    following = function.parameters[index + 1] if index + 1 < len(function.parameters) else None
    if following is None or following.name != "release" or not following.is_function:
        problems.append(f"line {function.line}: {function.name} keeps a context but takes no `release` right after it")


def _check_constructor(function, problems):
    if function.is_callback or not function.name.endswith(CONSTRUCTOR_SUFFIXES):
        return
    last = function.parameters[-1] if function.parameters else None
    if function.returns != "outlive_status" or last is None or last.name != "out" or last.type.count("*") != 2:
        problems.append(f"line {function.line}: constructor {function.name} does not return a status and write `out`")


def _check_lists(text, all_functions, problems):
    names = {f.name for f in all_functions}
    for function in all_functions:
        if re.search(r"_(next|next_key|foreach|visit|iterate)$", function.name):
            problems.append(f"line {function.line}: {function.name}: iteration is by list snapshot, not one call per item")
        list_new = re.fullmatch(r"(outlive_\w+_list)_new", function.name)
        if not list_new:
            continue
        stem = list_new.group(1)
        for part in ("_count", "_free"):
            if stem + part not in names:
                problems.append(f"line {function.line}: {function.name} has no {stem + part}")
        tail = [p.name for p in function.parameters[-3:]]
        if tail != ["after", "limit", "out"]:
            problems.append(f"line {function.line}: {function.name} does not end with (after, limit, out)")
        if stem not in type_names(text):
            problems.append(f"line {function.line}: {function.name}: no opaque type {stem}")


def _check_structs(text, problems):
    code = _without_preprocessor(text)
    for match in re.finditer(r"typedef\s+struct\s+(outlive_\w+)\s*\{(.*?)\}\s*(outlive_\w+)\s*;", code, re.S):
        name, body = match.group(1), re.sub(r"/\*.*?\*/", "", match.group(2))
        fields = [f.strip() for f in body.split(";") if f.strip()]
        line = code.count("\n", 0, match.start()) + 1
        magic_first = fields and fields[0].startswith("uint64_t") and "magic" in fields[0]
        version_field = fields[1] if magic_first and len(fields) > 1 else (fields[0] if fields else "")
        if not re.fullmatch(r"uint32_t\s+version", version_field):
            problems.append(f"line {line}: struct {name} does not begin with `uint32_t version`")
        macro = name.upper()
        if f"#define {macro}_VERSION" not in text:
            problems.append(f"line {line}: struct {name} has no {macro}_VERSION")
        if not magic_first and f"#define {macro}_INIT" not in text:
            problems.append(f"line {line}: struct {name} has no {macro}_INIT")


def _check_enums(text, problems):
    code = _without_preprocessor(text)
    for match in re.finditer(r"\benum\b\s*(\w*)\s*\{(.*?)\}\s*(\w*)\s*;", code, re.S):
        tag, body, name = match.group(1), re.sub(r"/\*.*?\*/", "", match.group(2)), match.group(3)
        line = code.count("\n", 0, match.start()) + 1
        if not tag or tag != name:
            problems.append(f"line {line}: enum `{name or tag or '(anonymous)'}` is not `typedef enum outlive_x {{...}} outlive_x;`")
            continue
        if name == "outlive_status":
            continue
        prefix = "OUTLIVE_" + name[len("outlive_"):].split("_")[0].upper() + "_"
        for value in re.findall(r"\b(OUTLIVE_\w+)\b\s*(?:=|,|$)", body):
            if not value.startswith(prefix):
                problems.append(f"line {line}: {name} value {value} does not begin with {prefix}")


def _check_comments(text, all_functions, problems):
    """Every function is documented: by a comment that ends on the line before it
    or on one of its own lines, or — in a group of one-line declarations under one
    comment — by the comment of the group."""
    lines = text.split("\n")
    documented = {}
    for function in sorted((f for f in all_functions if not f.is_callback), key=lambda f: f.line):
        index = function.line - 1
        end = index
        while end < len(lines) and ";" not in re.sub(r"/\*.*?\*/", "", lines[end]):
            end += 1
        # A parameter's /* nullable */ is an annotation, not the function's documentation.
        own = "/*" in re.sub(r"/\*\s*nullable\s*\*/", "", "\n".join(lines[index:end + 1]))
        previous = lines[index - 1].strip() if index > 0 else ""
        in_group = previous.startswith("OUTLIVE_API") and previous.endswith(";") and documented.get(index - 1, False)
        documented[end] = own or previous.endswith("*/") or in_group
        if not documented[end]:
            problems.append(f"line {function.line}: {function.name} has no comment")


def violations(text):
    problems = []
    all_functions = functions(text)
    for function in all_functions:
        _check_names(text, function, problems)
        _check_outputs(function, problems)
        _check_context(function, problems)
        _check_constructor(function, problems)
    _check_lists(text, all_functions, problems)
    _check_structs(text, problems)
    _check_enums(text, problems)
    _check_comments(text, all_functions, problems)
    if re.search(r"\[37\]", text):
        problems.append("a buffer is sized 37: use OUTLIVE_ID_SIZE")
    return problems
