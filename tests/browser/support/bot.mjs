// A scripted chat client for the browser tests. It speaks the protocol directly, from a page
// of its own in the same Chromium (the browser's WebSocket, so no Node.js version or package
// matters), so the tests can put messages into a room at exact moments and read the room's
// history as the server holds it.

export class Bot {
  // A bot with its own browser profile, parked on the daemon's origin (so its WebSocket
  // passes the same-origin check the chat page passes). `token`: for a daemon that wants one.
  static async create(browser, url, name, { token } = {}) {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${url}/client.json`);
    return new Bot(page, name, token);
  }

  constructor(page, name, token) {
    this.page = page;
    this.name = name;
    this.token = token;
  }

  // Connects and logs in; throws when the daemon is not there.
  connect() {
    return this.page.evaluate(async ({ name, token }) => {
      const socket = new WebSocket(`${location.origin.replace(/^http/, 'ws')}/ws`);
      const waiting = new Map();
      let nextId = 1;
      await new Promise((resolve, reject) => {
        socket.onopen = resolve;
        socket.onerror = () => reject(new Error('cannot connect'));
      });
      socket.onmessage = (event) => {
        const message = JSON.parse(event.data);
        const waiter = message.re !== undefined && waiting.get(message.re);
        if (!waiter) return;
        waiting.delete(message.re);
        if (message.type === 'error') waiter.reject(new Error(`${message.code}: ${message.message}`));
        else waiter.resolve(message);
      };
      socket.onclose = () => {
        for (const waiter of waiting.values()) waiter.reject(new Error('connection closed'));
        waiting.clear();
      };
      window.botSocket = socket;
      window.botRequest = (message) => new Promise((resolve, reject) => {
        const id = nextId++;
        waiting.set(id, { resolve, reject });
        socket.send(JSON.stringify({ ...message, id }));
      });
      await window.botRequest({ type: 'login', user: name, ...(token ? { token } : {}) });
    }, { name: this.name, token: this.token });
  }

  // Connects, retrying every 50 ms for up to timeoutMs (the daemon is restarting).
  async connectWhenUp(timeoutMs = 10000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        return await this.connect();
      } catch (e) {
        if (Date.now() > deadline) throw e;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  request(message) { return this.page.evaluate((m) => window.botRequest(m), message); }

  join(room) { return this.request({ type: 'join', room }); }
  // Resolves with the seq the server gave the message.
  async say(room, text) { return (await this.request({ type: 'say', room, text })).seq; }
  // A direct message; resolves with its seq where the daemon stores conversations.
  async dm(to, text) { return (await this.request({ type: 'dm', to, text })).seq; }
  // Several direct messages sent at once, without waiting for each ack: they reach the
  // recipient in one burst. Resolves with their seqs.
  dmBurst(to, texts) {
    return this.page.evaluate(({ to, texts }) => Promise.all(texts.map((text) => window.botRequest({ type: 'dm', to, text })))
      .then((acks) => acks.map((a) => a.seq)), { to, texts });
  }

  // Every message of the room, oldest first, as the server holds it.
  async allMessages(room) {
    const all = [];
    let after = 0;
    for (;;) {
      const page = await this.request({ type: 'history', room, after, limit: 500 });
      all.push(...page.messages);
      if (page.messages.length < 500) return all;
      after = page.messages[page.messages.length - 1].seq;
    }
  }

  close() { return this.page.context().close(); }
}
