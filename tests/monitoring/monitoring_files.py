"""The monitoring profile's files, found the way the containers find them: from the mounts of
the compose file's `prometheus` and `grafana` services, so that a file the compose file does
not mount (or mounts somewhere the config does not look) is a problem too.
"""

import json
import posixpath
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

try:
    import yaml
except ImportError:
    raise SystemExit("the Python module yaml is missing: install python3-yaml (.ci/install-deps does)")

PROMETHEUS_DEFAULT_CONFIG = "/etc/prometheus/prometheus.yml"
PARLEYD_DEFAULT_CONFIG = "/etc/parley/parley.toml"  # the image's default --config
GRAFANA_PROVISIONING = "/etc/grafana/provisioning"


@dataclass
class MonitoringFiles:
    compose_path: Path
    compose: dict
    prometheus_config_path: Path | None = None
    prometheus_config: dict | None = None
    rule_files: list[Path] = field(default_factory=list)
    datasources: list[tuple[Path, dict]] = field(default_factory=list)  # (file, one datasource)
    dashboards: list[Path] = field(default_factory=list)
    job_names: set[str] = field(default_factory=set)


def load_yaml(path, problems):
    try:
        with open(path, encoding="utf-8") as f:
            return yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        problems.append(f"{path}: cannot read it as YAML: {e}")
        return None


def load_json(path, problems):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        problems.append(f"{path}: cannot read it as JSON: {e}")
        return None


def _mounts(service, compose_dir):
    """(host path, container path) of each bind mount; named volumes are left out."""
    mounts = []
    for volume in service.get("volumes", []) or []:
        if isinstance(volume, dict):
            if volume.get("type") != "bind":
                continue
            source, target = volume.get("source", ""), volume.get("target", "")
        else:
            parts = str(volume).split(":")
            if len(parts) < 2 or not parts[0].startswith((".", "/")):
                continue
            source, target = parts[0], parts[1]
        mounts.append(((compose_dir / source).resolve(), target))
    return mounts


def host_path(mounts, container_path):
    """Where a path inside the container comes from, or None when no bind mount covers it."""
    container_path = posixpath.normpath(container_path)
    for source, target in mounts:
        target = posixpath.normpath(target)
        if container_path == target:
            return source
        if container_path.startswith(target + "/"):
            return source / posixpath.relpath(container_path, target)
    return None


def _service(compose, name, image, problems, where):
    services = compose.get("services") or {}
    service = services.get(name)
    if not isinstance(service, dict):
        problems.append(f"{where}: no service {name!r}")
        return None
    if service.get("profiles") != ["monitoring"]:
        problems.append(f"{where}: service {name} should have profiles: [monitoring], has {service.get('profiles')}")
    if not str(service.get("image", "")).startswith(image):
        problems.append(f"{where}: service {name} should run the image {image}, runs {service.get('image')}")
    return service


def _prometheus_config_path(service):
    for arg in service.get("command", []) or []:
        if str(arg).startswith("--config.file="):
            return str(arg).split("=", 1)[1]
    return PROMETHEUS_DEFAULT_CONFIG


def _parleyd_port(compose, compose_dir, problems):
    """The port the compose file's parleyd listens on, from the config it mounts; its metrics must
    be on."""
    service = (compose.get("services") or {}).get("parleyd") or {}
    command = [str(a) for a in service.get("command", []) or []]
    inside = command[command.index("--config") + 1] if "--config" in command[:-1] else PARLEYD_DEFAULT_CONFIG
    path = host_path(_mounts(service, compose_dir), inside)
    if path is None or not path.is_file():
        problems.append(f"compose service parleyd: its config {inside} is not a file the compose file mounts")
        return None
    try:
        with open(path, "rb") as f:
            config = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        problems.append(f"{path}: cannot read it as TOML: {e}")
        return None
    if config.get("metrics", {}).get("enabled", True) is not True:
        problems.append(f"{path}: metrics.enabled is not true, so /metrics answers 404 to Prometheus")
    if "--port" in command[:-1]:
        return int(command[command.index("--port") + 1])
    return int(config.get("server", {}).get("port", 8080))


