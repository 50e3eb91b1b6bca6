// parley.d.ts checked by the TypeScript compiler (ctest client_js_types): the README's example
// and the rest of the API type-check under --strict, and the misuses marked @ts-expect-error
// are errors (were the types too loose, those marks would themselves fail the check).

import { Backoff, Disconnected, ParleyClient, ServerError, Timeout, type ConnectionState, type RoomEvent } from '../../parley.js';

async function readme(): Promise<number | undefined> {
  const chat = new ParleyClient('wss://chat.example.org/ws', { user: 'alice' });
  chat.on('messages', ({ room, added }) => added.forEach((m) => console.log(room, m.from, m.text)));
  chat.on('state', (s) => console.log('connection:', s.name, s.reason ?? ''));
  await chat.connect();
  await chat.join('lobby');
  const { seq } = await chat.say('lobby', 'hello');
  await chat.dm('bob', 'psst');
  await chat.loadOlder('lobby');
  return seq;
}

async function more(): Promise<void> {
  const chat = new ParleyClient('ws://localhost:8080/ws', {
    user: 'bob', token: 'a.b.c', rooms: ['lobby'], backoff: new Backoff({ base: 250 }), heartbeatMs: 10000,
  });
  const welcome = await chat.connect();
  const user: string = welcome.user;
  const room = await chat.join('lobby');
  const held: RoomEvent[] = room.log.messages;
  const members: Set<string> = room.members;
  const older: RoomEvent[] = await chat.history('lobby', { before: 10, limit: 20 });
  const dms = await chat.dmHistory('alice', { after: 3 });
  const stop = chat.on('dm', (m) => console.log(m.from, m.to, m.text, m.seq ?? 'live'));
  stop();
  chat.on('removed', ({ room: name, reason }) => console.log(name, reason));
  chat.on('reset', (name: string) => console.log(name));
  const state: ConnectionState = chat.state;
  try {
    await chat.say('lobby', 'hi');
  } catch (e) {
    if (e instanceof ServerError) console.log(e.code, e.reply.type);
    else if (e instanceof Disconnected || e instanceof Timeout) console.log(e.code);
  }
  chat.typing('lobby');
  await chat.leave('lobby');
  chat.close();
  // The browser's own WebSocket class fits the WebSocket option.
  const viaDom = new ParleyClient('ws://localhost:8080/ws', { user: 'carol', WebSocket });
  console.log(user, held, members, older, dms, state, viaDom);

  // @ts-expect-error: a text is a string
  await chat.say('lobby', 42);
  // @ts-expect-error: no such event
  chat.on('mesages', () => {});
  // @ts-expect-error: the state's name is one of five
  const wrong: ConnectionState = { name: 'sleeping' };
  // @ts-expect-error: a room's members are a set, not an array
  const list: string[] = room.members;
  console.log(wrong, list);
}

export { readme, more };
