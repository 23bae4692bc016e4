// Queries memowm Parquet files with DuckDB (@duckdb/node-api) and prints what
// it read as JSON, for interop_test.go to compare with what memowm wrote.
//
// Usage: node check_duckdb.mjs SPEC.json, SPEC mapping "states" and "codes" to
// {path: X.parquet, samples: [flat indices into the observation]}.
import { DuckDBInstance, version } from "@duckdb/node-api";
import { readSpec, bits, hex, obs, int, print } from "./lib.mjs";

const spec = readSpec("node check_duckdb.mjs SPEC.json");
// Everything used here is built into the binding; never fetch an extension.
const instance = await DuckDBInstance.create(":memory:", { autoinstall_known_extensions: "false" });
const con = await instance.connect();
const all = async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJS();
const literal = (s) => "'" + s.replaceAll("'", "''") + "'";

const report = { reader: "duckdb " + version() };
for (const [name, { path, samples }] of Object.entries(spec)) {
  const file = `read_parquet(${literal(path)})`;
  const col = name === "states" ? "state" : "codes";

  const columns = (await all(`DESCRIBE SELECT * FROM ${file}`)).map((r) => ({ name: r.column_name, type: r.column_type }));
  const metadata = {};
  for (const r of await all(`SELECT decode(key) AS key, decode(value) AS value FROM parquet_kv_metadata(${literal(path)})`)) {
    if (r.key.startsWith("memowm.")) metadata[r.key] = r.value;
  }

  const episodes = (await all(`
    SELECT episode, count(*) AS rows, min(step) AS first_step, max(step) AS last_step
    FROM ${file} GROUP BY episode ORDER BY episode`)).map((r) => ({
    episode: r.episode.toString(), rows: int(r.rows), first_step: int(r.first_step), last_step: int(r.last_step),
  }));

  const actionCounts = (await all(`
    SELECT action_type, count(*) AS rows
    FROM ${file} WHERE action_type IS NOT NULL GROUP BY action_type ORDER BY action_type`)).map((r) => ({
    action_type: int(r.action_type), rows: int(r.rows),
  }));

  // The sampled values come from SQL (lists are 1-based); the hash covers the
  // whole observation as JavaScript received it.
  const picks = samples.map((j, k) => `${col}[${j + 1}] AS s${k}`).join(", ");
  const rows = (await all(`
    SELECT episode, step, action_type, pos_x, pos_y, dx, dy, payload, facts,
           json_extract_string(facts, '$.page') AS page, len(${col}) AS n, ${col} AS o, ${picks}
    FROM ${file} ORDER BY episode, step`)).map((r) => {
    const o = col === "state" ? Float32Array.from(r.o) : Uint8Array.from(r.o);
    const sql = samples.map((_, k) => (col === "state" ? bits(r[`s${k}`]) : r[`s${k}`]));
    const whole = obs(o, samples);
    if (int(r.n) !== whole.obs_len || JSON.stringify(sql) !== JSON.stringify(whole.obs_sample)) {
      throw new Error(`episode ${r.episode} step ${r.step}: SQL's len() and ${col}[i] disagree with the list DuckDB returned`);
    }
    return {
      episode: r.episode.toString(), step: int(r.step), action_type: int(r.action_type),
      pos_x: bits(r.pos_x), pos_y: bits(r.pos_y), dx: bits(r.dx), dy: bits(r.dy),
      payload: r.payload === null ? null : hex(r.payload.bytes ?? r.payload),
      facts: r.facts, page: r.page, ...whole,
    };
  });
  report[name] = { columns, metadata, episodes, action_counts: actionCounts, rows };
}
print(report);
