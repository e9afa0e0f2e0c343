/**
 * How the conformance kit prints its report: a pass/fail table of the rows, then every exchange of
 * every row (request: method, path, webhook-id, signing, body; answer: status and body; its class
 * under the operator's answer table; time), as text tables (cli-table3, no colours: the output is
 * also piped to files), or the whole report as JSON.
 */
import Table from 'cli-table3';
import type { Recorded } from './driver.ts';
import type { ConformanceReport, RowResult } from './runner.ts';

const STYLE = { head: [], border: [] };

/** The summary: one line a row. */
function summary(report: ConformanceReport): string {
  const t = new Table({
    head: ['#', 'row', 'result', 'checked', 'seen'],
    colWidths: [4, 28, 8, 48, 56],
    wordWrap: true,
    style: STYLE,
  });
  report.rows.forEach((r, i) => {
    t.push([String(i + 1), `${r.title}\n(${r.id})`, r.pass ? 'PASS' : 'FAIL', r.rule, r.detail]);
  });
  return t.toString();
}

function requestCell(x: Recorded, baseUrl: string): string {
  const path = x.request.url.startsWith(baseUrl) ? x.request.url.slice(baseUrl.length) : x.request.url;
  const signing = x.request.signing === 'valid' ? '' : ` [${x.request.signing}]`;
  return `${x.request.method} ${path}${signing}\nwebhook-id ${x.request.webhook_id}\n${JSON.stringify(x.request.body)}`;
}

function answerCell(x: Recorded): string {
  const a = x.answer;
  if ('status' in a)
    return `HTTP ${a.status}\n${typeof a.body === 'string' ? a.body : JSON.stringify(a.body)}`;
  if ('timeout_ms' in a) return `no answer within ${a.timeout_ms} ms`;
  return a.error;
}

function exchanges(row: RowResult, baseUrl: string): string {
  const t = new Table({
    head: ['step', 'request', 'answer', 'class', 'ms'],
    colWidths: [20, 62, 42, 20, 7],
    wordWrap: true,
    wrapOnWordBoundary: false,
    style: STYLE,
  });
  for (const x of row.exchanges)
    t.push([
      x.step,
      requestCell(x, baseUrl),
      answerCell(x),
      [x.class, x.code ?? '', x.schema && x.schema.problems.length > 0 ? 'not as its schema' : '']
        .join('\n')
        .trim(),
      String(x.ms),
    ]);
  return t.toString();
}

/** The report as text: header, summary table, the exchanges of each row, the verdict line. */
export function formatReport(report: ConformanceReport): string {
  const o = report.operator;
  const p = report.player;
  const passed = report.rows.filter((r) => r.pass).length;
  return [
    `Wallet conformance of ${o.id} (form ${o.form}, ${o.base_url}, answer table ${o.preset}, timeout ${o.timeout_ms} ms, amounts as ${o.amount_format}s)`,
    `Test player ${p.user_id} (${p.currency}), session token ${p.session_token}; started ${report.started_at}`,
    summary(report),
    ...report.rows.flatMap((r, i) => [
      `${i + 1}. ${r.title} (${r.id}): ${r.pass ? 'PASS' : 'FAIL'}, ${r.ms} ms`,
      exchanges(r, o.base_url),
    ]),
    `${passed} of ${report.rows.length} rows passed${
      report.passed
        ? ''
        : `; failed: ${report.rows
            .filter((r) => !r.pass)
            .map((r) => r.id)
            .join(', ')}`
    }`,
  ].join('\n');
}

/** The report as JSON (every request and answer body parsed). */
export function reportJson(report: ConformanceReport): string {
  return JSON.stringify(report, null, 2);
}
