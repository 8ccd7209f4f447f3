// A host built on the Working Group's client helpers for SEP-2640, run
// against a skill server, checking what it gets against the folder the
// server serves. It prints one line per check ("ok ..." or "FAIL ...") and
// exits 1 if any failed, 2 on bad usage.
//
//   node client.mjs --dir DIR --expect URI,URI --refused URI,URI
//                   [--era legacy|auto|2026-07-28] (--url URL | -- CMD ARG...)
//
// --expect lists every skill the server must publish, --refused skills it
// must not (skills/get answers -32602 for them). The checks do not trust the
// SDK alone: besides its verified reads (readSkill, readSkillResource) the
// script compares every file's bytes, size and sha256 with the file on disk,
// and every entry's frontmatter with the SKILL.md parsed by `yaml`.
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import {
  serverSupportsSkills,
  serverSupportsDirectoryRead,
  listSkills,
  getSkill,
  readSkill,
  readSkillResource,
  readSkillUri,
  readDirectory,
  walkDirectory,
  manifestOf,
  checkSkillLimits,
} from "@olaservo/ext-skills/client";
import { parse as parseYaml } from "yaml";

function usage(msg) {
  console.error(`client.mjs: ${msg}`);
  process.exit(2);
}

const argv = process.argv.slice(2);
const opts = { expect: [], refused: [], era: "legacy" };
let command;
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const val = () => (++i < argv.length ? argv[i] : usage(`${a} needs a value`));
  if (a === "--") { command = argv.slice(i + 1); break; }
  else if (a === "--dir") opts.dir = val();
  else if (a === "--url") opts.url = val();
  else if (a === "--era") opts.era = val();
  else if (a === "--expect") opts.expect = val().split(",").filter(Boolean);
  else if (a === "--refused") opts.refused = val().split(",").filter(Boolean);
  else usage(`unknown argument ${a}`);
}
if (!opts.dir || (!opts.url && !command?.length)) usage("need --dir and --url or -- CMD");

let failures = 0;
function check(ok, what, detail) {
  if (ok) console.log(`ok   ${what}`);
  else {
    failures++;
    console.log(`FAIL ${what}${detail ? `: ${detail}` : ""}`);
  }
}
async function attempt(what, fn) {
  try {
    return await fn();
  } catch (err) {
    check(false, what, err?.message ?? String(err));
    return undefined;
  }
}

const sha256 = (b) => "sha256:" + createHash("sha256").update(b).digest("hex");
// A skill:// URI's file below DIR: authority and path segments, decoded.
function diskPath(uri) {
  const rest = uri.replace(/^skill:\/\//, "");
  return path.join(opts.dir, ...rest.split("/").map(decodeURIComponent));
}
const lastSegment = (uri) => decodeURIComponent(uri.slice(uri.lastIndexOf("/") + 1));
// The JSON data model of a SKILL.md's frontmatter, as a host renders it.
function frontmatterOf(bytes) {
  const m = bytes.toString("utf-8").match(/^---\r?\n([\s\S]*?)\r?\n---(?:\r?\n|$)/);
  return m ? JSON.parse(JSON.stringify(parseYaml(m[1]))) : undefined;
}
function sameJSON(a, b) {
  const canon = (v) =>
    Array.isArray(v) ? v.map(canon)
      : v && typeof v === "object" ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])]))
        : v;
  return JSON.stringify(canon(a)) === JSON.stringify(canon(b));
}

const negotiation = opts.era === "legacy" || opts.era === "auto" ? { mode: opts.era } : { mode: { pin: opts.era } };
const client = new Client({ name: "skillfs-interop", version: "0" }, { versionNegotiation: negotiation });
const transport = opts.url
  ? new StreamableHTTPClientTransport(new URL(opts.url))
  : new StdioClientTransport({ command: command[0], args: command.slice(1), stderr: "inherit" });

try {
  await client.connect(transport);
} catch (err) {
  check(false, "connect", err?.message ?? String(err));
  process.exit(1);
}
check(true, `connect (protocol ${client.getNegotiatedProtocolVersion?.() ?? "?"})`);

check(serverSupportsSkills(client) === true, "capabilities declare io.modelcontextprotocol/skills");
check(serverSupportsDirectoryRead(client), "capabilities declare directoryRead");

const listed = (await attempt("skills/list", () => listSkills(client))) ?? [];
const listedURIs = listed.map((e) => e.uri).sort();
check(sameJSON(listedURIs, [...opts.expect].sort()), "skills/list publishes exactly the expected skills",
  `got ${JSON.stringify(listedURIs)}, want ${JSON.stringify([...opts.expect].sort())}`);

