#!/usr/bin/env python3
"""Tests of check_monitoring.py: that it reads PromQL right, and that it fails, naming the file,
the panel or alert and the metric, when the monitoring files go wrong. The end-to-end cases run
the real checker against the real parleyd on a copy of the compose file, its monitoring folder
and the config it mounts, each copy broken in one way (and one left whole, which must pass).

    check_monitoring_test.py --parleyd build/server/parleyd
"""

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

try:
    import yaml
except ImportError:
    raise SystemExit("the Python module yaml is missing: install python3-yaml (.ci/install-deps does)")

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

from check_monitoring import Checker  # noqa: E402
from exported_metrics import Exported  # noqa: E402
from promql_names import PromQLError, grafana_variable_query, references  # noqa: E402

PARLEYD = None  # set from --parleyd

SAMPLE_SCRAPE = """\
# HELP parley_connections Open WebSocket connections.
# TYPE parley_connections gauge
parley_connections 3
# TYPE parley_errors_total counter
parley_errors_total{code="bad_json"} 0
parley_errors_total{code="rate_limited"} 2
# TYPE parley_broadcast_fanout_seconds histogram
parley_broadcast_fanout_seconds_bucket{le="0.001"} 1
parley_broadcast_fanout_seconds_bucket{le="+Inf"} 1
parley_broadcast_fanout_seconds_sum 0.0004
parley_broadcast_fanout_seconds_count 1
"""


class PromQLNames(unittest.TestCase):
    def test_only_metric_names_are_names(self):
        refs = references('sum by (instance, code) (rate(parley_errors_total{job="parley", code!~"a|b"}[5m])) '
                          '/ on (instance) group_left ignoring(code) clamp_min(parley_connections offset 1h, 1) '
                          '> bool 0.5 and histogram_quantile(0.99, sum without (x) (irate(h_bucket[$__rate_interval]))) '
                          'or max_over_time(rate(c_total[5m])[1h:1m]) unless vector(1e3) @ end()')
        self.assertEqual(refs.metric_names, ["parley_errors_total", "parley_connections", "h_bucket", "c_total"])
        self.assertEqual(refs.grouping_labels, ["instance", "code", "instance", "code", "x"])
        self.assertEqual(refs.selectors[0].matchers[1].value, "a|b")

    def test_name_only_in_matchers(self):
        self.assertEqual(references('{__name__="up", job="parley"}').metric_names, ["up"])

    def test_unreadable_expressions_are_errors(self):
        for bad in ["rate(x[5m]", "ratee(x[5m])", "sum", 'x{code=bad_json}', "x]", "", "x{a=~}"]:
            with self.subTest(bad=bad), self.assertRaises(PromQLError):
                references(bad)

    def test_grafana_label_values(self):
        refs, label = grafana_variable_query('label_values(parley_build_info{job="parley"}, instance)')
        self.assertEqual((refs.metric_names, label), (["parley_build_info"], "instance"))
        self.assertEqual(grafana_variable_query("label_values(instance)"), (None, "instance"))


class CheckerRules(unittest.TestCase):
    def checker(self):
        exported = Exported()
        exported.add_text(SAMPLE_SCRAPE)
        return Checker(exported, {"parley"})

    def test_known_names_pass(self):
        c = self.checker()
        c.check_expr('histogram_quantile(0.9, sum by (le) (rate(parley_broadcast_fanout_seconds_bucket[5m])))'
                     ' + sum(rate(parley_errors_total{job="parley", code=~"bad_json|rate_limited"}[5m]))'
                     ' + up{job="parley"}', "w")
        self.assertEqual(c.problems, [])

    def test_made_up_metric_is_named(self):
        c = self.checker()
        c.check_expr("rate(parley_made_up_total[5m])", "rules.yml: alert X")
        self.assertEqual(len(c.problems), 1)
        self.assertIn("rules.yml: alert X", c.problems[0])
        self.assertIn("unknown metric parley_made_up_total", c.problems[0])

    def test_histogram_family_is_not_a_series(self):
        c = self.checker()
        c.check_expr("parley_broadcast_fanout_seconds", "w")
        self.assertIn("is a histogram", c.problems[0])

    def test_labels_and_values_are_checked(self):
        for expr, wanted in [('parley_connections{code="x"}', "has no label 'code'"),
                             ('parley_errors_total{code="bad_jsn"}', 'no series has code="bad_jsn"'),
                             ('parley_errors_total{code=~"bad_json|rate_limit"}', 'code="rate_limit"'),
                             ('parley_connections{job="parly"}', 'job="parly"'),
                             ("sum by (reason) (parley_errors_total)", "groups by label 'reason'")]:
            with self.subTest(expr=expr):
                c = self.checker()
                c.check_expr(expr, "w")
                self.assertEqual(len(c.problems), 1, c.problems)
                self.assertIn(wanted, c.problems[0])


