// The baseline of the admission section: a bare node:https server that does the least any webhook must do (read
// the body, JSON.parse it, answer an AdmissionReview) with the webhook's own answer as a fixed reply, so that both
// servers move the same bytes. Run as its own process:
//   node --import tsx bench/bare-server.ts PORT CERT KEY ANSWER_FILE
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';

const [port, certFile, keyFile, answerFile] = process.argv.slice(2);
if (port === undefined || certFile === undefined || keyFile === undefined || answerFile === undefined) {
  console.error('usage: bare-server.ts PORT CERT KEY ANSWER_FILE');
  process.exit(2);
}
const answer = readFileSync(answerFile);
const server = createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile), minVersion: 'TLSv1.2' }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let review: unknown;
    try {
      review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400).end();
      return;
    }
    const ok = typeof review === 'object' && review !== null;
    res.writeHead(ok ? 200 : 400, { 'content-type': 'application/json; charset=utf-8', 'content-length': answer.length });
    res.end(answer);
  });
});
server.keepAliveTimeout = 72_000;
server.listen(Number(port), '127.0.0.1', () => console.log('listening'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