const served = new Set(); // every file URI some entry lists
for (const listedEntry of listed) {
  const uri = listedEntry.uri;
  const entry = await attempt(`skills/get ${uri}`, () => getSkill(client, uri));
  if (!entry) continue;
  check(sameJSON(entry, listedEntry), `skills/get ${uri} equals its skills/list entry`);
  const manifest = await attempt(`manifest of ${uri}`, () => manifestOf(entry));
  if (!manifest) continue;
  check(checkSkillLimits(entry).withinLimits, `${uri} is within SEP-2640's limits`);

  // The manifest is every file below the skill's folder, nothing else.
  const skillDir = path.dirname(diskPath(uri));
  const onDisk = fs.readdirSync(skillDir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => path.relative(skillDir, path.join(d.parentPath ?? d.path, d.name)))
    .sort();
  const listedFiles = manifest.map((r) => path.relative(skillDir, diskPath(r.uri))).sort();
  check(sameJSON(listedFiles, onDisk), `${uri} lists every file of its folder`,
    `got ${JSON.stringify(listedFiles)}, want ${JSON.stringify(onDisk)}`);

  const mdBytes = fs.readFileSync(diskPath(uri));
  check(sameJSON(entry.frontmatter, frontmatterOf(mdBytes)), `${uri} frontmatter equals the SKILL.md's`,
    `entry ${JSON.stringify(entry.frontmatter)}`);
  const text = await attempt(`readSkill ${uri} (SDK-verified: size, digest, frontmatter)`, () => readSkill(client, entry));
  if (text !== undefined) {
    check(Buffer.from(text, "utf-8").equals(mdBytes), `readSkill ${uri} returns the bytes on disk`);
    check(true, `readSkill ${uri} (SDK-verified: size, digest, frontmatter)`);
  }

  for (const ref of manifest) {
    served.add(ref.uri);
    const want = fs.readFileSync(diskPath(ref.uri));
    check(ref.size === want.length, `${ref.uri} size ${ref.size} is the file's`, `file has ${want.length}`);
    check(ref.digest === sha256(want), `${ref.uri} digest is the file's`);
    const got = await attempt(`readSkillResource ${ref.uri}`, () => readSkillResource(client, entry, ref.uri));
    if (!got) continue;
    const bytes = typeof got.text === "string" ? Buffer.from(got.text, "utf-8") : Buffer.from(got.blob ?? "", "base64");
    check(bytes.equals(want), `readSkillResource ${ref.uri} (SDK-verified) returns the bytes on disk`,
      `${bytes.length} bytes, want ${want.length}`);
  }
  // The SEP's baseline: a SKILL.md URI alone reads, verified by digest.
  const self = manifest.find((r) => r.uri === uri);
  await attempt(`readSkillUri ${uri} with its digest`, () => readSkillUri(client, uri, self?.digest));
}

for (const uri of opts.refused) {
  let code;
  try {
    await getSkill(client, uri);
  } catch (err) {
    code = err?.code;
  }
  check(code === -32602, `skills/get ${uri} (refused) answers -32602`, `code ${code}`);
  check(!listedURIs.includes(uri), `${uri} (refused) is not listed`);
}

// Directory reads from every top-level folder reach exactly the served
// files; every child is named by its last segment.
const tops = [...new Set([...served].map((u) => u.match(/^skill:\/\/[^/]+/)[0]))].sort();
const walked = new Set();
for (const top of tops) {
  const files = await attempt(`walkDirectory ${top}`, () => walkDirectory(client, top));
  for (const f of files ?? []) walked.add(f.uri);
}
check(sameJSON([...walked].sort(), [...served].sort()), "directory reads reach exactly the files the skills list",
  `walked ${walked.size}, listed ${served.size}`);
const dirs = [...tops];
const badNames = [];
for (let i = 0; i < dirs.length; i++) {
  let cursor;
  do {
    const page = await attempt(`resources/directory/read ${dirs[i]}`, () => readDirectory(client, dirs[i], { cursor }));
    if (!page) break;
    for (const c of page.resources) {
      if (c.name !== lastSegment(c.uri)) badNames.push(`${c.uri} named ${JSON.stringify(c.name)}`);
      if (c.mimeType === "inode/directory") dirs.push(c.uri);
    }
    cursor = page.nextCursor;
  } while (cursor);
}
check(badNames.length === 0, `every directory child (${dirs.length} directories) is named by its last URI segment`, badNames.join("; "));

for (const uri of listedURIs) {
  const dir = uri.slice(0, uri.lastIndexOf("/"));
  const page = await attempt(`resources/directory/read ${dir}`, () => readDirectory(client, dir));
  const md = page?.resources.find((c) => c.uri === uri);
  check(md?.name === "SKILL.md" && md?.mimeType === "text/markdown", `${dir} lists SKILL.md as "SKILL.md", text/markdown`, JSON.stringify(md));
}

await client.close();
console.log(failures === 0 ? "PASS" : `${failures} check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
