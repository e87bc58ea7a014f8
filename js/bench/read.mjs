// What a router reads of a parsed message, shared by the bench scripts: the kind, the id's
// value, the method, the tool name. The reads land in `sink`, which each script prints, so
// that no engine can drop them.

/** Running total of what `readMessage` read. */
export const sink = { n: 0 };

/** Reads what a router reads of `m` and returns its kind. */
export function readMessage(m) {
  if (m.id !== null && m.id.value !== null) sink.n++;
  if (m.method !== null) sink.n += m.method.length;
  if (m.toolName !== null) sink.n++;
  return m.kind;
}