def _check_scrape_targets(config, compose, where, problems, job_names, parleyd_port):
    services = compose.get("services") or {}
    jobs = config.get("scrape_configs")
    if not isinstance(jobs, list) or not jobs:
        problems.append(f"{where}: no scrape_configs")
        return
    for job in jobs:
        name = job.get("job_name") if isinstance(job, dict) else None
        if not name:
            problems.append(f"{where}: a scrape config without a job_name")
            continue
        job_names.add(name)
        if job.get("metrics_path", "/metrics") != "/metrics":
            problems.append(f"{where}: job {name} scrapes {job.get('metrics_path')}, parleyd serves /metrics")
        for static in job.get("static_configs", []) or []:
            for target in static.get("targets", []) or []:
                host, _, port = str(target).rpartition(":")
                if host not in services:
                    problems.append(f"{where}: job {name} scrapes {target}, but the compose file has no service {host!r}")
                elif not port.isdigit():
                    problems.append(f"{where}: job {name}: target {target} has no port")
                elif host == "parleyd" and parleyd_port is not None and int(port) != parleyd_port:
                    problems.append(f"{where}: job {name} scrapes {target}, parleyd listens on {parleyd_port}")
    if not any(t for j in jobs if isinstance(j, dict) for s in j.get("static_configs", []) or []
               for t in s.get("targets", []) or [] if str(t).startswith("parleyd:")):
        problems.append(f"{where}: no job scrapes the parleyd service")


def find(compose_path, problems):
    """Reads the compose file and every monitoring file it mounts; appends what is wrong."""
    compose_path = Path(compose_path).resolve()
    compose = load_yaml(compose_path, problems)
    if not isinstance(compose, dict):
        problems.append(f"{compose_path}: not a compose file")
        return None
    files = MonitoringFiles(compose_path, compose)
    compose_dir = compose_path.parent
    where = str(compose_path)

    prometheus = _service(compose, "prometheus", "prom/prometheus", problems, where)
    if prometheus is not None:
        mounts = _mounts(prometheus, compose_dir)
        inside = _prometheus_config_path(prometheus)
        path = host_path(mounts, inside)
        if path is None or not path.is_file():
            problems.append(f"{where}: prometheus reads {inside}, which no bind mount of an existing file provides")
        else:
            files.prometheus_config_path = path
            config = load_yaml(path, problems)
            if not isinstance(config, dict):
                problems.append(f"{path}: not a Prometheus configuration")
            else:
                files.prometheus_config = config
                _check_scrape_targets(config, compose, str(path), problems, files.job_names,
                                      _parleyd_port(compose, compose_dir, problems))
                rule_files = config.get("rule_files") or []
                if not rule_files:
                    problems.append(f"{path}: no rule_files")
                for rule_file in rule_files:
                    source = host_path(mounts, str(rule_file))
                    if source is None or not source.is_file():
                        problems.append(f"{path}: rule file {rule_file} is not a file the compose file mounts")
                    else:
                        files.rule_files.append(source)

    grafana = _service(compose, "grafana", "grafana/grafana", problems, where)
    if grafana is not None:
        mounts = _mounts(grafana, compose_dir)
        _find_grafana(files, mounts, where, problems)
    return files


def _find_grafana(files, mounts, where, problems):
    datasource_dir = host_path(mounts, GRAFANA_PROVISIONING + "/datasources")
    if datasource_dir is None or not datasource_dir.is_dir():
        problems.append(f"{where}: grafana has no provisioning/datasources folder mounted")
    else:
        for path in sorted(datasource_dir.glob("*.y*ml")):
            doc = load_yaml(path, problems)
            for ds in (doc or {}).get("datasources", []) or []:
                files.datasources.append((path, ds))
        prometheus = [ds for _, ds in files.datasources if ds.get("type") == "prometheus"]
        if not prometheus:
            problems.append(f"{datasource_dir}: no data source of type prometheus")
        services = files.compose.get("services") or {}
        for ds in prometheus:
            host = re.sub(r"^\w+://", "", str(ds.get("url", ""))).split("/")[0].rpartition(":")[0]
            if host not in services:
                problems.append(f"{datasource_dir}: data source {ds.get('name')} points at {ds.get('url')}, "
                                "not at a service of the compose file")
            if not ds.get("uid"):
                problems.append(f"{datasource_dir}: data source {ds.get('name')} has no uid for the dashboards to name")

    provider_dir = host_path(mounts, GRAFANA_PROVISIONING + "/dashboards")
    if provider_dir is None or not provider_dir.is_dir():
        problems.append(f"{where}: grafana has no provisioning/dashboards folder mounted")
        return
    for path in sorted(provider_dir.glob("*.y*ml")):
        doc = load_yaml(path, problems)
        for provider in (doc or {}).get("providers", []) or []:
            inside = ((provider or {}).get("options") or {}).get("path")
            source = host_path(mounts, inside) if inside else None
            if source is None or not source.is_dir():
                problems.append(f"{path}: provider {provider.get('name')} reads {inside}, which no mounted folder provides")
                continue
            files.dashboards.extend(sorted(source.glob("*.json")))
    if not files.dashboards:
        problems.append(f"{provider_dir}: no dashboard JSON reaches Grafana")
