// A chart's recent points: the newest `capacity` values, oldest first. null marks a poll that
// had no value (the daemon was away, or a rate had no previous scrape).
export class Series {
  constructor(capacity = 60) {
    this.capacity = capacity;
    this.values = [];
  }

  push(value) {
    this.values.push(value);
    if (this.values.length > this.capacity) this.values.shift();
  }

  latest() {
    for (let i = this.values.length - 1; i >= 0; i -= 1) {
      if (this.values[i] !== null) return this.values[i];
    }
    return null;
  }

  // The range the chart spans: from 0 (figures here are never negative) to the largest value,
  // at least 1 so a flat zero line sits at the bottom.
  top() {
    return Math.max(1, ...this.values.filter((v) => v !== null));
  }
}
