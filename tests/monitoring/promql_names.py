"""What a PromQL expression refers to: its metric selectors (name and label matchers), the label
names of its by/without/on/ignoring/group_left/group_right clauses, and the functions it calls.

Not a full PromQL parser: enough of the grammar to tell a metric name from a function, an
aggregation, a keyword, a label name or a duration, which is what checking dashboards and alert
rules against the metrics a daemon exports needs. Grafana's variables ($instance, ${x},
$__rate_interval) are accepted where PromQL has a string or a range.
"""

import re
from dataclasses import dataclass, field

FUNCTIONS = frozenset("""
    abs absent absent_over_time acos acosh asin asinh atan atanh avg_over_time ceil changes clamp
    clamp_max clamp_min cos cosh count_over_time day_of_month day_of_week day_of_year days_in_month
    deg delta deriv double_exponential_smoothing exp floor histogram_avg histogram_count
    histogram_fraction histogram_quantile histogram_stddev histogram_stdvar histogram_sum
    holt_winters hour idelta increase info irate label_join label_replace last_over_time ln log10
    log2 mad_over_time max_over_time min_over_time minute month pi predict_linear
    present_over_time quantile_over_time rad rate resets round scalar sgn sin sinh sort sort_by_label
    sort_by_label_desc sort_desc sqrt stddev_over_time stdvar_over_time sum_over_time tan tanh time
    timestamp vector year
""".split())
AGGREGATIONS = frozenset("""
    avg bottomk count count_values group limit_ratio limitk max min quantile stddev stdvar sum topk
""".split())
BINARY_KEYWORDS = frozenset(["and", "or", "unless", "bool", "atan2"])
GROUPING = frozenset(["by", "without", "on", "ignoring", "group_left", "group_right"])
# start() and end() only follow the @ modifier.
AT_FUNCTIONS = frozenset(["start", "end"])

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<comment>\#[^\n]*)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
  | (?P<variable>\$\{[^}]*\}|\$\w+|\[\[\w+\]\])
  | (?P<duration>(?:\d+(?:ms|[smhdwy]))+)(?![\w.])
  | (?P<number>0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<ident>[a-zA-Z_:][a-zA-Z0-9_:]*)
  | (?P<op>==|!=|>=|<=|=~|!~|[-+*/%^<>=(){}\[\],@:])
