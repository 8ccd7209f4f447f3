// The Working Group's reference server for SEP-2640, as its README shows it:
// discoverSkills + registerSkillResources over the v2 MCP SDK, serving DIR.
//
//   node server.mjs DIR            stdio (either protocol era)
//   node server.mjs --http DIR     streamable HTTP on 127.0.0.1, a free port;
//                                  prints "listening http://127.0.0.1:PORT/mcp"
//                                  on stderr once it accepts connections
//
// Everything else the SDK logs (skipped skills, warnings) goes to stderr too.
import * as http from "node:http";
import { McpServer, createMcpHandler } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { discoverSkills, registerSkillResources } from "@olaservo/ext-skills/server";

const args = process.argv.slice(2);
const useHTTP = args[0] === "--http";
const dir = useHTTP ? args[1] : args[0];
if (!dir) {
  console.error("usage: node server.mjs [--http] DIR");
  process.exit(2);
}

const skillMap = discoverSkills(dir);

function factory() {
  const server = new McpServer(
    { name: "wg-ext-skills", version: "0.14.0" },
    { capabilities: { resources: {} } },
  );
  registerSkillResources(server, skillMap, dir, { directoryRead: true });
  return server;
}

if (!useHTTP) {
  serveStdio(factory);
} else {
  const handler = createMcpHandler(factory);
  const srv = http.createServer(async (req, res) => {
    try {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const body = Buffer.concat(chunks);
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) {
        if (Array.isArray(v)) v.forEach((x) => headers.append(k, x));
        else if (v !== undefined) headers.set(k, v);
      }
      const ac = new AbortController();
      res.on("close", () => ac.abort());
      const request = new Request(`http://${req.headers.host}${req.url}`, {
        method: req.method,
        headers,
        body: req.method === "GET" || req.method === "HEAD" || body.length === 0 ? undefined : body,
        signal: ac.signal,
      });
      const response = await handler.fetch(request);
      res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
      if (response.body) {
        for await (const chunk of response.body) res.write(chunk);
      }
      res.end();
    } catch (err) {
      if (!res.headersSent) res.writeHead(500);
      res.end();
      if (err?.name !== "AbortError") console.error("server.mjs:", err);
    }
  });
  srv.listen(0, "127.0.0.1", () => {
    console.error(`listening http://127.0.0.1:${srv.address().port}/mcp`);
  });
  const stop = () => {
    handler.close().finally(() => process.exit(0));
    srv.close();
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
