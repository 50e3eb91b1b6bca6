// The admin page's figures from the daemon's /metrics (Prometheus' text format): the few it
// charts, read from one scrape, and per-second rates from the differences of counters between
// two scrapes. No DOM here, so Node.js tests it alone.

// name -> the sum of its samples over every label set ("parley_errors_total{code=...}" adds up
// to all errors). Comments, histogram buckets and malformed lines are skipped.
export function parseMetrics(text) {
  const sums = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([A-Za-z_:][A-Za-z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const value = Number(match[3]);
    if (!Number.isFinite(value)) continue;
    sums.set(match[1], (sums.get(match[1]) ?? 0) + value);
  }
  return sums;
}

// What the page charts. kind "gauge": the value as scraped; "rate": per second, from a counter.
export const charted = [
  { key: 'connections', label: 'Connections', metric: 'parley_connections', kind: 'gauge' },
  { key: 'users', label: 'Users', metric: 'parley_users', kind: 'gauge' },
  { key: 'rooms', label: 'Rooms', metric: 'parley_rooms', kind: 'gauge' },
  { key: 'messages', label: 'Messages received /s', metric: 'parley_messages_received_total', kind: 'rate' },
  { key: 'deliveries', label: 'Deliveries /s', metric: 'parley_fanout_deliveries_total', kind: 'rate' },
  { key: 'errors', label: 'Error replies /s', metric: 'parley_errors_total', kind: 'rate' },
  { key: 'memory', label: 'Memory (RSS)', metric: 'process_resident_memory_bytes', kind: 'gauge', unit: 'bytes' },
];

// Turns successive scrapes into one point per charted figure. The first scrape gives gauges
// only (a rate needs two); a counter that went down (the daemon restarted) gives no rate for
// that step rather than a negative one.
export class FigureTracker {
  constructor() { this.previous = null; }

  // sums: parseMetrics' result; atMs: when it was scraped. Returns key -> number or null.
  add(sums, atMs) {
    const point = {};
    for (const figure of charted) {
      const value = sums.get(figure.metric);
      if (figure.kind === 'gauge') {
        point[figure.key] = value ?? null;
        continue;
      }
      const before = this.previous?.sums.get(figure.metric);
      const seconds = this.previous ? (atMs - this.previous.atMs) / 1000 : 0;
      point[figure.key] = value !== undefined && before !== undefined && seconds > 0 && value >= before
        ? (value - before) / seconds : null;
    }
    this.previous = { sums, atMs };
    return point;
  }

  // After the daemon was unreachable: the next scrape starts afresh.
  reset() { this.previous = null; }
}

// A figure as people read it: "1.5 MiB", "12", "3.4".
export function formatFigure(value, unit) {
  if (value === null || value === undefined) return '–';
  if (unit === 'bytes') {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let v = value;
    let i = 0;
    while (v >= 1024 && i < units.length - 1) { v /= 1024; i += 1; }
    return `${v >= 100 || i === 0 ? Math.round(v) : v.toFixed(1)} ${units[i]}`;
  }
  if (Number.isInteger(value)) return String(value);
  return value >= 100 ? String(Math.round(value)) : value.toFixed(1);
}
