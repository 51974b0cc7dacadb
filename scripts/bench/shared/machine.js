// What a run names its machine by: the CPU's model name and the logical CPUs Node sees, for
// the tables' titles and the results files (a ratio means little without the machine it was
// measured on).
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

export function cpuName() {
  const match = readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.+)$/m);
  return match ? match[1].trim() : 'unknown CPU';
}

/** e.g. "AMD EPYC 7B13, 2 logical CPUs, Node 20.20.2". */
export const machine = () => `${cpuName()}, ${availableParallelism()} logical CPUs, Node ${process.versions.node}`;
