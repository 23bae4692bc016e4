// Reads memowm Arrow IPC files with Apache Arrow JS (apache-arrow) and prints
// what it read as JSON, for interop_test.go to compare with what memowm wrote.
//
// Usage: node check_arrow.mjs SPEC.json, SPEC mapping "states" and "codes" to
// {path: X.arrow, samples: [flat indices into the observation]}.
import { readFileSync } from "node:fs";
import { tableFromIPC } from "apache-arrow";
import { readSpec, bits, hex, obs, print } from "./lib.mjs";

const spec = readSpec("node check_arrow.mjs SPEC.json");
const arrowVersion = JSON.parse(readFileSync(new URL("./node_modules/apache-arrow/package.json", import.meta.url), "utf8")).version;

const report = { reader: "apache-arrow " + arrowVersion };
for (const [name, { path, samples }] of Object.entries(spec)) {
  const table = tableFromIPC(readFileSync(path));
  const col = (n) => {
    const c = table.getChild(n);
    if (c === null) throw new Error(`${path}: no column ${n}`);
    return c;
  };
  const fields = table.schema.fields.map((f) => ({ name: f.name, type: String(f.type), nullable: f.nullable }));
  const metadata = Object.fromEntries(table.schema.metadata);
  const o = col(name === "states" ? "state" : "codes");
  const [episode, step, action, x, y, dx, dy, payload, facts] =
    ["episode", "step", "action_type", "pos_x", "pos_y", "dx", "dy", "payload", "facts"].map(col);
  const rows = [];
  for (let i = 0; i < table.numRows; i++) {
    rows.push({
      episode: episode.get(i).toString(), step: step.get(i), action_type: action.get(i),
      pos_x: bits(x.get(i)), pos_y: bits(y.get(i)), dx: bits(dx.get(i)), dy: bits(dy.get(i)),
      payload: hex(payload.get(i)), facts: facts.get(i), ...obs(o.get(i).toArray(), samples),
    });
  }
  report[name] = { fields, metadata, batches: table.batches.length, rows };
}
print(report);
