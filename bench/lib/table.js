/** Prints rows as an aligned text table: the first row is the header, numbers align right. */
export function printTable(title, rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i] ?? '').length)));
  const numeric = rows[0].map((_, i) => rows.slice(1).every((r) => /^[-+~]?[\d.,]+( ?[a-zA-Z%/]+)?$|^-$/.test(String(r[i] ?? ''))));
  const line = (r) =>
    r
      .map((cell, i) => {
        const text = String(cell ?? '');
        return numeric[i] && r !== rows[0] ? text.padStart(widths[i]) : text.padEnd(widths[i]);
      })
      .join('  ')
      .trimEnd();
  const out = [`\n${title}`, line(rows[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)];
  process.stdout.write(out.join('\n') + '\n');
}
