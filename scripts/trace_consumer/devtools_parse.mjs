// Parses a Chrome trace-event JSON file with Chrome DevTools' trace engine
// (@paulirish/trace_engine: the Performance panel's parser, published for
// node) and prints what it understood as JSON on stdout:
//   {"bounds": {"min_us", "max_us"},
//    "threads": [{"pid", "tid", "name", "entries", "roots": [{"name", "ts_us", "dur_us", "children"}]}]}
// "roots" are the top-level slices of the thread's call tree that DevTools
// built. Exit 1 (message on stderr) when the engine rejects the trace.
// Usage: node scripts/trace_consumer/devtools_parse.mjs TRACE.json
import fs from 'node:fs';
import * as Trace from '@paulirish/trace_engine';

// The engine reads window.DOMRect at load in the browser; node has none.
globalThis.DOMRect ??= class DOMRect {
  constructor(x = 0, y = 0, width = 0, height = 0) {
    Object.assign(this, {x, y, width, height});
  }
};

const file = process.argv[2];
if (!file) {
  console.error('usage: node devtools_parse.mjs TRACE.json');
  process.exit(2);
}
const errors = [];
const origError = console.error;
console.error = (...a) => errors.push(a.join(' '));  // the engine reports mismatches here
try {
  const json = JSON.parse(fs.readFileSync(file, 'utf8'));
  const events = Array.isArray(json) ? json : json.traceEvents;
  const model = Trace.TraceModel.Model.createWithAllHandlers();
  await model.parse(events);
  const data = model.parsedTrace().data;
  const threads = [];
  for (const [pid, proc] of data.Renderer.processes) {
    for (const [tid, thread] of proc.threads) {
      const roots = thread.tree ? [...thread.tree.roots] : [];
      threads.push({
        pid, tid, name: thread.name ?? null, entries: thread.entries.length,
        roots: roots.map(n => ({name: n.entry.name, ts_us: n.entry.ts, dur_us: n.entry.dur ?? 0,
                                children: n.children.length})),
      });
    }
  }
  const b = data.Meta.traceBounds;
  console.error = origError;
  if (errors.length) {
    console.error('DevTools trace engine: ' + errors.join('\n'));
    process.exit(1);
  }
  process.stdout.write(JSON.stringify({bounds: {min_us: b.min, max_us: b.max}, threads}) + '\n');
} catch (e) {
  console.error = origError;
  console.error('DevTools trace engine rejected ' + file + ': ' + (e && e.stack || e));
  process.exit(1);
}