def copy_tree(into):
    """The compose file, its monitoring folder and the parleyd config it mounts, in their places."""
    (into / "docker").mkdir()
    shutil.copy(REPO / "docker" / "compose.yaml", into / "docker" / "compose.yaml")
    shutil.copytree(REPO / "docker" / "monitoring", into / "docker" / "monitoring")
    (into / "config").mkdir()
    shutil.copy(REPO / "config" / "parley.toml", into / "config" / "parley.toml")
    return into / "docker"


def first_query_panel(dashboard):
    def walk(panels):
        for p in panels:
            yield p
            yield from walk(p.get("panels") or [])
    return next(p for p in walk(dashboard["panels"]) if p.get("targets"))


class CheckerAgainstParleyd(unittest.TestCase):
    def run_checker(self, breaking=None):
        with tempfile.TemporaryDirectory(prefix="parley-monitoring-test-") as tmp:
            docker = copy_tree(Path(tmp))
            if breaking:
                breaking(docker)
            run = subprocess.run([sys.executable, str(HERE / "check_monitoring.py"), "--parleyd", PARLEYD,
                                  "--compose", str(docker / "compose.yaml")],
                                 capture_output=True, text=True, timeout=120)
            return run.returncode, run.stdout + run.stderr

    def assert_fails(self, breaking, *wanted):
        code, output = self.run_checker(breaking)
        self.assertEqual(code, 1, output)
        for text in wanted:
            self.assertIn(text, output)

    def edit_dashboard(self, docker, change):
        path = docker / "monitoring" / "grafana" / "dashboards" / "parley.json"
        dashboard = json.loads(path.read_text())
        change(dashboard)
        path.write_text(json.dumps(dashboard))

    def edit_rules(self, docker, change):
        path = docker / "monitoring" / "alerts.yml"
        rules = yaml.safe_load(path.read_text())
        change(rules)
        path.write_text(yaml.safe_dump(rules))

    def test_the_files_as_they_are_pass(self):
        code, output = self.run_checker()
        self.assertEqual(code, 0, output)

    def test_made_up_metric_in_a_panel(self):
        title = []

        def bad_panel(docker):
            def change(dashboard):
                panel = first_query_panel(dashboard)
                title.append(panel["title"])
                panel["targets"][0]["expr"] = 'sum(rate(parley_made_up_total{job="parley"}[$__rate_interval]))'
            self.edit_dashboard(docker, change)

        code, output = self.run_checker(bad_panel)
        self.assertEqual(code, 1, output)
        self.assertRegex(output, rf"parley\.json: panel '{title[0]}' \(id \d+\), query A: unknown metric "
                                 r"parley_made_up_total")

    def test_made_up_metric_in_an_alert(self):
        def change(rules):
            rules["groups"][0]["rules"][0]["expr"] = "parley_conections > 100"
        alert = yaml.safe_load((REPO / "docker" / "monitoring" / "alerts.yml").read_text())["groups"][0]["rules"][0]
        self.assert_fails(lambda d: self.edit_rules(d, change), "alerts.yml", f"alert {alert['alert']}",
                          "unknown metric parley_conections")

    def test_wrong_label_value_in_an_alert(self):
        def change(rules):
            rules["groups"][0]["rules"][0]["expr"] = 'rate(parley_errors_total{code="unauthorised"}[5m]) > 1'
        self.assert_fails(lambda d: self.edit_rules(d, change), 'code="unauthorised"')

    def test_alert_without_for_or_severity(self):
        def change(rules):
            del rules["groups"][0]["rules"][0]["for"]
            rules["groups"][0]["rules"][0]["labels"] = {}
        self.assert_fails(lambda d: self.edit_rules(d, change), "'for' must be a duration", "labels.severity")

    def test_rules_that_are_not_yaml(self):
        def break_yaml(docker):
            path = docker / "monitoring" / "alerts.yml"
            path.write_text(path.read_text() + "\n  - alert: [unclosed\n")
        self.assert_fails(break_yaml, "alerts.yml: cannot read it as YAML")

    def test_dashboard_that_is_not_json(self):
        def break_json(docker):
            path = docker / "monitoring" / "grafana" / "dashboards" / "parley.json"
            path.write_text(path.read_text()[:-10])
        self.assert_fails(break_json, "parley.json: cannot read it as JSON")

    def test_metrics_turned_off_in_the_mounted_config(self):
        def metrics_off(docker):
            path = docker.parent / "config" / "parley.toml"
            text = path.read_text()
            self.assertIn("\n[metrics]\n", text)
            path.write_text(text.replace("\n[metrics]\n", "\n[metrics]\nenabled = false\n", 1).replace(
                "\nenabled = true\n", "\n", 1))
        self.assert_fails(metrics_off, "metrics.enabled is not true")

    def test_rules_file_not_mounted(self):
        def unmount(docker):
            path = docker / "compose.yaml"
            path.write_text(path.read_text().replace("./monitoring/alerts.yml:", "./monitoring/missing.yml:"))
        self.assert_fails(unmount, "rule file /etc/prometheus/alerts.yml is not a file the compose file mounts")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--parleyd", required=True)
    args, rest = parser.parse_known_args()
    PARLEYD = args.parleyd
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)
