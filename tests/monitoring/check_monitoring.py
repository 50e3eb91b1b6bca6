#!/usr/bin/env python3
"""Checks the compose file's monitoring profile (docker/monitoring/) against the real parleyd:
every metric the alert rules and the Grafana dashboards query must be one the daemon exports,
with the labels and label values they match on, and the files must have the shape Prometheus and
Grafana expect.

    check_monitoring.py --parleyd build/server/parleyd [--compose docker/compose.yaml]

Prints each problem as FILE: WHERE: WHAT and exits 1 when there is any, 0 otherwise. It starts
parleyd itself (alone, then as a cluster node; see exported_metrics.py) on free ports.
"""

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import exported_metrics  # noqa: E402
import monitoring_files  # noqa: E402
from promql_names import PromQLError, grafana_variable_query, references  # noqa: E402

# Series Prometheus writes for every target itself, with the target's labels only.
PROMETHEUS_SERIES = frozenset(["up", "scrape_duration_seconds", "scrape_samples_scraped",
                               "scrape_samples_post_metric_relabeling", "scrape_series_added"])
# Labels Prometheus adds to every series of a target.
TARGET_LABELS = frozenset(["job", "instance"])
SEVERITIES = frozenset(["critical", "warning", "info"])
DURATION = re.compile(r"^(?:\d+(?:ms|[smhdwy]))+$")
RULE_KEYS = frozenset(["alert", "expr", "for", "keep_firing_for", "labels", "annotations"])
# Variables Grafana defines itself.
GRAFANA_BUILTINS = frozenset(["__rate_interval", "__interval", "__interval_ms", "__range", "__range_s",
                              "__range_ms", "__dashboard", "__from", "__to", "__user", "__org", "__name"])
PANELS_WITHOUT_QUERIES = frozenset(["row", "text", "news", "dashlist", "alertlist"])
# A label value that is a word list: x, or x|y|z. Matchers with anything else (a real regex, a
# Grafana variable) are not checked value by value.
WORD_LIST = re.compile(r"^[\w.+:-]+(?:\|[\w.+:-]+)*$")


