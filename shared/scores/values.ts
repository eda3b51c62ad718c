/**
 * The stored columns of a score's value (docs/scores.md): numbers as they are, booleans as 1/0 so
 * a mean over them is the share of `true`, a category's label apart. Used by every writer.
 */
export function scoreValueColumns(value: number | boolean | string): {
  data_type: "numeric" | "boolean" | "categorical";
  value: number | null;
  label: string | null;
} {
  if (typeof value === "boolean") return { data_type: "boolean", value: value ? 1 : 0, label: null };
  if (typeof value === "number") return { data_type: "numeric", value, label: null };
  return { data_type: "categorical", value: null, label: value };
}
