// What a process and its descendants are doing, read from Linux's /proc: for each process its
// command and, for each of its threads, its name, state and the share of a core it used over
// `sampleMs`. Printed when a browser stops answering (webkit.js), it tells a page whose main
// thread is busy (a thread at ~100%) from one that waits for something (every thread asleep).
import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

// /proc/PID/stat's fields after the command's closing parenthesis (which may hold spaces):
// state is the first, ppid the second, utime and stime the 12th and 13th (proc(5)).
async function stat(path) {
  const text = await readFile(path, 'utf8').catch(() => null);
  if (text === null) return null;
  const close = text.lastIndexOf(')');
  const fields = text.slice(close + 2).split(' ');
  return {
    name: text.slice(text.indexOf('(') + 1, close),
    state: fields[0],
    ppid: Number(fields[1]),
    ticks: Number(fields[11]) + Number(fields[12]),
  };
}

async function descendants(root) {
  const all = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const info = await stat(`/proc/${entry}/stat`);
    if (info) all.push({ pid: Number(entry), ...info });
  }
  const found = [root];
  for (let i = 0; i < found.length; i++) {
    for (const p of all) if (p.ppid === found[i]) found.push(p.pid);
  }
  return found;
}

async function threads(pid) {
  const tids = await readdir(`/proc/${pid}/task`).catch(() => []);
  const result = new Map();
  for (const tid of tids) {
    const info = await stat(`/proc/${pid}/task/${tid}/stat`);
    if (info) result.set(tid, info);
  }
  return result;
}

// Lines describing `root` and every process under it: each process's main thread and every
// thread that ran in the sample or is runnable; the rest are counted.
export async function describeProcessTree(root, { sampleMs = 1000 } = {}) {
  const pids = await descendants(root);
  const before = new Map(await Promise.all(pids.map(async (pid) => [pid, await threads(pid)])));
  await sleep(sampleMs);
  const hz = 100; // USER_HZ, 100 on every Linux target Node supports
  const lines = [];
  for (const pid of pids) {
    const command = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0')[0];
    lines.push(`pid ${pid} ${command}`);
    let quiet = 0;
    for (const [tid, now] of await threads(pid)) {
      const then = before.get(pid)?.get(tid);
      const busy = then ? (now.ticks - then.ticks) / hz / (sampleMs / 1000) : 0;
      if (Number(tid) === pid || busy > 0 || now.state !== 'S') {
        lines.push(`  thread ${tid} ${now.name}${Number(tid) === pid ? ' (main)' : ''}: state ${now.state}, ${Math.round(busy * 100)}% of a core`);
      } else {
        quiet += 1;
      }
    }
    if (quiet) lines.push(`  ${quiet} other threads asleep`);
  }
  return lines;
}
