import { parser } from '@prometheus-io/lezer-promql';

/**
 * Syntax errors of a PromQL expression, by the grammar Prometheus' own web UI parses with (`@prometheus-io/lezer-promql`),
 * so that the check runs in plain `npm test`, with or without promtool. Each names where it is and what is around it.
 */
export function promqlSyntaxErrors(expr: string): string[] {
  const errors: string[] = [];
  parser.parse(expr).iterate({
    enter: (node) => {
      if (!node.type.isError) return;
      const from = Math.max(0, node.from - 15);
      errors.push(`at ${node.from}: …${expr.slice(from, node.to + 15)}…`);
    },
  });
  return errors;
}
