// The real parleyd as a child process for the browser tests: its own temporary directory for
// the config and the history file, loopback only, and a restart on the same port (the page
// reconnects to the address it was loaded from).

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export class Daemon {
  constructor({ binary = process.env.PARLEYD, config = '' } = {}) {
    if (!binary) throw new Error('set PARLEYD to the parleyd binary (ctest does)');
    this.binary = binary;
    this.dir = mkdtempSync(join(tmpdir(), 'parley-browser-'));
    this.configPath = join(this.dir, 'parley.toml');
    writeFileSync(this.configPath, config);
    this.port = 0;
    this.child = null;
    this.output = [];
  }

  get url() { return `http://127.0.0.1:${this.port}`; }

  // Starts parleyd and resolves once it says it is listening (port 0 the first time: a free
  // one; the same port on a restart).
  start() {
    const args = ['--config', this.configPath, '--bind', '127.0.0.1', '--port', String(this.port),
                  '--threads', '2', '--history-path', join(this.dir, 'history.db')];
    const child = spawn(this.binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`parleyd did not start:\n${this.output.join('\n')}`)), 10000);
      let partial = '';
      const onData = (data) => {
        partial += data.toString();
        const lines = partial.split('\n');
        partial = lines.pop();
        for (const line of lines) {
          this.output.push(line);
          const listening = line.match(/listening on [^ ]*:(\d+) /);
          if (listening) {
            this.port = Number(listening[1]);
            clearTimeout(timer);
            resolve();
          }
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      this.exited.then(({ code, signal }) => {
        clearTimeout(timer);
        reject(new Error(`parleyd exited (${code ?? signal}) before listening:\n${this.output.join('\n')}`));
      });
    });
  }

  // SIGTERM, and the exit status once it is gone.
  async stop() {
    if (!this.child || this.child.exitCode !== null || this.child.signalCode !== null) return this.exited;
    this.child.kill('SIGTERM');
    let timer;
    const status = await Promise.race([this.exited, new Promise((r) => { timer = setTimeout(() => r(null), 15000); })]);
    clearTimeout(timer);
    if (status === null) {
      this.child.kill('SIGKILL');
      throw new Error('parleyd did not stop within 15 s of SIGTERM');
    }
    return status;
  }

  async restart() {
    await this.stop();
    await this.start();
  }

  async dispose() {
    try { await this.stop(); } finally { rmSync(this.dir, { recursive: true, force: true }); }
  }
}