class Checker:
    def __init__(self, exported, job_names):
        self.exported = exported
        self.names = exported.names()
        self.job_names = job_names
        self.problems = []
        self.referenced = set()
        self.expressions = 0

    def labels_of(self, name):
        if name in PROMETHEUS_SERIES:
            return {}
        return self.exported.labels(name)

    def check_expr(self, expr, where):
        """Every metric, matcher and grouping label of one PromQL expression; returns the label
        names its metrics carry (for checking the templates that print them)."""
        self.expressions += 1
        try:
            refs = references(expr)
        except PromQLError as e:
            self.problems.append(f"{where}: cannot read the expression ({e}): {expr.strip()}")
            return set()
        carried = set(TARGET_LABELS)
        for selector in refs.selectors:
            self.check_selector(selector, where)
            if selector.name is not None:
                carried.update(self.labels_of(selector.name))
        for label in refs.grouping_labels:
            if label not in carried:
                self.problems.append(f"{where}: groups by label {label!r}, which none of its metrics has")
        return carried

    def check_selector(self, selector, where):
        name = selector.name
        if name is None:
            self.problems.append(f"{where}: a selector without a metric name cannot be checked; name the metric")
            return
        if name not in self.names and name not in PROMETHEUS_SERIES:
            hint = ""
            if name in self.exported.histogram_families():
                hint = f" ({name} is a histogram: query {name}_bucket, {name}_sum or {name}_count)"
            self.problems.append(f"{where}: unknown metric {name}: parleyd does not export it{hint}")
            return
        self.referenced.add(name)
        labels = self.labels_of(name)
        for m in selector.matchers:
            if m.label == "__name__":
                continue
            if m.label not in labels and m.label not in TARGET_LABELS:
                self.problems.append(f"{where}: {name} has no label {m.label!r} (it has: "
                                     f"{', '.join(sorted(set(labels) | TARGET_LABELS))})")
                continue
            if "$" in m.value:
                continue
            if m.label == "job":
                known = self.job_names
            elif m.label in labels and m.label != "instance":
                known = labels[m.label]
            else:
                continue
            words = [m.value] if m.op in ("=", "!=") else (m.value.split("|") if WORD_LIST.match(m.value) else [])
            for word in words:
                if word not in known:
                    self.problems.append(f"{where}: {name}{{{m.label}{m.op}\"{m.value}\"}}: no series has "
                                         f"{m.label}=\"{word}\" (there are: {', '.join(sorted(known))})")

    def check_rules(self, path, doc):
        rel = str(path)
        if not isinstance(doc, dict) or not isinstance(doc.get("groups"), list) or not doc["groups"]:
            self.problems.append(f"{rel}: expected a mapping with a non-empty list 'groups'")
            return
        alerts = set()
        group_names = set()
        for group in doc["groups"]:
            if not isinstance(group, dict) or not isinstance(group.get("name"), str):
                self.problems.append(f"{rel}: a group without a name")
                continue
            gname = group["name"]
            if gname in group_names:
                self.problems.append(f"{rel}: group {gname} twice")
            group_names.add(gname)
            rules = group.get("rules")
            if not isinstance(rules, list) or not rules:
                self.problems.append(f"{rel}: group {gname}: no rules")
                continue
            for rule in rules:
                self.check_rule(rel, gname, rule, alerts)

    def check_rule(self, rel, gname, rule, alerts):
        if not isinstance(rule, dict) or not isinstance(rule.get("alert"), str):
            self.problems.append(f"{rel}: group {gname}: a rule that is not an alert: {rule!r}")
            return
        name = rule["alert"]
        where = f"{rel}: group {gname}, alert {name}"
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
            self.problems.append(f"{where}: not a valid alert name")
        if name in alerts:
            self.problems.append(f"{where}: a second alert of that name")
        alerts.add(name)
        for key in sorted(set(rule) - RULE_KEYS):
            self.problems.append(f"{where}: unknown key {key!r}")
        if not isinstance(rule.get("for"), str) or not DURATION.match(rule["for"]):
            self.problems.append(f"{where}: 'for' must be a duration such as 5m, is {rule.get('for')!r}")
        severity = (rule.get("labels") or {}).get("severity")
        if severity not in SEVERITIES:
            self.problems.append(f"{where}: labels.severity must be one of {sorted(SEVERITIES)}, is {severity!r}")
        annotations = rule.get("annotations") or {}
        for key in ("summary", "description"):
            if not isinstance(annotations.get(key), str) or not annotations[key].strip():
                self.problems.append(f"{where}: annotations.{key} is missing")
        if not isinstance(rule.get("expr"), str):
            self.problems.append(f"{where}: expr is missing")
            return
        carried = self.check_expr(rule["expr"], where)
        for key, text in annotations.items():
            for label in re.findall(r"\$labels\.(\w+)", str(text)):
                if label not in carried:
                    self.problems.append(f"{where}: annotations.{key} prints $labels.{label}, which its metrics lack")
            if str(text).count("{{") != str(text).count("}}"):
                self.problems.append(f"{where}: annotations.{key} has unbalanced {{{{ }}}}")

    def check_dashboard(self, path, doc, datasource_uids):
        rel = str(path)
        if not isinstance(doc, dict):
            self.problems.append(f"{rel}: expected a dashboard object")
            return
        for key, kind in (("uid", str), ("title", str), ("panels", list), ("schemaVersion", int)):
            if not isinstance(doc.get(key), kind):
                self.problems.append(f"{rel}: '{key}' is missing or not a {kind.__name__}")
        variables = (doc.get("templating") or {}).get("list") or []
        defined = {v.get("name") for v in variables if isinstance(v, dict)}
        allowed_uids = set(datasource_uids)
        if any(v.get("type") == "datasource" and v.get("query") == "prometheus" for v in variables):
            allowed_uids.update({f"${{{v['name']}}}" for v in variables if v.get("type") == "datasource"})
            allowed_uids.update({f"${v['name']}" for v in variables if v.get("type") == "datasource"})
        for v in variables:
            if v.get("type") == "query":
                query = v.get("query")
                query = query.get("query") if isinstance(query, dict) else query
                self.check_variable(rel, v.get("name"), query, allowed_uids, v.get("datasource"))
        ids = set()
        panels = list(self.walk(doc.get("panels") or []))
        if not panels:
            self.problems.append(f"{rel}: no panels")
        for panel in panels:
            self.check_panel(rel, panel, ids, allowed_uids, defined)

    def walk(self, panels):
        for panel in panels:
            yield panel
            if isinstance(panel, dict):
                yield from self.walk(panel.get("panels") or [])

    def check_datasource(self, where, ds, allowed_uids):
        if not isinstance(ds, dict) or ds.get("type") != "prometheus" or ds.get("uid") not in allowed_uids:
            self.problems.append(f"{where}: data source {ds!r} is not the provisioned Prometheus "
                                 f"(uid one of {sorted(allowed_uids)})")

    def check_variable(self, rel, name, query, allowed_uids, datasource):
        where = f"{rel}: variable {name}"
        self.check_datasource(where, datasource, allowed_uids)
        if not isinstance(query, str) or not query.strip():
            self.problems.append(f"{where}: no query")
            return
        self.expressions += 1
        try:
            refs, label = grafana_variable_query(query)
        except PromQLError as e:
            self.problems.append(f"{where}: cannot read the query ({e}): {query}")
            return
        carried = set(TARGET_LABELS)
        for selector in refs.selectors if refs else []:
            self.check_selector(selector, where)
            if selector.name is not None:
                carried.update(self.labels_of(selector.name))
        if label is not None and label not in carried:
            self.problems.append(f"{where}: asks for the values of label {label!r}, which its metrics lack")

    def check_panel(self, rel, panel, ids, allowed_uids, defined):
        if not isinstance(panel, dict):
            self.problems.append(f"{rel}: a panel that is not an object")
            return
        title = panel.get("title")
        where = f"{rel}: panel {title!r} (id {panel.get('id')})"
        if not isinstance(title, str) or not title.strip():
            self.problems.append(f"{where}: no title")
        if not isinstance(panel.get("id"), int) or panel["id"] in ids:
            self.problems.append(f"{where}: the id must be a number no other panel has")
        ids.add(panel.get("id"))
        if not isinstance(panel.get("type"), str):
            self.problems.append(f"{where}: no type")
        pos = panel.get("gridPos") or {}
        if not all(isinstance(pos.get(k), int) for k in ("h", "w", "x", "y")) or pos["x"] + pos["w"] > 24:
            self.problems.append(f"{where}: gridPos needs whole h, w, x, y within the 24 columns, is {pos!r}")
        if panel.get("type") in PANELS_WITHOUT_QUERIES:
            return
        targets = panel.get("targets")
        if not isinstance(targets, list) or not targets:
            self.problems.append(f"{where}: no queries")
            return
        self.check_datasource(where, panel.get("datasource"), allowed_uids)
        ref_ids = set()
        for target in targets:
            ref_id = target.get("refId") if isinstance(target, dict) else None
            twhere = f"{where}, query {ref_id}"
            if not ref_id or ref_id in ref_ids:
                self.problems.append(f"{twhere}: each query needs a refId of its own")
            ref_ids.add(ref_id)
            if "datasource" in target:
                self.check_datasource(twhere, target["datasource"], allowed_uids)
            expr = target.get("expr")
            if not isinstance(expr, str) or not expr.strip():
                self.problems.append(f"{twhere}: no expr")
                continue
            for var in re.findall(r"\$\{?(\w+)", expr):
                if var not in defined and var not in GRAFANA_BUILTINS:
                    self.problems.append(f"{twhere}: uses ${var}, which the dashboard does not define")
            self.check_expr(expr, twhere)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parleyd", required=True, help="the parleyd binary to scrape")
    parser.add_argument("--compose", default=str(Path(__file__).resolve().parents[2] / "docker" / "compose.yaml"),
                        help="the compose file whose monitoring profile to check (default: the repository's)")
    args = parser.parse_args(argv)

    problems = []
    files = monitoring_files.find(args.compose, problems)
    try:
        exported = exported_metrics.exported_by(args.parleyd)
    except (OSError, RuntimeError, ValueError) as e:
        print(f"check_monitoring: cannot scrape {args.parleyd}: {e}", file=sys.stderr)
        return 2
    checker = Checker(exported, files.job_names if files else set())
    checker.problems = problems
    if files is not None:
        if not files.rule_files:
            problems.append(f"{args.compose}: no alert rules reach Prometheus")
        for path in files.rule_files:
            checker.check_rules(path, monitoring_files.load_yaml(path, problems))
        uids = {ds.get("uid") for _, ds in files.datasources if ds.get("type") == "prometheus" and ds.get("uid")}
        for path in files.dashboards:
            doc = monitoring_files.load_json(path, problems)
            if doc is not None:
                checker.check_dashboard(path, doc, uids)

    if problems:
        for problem in problems:
            print(problem, file=sys.stderr)
        print(f"check_monitoring: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    unused = sorted(n for n in exported.names() - checker.referenced if not n.endswith(("_sum", "_count"))
                    and not (n.endswith("_bucket") and n[:-7] in exported.histogram_families()))
    print(f"check_monitoring: {checker.expressions} expressions in {len(files.rule_files)} rule file(s) and "
          f"{len(files.dashboards)} dashboard(s) name {len(checker.referenced)} metrics, all exported by parleyd")
    if unused:
        print("exported, but in no panel or alert: " + ", ".join(unused))
    return 0


if __name__ == "__main__":
    sys.exit(main())
