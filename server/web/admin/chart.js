// One small live chart: a card with the figure's name, its latest value, and a line of its
// recent values drawn on a <canvas>. The card carries the values as data attributes
// (data-latest, data-samples) so the browser tests can read what is drawn.

import { formatFigure } from './figures.js';
import { Series } from './series.js';

export class Chart {
  constructor(figure, parent) {
    this.figure = figure;
    this.series = new Series(60);
    this.card = document.createElement('figure');
    this.card.className = 'card chart';
    this.card.dataset.chart = figure.key;
    const caption = document.createElement('figcaption');
    const name = document.createElement('span');
    name.className = 'chart-name';
    name.textContent = figure.label;
    this.valueText = document.createElement('span');
    this.valueText.className = 'chart-value';
    this.valueText.textContent = '–';
    caption.append(name, this.valueText);
    this.canvas = document.createElement('canvas');
    this.canvas.setAttribute('role', 'img');
    this.canvas.setAttribute('aria-label', `${figure.label}, recent values`);
    this.card.append(caption, this.canvas);
    parent.append(this.card);
  }

  push(value) {
    this.series.push(value);
    const latest = this.series.latest();
    this.valueText.textContent = formatFigure(value ?? latest, this.figure.unit);
    this.card.dataset.latest = value === null ? '' : String(value);
    this.card.dataset.samples = String(this.series.values.filter((v) => v !== null).length);
    this.draw();
  }

  draw() {
    const canvas = this.canvas;
    const ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth;
    const height = canvas.clientHeight;
    if (width === 0 || height === 0) return;  // not on screen
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    const g = canvas.getContext('2d');
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, width, height);
    const style = getComputedStyle(this.card);
    const line = style.getPropertyValue('--chart-line').trim() || '#2f6f5e';
    const fill = style.getPropertyValue('--chart-fill').trim() || 'rgba(47,111,94,0.15)';
    const grid = style.getPropertyValue('--line').trim() || '#dfe4e1';
    const muted = style.getPropertyValue('--muted').trim() || '#5d6a64';

    const pad = { top: 14, bottom: 4, left: 2, right: 2 };
    const values = this.series.values;
    const top = this.series.top();
    const step = (width - pad.left - pad.right) / (this.series.capacity - 1);
    // Newest point at the right edge; the line grows in from the right.
    const xOf = (i) => width - pad.right - (values.length - 1 - i) * step;
    const yOf = (v) => height - pad.bottom - (v / top) * (height - pad.top - pad.bottom);

    g.strokeStyle = grid;
    g.lineWidth = 1;
    g.beginPath();
    g.moveTo(0, height - pad.bottom + 0.5);
    g.lineTo(width, height - pad.bottom + 0.5);
    g.stroke();
    g.fillStyle = muted;
    g.font = '10px system-ui, sans-serif';
    g.textBaseline = 'top';
    g.fillText(`max ${formatFigure(top, this.figure.unit)}`, 2, 1);

    // One stroke per unbroken run of values: a gap where the daemon was away.
    let run = [];
    const flush = () => {
      if (run.length === 0) return;
      if (run.length === 1) {  // a lone value: a dot, since a line needs two
        g.beginPath();
        g.arc(xOf(run[0]), yOf(values[run[0]]), 2, 0, 2 * Math.PI);
        g.fillStyle = line;
        g.fill();
        run = [];
        return;
      }
      g.beginPath();
      g.moveTo(xOf(run[0]), height - pad.bottom);
      for (const i of run) g.lineTo(xOf(i), yOf(values[i]));
      g.lineTo(xOf(run[run.length - 1]), height - pad.bottom);
      g.closePath();
      g.fillStyle = fill;
      g.fill();
      g.beginPath();
      run.forEach((i, n) => (n === 0 ? g.moveTo(xOf(i), yOf(values[i])) : g.lineTo(xOf(i), yOf(values[i]))));
      g.strokeStyle = line;
      g.lineWidth = 2;
      g.stroke();
      run = [];
    };
    values.forEach((v, i) => (v === null ? flush() : run.push(i)));
    flush();
  }
}
