// CPU time per request, from /proc (Linux): a server process's own, and PostgreSQL's beside it. Unlike
// requests per second, CPU per request does not depend on how busy the machine is (up to cache and
// frequency effects), so it is the bench's headline on a shared 2-core machine.
import { readdirSync, readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

/** USER_HZ: /proc's CPU times are in these ticks (100 on Linux everywhere but exotic builds). */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;

/**
 * A process's CPU milliseconds so far (utime + stime), or null when it cannot be read (gone, not Linux).
 * /proc/<pid>/stat of a process (its thread group leader) sums every thread's time, those that ended
 * included, so libuv's pool and Node's worker and GC threads are counted; its children are not.
 */
export function cpuMs(pid: number): number | null {
  const fields = statFields(pid);
  return fields ? ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS : null;
}

/** A process's system (kernel) CPU milliseconds so far: its syscalls, the loopback network stack's work on its sends included. */
export function systemCpuMs(pid: number): number | null {
  const fields = statFields(pid);
  return fields ? (Number(fields[12]) * 1000) / CLOCK_TICKS : null;
}

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces): state is [0], ppid [1], utime [11], stime [12]. */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** The parent of a process, or null when /proc does not show it (another machine or container, not Linux). */
export function parentPid(pid: number): number | null {
  const fields = statFields(pid);
  return fields ? Number(fields[1]) : null;
}

/**
 * PostgreSQL's processes on this machine: the postmaster's children (the backends, and the writers and
 * autovacuum the load also costs). `database` keeps only the backends of that database, from the
 * process title PostgreSQL gives each backend ("postgres: user database host(port) state"): on a
 * server the bench shares with others (DATABASE_URL), their work is not the measured server's.
 */
export function postgresChildren(postmaster: number, database?: string): number[] {
  const children: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return children;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (parentPid(pid) !== postmaster) continue;
    if (database !== undefined) {
      let title = '';
      try {
        title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      } catch {
        continue;
      }
      if (!title.split(' ').includes(database)) continue;
    }
    children.push(pid);
  }
  return children;
}

export interface CpuUsed {
  /** The server process's CPU milliseconds over the window. */
  serverMs: number;
  /** The part of serverMs spent in the kernel (system time). */
  serverSystemMs: number;
  /** PostgreSQL's (every process `postgres` listed), or null when its processes cannot be seen. */
  postgresMs: number | null;
}

/**
 * CPU used over a window by one server process and by a set of PostgreSQL processes. PostgreSQL's set
 * is listed again at every sample: a backend that connects during the window counts from zero; one
 * that exits during it keeps its CPU up to the last sample that saw it (sample often enough; pools keep
 * their connections open, so under load this is rare).
 */
export class CpuWindow {
  private readonly serverStart: number;
  private readonly serverSystemStart: number;
  private readonly first = new Map<number, number>();
  private readonly last = new Map<number, number>();

  constructor(
    private readonly pid: number,
    /** PostgreSQL's processes now; null = cannot be seen. */
    private readonly postgres: () => number[] | null,
  ) {
    this.seePostgres(true);
    this.serverStart = cpuMs(pid) ?? 0;
    this.serverSystemStart = systemCpuMs(pid) ?? 0;
  }

  /** Lists PostgreSQL's processes again (newcomers from zero) and reads each one's CPU. */
  sample(): void {
    this.seePostgres(false);
  }

  /** The window ends now: the server first (the measured thing), then PostgreSQL. */
  stop(): CpuUsed {
    const server = cpuMs(this.pid);
    const system = systemCpuMs(this.pid) ?? this.serverSystemStart;
    if (server === null) throw new Error(`process ${this.pid} is gone: its CPU cannot be read`);
    const visible = this.seePostgres(false);
    let postgresMs = 0;
    for (const [pid, first] of this.first) postgresMs += (this.last.get(pid) ?? first) - first;
    return { serverMs: server - this.serverStart, serverSystemMs: system - this.serverSystemStart, postgresMs: visible ? postgresMs : null };
  }

  private seePostgres(atStart: boolean): boolean {
    const pids = this.postgres();
    if (pids === null) return false;
    for (const pid of pids) {
      const now = cpuMs(pid);
      if (now === null) continue;
      if (!this.first.has(pid)) this.first.set(pid, atStart ? now : 0);
      this.last.set(pid, now);
    }
    return true;
  }
}