""", re.VERBOSE)


class PromQLError(ValueError):
    pass


@dataclass
class Matcher:
    label: str
    op: str
    value: str  # unquoted


@dataclass
class Selector:
    name: str | None  # None for a selector of matchers only, e.g. {__name__=~"x.*"}
    matchers: list[Matcher] = field(default_factory=list)


@dataclass
class References:
    selectors: list[Selector] = field(default_factory=list)
    grouping_labels: list[str] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)

    @property
    def metric_names(self):
        return [s.name for s in self.selectors if s.name is not None]


def tokenize(expr):
    tokens = []
    pos = 0
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        if m is None:
            raise PromQLError(f"unexpected character {expr[pos]!r} at offset {pos}")
        kind = m.lastgroup
        if kind not in ("space", "comment"):
            tokens.append((kind, m.group(kind), pos))
        pos = m.end()
    return tokens


def _unquote(text):
    if text[0] == "`":
        return text[1:-1]
    return re.sub(r"\\(.)", r"\1", text[1:-1])


class _Parser:
    def __init__(self, expr):
        self.tokens = tokenize(expr)
        self.i = 0
        self.refs = References()

    def peek(self, ahead=0):
        j = self.i + ahead
        return self.tokens[j] if j < len(self.tokens) else (None, None, None)

    def take(self):
        tok = self.peek()
        self.i += 1
        return tok

    def expect(self, text):
        kind, value, pos = self.take()
        if value != text or kind not in ("op",):
            where = f"offset {pos}" if pos is not None else "the end"
            raise PromQLError(f"expected {text!r} at {where}, found {value!r}")

    def run(self):
        depth = 0
        while self.i < len(self.tokens):
            kind, value, pos = self.peek()
            if kind == "op" and value == "(":
                depth += 1
                self.i += 1
            elif kind == "op" and value == ")":
                depth -= 1
                if depth < 0:
                    raise PromQLError(f"unbalanced ')' at offset {pos}")
                self.i += 1
            elif kind == "op" and value == "{":
                self.selector(None)
            elif kind == "op" and value == "[":
                self.range()
            elif kind == "op" and value in ("}", "]"):
                raise PromQLError(f"unbalanced {value!r} at offset {pos}")
            elif kind == "ident":
                self.identifier(value)
            else:
                self.i += 1
        if depth != 0:
            raise PromQLError("unbalanced '(': missing ')'")
        return self.refs

    def identifier(self, name):
        self.i += 1
        after = self.peek()[1]
        lowered = name.lower()
        if lowered in ("inf", "nan"):
            return
        if name in BINARY_KEYWORDS:
            return
        if name == "offset":
            if self.peek()[1] == "-":
                self.i += 1
            kind, value, pos = self.take()
            if kind not in ("duration", "variable"):
                raise PromQLError(f"offset without a duration at offset {pos}")
            return
        if name in GROUPING:
            if after == "(":
                self.label_list()
            elif name not in ("group_left", "group_right"):
                raise PromQLError(f"{name} without a label list")
            return
        if name in AGGREGATIONS:
            if after not in ("(", "by", "without"):
                raise PromQLError(f"aggregation {name} without its argument")
            return
        if after == "(":
            after_at = self.i >= 2 and self.tokens[self.i - 2][1] == "@"
            if name in FUNCTIONS or (name in AT_FUNCTIONS and after_at):
                self.refs.functions.append(name)
                return
            raise PromQLError(f"unknown function {name}()")
        self.selector(name)

    def label_list(self):
        self.expect("(")
        while True:
            kind, value, pos = self.take()
            if kind == "op" and value == ")":
                return
            if kind == "ident":
                self.refs.grouping_labels.append(value)
            elif not (kind == "op" and value == ","):
                raise PromQLError(f"unexpected {value!r} in a label list at offset {pos}")

    def selector(self, name):
        selector = Selector(name)
        self.refs.selectors.append(selector)
        if self.peek()[1] != "{":
            return
        self.i += 1
        while True:
            kind, value, pos = self.take()
            if kind == "op" and value == "}":
                break
            if kind == "op" and value == ",":
                continue
            if kind == "string" and selector.name is None:  # {"metric.name"} (Prometheus 3)
                selector.name = _unquote(value)
                continue
            if kind != "ident":
                raise PromQLError(f"expected a label name at offset {pos}, found {value!r}")
            op_kind, op, op_pos = self.take()
            if op not in ("=", "!=", "=~", "!~"):
                raise PromQLError(f"expected a matcher operator after {value} at offset {op_pos}")
            v_kind, v, v_pos = self.take()
            if v_kind != "string":
                raise PromQLError(f"expected a quoted value for {value} at offset {v_pos}")
            selector.matchers.append(Matcher(value, op, _unquote(v)))
        if selector.name is None:
            for m in selector.matchers:
                if m.label == "__name__" and m.op == "=":
                    selector.name = m.value

    def range(self):
        # A range [5m], a subquery [1h:1m], or a Grafana interval [$__rate_interval].
        _, _, start = self.take()
        while True:
            kind, value, pos = self.take()
            if kind is None:
                raise PromQLError(f"unbalanced '[' at offset {start}")
            if kind == "op" and value == "]":
                return
            # The lexer reads a subquery's ":5m" as a name (names may hold colons).
            step = kind == "ident" and re.fullmatch(r":(?:\d+(?:ms|[smhdwy]))*", value)
            if kind not in ("duration", "variable", "number") and value != ":" and not step:
                raise PromQLError(f"unexpected {value!r} in a range at offset {pos}")


def references(expr):
    """Everything expr refers to; raises PromQLError when it cannot be read."""
    if not expr or not expr.strip():
        raise PromQLError("empty expression")
    return _Parser(expr).run()


_LABEL_VALUES = re.compile(r"^\s*label_values\(\s*(?:(?P<expr>.*?)\s*,\s*)?(?P<label>[a-zA-Z_]\w*)\s*\)\s*$", re.S)


def grafana_variable_query(query):
    """A Grafana Prometheus variable's query: label_values(EXPR, LABEL), label_values(LABEL), or
    plain PromQL. Returns (References of the expression or None, the label asked for or None)."""
    m = _LABEL_VALUES.match(query)
    if m:
        expr = m.group("expr")
        return (references(expr) if expr else None), m.group("label")
    return references(query), None
