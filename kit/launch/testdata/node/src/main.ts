// The smallest app of tunecon's contract: it reads its address from the
// environment, keeps a row in SQLite and says where it listens.
import express from "express";
import { DatabaseSync } from "node:sqlite";

const db = new DatabaseSync(":memory:");
db.exec("CREATE TABLE greeting (text TEXT NOT NULL)");
db.prepare("INSERT INTO greeting (text) VALUES (?)").run("hello from node:sqlite");

const app = express();
app.get("/", (_req, res) => {
  const row = db.prepare("SELECT text FROM greeting").get() as { text: string };
  res.type("text/plain").send(row.text);
});

const [host, port] = (process.env.APP_ADDR ?? "127.0.0.1:0").split(":");
const server = app.listen(Number(port), host, () => {
  const addr = server.address();
  if (addr && typeof addr === "object") {
    console.log(`listening on http://${addr.address}:${addr.port}`);
  }
});
